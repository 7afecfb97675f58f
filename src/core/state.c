/*
 * state.c — the definitions behind state.h: mf_g, which MPI_Init fills (api/init.c, api/world.c),
 * and what the host is (its cores, whether the job oversubscribes it). They live in core because
 * every layer reads them. The library lock is in lock.c.
 */
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
