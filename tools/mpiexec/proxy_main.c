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

#include "jobdesc.h"
#include "link.h"
#include "link_auth.h"
#include "mpiexec.h"

#define PX_BACKLOG (4u << 20) /* stop reading rank output while this much waits for mpiexec */

mx_link *mx_proxy_link;
static int px_addr = -1; /* which of mpiexec's addresses the link runs over */
static mx_link px_link;

static int px_fail(const char *host, const char *what)
{
    fprintf(stderr, "mpiexec proxy on %s: %s\n", host, what);
    return 1;
}

/* Connects to mpiexec: its addresses in order from the one after *idx (wrapping; *idx = -1:
 * from the first), each given wait_ms; *idx becomes the one that answered. An fd, or -1. */
static int px_connect(const char *addrs, int port, int *idx, int wait_ms)
{
    char copy[512], *ips[32];
    int n = 0;
    snprintf(copy, sizeof copy, "%s", addrs);
    for (char *save, *ip = strtok_r(copy, ",", &save); ip && n < 32;
         ip = strtok_r(NULL, ",", &save))
        ips[n++] = ip;
    for (int k = 1; k <= n; k++) {
        int i = (*idx + k) % n;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, ips[i], &sa.sin_addr) != 1)
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
        if (poll(&p, 1, wait_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
            err == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            *idx = i;
            return fd;
        }
        close(fd);
    }
    return -1;
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

/* Reads the job secret from the launcher's stdin (one line of MF_AUTH_SECRET_HEX digits). */
static int px_read_secret(const char *host, char hex[MF_AUTH_SECRET_HEX + 1], mf_auth_secret *key)
{
    char line[MF_AUTH_SECRET_HEX + 3];
    size_t got = 0;
    double until = mx_now() + 30;
    while (got < sizeof line - 1 && (got == 0 || line[got - 1] != '\n')) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (mx_now() > until || poll(&p, 1, 1000) < 0)
            return px_fail(host, "no job secret on stdin");
        ssize_t n = read(0, line + got, sizeof line - 1 - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return px_fail(host, "no job secret on stdin");
        got += (size_t)n;
    }
    line[got] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    const char *why;
    int bad = mf_auth_init() != 0 || mf_auth_secret_parse(line, key, &why) != 0;
    if (!bad)
        memcpy(hex, line, MF_AUTH_SECRET_HEX + 1);
    mf_auth_wipe(line, sizeof line);
    return bad ? px_fail(host, "no valid job secret on stdin") : 0;
}

/* Sends what the authentication exchange wants sent. */
static void px_auth_send(const mx_auth_out *o)
{
    if (o->o_type)
        (void)mx_link_send(&px_link, o->o_type, o->o_arg, o->o_data, o->o_len);
}

/* Proves the job secret to mpiexec and checks its proof (link_auth.h), then waits for the job
 * description. Returns it (malloc'd, *len bytes), or NULL and *why. */
static char *px_handshake(mx_job *job, int index, double timeout, size_t *len, const char **why)
{
    mx_auth a;
    mx_auth_out o;
    mx_auth_initiator(&a, &job->key, index, job->host, &o);
    px_auth_send(&o);
    px_link.l_max = MX_AUTH_FRAME_MAX; /* nothing larger before mpiexec proved itself */
    int authed = 0;
    double until = mx_now() + timeout + 30;
    *why = "mpiexec closed the connection (refused our proof of the job secret?)";
    for (;;) {
        struct pollfd p = {.fd = px_link.l_fd,
                           .events = POLLIN | (mx_link_pending(&px_link) ? POLLOUT : 0)};
        if (mx_now() > until) {
            *why = authed ? "mpiexec sent no job description" : "mpiexec did not authenticate";
            return NULL;
        }
        if (poll(&p, 1, 1000) < 0 && errno != EINTR) {
            *why = "poll failed";
            return NULL;
        }
        if ((p.revents & POLLOUT) && mx_link_flush(&px_link) != 0)
            return NULL;
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        int eof = mx_link_read(&px_link) != 0, type, got;
        int32_t arg;
        const char *data;
        size_t n;
        while ((got = mx_link_next(&px_link, &type, &arg, &data, &n)) == 1) {
            if (authed && type == MX_M_PING)
                continue;
            if (authed) {
                char *copy = type == MX_M_JOB ? malloc(n + 1) : NULL;
                if (!copy) {
                    *why = type == MX_M_JOB ? "out of memory" : "mpiexec sent no job description";
                    return NULL;
                }
                memcpy(copy, data, n);
                *len = n;
                return copy;
            }
            int step = mx_auth_feed(&a, type, arg, data, n, &o);
            if (step == MX_AUTH_FAIL) {
                *why = "the peer at mpiexec's address did not prove the job secret";
                return NULL;
            }
            px_auth_send(&o);
            if (step == MX_AUTH_DONE) {
                authed = 1;
                px_link.l_max = MX_LINK_MAX;
                mx_link_resumable(&px_link);
            }
        }
        if (got < 0 || eof)
            return NULL;
    }
}

