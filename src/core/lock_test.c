/*
 * lock_test.c — the library lock (lock.h):
 *   off        before mf_lock_enable, trylock says yes and lock and unlock do nothing.
 *   recursion  taken twice and by trylock: free for another thread only after the last release.
 *   slices     a thread that waits longer than a slice (the holder keeps the lock 20 ms) gets
 *              it once released, and not before; several such waiters each get it once.
 *   while      mf_lock_enable_while: on; an inner release leaves it on and held; the outermost
 *              release goes off once no longer needed, and not while needed; mf_lock_enable
 *              makes it for good.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "core/lock.h"
#include "unit_check.h"

static void *try_from_other(void *arg)
{
    bool *got = arg;
    *got = mf_trylock();
    if (*got)
        mf_unlock();
    return NULL;
}

static bool other_thread_gets_it(void)
{
    bool got = false;
    pthread_t t;
    pthread_create(&t, NULL, try_from_other, &got);
    pthread_join(t, NULL);
    return got;
}

static void test_recursion(void)
{
    mf_lock();
    mf_lock();
    CHECKF(mf_trylock(), "the holder's trylock nests");
    mf_unlock();
    mf_unlock();
    CHECKF(!other_thread_gets_it(), "held once more: another thread must not get it");
    mf_unlock();
    CHECKF(other_thread_gets_it(), "released as often as taken: another thread gets it");
}

static bool needed_now;
static bool needed(void)
{
    return needed_now;
}

static void test_while(void)
{
    needed_now = true;
    mf_lock_enable_while(needed);
    CHECKF(mf_lock_enabled(), "enable_while: on");
    mf_lock();
    mf_lock();
    needed_now = false;
    mf_unlock();
    CHECKF(mf_lock_enabled(), "an inner release while no longer needed: still on");
    CHECKF(!other_thread_gets_it(), "an inner release: still held");
    mf_unlock();
    CHECKF(!mf_lock_enabled(), "the outermost release, no longer needed: off");
    CHECKF(other_thread_gets_it(), "off: another thread gets it");

    needed_now = true;
    mf_lock_enable_while(needed);
    mf_lock();
    mf_unlock();
    CHECKF(mf_lock_enabled(), "the outermost release while needed: still on");
    CHECKF(other_thread_gets_it(), "released: another thread gets it");
    mf_lock_enable();
    needed_now = false;
    mf_lock();
    mf_unlock();
    CHECKF(mf_lock_enabled(), "after mf_lock_enable: on for good");
}

#define WAITERS 3

static atomic_int released, inside, turns, early, together;

static void *waiter(void *arg)
{
    mf_lock();
    atomic_fetch_add(atomic_load(&released) ? &turns : &early, 1);
    if (atomic_fetch_add(&inside, 1) != 0)
        atomic_fetch_add(&together, 1);
    nanosleep(&(struct timespec){0, 100 * 1000}, NULL); /* two slices: the others wait too */
    atomic_fetch_sub(&inside, 1);
    mf_unlock();
    return arg;
}

static void test_slices(void)
{
    pthread_t w[WAITERS];
    mf_lock();
    for (int i = 0; i < WAITERS; i++)
        pthread_create(&w[i], NULL, waiter, NULL);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* 400 of their slices */
    atomic_store(&released, 1);
    mf_unlock();
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i], NULL);
    CHECKF(!atomic_load(&early), "%d waiters got the lock while it was held", atomic_load(&early));
    CHECKF(!atomic_load(&together), "%d waiters were inside at once", atomic_load(&together));
    CHECKF(atomic_load(&turns) == WAITERS, "%d of %d waiters got the lock after its release",
           atomic_load(&turns), WAITERS);
}

int main(void)
{
    CHECKF(mf_trylock(), "not enabled: trylock says yes");
    mf_lock();
    CHECKF(other_thread_gets_it(), "not enabled: mf_lock takes nothing");
    mf_unlock();
    test_while();
    mf_lock_enable();
    test_recursion();
    test_slices();
    return unit_check_result();
}
