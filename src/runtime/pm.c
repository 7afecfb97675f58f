/*
 * pm.c — chooses the process-manager back end at mf_pm_init and forwards the pm.h calls to it.
 *
 * MANIFOLD_PM=pmi1|pmi2|pmix|singleton forces a back end. Otherwise (MANIFOLD_PM empty or "auto"),
 * from the environment the launcher left us, first match wins:
 *   PMIX_RANK, PMIX_NAMESPACE or PMIX_SERVER_URI*  -> PMIx (Open MPI's mpirun, PRRTE,
 *                                                     srun --mpi=pmix);
 *   PMI_FD with PMI_JOBID                           -> PMI-2 (srun --mpi=pmi2 sets PMI_FD, PMI_JOBID
 *                                                     ("<job>.<step>"), PMI_RANK, PMI_SIZE; Hydra
 *                                                     sets no PMI_JOBID and stays on PMI-1, whose
 *                                                     abort it handles);
 *   PMI_FD or PMI_PORT                              -> PMI-1 (Manifold's mpiexec, MPICH Hydra);
 *   a Slurm task of a multi-task step (SLURM_STEP_ID, SLURM_PROCID, SLURM_STEP_NUM_TASKS or
 *   SLURM_NTASKS > 1) without any of the above     -> error: srun started N copies of the
 *                                                     program with no PMI server to join them;
 *   nothing                                         -> singleton (rank 0 of 1).
 * Manifold's own mpiexec run inside a Slurm step passes PMI_JOBID and SLURM_* through to its ranks;
 * it also sets MANIFOLD_JOB_SECRET, which marks its PMI_FD as PMI-1.
 * A launcher variable that is present but unusable is an error, never a silent singleton: a job
 * of N processes that each believe they are alone would compute garbage.
 */
#include "runtime/pm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"

extern char **environ;

static const mf_pm_ops *pm_ops;

static int pm_env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

static int pm_pmix_env(void)
{
    if (pm_env_set("PMIX_RANK") || pm_env_set("PMIX_NAMESPACE"))
        return 1;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return 1;
    return 0;
}

/* Tasks of `srun -n N` (N > 1) see SLURM_STEP_ID, SLURM_PROCID and the task count. A batch
 * script has no step task count above 1 of its own, so a program run directly in it stays a
 * singleton. */
static int pm_slurm_multitask(long *ntasks)
{
    if (!pm_env_set("SLURM_STEP_ID") || !pm_env_set("SLURM_PROCID"))
        return 0;
    const char *n = getenv("SLURM_STEP_NUM_TASKS");
    if (!n || !*n)
        n = getenv("SLURM_NTASKS");
    *ntasks = n ? strtol(n, NULL, 10) : 0;
    return *ntasks > 1;
}

int mf_pm_select(const mf_pm_ops **ops)
{
    const char *forced = mf_config_str("MANIFOLD_PM");
    static const mf_pm_ops *const all[] = {&mf_pm_pmi1_ops, &mf_pm_pmi2_ops, &mf_pm_pmix_ops,
                                           &mf_pm_singleton_ops};
    if (*forced && strcmp(forced, "auto") != 0) {
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            if (strcmp(forced, all[i]->name) == 0) {
                *ops = all[i];
                return MPI_SUCCESS;
            }
        }
        return mf_error(MPI_ERR_OTHER,
                        "MPI_Init: MANIFOLD_PM='%.32s' is not one of auto, pmi1, pmi2, pmix, "
                        "singleton",
                        forced);
    }
    long ntasks = 0;
    if (pm_pmix_env())
        *ops = &mf_pm_pmix_ops;
    else if (pm_env_set("PMI_FD") && pm_env_set("PMI_JOBID") && !pm_env_set("MANIFOLD_JOB_SECRET"))
        *ops = &mf_pm_pmi2_ops;
    else if (pm_env_set("PMI_FD") || pm_env_set("PMI_PORT"))
        *ops = &mf_pm_pmi1_ops;
    else if (pm_slurm_multitask(&ntasks)) {
        const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
        return mf_error(MPI_ERR_OTHER,
                        "MPI_Init: started by Slurm as task %s of %ld (SLURM_JOB_ID=%s, "
                        "SLURM_STEP_ID=%s) but no process-management server is reachable: neither "
                        "PMI_FD (PMI-1/PMI-2) nor PMIX_* (PMIx) is set, so every task would be a "
                        "separate rank 0. Launch with `srun --mpi=pmi2` (or --mpi=pmix), or set "
                        "MpiDefault=pmi2 in slurm.conf",
                        getenv("SLURM_PROCID"), ntasks, job ? job : "(unset)", step);
    } else
        *ops = &mf_pm_singleton_ops;
    return MPI_SUCCESS;
}

int mf_pm_init(mf_pm_identity *id)
{
    if (pm_ops)
        return mf_error(MPI_ERR_OTHER, "PMI: process manager initialised twice");
    const mf_pm_ops *ops;
    int rc = mf_pm_select(&ops);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = ops->init(id);
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
