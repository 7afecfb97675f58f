/*
 * proxy_main.c — `mpiexec --proxy ADDRS PORT INDEX HOST`: the program the launcher command
 * starts on each host of a multi-host job (see remote.c for the whole picture).
 *
 *   1. read the job secret from stdin (one line; stdin is then /dev/null), connect to mpiexec
 *      at the first of ADDRS (comma-separated IPv4) that answers, say HELLO;
 *   2. receive the job description: environment, working directory, programs, the ranks of
 *      this host, and which hosts this proxy starts in turn (the launch tree);
 *   3. start those proxies, fork the ranks with proxy.c (as mpiexec does on one host, with
 *      MANIFOLD_HOSTNAME=HOST), and relay: the ranks' PMI bytes, stdout and stderr go to mpiexec
 *      as frames; PMI replies, rank 0's stdin and signals come back;
 *   4. when a rank exits, everything it wrote is sent first, then its wait status.
 * The proxy ends when mpiexec closes the connection or stays silent for MANIFOLD_HOST_TIMEOUT
 * seconds; its ranks never outlive it (process group + parent-death signal, as in proxy.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"
#include "mpiexec.h"

#define PX_BACKLOG (4u << 20) /* stop reading rank output while this much waits for mpiexec */

mx_link *mx_proxy_link;
static mx_link px_link;

typedef struct px_kid {
    pid_t k_pid;
    int k_index;
    const char *k_name;
} px_kid;

static int px_fail(const char *host, const char *what)
{
    fprintf(stderr, "mpiexec proxy on %s: %s\n", host, what);
    return 1;
}

static int px_connect(const char *addrs, int port)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", addrs);
    for (char *save, *ip = strtok_r(copy, ",", &save); ip; ip = strtok_r(NULL, ",", &save)) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&p, 1, 5000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
            err == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
    }
    return -1;
}

/* Reads the job description into opt/job. 0, or -1 if malformed. */
static int px_decode_job(const char *data, size_t len, mx_options *opt, mx_job *job, px_kid **kids,
                         int *nkids, const char **tmpl, const char **path)
{
    mx_strrd rd = {data, data + len};
    long v, n;
    const char *s;
    if (!(s = mx_rd_str(&rd)) || strcmp(s, "mfjob1") != 0)
        return -1;
    if (!(s = mx_rd_str(&rd)) || strlen(s) >= sizeof job->kvsname)
        return -1;
    strcpy(job->kvsname, s);
    if (!(s = mx_rd_str(&rd)) || strlen(s) >= sizeof job->secret)
        return -1;
    strcpy(job->secret, s);
    if (mx_rd_int(&rd, 1, 1000000, &v))
        return -1;
    job->size = (int)v;
    if (mx_rd_int(&rd, 0, 1, &v))
        return -1;
    opt->bind_core = (int)v;
    if (mx_rd_int(&rd, 0, 1, &v))
        return -1;
    opt->report_bindings = (int)v;
    if (mx_rd_int(&rd, 0, 1, &v))
        return -1;
    job->stdin_to_rank0 = (int)v;
    const char *cwd = mx_rd_str(&rd);
    if (!cwd)
        return -1;
    if (mx_rd_int(&rd, 0, 1 << 20, &n))
        return -1;
    for (long i = 0; i < n; i++) {
        if (!(s = mx_rd_str(&rd)))
            return -1;
        const char *eq = strchr(s, '=');
        if (!eq)
            continue;
        char *name = strndup(s, (size_t)(eq - s));
        if (name)
            setenv(name, eq + 1, 1);
        free(name);
    }
    if (chdir(cwd) != 0)
        mx_say(job, "mpiexec: warning: host %s has no directory %s; ranks start in %s", job->host,
               cwd, getenv("HOME") ? getenv("HOME") : "/");
    if (mx_rd_int(&rd, 1, 100000, &n))
        return -1;
    opt->apps = calloc((size_t)n, sizeof *opt->apps);
    if (!opt->apps)
        return -1;
    opt->napps = (int)n;
    for (int a = 0; a < opt->napps; a++) {
        mx_app *app = &opt->apps[a];
        if (mx_rd_int(&rd, 1, 1 << 20, &n) ||
            !(app->argv = calloc((size_t)n + 1, sizeof *app->argv)))
            return -1;
        for (long k = 0; k < n; k++)
            if (!(app->argv[k] = (char *)mx_rd_str(&rd)))
                return -1;
        if (mx_rd_int(&rd, 0, 1 << 20, &n) ||
            !(app->envs = calloc((size_t)n + 1, sizeof *app->envs)))
            return -1;
        app->nenvs = (int)n;
        for (long k = 0; k < n; k++)
            if (!(app->envs[k].name = (char *)mx_rd_str(&rd)) ||
                !(app->envs[k].value = (char *)mx_rd_str(&rd)))
                return -1;
    }
    /* A host may run no rank (more hosts than ranks) and still start proxies of the tree. */
    if (mx_rd_int(&rd, 0, 1000000, &n) || !(job->ranks = calloc((size_t)n + 1, sizeof *job->ranks)))
        return -1;
    job->n = (int)n;
    opt->np = job->n;
    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        long rank, app;
        if (mx_rd_int(&rd, 0, job->size - 1, &rank) || mx_rd_int(&rd, 0, opt->napps - 1, &app))
            return -1;
        r->rank = (int)rank;
        r->app = (int)app;
        r->local = i;
        r->nlocal = job->n;
        r->host = job->host;
        r->pmi_fd = r->out.fd = r->err.fd = -1;
    }
    if (!(*tmpl = mx_rd_str(&rd)) || !(*path = mx_rd_str(&rd)))
        return -1;
    if (mx_rd_int(&rd, 0, 1000000, &n) || !(*kids = calloc((size_t)n + 1, sizeof **kids)))
        return -1;
    *nkids = (int)n;
    for (int k = 0; k < *nkids; k++) {
        if (mx_rd_int(&rd, 0, 1000000, &v) || !(s = mx_rd_str(&rd)))
            return -1;
        (*kids)[k].k_index = (int)v;
        (*kids)[k].k_name = s;
        (*kids)[k].k_pid = -1;
    }
    return 0;
}

