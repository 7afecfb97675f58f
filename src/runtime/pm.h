/*
 * pm.h — the process-manager client: how a Manifold process learns who it is and exchanges
 * addresses with the other processes of its job.
 *
 * One implementation is chosen at MPI_Init from the environment (pm.c has the exact rules;
 * MANIFOLD_PM=pmi1|pmi2|pmix|singleton forces one):
 *   - PMIx through libpmix (PMIX_RANK / PMIX_NAMESPACE / PMIX_SERVER_URI*): Open MPI's mpirun,
 *     PRRTE, `srun --mpi=pmix`;
 *   - PMI-2 wire protocol (PMI_FD under Slurm): `srun --mpi=pmi2`;
 *   - PMI-1 "simple PMI" wire protocol (PMI_FD, or PMI_PORT + PMI_ID), served by Manifold's own
 *     mpiexec and by MPICH's Hydra (mpiexec.hydra);
 *   - singleton, when no launcher variables are present: rank 0 of 1, a private key-value store.
 *
 * Contract:
 *   - mf_pm_init() is called once, before any other function; it fills the identity below.
 *   - Keys put before a mf_pm_fence() are visible to every process after that fence returns.
 *     Keys are at most MF_PM_KEY_MAX bytes, values at most MF_PM_VAL_MAX (both NUL included).
 *   - All functions are blocking and not thread-safe: the caller serialises them (they are used at
 *     init, connection set-up and finalize, under the library's lock).
 *   - Errors are returned as MPI error codes built with mf_error(); nothing here aborts except
 *     mf_pm_abort().
 */
#ifndef MF_RUNTIME_PM_H
#define MF_RUNTIME_PM_H

#include <stddef.h>

#define MF_PM_KEY_MAX 64
#define MF_PM_VAL_MAX 1024

typedef struct mf_pm_identity {
    int rank;           /* this process's rank in MPI_COMM_WORLD */
    int size;           /* number of processes in the job */
    int appnum;         /* MPMD application number (0 unless MPMD) */
    int universe_size;  /* slots the launcher offers (>= size) */
    char jobid[64];     /* job identifier, unique per job on a host (the PMI kvsname) */
    const char *method; /* "pmi1", "pmi2", "pmix" or "singleton", for messages */
} mf_pm_identity;

int mf_pm_init(mf_pm_identity *id);
int mf_pm_put(const char *key, const char *value);
/* Makes every put visible to all processes and waits for all of them (PMI barrier). */
int mf_pm_fence(void);
/* Looks up a key put by any process before the last fence. MPI_ERR_NAME class if absent. */
int mf_pm_get(const char *key, char *value, size_t len);
/* Ends the whole job with exit status `code`, telling the launcher `msg`. Does not return. */
void mf_pm_abort(int code, const char *msg) __attribute__((noreturn));
int mf_pm_finalize(void);

/*
 * Back ends (internal to src/runtime): pm.c picks one at mf_pm_init and forwards every call to it.
 * Each member has the contract of the function of the same name above.
 */
typedef struct mf_pm_ops {
    const char *name;
    int (*init)(mf_pm_identity *id);
    int (*put)(const char *key, const char *value);
    int (*fence)(void);
    int (*get)(const char *key, char *value, size_t len);
    void (*abort)(int code, const char *msg); /* must not return (pm.c exits if it does) */
    int (*finalize)(void);
} mf_pm_ops;

extern const mf_pm_ops mf_pm_pmi1_ops;      /* pmi1.c: PMI_FD, or PMI_PORT + PMI_ID */
extern const mf_pm_ops mf_pm_pmi2_ops;      /* pmi2.c: PMI_FD, PMI-2 wire protocol */
extern const mf_pm_ops mf_pm_pmix_ops;      /* pmix.c: libpmix (an error if built without) */
extern const mf_pm_ops mf_pm_singleton_ops; /* singleton.c: no launcher */

/* Which back end the environment asks for (pm.c's rules), without initialising it: sets *ops and
 * returns MPI_SUCCESS, or returns an error when the environment is contradictory (Slurm started
 * several tasks but offers no PMI server). Exposed for the unit test. */
int mf_pm_select(const mf_pm_ops **ops);

#endif
