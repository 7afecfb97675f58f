/*
 * nbc_impl.h — the schedule that nonblocking collectives are built into (private to nbc*.c).
 *
 * Building: the builders of nbc_build.c append operations to the current round and call
 * mf_nbc_round() where the next operations depend on the transfers appended so far. Within a
 * round operations start in the order they were appended: local ones (copy, reduce) run at
 * once, transfers are posted. So a local operation may use data received in an earlier round,
 * and a send may carry data a local operation earlier in the same round produced; the builder
 * never reads a buffer a transfer of the same round is still writing.
 *
 * Every buffer is a typed user-layout buffer (count elements of the datatype next to it);
 * scratch buffers come from mf_nbc_tmp and live as long as the schedule. Datatypes and the op
 * named by operations are retained by the schedule (mf_nbc_hold) so that the user may free them
 * while the collective runs.
 */
#ifndef MF_COLL_NBC_IMPL_H
#define MF_COLL_NBC_IMPL_H

#include "coll/nbc.h"

typedef enum {
    MF_NBC_OP_SEND,
    MF_NBC_OP_RECV,
    MF_NBC_OP_COPY,
    MF_NBC_OP_REDUCE,
    MF_NBC_OP_CALL,
} mf_nbc_op_kind;

struct mf_nbc_sched;
/* A local step computed when its round starts (see mf_nbc_callback). */
typedef void (*mf_nbc_fn)(struct mf_nbc_sched *s, void *arg);

typedef struct mf_nbc_op {
    mf_nbc_op_kind o_kind;
    int o_round;
    mf_comm *o_comm; /* transfers: the schedule's comm, or an intercomm's local comm */
    int o_peer;
    /* send / copy source / reduce `in` */
    const void *o_src;
    MPI_Count o_scount;
    mf_datatype *o_sdt;
    /* recv / copy destination / reduce `inout` (count and type of the source) */
    void *o_dst;
    MPI_Count o_rcount;
    mf_datatype *o_rdt;
    mf_op *o_op;
    mf_nbc_fn o_fn; /* call */
    void *o_arg;
} mf_nbc_op;

typedef struct mf_nbc_sched {
    mf_comm *s_comm;
    int s_tag;
    mf_nbc_op *s_ops;
    int s_nops, s_capops;
    int s_round;         /* round being built (then: being run) */
    int s_next;          /* first op not started yet */
    mf_request **s_reqs; /* transfers of the running round */
    int s_nreqs, s_capreqs;
    void **s_bufs; /* scratch allocations to free */
    int s_nbufs, s_capbufs;
    mf_datatype **s_dts; /* retained datatypes */
    int s_ndts, s_capdts;
    mf_op *s_op;       /* retained op, or NULL */
    int s_error;       /* first failure: builds stop adding, runs stop starting rounds */
    int s_truncated;   /* first receive that overflowed its buffer (counts that differ between
                        processes, which is erroneous): the schedule runs to its end all the same,
                        so that processes waiting on this one do not hang, and then fails */
    mf_request *s_req; /* the collective's request */
    void (*s_cleanup)(void *arg); /* called when the schedule is freed, or NULL */
    void *s_cleanup_arg;
    struct mf_nbc_sched *s_next_active, *s_prev_active;
} mf_nbc_sched;

/* A schedule for other nbc*.c files that build their own: an MF_REQ_COLL request on comm and
 * the comm's next tag (nbc.h). Append, then launch: on s_error the schedule and request are
 * freed and the error returned; otherwise the schedule runs and *out is its request. */
int mf_nbc_sched_new(mf_comm *comm, const char *fn, mf_nbc_sched **out);
int mf_nbc_sched_launch(mf_nbc_sched *s, mf_request **out);

/* Appending; each records a failure in s_error (later calls then do nothing). */
void mf_nbc_send(mf_nbc_sched *s, const void *buf, MPI_Count count, mf_datatype *dt, int peer,
                 mf_comm *comm);
void mf_nbc_recv(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int peer,
                 mf_comm *comm);