static void px_forward(mx_job *job, mx_rank *r, int *fd, int type)
{
    char buf[65536];
    for (int round = 0; round < 64 && *fd >= 0; round++) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close(*fd);
            *fd = -1;
            return;
        }
        (void)mx_link_send(&px_link, type, r->rank, buf, (size_t)n);
    }
    (void)job;
}

static void px_rank_exited(mx_job *job, mx_rank *r, int status)
{
    r->alive = 0;
    /* Everything it wrote and said first (non-blocking reads until empty), then the verdict. */
    while (r->pmi_fd >= 0)
        px_forward(job, r, &r->pmi_fd, MX_M_PMI);
    for (int i = 0; i < 64 && r->out.fd >= 0; i++)
        px_forward(job, r, &r->out.fd, MX_M_OUT);
    for (int i = 0; i < 64 && r->err.fd >= 0; i++)
        px_forward(job, r, &r->err.fd, MX_M_ERR);
    /* A descendant may hold the pipes: what it writes later is not the rank's. */
    if (r->out.fd >= 0)
        close(r->out.fd);
    if (r->err.fd >= 0)
        close(r->err.fd);
    r->out.fd = r->err.fd = -1;
    if (r->rank == 0)
        mx_stdin_close(job);
    char num[32];
    int n = snprintf(num, sizeof num, "%d", status);
    (void)mx_link_send(&px_link, MX_M_EXIT, r->rank, num, (size_t)n);
}

