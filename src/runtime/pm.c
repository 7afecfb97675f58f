/*
 * pm.c — chooses the process-manager back end at mf_pm_init and forwards the pm.h calls to it.
 *
 * Choice, from the environment the launcher left us:
 *   PMI_FD or PMI_PORT set  -> PMI-1 wire protocol (Manifold's mpiexec, MPICH Hydra);
 *   otherwise               -> singleton (rank 0 of 1).
 * A launcher variable that is present but unusable is an error, never a silent singleton: a job
 * of N processes that each believe they are alone would compute garbage.
 */
#include "runtime/pm.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"

static const mf_pm_ops *pm_ops;

int mf_pm_init(mf_pm_identity *id)
{
    if (pm_ops)
        return mf_error(MPI_ERR_OTHER, "PMI: process manager initialised twice");
    const mf_pm_ops *ops = &mf_pm_singleton_ops;
    if (getenv("PMI_FD") || getenv("PMI_PORT"))
        ops = &mf_pm_pmi1_ops;
    int rc = ops->init(id);
    if (rc != MPI_SUCCESS)
        return rc;
    id->method = ops->name;
    pm_ops = ops;
    return MPI_SUCCESS;
}

int mf_pm_put(const char *key, const char *value)
{
    if (!pm_ops)
        return mf_error(MPI_ERR_OTHER, "PMI: put before init");
    return pm_ops->put(key, value);
}

int mf_pm_fence(void)
{
    if (!pm_ops)
        return mf_error(MPI_ERR_OTHER, "PMI: fence before init");
    return pm_ops->fence();
}

int mf_pm_get(const char *key, char *value, size_t len)
{
    if (!pm_ops)
        return mf_error(MPI_ERR_OTHER, "PMI: get before init");
    return pm_ops->get(key, value, len);
}

void mf_pm_abort(int code, const char *msg)
{
    /* Abort must work even if init failed or never ran: then there is nobody to tell. */
    const mf_pm_ops *ops = pm_ops ? pm_ops : &mf_pm_singleton_ops;
    ops->abort(code, msg);
    _exit(code);
}

int mf_pm_finalize(void)
{
    if (!pm_ops)
        return MPI_SUCCESS;
    int rc = pm_ops->finalize();
    pm_ops = NULL;
    return rc;
}
