/*
 * raw_sctp — the physical limit under the sctp fabric if it ran usrsctp's AF_CONN (no-thread)
 * mode, against plain TCP and UDP: no MPI, 8 B (or --size) ping-pong with nonblocking sockets
 * polled in a busy loop, best of --reps batches (docs/FABRICS.md, sctp, "Progress mode").
 *
 *   raw_sctp server tcp|udp|conn ADDR PORT [options]   start first, on one (namespace) host
 *   raw_sctp client tcp|udp|conn ADDR PORT [options]   on another; ADDR PORT: the server's
 *   raw_sctp local [options]                           one process, no network
 *
 * tcp:   one TCP connection with TCP_NODELAY (what the tcp fabric does).
 * udp:   the same bytes in UDP datagrams: the floor under conn.
 * conn:  usrsctp without threads (usrsctp_init_nothreads) and a one-to-many socket with a receive
 *        callback, as the fabric would have it; this program moves the packets of its AF_CONN
 *        association through one UDP socket (recvfrom -> usrsctp_conninput, the output callback
 *        -> sendto: SCTP in UDP, RFC 6951, as the threaded mode) and runs the timers
 *        (usrsctp_handle_timers with the elapsed ms). The callback runs inside conninput.
 * local: two such sockets in this process, packets handed between them through a queue with no
 *        system call; prints usrsctp's own CPU time per message (sendv, conninput, callback),
 *        in thread CPU time, so other processes on the machine do not inflate it.
 *
 * Options: --iters N (per batch, 10000), --reps N (5), --size N (8, at most 1024), --nocrc
 * (usrsctp_enable_crc32c_offload: CRC32c neither computed nor checked).
 * Prints "raw_sctp,SIZE,latency_us_MODE,VALUE" (half the best batch's mean round trip) on the
 * client, "raw_sctp,SIZE,usrsctp_cpu_us_per_message,VALUE" for local. RAW_SCTP_VERBOSE=1 adds
 * the UDP packets per message each way (1.0: no separate SACKs).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>

#define MAX_SIZE 1024

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- usrsctp, AF_CONN ---- */

static struct socket *conn_sock;
static struct sockaddr_conn conn_to; /* the peer's AF_CONN address: both ends bind the same */
static size_t cb_got;                /* bytes the receive callback delivered */
static unsigned char *cb_buf;
static uint32_t last_ms;

static int cb_receive(struct socket *sock, union sctp_sockstore addr, void *data, size_t len,
                      struct sctp_rcvinfo ri, int flags, void *ulp_info)
{
    (void)sock, (void)addr, (void)ri, (void)ulp_info;
    if (data && !(flags & MSG_NOTIFICATION)) {
        if (cb_buf && len <= MAX_SIZE - cb_got)
            memcpy(cb_buf + cb_got, data, len);
        cb_got += len;
    }
    free(data); /* the callback's buffers are ours */
    return 1;
}

static void conn_timers(void)
{
    uint32_t ms = (uint32_t)(now_s(CLOCK_MONOTONIC) * 1000);
    if (ms != last_ms) {
        usrsctp_handle_timers(ms - last_ms);
        last_ms = ms;
    }
}

static struct socket *conn_socket(void *token, uint16_t port)
{
    struct socket *s =
        usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, cb_receive, NULL, 0, NULL);
    if (!s)
        die("usrsctp_socket");
    int one = 1;
    usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof one);
    usrsctp_set_non_blocking(s, 1);
    struct sockaddr_conn sc;
    memset(&sc, 0, sizeof sc);
    sc.sconn_family = AF_CONN;
    sc.sconn_port = htons(port);
    sc.sconn_addr = token;
    if (usrsctp_bind(s, (struct sockaddr *)&sc, sizeof sc) < 0)
        die("usrsctp_bind");
    if (usrsctp_listen(s, 1) < 0)
        die("usrsctp_listen");
    conn_to = sc;
    return s;
}

typedef int (*conn_output_fn)(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df);

static void conn_init(conn_output_fn out, int nocrc)
{
    usrsctp_init_nothreads(0, out, NULL);
    if (nocrc)
        usrsctp_enable_crc32c_offload();
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    last_ms = (uint32_t)(now_s(CLOCK_MONOTONIC) * 1000);
}

/* ---- over a UDP socket, between hosts ---- */

static int udp_fd = -1;
static struct sockaddr_in udp_peer;
static int have_peer;
static long n_out, n_in; /* packets, for RAW_SCTP_VERBOSE */

static int udp_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
    (void)addr, (void)tos, (void)set_df;
    if (!have_peer)
        return 0;
    n_out++;
    if (sendto(udp_fd, buf, len, 0, (struct sockaddr *)&udp_peer, sizeof udp_peer) < 0)
        return errno;
    return 0;
}

