/*
 * bench_raw.h — helpers for the no-MPI baselines that run as two processes of one program
 * (raw_shm, raw_tcp, raw_ofi, line; after bench_util.h): the cores to pin them to, the fork
 * that makes the second process, and the end where the first collects the second.
 */
#ifndef BENCH_RAW_H
#define BENCH_RAW_H

#include "bench_util.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Takes "--cpus A,B" out of argv (in place; *argc updated, argv[*argc] = NULL): the cores of
 * the first and second process, 0 and 1 unless given. */
static inline void bench_take_cpus(int *argc, char **argv, int cpus[2])
{
    cpus[0] = 0;
    cpus[1] = 1;
    int keep = 0;
    for (int i = 0; i < *argc; i++) {
        if (!strcmp(argv[i], "--cpus") && i + 1 < *argc) {
            sscanf(argv[++i], "%d,%d", &cpus[0], &cpus[1]);
            continue;
        }
        argv[keep++] = argv[i];
    }
    *argc = keep;
    argv[keep] = NULL;
}

/* len bytes of zeroed memory that both processes will share (mapped before the fork); exits
 * with status 1 and a message naming `prog` if it cannot be had. */
static inline void *bench_shared(const char *prog, size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "%s: mmap of %zu shared bytes: %s\n", prog, len, strerror(errno));
        exit(1);
    }
    return p;
}

/* SIGCHLD in the lead: a second process that ended with a failure (a die() on its side, a core
 * it could no longer have) ends the lead at once with status 1, since the lead would otherwise
 * wait forever for a partner that is gone. Peeks with WNOWAIT, so that a second process that
 * ended well is still reaped by bench_join. */
static inline void bench_partner_ended(int sig)
{
    (void)sig;
    int saved_errno = errno; /* the interrupted code may be about to read it */
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    bool failed = waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0 &&
                  !(info.si_code == CLD_EXITED && info.si_status == 0);
    errno = saved_errno;
    if (!failed)
        return;
    static const char msg[] = "bench: the second process failed; the first ends too\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)w;
    _exit(1);
}

/* Forks the second process (stdout flushed first, so nothing is printed twice) and pins each to
 * its core. Returns the child's pid in the first process (the lead), 0 in the second. Both
 * cores are tried before the fork, so that neither process is left waiting for a partner that
 * could not start; a baseline on the wrong core is no baseline, so a core that cannot be had
 * ends the program with status 1, as does a failed fork. Neither process outlives a failure of
 * the other: the lead ends when the second fails (bench_partner_ended), the second is killed
 * when the lead goes. */
static inline pid_t bench_fork_pinned(const char *prog, const int cpus[2])
{
    for (int i = 1; i >= 0; i--)
        if (bench_pin(cpus[i]) != 0) {
            fprintf(stderr, "%s: cannot pin to core %d: %s\n", prog, cpus[i], strerror(errno));
            exit(1);
        }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = bench_partner_ended;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    fflush(stdout);
    pid_t lead = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        exit(1);
    }
    if (pid == 0) {
        signal(SIGCHLD, SIG_DFL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != lead)
            _exit(1); /* the lead is already gone */
        if (bench_pin(cpus[1]) != 0) {
            fprintf(stderr, "%s: cannot pin to core %d: %s\n", prog, cpus[1], strerror(errno));
            _exit(1); /* was possible a moment ago */
        }
    }
    return pid;
}

/* The end of both processes: the second exits 0; the lead waits for it and returns the
 * program's status, 0 only if the second succeeded too. */
static inline int bench_join(pid_t pid)
{
    if (pid == 0)
        _exit(0);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

#endif
