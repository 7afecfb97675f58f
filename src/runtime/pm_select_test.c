/*
 * pm_select_test.c — unit test of pm.c's choice of process-manager back end from the environment
 * (the launchers' variables as observed: Hydra, srun --mpi=pmi2, srun --mpi=none, Open MPI's
 * mpirun, Manifold's mpiexec inside a Slurm step) and of MANIFOLD_PM. Exit 0 = pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pm.h"

static int failures;

static const char *const vars[] = {"MANIFOLD_PM",
                                   "PMI_FD",
                                   "PMI_PORT",
                                   "PMI_JOBID",
                                   "PMI_RANK",
                                   "PMIX_RANK",
                                   "PMIX_NAMESPACE",
                                   "PMIX_SERVER_URI41",
                                   "SLURM_JOB_ID",
                                   "SLURM_STEP_ID",
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "SLURM_STEP_NUM_TASKS",
                                   "MANIFOLD_JOB_SECRET"};

/* env: "NAME=value" strings, NULL-terminated. want: back-end name, or NULL for an error. */
static void expect(int line, const char *want, const char *const *env)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    for (; *env; env++)
        putenv((char *)*env);
    const mf_pm_ops *ops = NULL;
    int rc = mf_pm_select(&ops);
    const char *got = rc == 0 && ops ? ops->name : NULL;
    if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
        fprintf(stderr, "line %d: expected %s, got %s (rc=%d)\n", line, want ? want : "an error",
                got ? got : "an error", rc);
        failures++;
    }
}

#define EXPECT(want, ...) expect(__LINE__, want, (const char *const[]){__VA_ARGS__, NULL})

int main(void)
{
    EXPECT("singleton", "UNRELATED=1");
    EXPECT("pmi1", "PMI_FD=6", "PMI_RANK=0", "PMI_SIZE=1"); /* Hydra, our mpiexec */
    EXPECT("pmi1", "PMI_PORT=host:1234", "PMI_ID=0");       /* hydra -pmi-port */
    EXPECT("pmi2", "PMI_FD=11", "PMI_JOBID=1.0", "PMI_RANK=0", "SLURM_JOB_ID=1", "SLURM_STEP_ID=0",
           "SLURM_PROCID=0", "SLURM_NTASKS=2"); /* srun --mpi=pmi2 */
    EXPECT("pmi1", "PMI_FD=5", "PMI_JOBID=1.0", "MANIFOLD_JOB_SECRET=ab", "SLURM_STEP_ID=0",
           "SLURM_PROCID=0", "SLURM_NTASKS=2");         /* our mpiexec inside a Slurm step */
    EXPECT("pmix", "PMIX_RANK=0", "PMIX_NAMESPACE=17"); /* Open MPI's mpirun */
    EXPECT("pmix", "PMIX_SERVER_URI41=x;tcp4://127.0.0.1:1");
    EXPECT("pmix", "PMIX_RANK=0", "PMI_FD=4", "PMI_JOBID=1.0"); /* PMIx wins */
    /* srun --mpi=none -n 4: no PMI, several tasks. */
    EXPECT(NULL, "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_PROCID=3", "SLURM_NTASKS=4",
           "SLURM_STEP_NUM_TASKS=4");
    EXPECT(NULL, "SLURM_STEP_ID=0", "SLURM_PROCID=1", "SLURM_NTASKS=2");
    /* One task, or a batch script without a step: a singleton is right. */
    EXPECT("singleton", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_PROCID=0",
           "SLURM_STEP_NUM_TASKS=1", "SLURM_NTASKS=4");
    EXPECT("singleton", "SLURM_JOB_ID=7", "SLURM_NTASKS=4");
    /* MANIFOLD_PM forces, and rejects what it does not know. */
    EXPECT("pmi2", "MANIFOLD_PM=pmi2", "PMI_FD=6");
    EXPECT("singleton", "MANIFOLD_PM=singleton", "PMI_FD=6");
    EXPECT("pmi1", "MANIFOLD_PM=auto", "PMI_FD=6");
    EXPECT("pmix", "MANIFOLD_PM=pmix");
    EXPECT(NULL, "MANIFOLD_PM=pmi3");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("pm_select_test: ok\n");
    return 0;
}