void mf_nbc_copy(mf_nbc_sched *s, const void *src, MPI_Count scount, mf_datatype *sdt, void *dst,
                 MPI_Count rcount, mf_datatype *rdt);
/* inout = in op inout (mf_op_apply's contract: `in` is the left operand). */
void mf_nbc_reduce(mf_nbc_sched *s, const void *in, void *inout, MPI_Count count, mf_datatype *dt,
                   mf_op *op);
/* A call of fn(s, arg) when its round starts, after the operations appended before it. This is
 * how a schedule decides at run time (MPI_Comm_idup's agreement retries): fn may record a
 * failure in s_error and may append operations, which then run in the rounds after its own —
 * so a call that appends must be the last operation of the schedule so far. */
void mf_nbc_callback(mf_nbc_sched *s, mf_nbc_fn fn, void *arg);
/* Ends the current round (no effect if it is empty). */
void mf_nbc_round(mf_nbc_sched *s);
/* A typed scratch buffer of count elements of dt (NULL with s_error set on failure). */
void *mf_nbc_tmp(mf_nbc_sched *s, MPI_Count count, mf_datatype *dt);

/* Builds the operations of `a` into s (nbc_build.c). Returns s_error or MPI_ERR_COMM for an
 * operation not offered on intercommunicators. */
int mf_nbc_build(mf_nbc_sched *s, const mf_nbc_args *a, const char *fn);
/* Appends an allreduce of count elements over c (intra: every process gets the reduction of
 * all; inter: each side gets the reduction of the other side's data, as MPI_Allreduce).
 * sbuf may equal rbuf. */
void mf_nbc_allreduce(mf_nbc_sched *s, const void *sbuf, void *rbuf, MPI_Count count,
                      mf_datatype *dt, mf_op *op, mf_comm *c);

/* ---- The size-dependent algorithms (nbc_algo.c), chosen as the blocking collectives choose.
 * Each appends to s; those returning bool append nothing and return false when the chooser
 * names the simple algorithm that nbc_build.c has (binomial bcast, ring allgather,
 * reduce + scatterv). */

/* Allreduce on an intracommunicator (recursive doubling, Rabenseifner, ring). sbuf may be
 * MPI_IN_PLACE or rbuf. */
void mf_nbc_allreduce_intra(mf_nbc_sched *s, const void *sbuf, void *rbuf, MPI_Count count,
                            mf_datatype *dt, mf_op *op, mf_comm *c);
/* Reduce-scatter of `mine` (the sum of rcounts elements) by recursive halving or ring; false
 * for a non-commutative op or a forced reduce_scatterv. */
bool mf_nbc_reduce_scatter_commutative(mf_nbc_sched *s, const void *mine, void *rbuf,
                                       const MPI_Count *rcounts, mf_datatype *dt, mf_op *op,
                                       mf_comm *c);
/* Bcast by scatter + allgather or chain; false where the binomial tree is the choice. */
bool mf_nbc_bcast_large(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                        mf_comm *c);
/* Allgather of uniform blocks whose own block is in rbuf already (recursive doubling, Bruck);
 * false where the ring is the choice. */
bool mf_nbc_allgather_log(mf_nbc_sched *s, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                          mf_comm *c);

/* An alltoall's blocks, one per process: what goes to i and where what comes from i lands. */
typedef struct mf_nbc_blocks {
    const void *const *b_sblk;
    const MPI_Count *b_scnt;
    mf_datatype *const *b_sdt;
    void *const *b_rblk;
    const MPI_Count *b_rcnt;
    mf_datatype *const *b_rdt;
} mf_nbc_blocks;
/* Every peer but oneself, `window` peers per round (receives first): 1 is the pairwise
 * exchange, MF_COLL_ALLTOALL_WINDOW the linear one with its bound on transfers in flight. */
void mf_nbc_alltoall_windows(mf_nbc_sched *s, const mf_nbc_blocks *b, int window, mf_comm *c);
/* Bruck, for uniform blocks; includes the own block. */
void mf_nbc_alltoall_bruck(mf_nbc_sched *s, const mf_nbc_blocks *b, mf_comm *c);

#endif
