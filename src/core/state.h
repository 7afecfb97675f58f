/*
 * state.h — what every layer may know about this process and its job (read-only after init).
 *
 * Filled by MPI_Init (src/api/init.c) from the process manager and from the host names every
 * rank publishes: world rank/size, which host ("node") each rank lives on, the job id and
 * secret with which fabric handshakes authenticate, the thread level, oversubscription.
 */
#ifndef MF_CORE_STATE_H
#define MF_CORE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/auth.h"
#include "core/lock.h" /* the library lock, which every layer takes through this header */
#include "runtime/pm.h"

typedef struct mf_state {
    bool initialized, finalized;
    int thread_level;      /* level granted by MPI_Init_thread */
    pthread_t main_thread; /* the thread that called MPI_Init (MPI_Is_thread_main) */
    mf_pm_identity pm;     /* rank, size, appnum, jobid, method */
    int rank, size;        /* == pm.rank, pm.size */
    char hostname[256];
    int node; /* index of this host among the job's hosts (0 = rank 0's host) */
    int num_nodes;
    int *node_of;   /* node_of[world rank] */
    int local_rank; /* index among the ranks on this host, in world-rank order */
    int local_size;
    int *local_ranks;          /* world ranks on this host, ascending */
    bool oversubscribed;       /* more ranks on this host than cores */
    mf_auth_secret job_secret; /* 256 bits, from MANIFOLD_JOB_SECRET or agreed through the PM
                                  at init (after the fence on ranks other than 0); the key of
                                  every connection handshake (auth.h), never sent */
    uint64_t job_tag;  /* derived from job_secret, which it does not reveal: tells this job's shm
                          segment from a stale namesake (not a credential) */
    uint64_t job_hash; /* hash of pm.jobid, for handshakes and shm names; not secret */
} mf_state;

extern mf_state mf_g;

/* Whether a host running `local_size` ranks is oversubscribed: the launcher says so
 * (MANIFOLD_OVERSUBSCRIBED), or they outnumber its online cores (not this process's affinity
 * mask: ranks pinned one per core are not). Nor a control group's CPU quota: ranks on separate
 * cores under a quota they outnumber ran 1.4-4x slower with the oversubscribed waits (which
 * hand a shared core to the peer) than spinning and being throttled (reverted 8d43b96).
 * mf_g.oversubscribed is this at MPI_Init; what opens before the world is known (ofi's CQ) asks
 * with the launcher's MANIFOLD_LOCAL_SIZE. */
bool mf_host_oversubscribed(long local_size);
/* The host's online cores, the count mf_host_oversubscribed weighs ranks against (and layers
 * that ask how crowded an oversubscribed host is); 0 when unknown. */
long mf_host_cores(void);

#endif
