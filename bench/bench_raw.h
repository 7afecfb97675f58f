/*
 * bench_raw.h — helpers for the no-MPI baselines that run as two processes of one program
 * (raw_shm, raw_tcp, raw_ofi, line; after bench_util.h): the cores to pin them to, the fork
 * that makes the second process, and the end where the first collects the second.
 */
#ifndef BENCH_RAW_H
#define BENCH_RAW_H

#include "bench_util.h"

#include <sys/mman.h>
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

/* Forks the second process (stdout flushed first, so nothing is printed twice) and pins each to
 * its core. Returns the child's pid in the first process (the lead), 0 in the second. Both
 * cores are tried before the fork, so that neither process is left waiting for a partner that
 * could not start; a baseline on the wrong core is no baseline, so a core that cannot be had
 * ends the program with status 1, as does a failed fork. */
static inline pid_t bench_fork_pinned(const char *prog, const int cpus[2])
{
    for (int i = 1; i >= 0; i--)
        if (bench_pin(cpus[i]) != 0) {
            fprintf(stderr, "%s: cannot pin to core %d: %s\n", prog, cpus[i], strerror(errno));
            exit(1);
        }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        exit(1);
    }
    if (pid == 0 && bench_pin(cpus[1]) != 0)
        _exit(1); /* was possible a moment ago */
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