/* Every UDP packet waiting goes into usrsctp (whose callback may deliver), then its timers
 * run. Returns the packets fed. */
static int pump(void)
{
    unsigned char pkt[65536];
    int fed = 0;
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(udp_fd, pkt, sizeof pkt, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            break;
        if (!have_peer) {
            udp_peer = from;
            have_peer = 1;
        }
        n_in++, fed++;
        usrsctp_conninput(&udp_fd, pkt, (size_t)n, 0);
    }
    conn_timers();
    return fed;
}

static void conn_send(const unsigned char *b, size_t n)
{
    while (usrsctp_sendv(conn_sock, b, n, (struct sockaddr *)&conn_to, 1, NULL, 0,
                         SCTP_SENDV_NOINFO, 0) < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            die("usrsctp_sendv");
        pump();
    }
}

static void conn_recv(unsigned char *b, size_t n)
{
    cb_buf = b;
    cb_got = 0;
    while (cb_got < n)
        pump();
}

static void setup_conn(int server, const struct sockaddr_in *sa, int nocrc)
{
    udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp_fd < 0)
        die("socket");
    int big = 8 << 20;
    setsockopt(udp_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (server) {
        if (bind(udp_fd, (const struct sockaddr *)sa, sizeof *sa) < 0)
            die("bind udp");
    } else {
        udp_peer = *sa;
        have_peer = 1;
    }
    conn_init(udp_output, nocrc);
    usrsctp_register_address(&udp_fd);
    conn_sock = conn_socket(&udp_fd, 5001); /* both ends: the association is (5001, 5001) */
}

/* ---- tcp and udp ---- */

static int tcp_fd = -1;

