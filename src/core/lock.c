/*
 * lock.c — the library lock (state.h): one recursive mutex around the engine, taken by API entry
 * points only once some user asked for MPI_THREAD_MULTIPLE. Lives in core because every layer
 * may need to know about it; api/init.c decides when to switch it on (mf_lock_enable).
 */
#include <pthread.h>
#include <stdbool.h>

#include "core/state.h"

static pthread_mutex_t mf_big_lock;
static bool mf_lock_used; /* only MPI_THREAD_MULTIPLE pays for the lock */

void mf_lock(void)
{
    if (mf_lock_used)
        pthread_mutex_lock(&mf_big_lock);
}

void mf_unlock(void)
{
    if (mf_lock_used)
        pthread_mutex_unlock(&mf_big_lock);
}

bool mf_lock_enabled(void)
{
    return mf_lock_used;
}

void mf_lock_enable(void)
{
    if (mf_lock_used)
        return;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&mf_big_lock, &attr);
    pthread_mutexattr_destroy(&attr);
    mf_lock_used = true;
}
