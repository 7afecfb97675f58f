/*
 * raw_tcp — the physical limit under MPI over tcp: two processes (fork), pinned to cores 0 and 1,
 * talking over one TCP connection on 127.0.0.1 with TCP_NODELAY, no MPI.
 *   pingpong  size bytes there and back with write/read loops; latency_us = half the round trip
 *   stream    messages of size bytes written back to back (about --window per acknowledgement,
 *             like the MPI stream benchmark); bandwidth_MBps at the receiver
 * Output as the MPI programs (benchmark,size,metric,value), so results line up by name.
 * Options as bench_util.h plus --cpus A,B and --poll: non-blocking sockets polled in a busy loop
 * (as MPIs do) instead of blocking read/write, which pay a sleep and a wake-up per message.
 */
#include "bench_raw.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

static int poll_mode; /* --poll: spin on EAGAIN instead of sleeping in read/write */

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && (errno == EINTR || (poll_mode && errno == EAGAIN)))
            continue;
        if (k <= 0)
            die("raw_tcp: write");
        p += k, n -= (size_t)k;
    }
}

static void read_all(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && (errno == EINTR || (poll_mode && errno == EAGAIN)))
            continue;
        if (k <= 0)
            die("raw_tcp: read");
        p += k, n -= (size_t)k;
    }
}

#define WINDOW_BYTES (64L << 20)

/* Both sides run the same schedule; `lead` is the side that times and prints. */
static void run(int fd, int lead, const bench_opts *o, unsigned char *buf)
{
    unsigned char ack = 0;
    for (size_t size = o->min_size; size; size = bench_next_size(o, size)) {
        /* Checked round trip. */
        if (lead) {
            bench_fill(buf, size, 5);
            write_all(fd, buf, size);
            memset(buf, 0, size);
            read_all(fd, buf, size);
            if (bench_check(buf, size, 5) != 0) {
                fprintf(stderr, "raw_tcp: echo of %zu bytes differs\n", size);
                exit(3);
            }
        } else {
            read_all(fd, buf, size);
            write_all(fd, buf, size);
        }
        long iters = bench_iters(o, size);
        double best = 1e30;
        for (int rep = -1; rep < o->reps; rep++) {
            long n = rep < 0 ? o->warmup : iters;
            double t0 = bench_now();
            for (long i = 0; i < n; i++) {
                if (lead) {
                    write_all(fd, buf, size);
                    read_all(fd, buf, size);
                } else {
                    read_all(fd, buf, size);
                    write_all(fd, buf, size);
                }
            }
            double t = (bench_now() - t0) / (2.0 * (double)n);
            if (rep >= 0 && t < best)
                best = t;
        }
        if (lead) {
            bench_emit("pingpong", size, "latency_us", best * 1e6);
            bench_emit("pingpong", size, "bandwidth_MBps", (double)size / best / 1e6);
        }
        /* Stream: the non-lead side sends, the lead receives and times. */
        long w = bench_window_for(o, size, WINDOW_BYTES);
        long witers = bench_window_iters(o, size, w);
        best = 1e30;
        for (int rep = -1; rep < o->reps; rep++) {
            long n = rep < 0 ? 1 : witers;
            if (lead) {
                write_all(fd, &ack, 1); /* go */
                double t0 = bench_now();
                for (long i = 0; i < n; i++) {
                    for (long k = 0; k < w; k++)
                        read_all(fd, buf, size);
                    write_all(fd, &ack, 1);
                }
                double t = (bench_now() - t0) / (double)n;
                if (rep >= 0 && t < best)
                    best = t;
            } else {
                read_all(fd, &ack, 1);
                for (long i = 0; i < n; i++) {
                    for (long k = 0; k < w; k++)
                        write_all(fd, buf, size);
                    read_all(fd, &ack, 1);
                }
            }
        }
        if (lead)
            bench_emit("stream", size, "bandwidth_MBps", (double)size * (double)w / best / 1e6);
    }
}

int main(int argc, char **argv)
{
    int cpus[2];
    bench_take_cpus(&argc, argv, cpus);
    /* --poll is ours; the rest goes to the common parser. */
    char *args[64];
    int nargs = 0;
    for (int i = 0; i < argc && nargs < 63; i++) {
        if (!strcmp(argv[i], "--poll")) {
            poll_mode = 1;
            continue;
        }
        args[nargs++] = argv[i];
    }
    args[nargs] = NULL;
    bench_opts o;
    if (bench_parse(nargs, args, &o, 1, 4u << 20, " [--cpus A,B] [--poll]") != 0)
        return 2;
    printf("# raw_tcp loopback cpus=%d,%d%s\n", cpus[0], cpus[1], poll_mode ? " polling" : "");
    fflush(stdout);

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0)
        die("raw_tcp: socket");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0 ||
        getsockname(ls, (struct sockaddr *)&sa, &sl) != 0)
        die("raw_tcp: listen");
    pid_t pid = bench_fork_pinned("raw_tcp", cpus);
    int one = 1, fd;
    if (pid == 0) {
        close(ls);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
            die("raw_tcp: connect");
    } else {
        fd = accept(ls, NULL, NULL);
        if (fd < 0)
            die("raw_tcp: accept");
        close(ls);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (poll_mode)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    unsigned char *buf = bench_alloc(o.max_size);
    run(fd, pid != 0, &o, buf);
    close(fd);
    free(buf);
    return bench_join(pid);
}
