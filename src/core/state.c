/*
 * state.c — the definitions behind state.h: mf_g, which MPI_Init fills (api/init.c, api/world.c),
 * and the library lock: one recursive mutex around the engine, taken by API entry points only
 * once some user asked for MPI_THREAD_MULTIPLE or the progress thread runs. Both live in core because every layer reads
 * them; api/init.c decides when to switch the lock on (mf_lock_enable).
 */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "core/config.h"
#include "core/state.h"

mf_state mf_g;

long mf_host_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 0;
}

bool mf_host_oversubscribed(long local_size)
{
    long cores = mf_host_cores();
    return mf_config_bool("MANIFOLD_OVERSUBSCRIBED") || (cores > 0 && local_size > cores);
}

pthread_mutex_t mf_big_lock;
bool mf_lock_used; /* only MPI_THREAD_MULTIPLE pays for the lock */

bool mf_trylock(void)
{
    return !mf_lock_used || pthread_mutex_trylock(&mf_big_lock) == 0;
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
