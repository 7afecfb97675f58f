/* The progress engine: see progress.h. */
#include "core/progress.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric.h"

#define MF_PROGRESS_MAX_HOOKS 16
/* Upper bound on one sleep even when every fabric has an fd: a lost wake-up then costs latency,
 * never a hang. */
#define MF_PROGRESS_MAX_SLEEP_MS 100
/* While spinning, the clock (and the lock, for other threads) is looked at every this many idle
 * polls; a poll costs tens of nanoseconds, so the spin budget overshoots by about a microsecond. */
#define MF_PROGRESS_CLOCK_EVERY 32

static struct {
    mf_progress_hook fn;
    void *arg;
} mf_progress_hooks[MF_PROGRESS_MAX_HOOKS];
static int mf_progress_nhooks;
static int mf_progress_epfd = -1;
static int mf_progress_spin_ns;
/* Oversubscribed hosts: after the spin, poll and yield the core (sched_yield) this long before
 * sleeping. A yield hands the core to a rank that has work at once, where a sleep/wake-up pair
 * through the doorbell costs tens of microseconds per message. */
static long long mf_progress_yield_ns;
/* Fds already added to the epoll set, by fabric index. */
static int mf_progress_watched[8];

static long long mf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int mf_progress_init(void)
{
    mf_progress_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (mf_progress_epfd < 0)
        return mf_error(MPI_ERR_OTHER, "MPI_Init: epoll_create1 failed: %s", strerror(errno));
    for (size_t i = 0; i < sizeof mf_progress_watched / sizeof mf_progress_watched[0]; i++)
        mf_progress_watched[i] = -1;
    /* The spin budget is decided once the host layout is known (first wait). */
    mf_progress_spin_ns = -1;
    return MPI_SUCCESS;
}

void mf_progress_finalize(void)
{
    if (mf_progress_epfd >= 0)
        close(mf_progress_epfd);
    mf_progress_epfd = -1;
    mf_progress_nhooks = 0;
}

int mf_progress_hook_add(mf_progress_hook fn, void *arg)
{
    if (mf_progress_nhooks == MF_PROGRESS_MAX_HOOKS)
        return mf_error(MPI_ERR_INTERN, "progress: more than %d hooks", MF_PROGRESS_MAX_HOOKS);
    mf_progress_hooks[mf_progress_nhooks].fn = fn;
    mf_progress_hooks[mf_progress_nhooks].arg = arg;
    mf_progress_nhooks++;
    return MPI_SUCCESS;
}

void mf_progress_hook_remove(mf_progress_hook fn, void *arg)
{
    for (int i = 0; i < mf_progress_nhooks; i++) {
        if (mf_progress_hooks[i].fn == fn && mf_progress_hooks[i].arg == arg) {
            mf_progress_hooks[i] = mf_progress_hooks[--mf_progress_nhooks];
            return;
        }
    }
}

int mf_progress_poll(void)
{
    mf_fabric **fabrics;
    int nf = mf_fabrics_active(&fabrics), n = 0;
    for (int i = 0; i < nf; i++)
        n += fabrics[i]->ops->progress(fabrics[i]);
    for (int i = 0; i < mf_progress_nhooks; i++)
        n += mf_progress_hooks[i].fn(mf_progress_hooks[i].arg);
    return n;
}

/* Asks every fabric whether it may sleep; returns the sleep timeout in ms, or 0 if one of them
 * has work (those already prepared are told sleep_end). */
static int mf_progress_prepare_sleep(mf_fabric **fabrics, int nf)
{
    int timeout = MF_PROGRESS_MAX_SLEEP_MS;
    for (int i = 0; i < nf; i++) {
        mf_fabric *f = fabrics[i];
        int fd = f->ops->wait_fd(f);
        if (fd < 0) {
            int ms = f->poll_interval_us / 1000;
            if (ms < timeout)
                timeout = ms;
        } else if (i < 8 && mf_progress_watched[i] != fd) {
            struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
            if (epoll_ctl(mf_progress_epfd, EPOLL_CTL_ADD, fd, &ev) == 0 || errno == EEXIST)
                mf_progress_watched[i] = fd;
        }
        if (!f->ops->sleep_prepare(f)) {
            for (int j = 0; j <= i; j++)
                fabrics[j]->ops->sleep_end(fabrics[j]);
            return 0;
        }
    }
    return timeout;
}

static int mf_progress_poll_all(void *arg)
{
    return mf_progress_poll();
}

int mf_progress_wait(bool (*done)(void *arg), void *arg)
{
    return mf_progress_wait_poll(done, mf_progress_poll_all, arg);
}

int mf_progress_wait_poll(bool (*done)(void *arg), int (*poll)(void *arg), void *arg)
{
    if (mf_progress_spin_ns < 0) {
        const char *s = mf_config_str("MANIFOLD_SPIN_US");
        long us = *s ? mf_config_long("MANIFOLD_SPIN_US") : (mf_g.oversubscribed ? 0 : 50);
        mf_progress_spin_ns = (int)(us < 0 ? 0 : us > 1000000 ? 1000000000 : us * 1000);
        long yus = mf_g.oversubscribed ? mf_config_long("MANIFOLD_YIELD_US") : 0;
        mf_progress_yield_ns = yus < 0 ? 0 : (long long)yus * 1000;
    }
    long long idle_since = -1; /* read the clock only once polling finds nothing */
    unsigned idle_polls = 0;
    while (!done(arg)) {
        if (poll(arg) > 0) {
            idle_since = -1;
            idle_polls = 0;
            continue;
        }
        if (done(arg))
            break;
        /* An idle poll of shared memory costs less than reading the clock (vDSO, tens of ns):
         * look at the time only every MF_PROGRESS_CLOCK_EVERY idle polls, so that a message
         * arriving while we spin is seen at once, not after a clock read. */
        if (++idle_polls % MF_PROGRESS_CLOCK_EVERY != 0 && idle_since >= 0 &&
            mf_progress_spin_ns > 0)
            continue;
        if (idle_since < 0)
            idle_since = mf_now_ns();
        long long idle = mf_now_ns() - idle_since;
        if (idle < mf_progress_spin_ns) {
            /* Let other threads in (MPI_THREAD_MULTIPLE): they may hold what we wait for. */
            mf_unlock();
            mf_lock();
            continue;
        }
        if (idle < mf_progress_spin_ns + mf_progress_yield_ns) {
            mf_unlock();
            sched_yield();
            mf_lock();
            continue;
        }
        mf_fabric **fabrics;
        int nf = mf_fabrics_active(&fabrics);
        int timeout = mf_progress_prepare_sleep(fabrics, nf);
        if (timeout == 0) {
            if (mf_g.oversubscribed)
                sched_yield();
            continue;
        }
        struct epoll_event evs[8];
        mf_unlock();
        int r = epoll_wait(mf_progress_epfd, evs, 8, timeout);
        mf_lock();
        for (int i = 0; i < nf; i++)
            fabrics[i]->ops->sleep_end(fabrics[i]);
        if (r < 0 && errno != EINTR)
            return mf_error(MPI_ERR_INTERN, "progress: epoll_wait failed: %s", strerror(errno));
        idle_since = -1;
    }
    return MPI_SUCCESS;
}