/* Applies the job description (environment, directory), starts this proxy's children in the
 * launch tree and the ranks of this host; tells mpiexec how that went. */
static void px_start(mx_job *job, mx_options *opt, const char *data, size_t len, mx_jobdesc *d,
                     const char *addrs, int port)
{
    if (mx_jobdesc_decode(data, len, opt, job, d) != 0) {
        mx_say(job, "mpiexec: the proxy on host %s got a malformed job description", job->host);
        (void)mx_link_send(&px_link, MX_M_FAILED, 1, NULL, 0);
        return;
    }
    for (int i = 0; i < d->nenv; i++) {
        const char *eq = strchr(d->env[i], '=');
        char *name = eq ? strndup(d->env[i], (size_t)(eq - d->env[i])) : NULL;
        if (name)
            setenv(name, eq + 1, 1);
        free(name);
    }
    if (chdir(d->cwd) != 0)
        mx_say(job, "mpiexec: warning: host %s has no directory %s; ranks start in %s", job->host,
               d->cwd, getenv("HOME") ? getenv("HOME") : "/");
    for (int k = 0; k < d->nkids; k++) {
        mx_kid *kid = &d->kids[k];
        kid->k_pid =
            mx_launch_proxy(d->tmpl, d->path, addrs, port, kid->k_index, kid->k_name, job->secret);
        if (kid->k_pid < 0) {
            char num[32];
            int n = snprintf(num, sizeof num, "%d", 127 << 8);
            (void)mx_link_send(&px_link, MX_M_LAUNCHED, kid->k_index, num, (size_t)n + 1);
        }
    }
    int code = mx_proxy_launch(job);
    if (code != 0) {
        (void)mx_link_send(&px_link, MX_M_FAILED, code, NULL, 0);
        return;
    }
    for (int i = 0; i < job->n; i++) {
        char num[32];
        int n = snprintf(num, sizeof num, "%ld", (long)job->ranks[i].pid);
        (void)mx_link_send(&px_link, MX_M_STARTED, job->ranks[i].rank, num, (size_t)n);
    }
}

/* Nothing heard from mpiexec for this long (it pings every second): the network the link runs
 * over may be gone; connect again, over the next of its addresses (link.h, resuming). */
#define PX_RESUME_AFTER 3.0

/* One attempt: a new connection, authenticated as at start, replaces the link's. 0 on success. */
static int px_reconnect(mx_job *job, int index, const char *addrs, int port)
{
    int idx = px_addr;
    int fd = px_connect(addrs, port, &idx, 1000);
    if (fd < 0)
        return -1;
    mx_link nl;
    mx_link_init(&nl, fd);
    nl.l_max = MX_AUTH_FRAME_MAX;
    mx_auth a;
    mx_auth_out o;
    mx_auth_initiator(&a, &job->key, index, job->host, &o);
    (void)mx_link_send(&nl, o.o_type, o.o_arg, o.o_data, o.o_len);
    double until = mx_now() + 3.0;
    int step = MX_AUTH_MORE;
    while (step == MX_AUTH_MORE && mx_now() < until) {
        struct pollfd p = {.fd = nl.l_fd, .events = POLLIN | (mx_link_pending(&nl) ? POLLOUT : 0)};
        if (poll(&p, 1, 200) < 0 && errno != EINTR)
            break;
        if (((p.revents & POLLOUT) && mx_link_flush(&nl) != 0) ||
            ((p.revents & (POLLIN | POLLHUP | POLLERR)) && mx_link_read(&nl) != 0))
            break;
        int type, got = 0;
        int32_t arg;
        const char *data;
        size_t n;
        while (step == MX_AUTH_MORE && (got = mx_link_next(&nl, &type, &arg, &data, &n)) == 1) {
            step = mx_auth_feed(&a, type, arg, data, n, &o);
            if (step != MX_AUTH_FAIL && o.o_type)
                (void)mx_link_send(&nl, o.o_type, o.o_arg, o.o_data, o.o_len);
        }
        if (got < 0)
            break;
    }
    if (step != MX_AUTH_DONE || mx_link_adopt(&px_link, &nl) != 0) {
        mx_link_close(&nl);
        return -1;
    }
    px_link.l_max = MX_LINK_MAX;
    px_addr = idx;
    return 0;
}

