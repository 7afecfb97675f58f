/*
 * lock.c — the library lock (lock.h): a recursive mutex whose waiters sleep in bounded slices.
 *
 * Why slices: a mutex's release wakes one sleeping waiter, and only that waiter, once it runs,
 * marks the mutex contended again so that the next release wakes the next one. A thread that
 * takes the lock back to back (a thread polling MPI in a tight loop, a wait letting others in
 * between its passes) finds the lock uncontended meanwhile, and its releases wake nobody. On a
 * host with more threads than cores the woken waiter may not run for a scheduler period, and
 * every other waiter sleeps on until it has. Measured, with a thread per rank calling
 * MPI_Comm_rank and its kin back to back beside two threads that communicate (tests/comm/
 * comm_threads.c without its pause, 4 ranks, 12 threads on 2 cores), waits for the lock of
 * 10 ms or more per rank: 300-600 with waiters asleep until woken, 50-120 with 50 µs slices;
 * the run took 31-37 s against 21-26 s (13 s when the polling thread makes no MPI call: the
 * rest is its share of the cores, and the waits of 1-10 ms, about 1300 per rank either way,
 * are the host's time slices).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "core/lock.h"

bool mf_lock_used; /* only MPI_THREAD_MULTIPLE and the progress thread pay for the lock */

static pthread_mutex_t mf_lock_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

bool mf_lock_enabled(void)
{
    return mf_lock_used;
}

/* Set while the lock is on only for a layer's thread (mf_lock_enable_while); NULL when off or on
 * for good. Written by the thread that switches, while no other thread can be taking the lock
 * (lock.h). */
static bool (*mf_lock_needed)(void);
/* This thread's mf_lock_take calls not yet released: 0 at its outermost release. */
static _Thread_local int mf_lock_depth;

void mf_lock_enable(void)
{
    mf_lock_needed = NULL;
    mf_lock_used = true;
}

void mf_lock_enable_while(bool (*needed)(void))
{
    if (mf_lock_used)
        return; /* on already: for good, or for this same reason */
    mf_lock_needed = needed;
    mf_lock_used = true;
}

void mf_lock_take(void)
{
    mf_lock_depth++;
    if (pthread_mutex_trylock(&mf_lock_mutex) == 0)
        return;
    int rc;
    do {
        /* timedlock takes the realtime clock: a jump changes one slice's length, nothing else */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += MF_LOCK_SLICE_US * 1000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        rc = pthread_mutex_timedlock(&mf_lock_mutex, &until);
    } while (rc == ETIMEDOUT || rc == EINTR);
}

void mf_lock_release(void)
{
    /* The outermost release of a lock on only while needed: off again once it is not. */
    if (--mf_lock_depth == 0 && mf_lock_needed && !mf_lock_needed()) {
        mf_lock_needed = NULL;
        mf_lock_used = false;
    }
    pthread_mutex_unlock(&mf_lock_mutex);
}

bool mf_trylock(void)
{
    if (!mf_lock_used)
        return true;
    if (pthread_mutex_trylock(&mf_lock_mutex) != 0)
        return false;
    mf_lock_depth++;
    return true;
}
