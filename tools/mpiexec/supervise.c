/*
 * supervise.c — mpiexec's event loop: runs until every rank is reaped and its output drained.
 *
 * Events, all through one poll():
 *   signalfd   SIGCHLD (reap ranks, judge their exit), SIGINT/SIGTERM/SIGHUP (forward, end job);
 *   PMI sockets, stdout/stderr pipes, our stdin and rank 0's stdin pipe;
 *   deadlines  --timeout (with --get-stack-traces, every rank's stacks are printed first:
 *              stacks.c), the SIGKILL that follows SIGTERM by MX_KILL_GRACE seconds, the output
 *              drain after the last rank exited (MX_DRAIN_GRACE: descendants that keep a pipe
 *              open cannot hold mpiexec), and the idle flush of partial lines.
 * Judging an exit (the first abnormal one ends the job, later ones are consequences and stay quiet):
 *   killed by signal S            -> 128+S
 *   exit code N != 0              -> N
 *   exit 0 after PMI init without PMI finalize -> 1. This follows Open MPI's practice: a rank
 *       that leaves without MPI_Finalize while others may wait for it can only hang the job. A
 *       program that never uses PMI (mpiexec -n 2 hostname) may exit 0 whenever it likes.
 * Before judging, the rank's PMI socket and pipes are drained, so an MPI_Abort sent just before
 * exiting is seen as the abort it is and the rank's last words precede mpiexec's verdict.
 *
 * Blame: one failure makes others. When a rank dies, the ranks talking to it over tcp see the
 * connection break and abort (MPI_ERR_OTHER) at about the same moment, and which of the two
 * events reaches mpiexec first is a race (a local survivor's PMI abort often beats the SIGCHLD
 * of the dead rank; across hosts, two proxies' frames race). So the first failure is not named
 * at once: mx_job_blame holds the verdict for MX_BLAME_WAIT seconds (less if every rank is gone
 * sooner) and keeps the strongest cause seen, the earliest among equals:
 *   1. a rank killed by a signal (but SIGPIPE, a consequence of a peer's death);
 *   2. a rank that exited by itself (code N != 0, 0 without MPI_Finalize), a lost host;
 *   3. a rank that called MPI_Abort (the library's reaction to a broken connection looks the
 *      same as the user's own call; a user's abort has no competitor and is still named).
 * Nothing is signalled to the ranks meanwhile; the verdict then ends the job as before.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpiexec.h"

#define MX_KILL_GRACE 1.0
#define MX_DRAIN_GRACE 1.0
#define MX_IDLE_FLUSH 0.1
#define MX_BLAME_WAIT 0.5

sigset_t mx_orig_sigmask;

int mx_signals_block(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, &mx_orig_sigmask) != 0)
        return -1;
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* Ends the job with `line` (if not NULL) printed as one line. */
static void mx_job_end_line(mx_job *job, int exit_code, int sig, const char *line)
{
    if (job->ending)
        return;
    job->ending = 1;
    job->exit_code = exit_code;
    if (line) { /* one write: the line stays whole among the ranks' output */
        char buf[2100];
        int n = snprintf(buf, sizeof buf, "%.2000s\n", line);
        mx_write_all(2, buf, (size_t)n);
    }
    mx_stdin_close(job);
    mx_proxy_signal(job, sig);
    job->kill_at = sig == SIGKILL ? 0 : mx_now() + MX_KILL_GRACE;
}

void mx_job_end(mx_job *job, int exit_code, int sig, const char *fmt, ...)
{
    char line[2048];
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
    }
    mx_job_end_line(job, exit_code, sig, fmt ? line : NULL);
}

void mx_job_blame(mx_job *job, int cause, int exit_code, const char *fmt, ...)
{
    if (job->ending || (job->blame_cause && job->blame_cause <= cause))
        return; /* decided already, or a stronger or earlier cause is held */
    if (!job->blame_cause)
        job->blame_until = mx_now() + MX_BLAME_WAIT;
    job->blame_cause = cause;
    job->blame_code = exit_code;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(job->blame_line, sizeof job->blame_line, fmt, ap);
    va_end(ap);
}

/* Names the held cause once its time is up (or nobody is left to add one). */
static void mx_blame_decide(mx_job *job, double now, int alive)
{
    if (job->blame_cause && (now >= job->blame_until || !alive))
        mx_job_end_line(job, job->blame_code, SIGTERM, job->blame_line);
}

static mx_rank *mx_find_rank(mx_job *job, pid_t pid)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].alive && !job->ranks[i].remote && job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

double mx_host_timeout(void)
{
    const char *s = getenv("MANIFOLD_HOST_TIMEOUT");
    char *end;
    double v = s && *s ? strtod(s, &end) : 10;
    if (s && *s && (*end || !(v > 0) || v > 1e6))
        v = 10;
    return v;
}

