/*
 * nbc.h — nonblocking and persistent collectives (MPI-3 I<coll>, MPI-4 <Coll>_init).
 *
 * A nonblocking collective is compiled into a schedule: a list of rounds, each a set of
 * operations (send, receive, local copy, local reduction) that start together. A round ends
 * when all its transfers have completed; then the next starts. One progress source advances every
 * active schedule, and the last round's end completes the user's request (MF_REQ_COLL) with
 * mf_request_complete semantics.
 *
 * Matching: each collective takes the next value of a per-communicator sequence number and all
 * its transfers use the tag MF_NBC_TAG_BASE + (sequence mod MF_NBC_TAG_SPAN) on the
 * communicator's collective context. MPI requires every process to issue the collectives of a
 * communicator in the same order, so the same operation gets the same tag everywhere, and
 * concurrent collectives on one communicator never match each other's messages. The tags lie
 * above the blocking collectives' (coll_impl.h) and below MF_TAG_COMM_BASE (comm.h).
 *
 * Persistent collectives: *_init makes an inactive MF_REQ_COLL request that keeps a copy of the
 * arguments (arrays copied, datatypes and op retained); each MPI_Start builds a fresh schedule
 * whose request becomes the persistent request's rq_inner, as for persistent point-to-point.
 * A persistent collective takes its sequence number at its initialisation, which every process
 * makes in the same order (MPI-4.0 6.13), and every start's transfers use that tag: processes
 * may start a communicator's persistent collectives in different orders (only the info
 * assertion mpi_assert_strict_persistent_collective_ordering would promise otherwise). Two
 * starts of one request cannot mix: a process starts it again only after its previous round
 * completed there, and messages between two processes on one tag keep their order. (The tag
 * comes round again after MF_NBC_TAG_SPAN more collectives on the communicator; a collective
 * given it then must not run at the same time as the request.)
 *
 * All functions are called with the library lock held.
 */
#ifndef MF_COLL_NBC_H
#define MF_COLL_NBC_H

#include <mpi.h>
#include <stdbool.h>

#include "coll/op.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "p2p/p2p.h"

#define MF_NBC_TAG_BASE 0x10000000
#define MF_NBC_TAG_SPAN 0x01000000

typedef enum mf_nbc_kind {
    MF_NBC_BARRIER,
    MF_NBC_BCAST,
    MF_NBC_GATHER,
    MF_NBC_GATHERV,
    MF_NBC_SCATTER,
    MF_NBC_SCATTERV,
    MF_NBC_ALLGATHER,
    MF_NBC_ALLGATHERV,
    MF_NBC_ALLTOALL,
    MF_NBC_ALLTOALLV,
    MF_NBC_ALLTOALLW,
    MF_NBC_REDUCE,
    MF_NBC_ALLREDUCE,
    MF_NBC_REDUCE_SCATTER,
    MF_NBC_REDUCE_SCATTER_BLOCK,
    MF_NBC_SCAN,
    MF_NBC_EXSCAN,
    MF_NBC_NEIGHBOR, /* neighborhood collectives: one block per neighbour (see below) */
} mf_nbc_kind;

/* A collective's arguments, exactly as the blocking internal call (coll.h) takes them: the
 * fields a kind does not use are ignored. Arrays have one entry per process of the peer group
 * where they are significant (NULL elsewhere is fine); alltoallw's displacements are bytes.
 * MF_NBC_NEIGHBOR describes every neighbourhood collective as alltoallw does: block j of the
 * a_scounts/a_sdispls/a_sdts arrays goes to destination j, block i of the a_r* arrays comes
 * from source i (mf_topo_neighbors' order, one entry per neighbour, MPI_PROC_NULL ones
 * skipped); displacements are bytes from a_sbuf / a_rbuf, which may be MPI_BOTTOM. */
typedef struct mf_nbc_args {
    mf_nbc_kind a_kind;
    const void *a_sbuf;
    MPI_Count a_scount;
    const MPI_Count *a_scounts;
    const MPI_Aint *a_sdispls;
    mf_datatype *a_sdt;
    mf_datatype *const *a_sdts;
    void *a_rbuf;
    MPI_Count a_rcount;
    const MPI_Count *a_rcounts;
    const MPI_Aint *a_rdispls;
    mf_datatype *a_rdt;
    mf_datatype *const *a_rdts;
    mf_op *a_op;
    int a_root;
} mf_nbc_args;

/* How an entry point that checked its arguments wants the collective run: NULL (in the API
 * helpers of coll.c / coll_reduce.c) means blocking. */
typedef struct mf_nbc_call {
    MPI_Request *nc_request; /* receives the new request's handle */
    bool nc_persistent;      /* *_init: an inactive persistent request instead of a start */
} mf_nbc_call;

/* Starts the collective (or makes the persistent request) and stores the handle. `fn` names the
 * MPI function in error messages. Intercommunicators: every collective defined on them (scans
 * and neighbourhood collectives fail with MPI_ERR_COMM). */
int mf_nbc_post(const mf_nbc_call *call, const mf_nbc_args *a, mf_comm *comm, const char *fn);

/* MPI_Start of a persistent collective request `p`: begins a new schedule, which becomes
 * *mf_request_inner(p). */
int mf_nbc_start(mf_request *p);

/* The internal form of mf_nbc_post for other modules: starts the collective and returns the
 * (handle-less) request, which the caller waits for and frees (mf_request_wait / _free). */
int mf_nbc_istart(const mf_nbc_args *a, mf_comm *comm, mf_request **out);

/* MPI_Comm_idup's agreement (nbc_idup.c): `newc` was built by mf_comm_idup_prepare over
 * `parent` and has no context yet; the returned request (on parent, handle-less) completes once
 * every process of parent agreed its context id(s) and parent's attributes were copied to it.
 * Like any collective on parent, every process posts it in the same order. */
int mf_nbc_comm_idup(mf_comm *parent, mf_comm *newc, const char *fn, mf_request **out);

#endif
