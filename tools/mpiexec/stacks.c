/*
 * stacks.c — where each rank of this host is stuck: the stack of every thread, read with gdb,
 * when a job runs out of time under --get-stack-traces (Open MPI's option of the same name).
 *
 * A job that hangs ends with --timeout, and the kill destroys what the user needs: what each
 * rank was waiting for. So before the kill, gdb attaches to each live rank of this host in turn
 * (stopping it for the moment it reads), prints `thread apply all bt` and detaches. Its output
 * goes on through mx_say (in a proxy, over the link to mpiexec): a line naming the rank, then
 * the thread and frame lines, indented; gdb's chatter (mx_gdb_chatter) is dropped, unless gdb
 * printed no frame, when its words say why.
 *
 * Bounds: gdb gets MX_STACK_WAIT seconds per rank, below the 10 s a proxy may stay silent by
 * default (MANIFOLD_HOST_TIMEOUT), and a proxy pings mpiexec after each rank. A gdb that takes
 * longer is killed and the rank's line says so. Without gdb in PATH one line says that.
 *
 * Permission: attaching needs that of an ancestor under Yama's ptrace_scope 1, and gdb is the
 * ranks' sibling. Each rank names its parent (us) as its ptracer: mx_child before exec, and the
 * library's shm start (fabric/shm/cma.c) again for ranks of other launchers. gdb, our child, is
 * then allowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"
#include "mpiexec.h"

#define MX_STACK_WAIT 8.0   /* seconds gdb may take for one rank */
#define MX_STACK_OUT 262144 /* bytes of gdb output kept per rank */
#define MX_NO_GDB "mpiexec-stacks: no gdb\n"

/* Starts gdb on `pid` with its output on a pipe. Returns gdb's pid (*fd: the read end), or -1. */
static pid_t mx_gdb_start(pid_t pid, int *fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    char pidtxt[24];
    snprintf(pidtxt, sizeof pidtxt, "%d", (int)pid);
    char *argv[] = {"gdb",  "-nx",
                    "-q",   "-batch", /* no questions, exit after the commands */
                    "-iex", "set debuginfod enabled off",
                    "-p",   pidtxt,
                    "-ex",  "thread apply all bt",
                    NULL};
    pid_t g = fork();
    if (g == 0) {
        /* In the child: async-signal-safe calls only until exec. */
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(126);
        (void)setpgid(0, 0); /* killed with whatever it started */
        sigprocmask(SIG_SETMASK, &mx_orig_sigmask, NULL);
        execvp(argv[0], argv);
        (void)!write(1, MX_NO_GDB, sizeof MX_NO_GDB - 1);
        _exit(127);
    }
    close(p[1]);
    if (g < 0) {
        close(p[0]);
        return -1;
    }
    *fd = p[0];
    return g;
}

/* Reads gdb's output into buf (at most cap - 1 bytes, NUL-terminated) until it closes the pipe
 * or `until`. Returns 1 if it finished, 0 if time ran out. */
static int mx_gdb_read(int fd, char *buf, size_t cap, size_t *len, double until)
{
    for (;;) {
        double left = until - mx_now();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno != EINTR)
            return 1;
        if (n <= 0)
            continue;
        char chunk[4096];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 1;
        size_t keep = (size_t)got < cap - 1 - *len ? (size_t)got : cap - 1 - *len;
        memcpy(buf + *len, chunk, keep);
        *len += keep;
        buf[*len] = '\0';
    }
}

/* gdb's chatter around the stacks: everything before the first "Thread" line (the banner of
 * the thread library, the frame it stopped in, which the first frame repeats), notices in
 * brackets and warnings. */
static int mx_gdb_chatter(const char *line, int seen_thread)
{
    return !seen_thread || line[0] == '[' || !strncmp(line, "warning:", 8);
}

/* Passes gdb's output on for rank r (empty lines go: strtok). */
static void mx_stack_say(mx_job *job, mx_rank *r, char *out)
{
    int frames = strstr(out, "\n#") != NULL || out[0] == '#';
    int seen_thread = 0, said = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "Thread ", 7))
            seen_thread = 1;
        if (frames && mx_gdb_chatter(line, seen_thread))
            continue;
        if (!frames && said++ == 10)
            break;
        mx_say(job, "  %s", line);
    }
}

void mx_stacks_report(mx_job *job)
{
    char *out = malloc(MX_STACK_OUT);
    if (!out) {
        mx_say(job, "mpiexec: no memory to read the stacks of the ranks of host %s", job->host);
        return;
    }
    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        if (!r->alive || r->remote || r->pid <= 0)
            continue;
        int fd = -1;
        pid_t g = mx_gdb_start(r->pid, &fd);
        if (g < 0) {
            mx_say(job, "mpiexec: cannot start gdb for the stacks of rank %d: %s", r->rank,
                   strerror(errno));
            break;
        }
        size_t len = 0;
        out[0] = '\0';
        int done = mx_gdb_read(fd, out, MX_STACK_OUT, &len, mx_now() + MX_STACK_WAIT);
        close(fd);
        if (!done)
            (void)killpg(g, SIGKILL);
        (void)waitpid(g, NULL, 0);
        if (!strcmp(out, MX_NO_GDB)) {
            mx_say(job, "mpiexec: --get-stack-traces: gdb is not in PATH; no stacks (install "
                        "gdb)");
            break;
        }
        mx_say(job, "mpiexec: rank %d (host %s, pid %d), stack of each thread%s:", r->rank, r->host,
               (int)r->pid, done ? "" : " (gdb took too long and was stopped; what it printed)");
        mx_stack_say(job, r, out);
        if (job->is_proxy && mx_proxy_link) { /* mpiexec hears from us at least once a rank */
            (void)mx_link_send(mx_proxy_link, MX_M_PING, 0, NULL, 0);
            (void)mx_link_flush(mx_proxy_link);
        }
    }
    free(out);
}