static void tcp_send(const unsigned char *b, size_t n)
{
    while (n) {
        ssize_t k = send(tcp_fd, b, n, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (k <= 0)
            die("send");
        b += k, n -= (size_t)k;
    }
}

static void tcp_recv(unsigned char *b, size_t n)
{
    while (n) {
        ssize_t k = recv(tcp_fd, b, n, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (k <= 0)
            die("recv");
        b += k, n -= (size_t)k;
    }
}

static void setup_tcp(int server, const struct sockaddr_in *sa)
{
    int one = 1;
    if (server) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(l, (const struct sockaddr *)sa, sizeof *sa) < 0 || listen(l, 1) < 0)
            die("bind/listen");
        tcp_fd = accept(l, NULL, NULL);
        close(l);
    } else {
        tcp_fd = socket(AF_INET, SOCK_STREAM, 0);
        for (int t = 0; connect(tcp_fd, (const struct sockaddr *)sa, sizeof *sa) < 0; t++) {
            if (t > 200)
                die("connect");
            close(tcp_fd);
            tcp_fd = socket(AF_INET, SOCK_STREAM, 0);
            usleep(10000);
        }
    }
    if (tcp_fd < 0)
        die("accept");
    setsockopt(tcp_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void udp_send(const unsigned char *b, size_t n)
{
    while (sendto(udp_fd, b, n, 0, (struct sockaddr *)&udp_peer, sizeof udp_peer) < 0)
        if (errno != EAGAIN && errno != EINTR)
            die("sendto");
}

static void udp_recv(unsigned char *b, size_t n)
{
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t k = recvfrom(udp_fd, b, n, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (k >= 0) {
            udp_peer = from;
            return;
        }
        if (errno != EAGAIN && errno != EINTR)
            die("recvfrom");
    }
}

/* ---- local: usrsctp's CPU per message ---- */

enum { LQ = 64 };
static unsigned char lq_buf[LQ][2048];
static size_t lq_len[LQ];
static int lq_n;
static int lo_token; /* the one AF_CONN address: usrsctp_conninput gives a packet the same
                        address as source and destination, so the ports tell the ends apart */

static int local_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
    (void)addr, (void)tos, (void)set_df;
    if (lq_n == LQ || len > sizeof lq_buf[0])
        return ENOBUFS;
    memcpy(lq_buf[lq_n], buf, len);
    lq_len[lq_n++] = len;
    return 0;
}

/* Feeds the queued packets in order (never from inside the output callback: usrsctp holds its
 * locks there). */
static void local_flush(void)
{
    while (lq_n) {
        unsigned char pkt[2048];
        size_t len = lq_len[0];
        memcpy(pkt, lq_buf[0], len);
        lq_n--;
        memmove(lq_buf[0], lq_buf[1], (size_t)lq_n * sizeof lq_buf[0]);
        memmove(lq_len, lq_len + 1, (size_t)lq_n * sizeof lq_len[0]);
        usrsctp_conninput(&lo_token, pkt, len, 0);
    }
}

static int run_local(long iters, long reps, size_t size, int nocrc)
{
    conn_init(local_output, nocrc);
    usrsctp_register_address(&lo_token);
    struct socket *s[2];
    struct sockaddr_conn to[2];
    for (int i = 0; i < 2; i++) {
        s[i] = conn_socket(&lo_token, (uint16_t)(5001 + i));
        to[i] = conn_to;
    }
    static unsigned char buf[MAX_SIZE];
    cb_buf = NULL;
    double best = 1e30;
    for (long r = -1; r < reps; r++) { /* r == -1: warm-up, which also sets the association up */
        double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        for (long i = 0; i < iters; i++) {
            int from = (int)(i & 1);
            cb_got = 0;
            while (usrsctp_sendv(s[from], buf, size, (struct sockaddr *)&to[!from], 1, NULL, 0,
                                 SCTP_SENDV_NOINFO, 0) < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    die("usrsctp_sendv");
                local_flush();
            }
            for (int spins = 0; cb_got < size; spins++) {
                local_flush();
                conn_timers();
                if (spins > 1000000) {
                    fprintf(stderr, "raw_sctp local: a message was not delivered\n");
                    return 1;
                }
            }
        }
        double dt = now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (r >= 0 && dt < best)
            best = dt;
    }
    printf("raw_sctp,%zu,usrsctp_cpu_us_per_message%s,%.2f\n", size, nocrc ? "_nocrc" : "",
           best / (double)iters * 1e6);
    for (int i = 0; i < 2; i++)
        usrsctp_close(s[i]);
    return 0;
}

int main(int argc, char **argv)
{
    int local = argc >= 2 && !strcmp(argv[1], "local");
    if (!local && argc < 5) {
        fprintf(stderr,
                "usage: %s server|client tcp|udp|conn ADDR PORT [options]\n"
                "       %s local [options]\n"
                "options: --iters N --reps N --size N --nocrc\n",
                argv[0], argv[0]);
        return 2;
    }
    long iters = 10000, reps = 5;
    size_t size = 8;
    int nocrc = 0;
    for (int i = local ? 2 : 5; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--nocrc"))
            nocrc = 1;
        else {
            fprintf(stderr, "%s: unknown argument %s\n", argv[0], argv[i]);
            return 2;
        }
    }
    if (size < 1 || size > MAX_SIZE || iters < 1 || reps < 1) {
        fprintf(stderr, "%s: --size 1-%d, --iters and --reps at least 1\n", argv[0], MAX_SIZE);
        return 2;
    }
    if (local)
        return run_local(iters, reps, size, nocrc);
    int server = !strcmp(argv[1], "server");
    const char *mode = argv[2];
    int conn = !strcmp(mode, "conn"), udp = !strcmp(mode, "udp");
    if (!conn && !udp && strcmp(mode, "tcp")) {
        fprintf(stderr, "%s: mode tcp, udp or conn, not %s\n", argv[0], mode);
        return 2;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(argv[4]));
    if (inet_pton(AF_INET, argv[3], &sa.sin_addr) != 1)
        die("address");
    if (udp) {
        udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (server && bind(udp_fd, (struct sockaddr *)&sa, sizeof sa) < 0)
            die("bind udp");
        udp_peer = sa;
    } else if (conn) {
        setup_conn(server, &sa, nocrc);
    } else {
        setup_tcp(server, &sa);
    }
    static unsigned char buf[MAX_SIZE];
    void (*snd)(const unsigned char *, size_t) = udp ? udp_send : conn ? conn_send : tcp_send;
    void (*rcv)(unsigned char *, size_t) = udp ? udp_recv : conn ? conn_recv : tcp_recv;
    double best = 1e30;
    for (long r = -1; r < reps; r++) { /* r == -1: warm-up */
        double t0 = now_s(CLOCK_MONOTONIC);
        for (long i = 0; i < iters; i++) {
            if (server) {
                rcv(buf, size);
                snd(buf, size);
            } else {
                snd(buf, size);
                rcv(buf, size);
            }
        }
        double dt = now_s(CLOCK_MONOTONIC) - t0;
        if (r >= 0 && dt < best)
            best = dt;
    }
    if (!server)
        printf("raw_sctp,%zu,latency_us_%s%s,%.2f\n", size, mode, conn && nocrc ? "_nocrc" : "",
               best / (double)iters / 2 * 1e6);
    if (conn) {
        if (getenv("RAW_SCTP_VERBOSE"))
            fprintf(stderr, "# %s: UDP packets per message: out %.3f, in %.3f\n", argv[1],
                    (double)n_out / (double)(iters * (reps + 1)),
                    (double)n_in / (double)(iters * (reps + 1)));
        double end = now_s(CLOCK_MONOTONIC) + 0.05; /* the last SACKs out before we vanish */
        while (now_s(CLOCK_MONOTONIC) < end)
            pump();
    }
    return 0;
}