int mx_proxy_main(int argc, char **argv)
{
    if (argc != 6)
        return px_fail("?", "usage: mpiexec --proxy ADDRS PORT INDEX HOST (started by mpiexec)");
    const char *addrs = argv[2], *host = argv[5];
    int port = atoi(argv[3]), index = atoi(argv[4]);

    /* The secret, from the launcher's stdin. */
    char secret[130];
    size_t got = 0;
    double until = mx_now() + 30;
    while (got < sizeof secret - 1 && (got == 0 || secret[got - 1] != '\n')) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (mx_now() > until || poll(&p, 1, 1000) < 0)
            return px_fail(host, "no job secret on stdin");
        ssize_t n = read(0, secret + got, sizeof secret - 1 - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return px_fail(host, "no job secret on stdin");
        got += (size_t)n;
    }
    secret[got] = '\0';
    secret[strcspn(secret, "\r\n")] = '\0';
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0 || dup2(devnull, 0) < 0)
        return px_fail(host, "cannot open /dev/null");
    close(devnull);

    int sigfd = mx_signals_block();
    if (sigfd < 0)
        return px_fail(host, "signalfd failed");
    int fd = px_connect(addrs, port);
    if (fd < 0) {
        char why[700];
        snprintf(why, sizeof why, "cannot connect to mpiexec at %s port %d", addrs, port);
        return px_fail(host, why);
    }
    mx_link_init(&px_link, fd);
    mx_proxy_link = &px_link;
    (void)mx_link_send(&px_link, MX_M_HELLO, index, secret, strlen(secret));

    static mx_options opt;
    static mx_job job;
    memset(&opt, 0, sizeof opt);
    memset(&job, 0, sizeof job);
    job.opt = &opt;
    job.is_proxy = 1;
    job.stdin_src = job.stdin_dst = -1;
    snprintf(job.host, sizeof job.host, "%s", host);
    double timeout = mx_host_timeout();

    /* The job description. */
    char *jobdata = NULL;
    size_t joblen = 0;
    until = mx_now() + timeout + 30;
    while (!jobdata) {
        struct pollfd p = {.fd = fd, .events = POLLIN | (mx_link_pending(&px_link) ? POLLOUT : 0)};
        if (mx_now() > until)
            return px_fail(host, "mpiexec sent no job description");
        if (poll(&p, 1, 1000) < 0 && errno != EINTR)
            return px_fail(host, "poll failed");
        if ((p.revents & POLLOUT) && mx_link_flush(&px_link) != 0)
            return px_fail(host, "mpiexec closed the connection (wrong secret?)");
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        int eof = mx_link_read(&px_link) != 0;
        int type;
        int32_t arg;
        const char *data;
        size_t len;
        if (mx_link_next(&px_link, &type, &arg, &data, &len) == 1 && type == MX_M_JOB) {
            if (!(jobdata = malloc(len + 1)))
                return px_fail(host, "out of memory");
            memcpy(jobdata, data, len);
            joblen = len;
        } else if (eof) {
            return px_fail(host, "mpiexec closed the connection (wrong secret?)");
        }
    }
    px_kid *kids = NULL;
    int nkids = 0;
    const char *tmpl, *path;
    if (px_decode_job(jobdata, joblen, &opt, &job, &kids, &nkids, &tmpl, &path) != 0) {
        mx_say(&job, "mpiexec: the proxy on host %s got a malformed job description", host);
        (void)mx_link_send(&px_link, MX_M_FAILED, 1, NULL, 0);
    } else {
        for (int k = 0; k < nkids; k++) {
            kids[k].k_pid =
                mx_launch_proxy(tmpl, path, addrs, port, kids[k].k_index, kids[k].k_name, secret);
            if (kids[k].k_pid < 0) {
                char num[32];
                int n = snprintf(num, sizeof num, "%d", 127 << 8);
                (void)mx_link_send(&px_link, MX_M_LAUNCHED, kids[k].k_index, num, (size_t)n + 1);
            }
        }
        int code = mx_proxy_launch(&job);
        if (code != 0) {
            (void)mx_link_send(&px_link, MX_M_FAILED, code, NULL, 0);
        } else {
            for (int i = 0; i < job.n; i++) {
                char num[32];
                int n = snprintf(num, sizeof num, "%ld", (long)job.ranks[i].pid);
                (void)mx_link_send(&px_link, MX_M_STARTED, job.ranks[i].rank, num, (size_t)n);
            }
        }
    }

    size_t maxfds = 2 + 4 * (size_t)job.n;
    struct pollfd *pfd = calloc(maxfds, sizeof *pfd);
    int *what = calloc(maxfds, sizeof *what); /* -1 sig, -2 link, -3 stdin, else 4*i + kind */
    if (!pfd || !what)
        return px_fail(host, "out of memory");
    double kill_at = 0;
    for (;;) {
        double now = mx_now();
        if (px_link.l_fd < 0 || now - px_link.l_last_rx > timeout)
            break; /* mpiexec is done with us, or gone */
        if (now - px_link.l_last_tx >= 1.0)
            (void)mx_link_send(&px_link, MX_M_PING, 0, NULL, 0);
        if (kill_at && now >= kill_at) {
            mx_proxy_signal(&job, SIGKILL);
            kill_at = 0;
        }
        nfds_t n = 0;
        pfd[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        what[n++] = -1;
        pfd[n] = (struct pollfd){.fd = px_link.l_fd,
                                 .events = POLLIN | (mx_link_pending(&px_link) ? POLLOUT : 0)};
        what[n++] = -2;
        if (job.stdin_dst >= 0 && job.stdin_len > 0) {
            pfd[n] = (struct pollfd){.fd = job.stdin_dst, .events = POLLOUT};
            what[n++] = -3;
        }
        int room = mx_link_pending(&px_link) < PX_BACKLOG;
        for (int i = 0; i < job.n; i++) {
            mx_rank *r = &job.ranks[i];
            if (r->pmi_fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->pmi_fd, .events = POLLIN};
                what[n++] = 4 * i;
            }
            if (room && r->out.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
                what[n++] = 4 * i + 1;
            }
            if (room && r->err.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->err.fd, .events = POLLIN};
                what[n++] = 4 * i + 2;
            }
        }
        if (poll(pfd, n, 500) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!pfd[k].revents)
                continue;
            if (what[k] == -1) {
                struct signalfd_siginfo si;
                while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo != SIGCHLD) { /* told to stop by someone on this host */
                        mx_proxy_signal(&job, SIGTERM);
                        kill_at = mx_now() + 1.0;
                        continue;
                    }
                    int status;
                    pid_t pid;
                    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                        for (int i = 0; i < job.n; i++)
                            if (job.ranks[i].alive && job.ranks[i].pid == pid)
                                px_rank_exited(&job, &job.ranks[i], status);
                        for (int c = 0; c < nkids; c++) {
                            if (kids[c].k_pid != pid)
                                continue;
                            char num[32];
                            int len = snprintf(num, sizeof num, "%d", status);
                            (void)mx_link_send(&px_link, MX_M_LAUNCHED, kids[c].k_index, num,
                                               (size_t)len + 1);
                            kids[c].k_pid = -1;
                        }
                    }
                }
            } else if (what[k] == -2) {
                if ((pfd[k].revents & POLLOUT) && mx_link_flush(&px_link) != 0) {
                    mx_link_close(&px_link);
                    break;
                }
                if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int eof = mx_link_read(&px_link) != 0;
                int type, g;
                int32_t arg;
                const char *data;
                size_t len;
                while ((g = mx_link_next(&px_link, &type, &arg, &data, &len)) == 1) {
                    if (type == MX_M_PMI) {
                        for (int i = 0; i < job.n; i++)
                            if (job.ranks[i].rank == arg && job.ranks[i].pmi_fd >= 0)
                                mx_write_all(job.ranks[i].pmi_fd, data, len);
                    } else if (type == MX_M_STDIN) {
                        mx_stdin_feed(&job, data, len);
                    } else if (type == MX_M_SIGNAL && arg > 0 && arg < 65) {
                        mx_proxy_signal(&job, arg);
                    }
                }
                if (eof || g < 0) {
                    mx_link_close(&px_link);
                    break;
                }
            } else if (what[k] == -3) {
                if (pfd[k].revents & (POLLERR | POLLHUP))
                    mx_stdin_close(&job);
                else
                    mx_stdin_writable(&job);
            } else {
                mx_rank *r = &job.ranks[what[k] / 4];
                int kind = what[k] % 4;
                if (kind == 0)
                    px_forward(&job, r, &r->pmi_fd, MX_M_PMI);
                else if (kind == 1)
                    px_forward(&job, r, &r->out.fd, MX_M_OUT);
                else
                    px_forward(&job, r, &r->err.fd, MX_M_ERR);
            }
        }
    }
    /* The job is over (or mpiexec is gone): nothing of it stays on this host. */
    mx_proxy_signal(&job, SIGKILL);
    for (int i = 0; i < job.n; i++)
        if (job.ranks[i].alive)
            (void)waitpid(job.ranks[i].pid, NULL, 0);
    if (job.pgid > 0)
        (void)killpg(job.pgid, SIGKILL);
    for (int c = 0; c < nkids; c++)
        if (kids[c].k_pid > 0)
            (void)waitpid(kids[c].k_pid, NULL, 0);
    mx_cleanup_host(&job);
    mx_link_close(&px_link);
    free(pfd);
    free(what);
    free(kids);
    return 0;
}