void mx_rank_exited(mx_job *job, mx_rank *r, int status)
{
    r->alive = 0;
    /* Last words first: PMI (an abort), then output, then the verdict. */
    if (r->pmi_fd >= 0)
        (void)mx_pmi_readable(job, r);
    mx_pmi_close(job, r);
    for (int i = 0; i < 8 && r->out.fd >= 0; i++)
        mx_stream_readable(job, r, &r->out);
    for (int i = 0; i < 8 && r->err.fd >= 0; i++)
        mx_stream_readable(job, r, &r->err);
    if (r->remote) { /* the proxy sent everything before the exit */
        mx_stream_close(job, r, &r->out);
        mx_stream_close(job, r, &r->err);
    }
    if (r->rank == 0)
        mx_stdin_close(job);
    if (job->ending || r->aborted)
        return; /* after the verdict, or the rank's own abort is already held */

    if (WIFSIGNALED(status)) {
        int s = WTERMSIG(status);
        mx_job_blame(job, s == SIGPIPE ? MX_CAUSE_EXIT : MX_CAUSE_SIGNAL, 128 + s,
                     "mpiexec: rank %d (host %s, pid %ld) killed by signal %d (%s)", r->rank,
                     r->host, (long)r->pid, s, strsignal(s));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        mx_job_blame(job, MX_CAUSE_EXIT, WEXITSTATUS(status),
                     "mpiexec: rank %d (host %s, pid %ld) exited with code %d", r->rank, r->host,
                     (long)r->pid, WEXITSTATUS(status));
    } else if (r->pmi_inited && !r->pmi_finalized) {
        mx_job_blame(job, MX_CAUSE_EXIT, 1,
                     "mpiexec: rank %d (host %s, pid %ld) exited with code 0 after MPI_Init but "
                     "without MPI_Finalize",
                     r->rank, r->host, (long)r->pid);
    }
}

static void mx_reap(mx_job *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        mx_rank *r = mx_find_rank(job, pid);
        if (r)
            mx_rank_exited(job, r, status);
        else if (job->rm)
            (void)mx_remote_child_exited(job, pid, status);
    }
}

static void mx_signal_event(mx_job *job, int sigfd)
{
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            mx_reap(job);
            continue;
        }
        if (job->signals_seen++ == 0 && !job->ending) {
            mx_job_end(job, 128 + sig, sig, "mpiexec: received signal %d (%s), ending the job", sig,
                       strsignal(sig));
        } else {
            mx_proxy_signal(job, SIGKILL); /* asked twice: no more grace */
            job->kill_at = 0;
        }
    }
}

/* poll set bookkeeping: what each pollfd stands for. */
enum { MX_EV_SIG, MX_EV_STDIN, MX_EV_STDIN_DST, MX_EV_PMI, MX_EV_OUT, MX_EV_ERR, MX_EV_REMOTE };
typedef struct mx_ev {
    int kind;
    mx_rank *rank;
    int idx; /* MX_EV_REMOTE: remote.c's index */
} mx_ev;

static int mx_ms_until(double now, double when)
{
    double ms = (when - now) * 1000.0;
    return ms <= 0 ? 0 : ms > 1e6 ? 1000000 : (int)ms + 1;
}

