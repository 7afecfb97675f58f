/*
 * fabric_test_util.h — what the network fabrics' unit tests (tcp_test.c, sctp_test.c,
 * ofi_test.c) share. Test code only, never part of the library: ranks as forked processes whose
 * fabric addresses meet through their parent (no launcher, no PMI server), a record of one
 * send's completion, and the progress engine's way of waiting when idle. Each test still
 * provides the two upcalls (mf_fabric_rx_header, mf_fabric_peer_failed) and its scenarios.
 */
#ifndef MF_FABRIC_TEST_UTIL_H
#define MF_FABRIC_TEST_UTIL_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "runtime/pm.h"

#define MF_FTEST_MAXP 16 /* ranks of one scenario, at most */

/* ---- Inside a rank ---- */

/* A send's completion, for senders that wait for it: calls counts the upcalls (exactly one is
 * right), status is the last one's. */
typedef struct mf_ftest_tx {
    mf_fabric_done d;
    int calls, status;
} mf_ftest_tx;

static inline void mf_ftest_tx_done(mf_fabric_done *d, int status)
{
    ((mf_ftest_tx *)d)->calls++;
    ((mf_ftest_tx *)d)->status = status;
}

/* One sleep of an idle engine: sleep_prepare, a poll of the wait fd for at most limit_ms (or
 * the instance's poll interval when it has one: its fd may then not signal everything), and
 * sleep_end. Returns false when a sleep on the fd alone ran into limit_ms — a wake-up that never
 * came, when work was on its way. */
static inline bool mf_ftest_sleep(mf_fabric *f, int limit_ms)
{
    int fd = f->ops->wait_fd(f), ms = limit_ms;
    if (f->poll_interval_us > 0)
        ms = (f->poll_interval_us + 999) / 1000;
    bool timed_out = false;
    if (f->ops->sleep_prepare(f)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        timed_out = poll(&p, fd >= 0 ? 1 : 0, ms) == 0 && f->poll_interval_us == 0;
    }
    f->ops->sleep_end(f);
    return !timed_out;
}

/* One step of the progress engine: a progress pass; after `spins` passes in a row that found
 * nothing to do, a sleep of at most 10 ms (mf_ftest_sleep). spins = 0 sleeps at once. */
static inline void mf_ftest_pump(mf_fabric *f, int spins)
{
    static int idle; /* passes in a row without work */
    if (f->ops->progress(f) > 0) {
        idle = 0;
        return;
    }
    if (++idle < spins)
        return;
    mf_ftest_sleep(f, 10);
}

/* The rank's side of the address exchange, after its instance is open: writes the value it
 * published under "<prefix>.<rank>" up wfd, reads every rank's value (np of them, rank order)
 * from rfd and puts the other ranks' into its key-value store, where the instance's start looks
 * for them. Returns 0, or 1 when a pipe fails (the parent or a rank went away). */
static inline int mf_ftest_exchange(const char *prefix, int rank, int np, int wfd, int rfd)
{
    char key[MF_PM_KEY_MAX], val[MF_PM_VAL_MAX] = "";
    snprintf(key, sizeof key, "%s.%d", prefix, rank);
    mf_pm_get(key, val, sizeof val);
    if (write(wfd, val, sizeof val) != (ssize_t)sizeof val)
        return 1;
    for (int r = 0; r < np; r++) {
        if (read(rfd, val, sizeof val) != (ssize_t)sizeof val)
            return 1;
        snprintf(key, sizeof key, "%s.%d", prefix, r);
        if (r != rank)
            mf_pm_put(key, val);
    }
    return 0;
}

/* ---- The parent ---- */

/* One scenario's ranks. up[r] carries rank r's messages to the parent, down[r] the parent's to
 * rank r; the parent keeps only its own ends (up[r][0], down[r][1]), so a rank that dies before
 * writing is an end of file, not a hang. */
typedef struct mf_ftest_job {
    int np;      /* ranks forked (pipes open for each) */
    bool failed; /* a pipe or a fork could not be had: the forked ranks were killed */
    pid_t pid[MF_FTEST_MAXP];
    int up[MF_FTEST_MAXP][2], down[MF_FTEST_MAXP][2];
} mf_ftest_job;

/* The body of rank `rank`: its return value is the rank's exit status (0: passed). wfd and rfd
 * are its ends of up and down, for mf_ftest_exchange and any later handshake. */
typedef int (*mf_ftest_rank_fn)(int rank, int np, void *arg, int wfd, int rfd);

/* Forks np ranks running fn(rank, np, arg, ...), then relays the address table: reads one
 * MF_PM_VAL_MAX value from each rank (zeros from a rank that ended without one) and writes all
 * np to every rank. Returns 0, or 1 when a pipe or a fork could not be had (ranks already
 * forked are then killed and reaped). */
static inline int mf_ftest_start(mf_ftest_job *j, int np, mf_ftest_rank_fn fn, void *arg)
{
    j->np = 0;
    j->failed = false;
    for (int r = 0; r < np; r++) {
        if (pipe(j->up[r]) != 0)
            goto fail;
        if (pipe(j->down[r]) != 0) {
            close(j->up[r][0]);
            close(j->up[r][1]);
            goto fail;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(j->up[r][0]);
            close(j->down[r][1]);
            _exit(fn(r, np, arg, j->up[r][1], j->down[r][0]));
        }
        close(j->up[r][1]);
        close(j->down[r][0]);
        if (pid < 0) {
            close(j->up[r][0]);
            close(j->down[r][1]);
            goto fail;
        }
        j->pid[r] = pid;
        j->np = r + 1;
    }
    static char table[MF_FTEST_MAXP][MF_PM_VAL_MAX];
    for (int r = 0; r < np; r++)
        if (read(j->up[r][0], table[r], MF_PM_VAL_MAX) != MF_PM_VAL_MAX)
            memset(table[r], 0, MF_PM_VAL_MAX);
    void (*was)(int) = signal(SIGPIPE, SIG_IGN); /* a rank that is gone is no reason to die */
    for (int r = 0; r < np; r++)
        for (int k = 0; k < np; k++)
            if (write(j->down[r][1], table[k], MF_PM_VAL_MAX) != MF_PM_VAL_MAX)
                break; /* the rank is gone; finish reports it */
    signal(SIGPIPE, was);
    return 0;
fail:
    perror("fabric test: pipe or fork");
    for (int r = 0; r < j->np; r++)
        kill(j->pid[r], SIGKILL); /* finish reaps them and fails */
    j->failed = true;
    return 1;
}

/* Waits for every rank and closes the parent's pipe ends. Returns 0 when all ranks ended with
 * status 0, else 1, with a line naming `label` and each rank that did not. */
static inline int mf_ftest_finish(mf_ftest_job *j, const char *label)
{
    int bad = j->failed;
    for (int r = 0; r < j->np; r++) {
        int st = 0;
        if (waitpid(j->pid[r], &st, 0) != j->pid[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s: rank %d exited with status %d\n", label, r,
                    WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
            bad = 1;
        }
        close(j->up[r][0]);
        close(j->down[r][1]);
    }
    return bad;
}

#endif