int mx_proxy_main(int argc, char **argv)
{
    if (argc != 6)
        return px_fail("?", "usage: mpiexec --proxy ADDRS PORT INDEX HOST (started by mpiexec)");
    const char *addrs = argv[2], *host = argv[5];
    int port = atoi(argv[3]), index = atoi(argv[4]);

    /* The secret, from the launcher's stdin. */
    static mx_options opt;
    static mx_job job;
    memset(&opt, 0, sizeof opt);
    memset(&job, 0, sizeof job);
    if (px_read_secret(host, job.secret, &job.key) != 0)
        return 1;
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0 || dup2(devnull, 0) < 0)
        return px_fail(host, "cannot open /dev/null");
    close(devnull);

    int sigfd = mx_signals_block();
    if (sigfd < 0)
        return px_fail(host, "signalfd failed");
    int fd = px_connect(addrs, port, &px_addr, 5000);
    if (fd < 0) {
        char why[700];
        snprintf(why, sizeof why, "cannot connect to mpiexec at %s port %d", addrs, port);
        return px_fail(host, why);
    }
    mx_link_init(&px_link, fd);
    mx_proxy_link = &px_link;
    job.opt = &opt;
    job.is_proxy = 1;
    job.stdin_src = job.stdin_dst = -1;
    snprintf(job.host, sizeof job.host, "%s", host);
    double timeout = mx_host_timeout();

    const char *why = NULL;
    size_t joblen = 0;
    char *jobdata = px_handshake(&job, index, timeout, &joblen, &why);
    if (!jobdata)
        return px_fail(host, why);
    mx_jobdesc d = {0};
    px_start(&job, &opt, jobdata, joblen, &d, addrs, port);
    size_t maxfds = 2 + 4 * (size_t)job.n;
    struct pollfd *pfd = calloc(maxfds, sizeof *pfd);
    int *what = calloc(maxfds, sizeof *what); /* -1 sig, -2 link, -3 stdin, else 4*i + kind */
    if (!pfd || !what)
        return px_fail(host, "out of memory");
    double kill_at = 0, next_resume = 0;
    for (;;) {
        double now = mx_now();
        if (px_link.l_fd < 0 || now - px_link.l_last_rx > timeout)
            break; /* mpiexec is done with us, or gone */
        if (now - px_link.l_last_rx > PX_RESUME_AFTER && now >= next_resume) {
            next_resume = now + 1.0;
            (void)px_reconnect(&job, index, addrs, port);
            now = mx_now();
        }
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
                        for (int c = 0; c < d.nkids; c++) {
                            mx_kid *kid = &d.kids[c];
                            if (kid->k_pid != pid)
                                continue;
                            char num[32];
                            int len = snprintf(num, sizeof num, "%d", status);
                            (void)mx_link_send(&px_link, MX_M_LAUNCHED, kid->k_index, num,
                                               (size_t)len + 1);
                            kid->k_pid = -1;
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
                    } else if (type == MX_M_STACKS) {
                        mx_stacks_report(&job);
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
    mx_proxy_kill_groups(&job);
    for (int c = 0; c < d.nkids; c++)
        if (d.kids[c].k_pid > 0)
            (void)waitpid(d.kids[c].k_pid, NULL, 0);
    mx_cleanup_host(&job);
    mx_link_close(&px_link);
    free(pfd);
    free(what);
    mx_jobdesc_free(&opt, &job, &d);
    free(jobdata);
    return 0;
}