int mx_supervise(mx_job *job, int sigfd)
{
    size_t maxfds = 3 + 3 * (size_t)job->n + (job->rm ? mx_remote_maxfds(job) : 0);
    int *ridx = job->rm ? calloc(mx_remote_maxfds(job) + 1, sizeof *ridx) : NULL;
    struct pollfd *pfd = calloc(maxfds, sizeof *pfd);
    mx_ev *ev = calloc(maxfds, sizeof *ev);
    if (!pfd || !ev) {
        fprintf(stderr, "mpiexec: out of memory\n");
        mx_proxy_signal(job, SIGKILL);
        free(pfd);
        free(ev);
        free(ridx);
        return 1;
    }
    double timeout_at = job->opt->timeout > 0 ? mx_now() + job->opt->timeout : 0;
    double drain_until = 0;
    mx_reap(job); /* a rank may have died before the loop started */

    for (;;) {
        double now = mx_now();
        int alive = 0, open_streams = 0, partial = 0;
        for (int i = 0; i < job->n; i++) {
            mx_rank *r = &job->ranks[i];
            alive += r->alive;
            open_streams += (r->out.buf != NULL) + (r->err.buf != NULL);
            partial += (r->out.buf && r->out.partial_since > 0) ||
                       (r->err.buf && r->err.partial_since > 0);
        }
        mx_blame_decide(job, now, alive);
        if (!alive) {
            if (!open_streams)
                break;
            if (drain_until == 0)
                drain_until = now + MX_DRAIN_GRACE;
            else if (now >= drain_until)
                break;
        }
        if (timeout_at && now >= timeout_at && !job->ending) {
            if (job->opt->stack_traces) {
                mx_say(job,
                       "mpiexec: job timed out after %g seconds; the stacks of its %d "
                       "processes follow (--get-stack-traces)",
                       job->opt->timeout, alive);
                if (job->rm)
                    mx_remote_stacks(job); /* the proxies' lines follow, before any exit */
                else
                    mx_stacks_report(job);
            }
            mx_job_end(job, MX_EXIT_TIMEOUT, SIGTERM,
                       "mpiexec: job timed out after %g seconds (--timeout / MPIEXEC_TIMEOUT); "
                       "killing its %d processes",
                       job->opt->timeout, alive);
        }
        if (job->kill_at && now >= job->kill_at) {
            mx_proxy_signal(job, SIGKILL);
            job->kill_at = 0;
        }
        if (partial && !job->opt->tag_output) {
            for (int i = 0; i < job->n; i++) {
                mx_stream_flush_idle(job, &job->ranks[i], &job->ranks[i].out, now - MX_IDLE_FLUSH);
                mx_stream_flush_idle(job, &job->ranks[i], &job->ranks[i].err, now - MX_IDLE_FLUSH);
            }
        }

        int wait_ms = -1;
#define MX_DEADLINE(t)                                                                             \
    do {                                                                                           \
        if (t) {                                                                                   \
            int ms_ = mx_ms_until(now, t);                                                         \
            if (wait_ms < 0 || ms_ < wait_ms)                                                      \
                wait_ms = ms_;                                                                     \
        }                                                                                          \
    } while (0)
        if (!job->ending)
            MX_DEADLINE(timeout_at);
        MX_DEADLINE(job->kill_at);
        MX_DEADLINE(drain_until);
        if (!job->ending)
            MX_DEADLINE(job->blame_until);
        if (partial && !job->opt->tag_output)
            MX_DEADLINE(now + MX_IDLE_FLUSH);
#undef MX_DEADLINE
        if (job->rm)
            mx_remote_tick(job, now, &wait_ms);

        nfds_t n = 0;
        pfd[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        ev[n++] = (mx_ev){MX_EV_SIG, NULL};
        if (job->stdin_src >= 0 && job->stdin_len < 65536 &&
            (job->stdin_dst >= 0 || (job->rm && mx_remote_stdin_room(job)))) {
            pfd[n] = (struct pollfd){.fd = job->stdin_src, .events = POLLIN};
            ev[n++] = (mx_ev){MX_EV_STDIN, NULL};
        }
        if (job->stdin_dst >= 0 && job->stdin_len > 0) {
            pfd[n] = (struct pollfd){.fd = job->stdin_dst, .events = POLLOUT};
            ev[n++] = (mx_ev){MX_EV_STDIN_DST, NULL};
        }
        for (int i = 0; i < job->n; i++) {
            mx_rank *r = &job->ranks[i];
            if (r->pmi_fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->pmi_fd, .events = POLLIN};
                ev[n++] = (mx_ev){MX_EV_PMI, r};
            }
            if (r->out.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
                ev[n++] = (mx_ev){MX_EV_OUT, r};
            }
            if (r->err.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = r->err.fd, .events = POLLIN};
                ev[n++] = (mx_ev){MX_EV_ERR, r};
            }
        }
        if (job->rm) {
            size_t k = mx_remote_pollfds(job, pfd + n, ridx);
            for (size_t j = 0; j < k; j++)
                ev[n++] = (mx_ev){MX_EV_REMOTE, NULL, ridx[j]};
        }

        int ready = poll(pfd, n, wait_ms);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mpiexec: poll failed: %s\n", strerror(errno));
            mx_job_end(job, 1, SIGKILL, NULL);
            break;
        }
        /* Data before deaths: ranks' streams and PMI first, signals (SIGCHLD) last. */
        for (nfds_t i = n; i-- > 0;) {
            if (!pfd[i].revents)
                continue;
            mx_rank *r = ev[i].rank;
            switch (ev[i].kind) {
            case MX_EV_PMI:
                if (r->pmi_fd == pfd[i].fd)
                    (void)mx_pmi_readable(job, r);
                break;
            case MX_EV_OUT:
                if (r->out.fd == pfd[i].fd)
                    (void)mx_stream_readable(job, r, &r->out);
                break;
            case MX_EV_ERR:
                if (r->err.fd == pfd[i].fd)
                    (void)mx_stream_readable(job, r, &r->err);
                break;
            case MX_EV_STDIN:
                mx_stdin_readable(job);
                break;
            case MX_EV_STDIN_DST:
                if (pfd[i].revents & (POLLERR | POLLHUP))
                    mx_stdin_close(job);
                else
                    mx_stdin_writable(job);
                break;
            case MX_EV_SIG:
                mx_signal_event(job, sigfd);
                break;
            case MX_EV_REMOTE:
                mx_remote_event(job, ev[i].idx, pfd[i].revents);
                break;
            }
        }
    }

    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        mx_stream_close(job, r, &r->out);
        mx_stream_close(job, r, &r->err);
        mx_pmi_close(job, r);
    }
    mx_stdin_close(job);
    /* Descendants of the ranks (still in the ranks' process groups) do not outlive the job. */
    mx_proxy_kill_groups(job);
    if (job->rm)
        mx_remote_finish(job);
    free(pfd);
    free(ev);
    free(ridx);
    return job->ending ? job->exit_code : 0;
}
