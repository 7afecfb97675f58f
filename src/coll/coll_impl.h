/*
 * coll_impl.h — what the collective algorithms in src/coll share (private to src/coll).
 *
 * Tags: every collective family has its own tag on the collective context. Blocking
 * collectives on one communicator never overlap, and point-to-point order between a pair is
 * non-overtaking, so one tag per family is enough for correct matching; distinct tags only make
 * a mismatched program (ranks calling different collectives) fail loudly instead of silently.
 *
 * Buffers: "typed" buffers are user layouts (count elements of a datatype, extent stride);
 * "packed" buffers are byte streams of the datatype's data (datatype.h), sent as MPI_BYTE.
 */
#ifndef MF_COLL_COLL_IMPL_H
#define MF_COLL_COLL_IMPL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "coll/coll.h"
#include "p2p/p2p.h"

enum {
    MF_TAG_BARRIER = 1,
    MF_TAG_BCAST,
    MF_TAG_GATHER,
    MF_TAG_SCATTER,
    MF_TAG_ALLGATHER,
    MF_TAG_ALLTOALL,
    MF_TAG_REDUCE,
    MF_TAG_ALLREDUCE,
    MF_TAG_REDUCE_SCATTER,
    MF_TAG_SCAN,
    MF_TAG_INTER, /* leader-to-leader traffic of intercommunicator collectives */
};

static inline const struct mf_datatype_public *mf_coll_dt(const mf_datatype *dt)
{
    return mf_datatype_info(dt);
}

/* Address of element i of a typed buffer. */
static inline void *mf_coll_at(const void *buf, MPI_Count i, const mf_datatype *dt)
{
    return (char *)buf + i * mf_datatype_info(dt)->dt_extent;
}

/* Bytes of data in count elements. */
static inline size_t mf_coll_bytes(MPI_Count count, const mf_datatype *dt)
{
    return (size_t)count * mf_datatype_info(dt)->dt_size;
}

mf_datatype *mf_coll_byte(void);

/* A typed scratch buffer for `count` elements of dt: returns the pointer to use as buffer
 * address (already shifted by -true_lb) and sets *raw to what mf_coll_free takes; NULL with
 * MPI_ERR_NO_MEM in *rc when memory runs out. */
void *mf_coll_tmp(MPI_Count count, const mf_datatype *dt, void **raw, int *rc);
/* Scratch space on the caller's stack for short vectors: the latency-bound algorithms run on
 * every small reduction, where a malloc/free pair is a measurable part of the cost. */
typedef struct mf_coll_stackbuf {
    _Alignas(max_align_t) char sb_bytes[256];
} mf_coll_stackbuf;
/* mf_coll_tmp, but in *stack when the span fits (then *raw = NULL; free(raw) stays right). */
void *mf_coll_tmp_in(MPI_Count count, const mf_datatype *dt, mf_coll_stackbuf *stack, void **raw,
                     int *rc);
/* MPI_ERR_NO_MEM with a message, for allocations other than scratch buffers. */
int mf_coll_nomem(void);
/* A plain byte buffer (at least 1 byte), NULL with *rc set on failure. */
void *mf_coll_malloc(size_t bytes, int *rc);

/* Local copy between typed buffers (what a send to oneself would do). MPI_ERR_TRUNCATE if the
 * source has more data than the destination can hold. */
int mf_coll_copy(const void *src, MPI_Count scount, const mf_datatype *sdt, void *dst,
                 MPI_Count rcount, const mf_datatype *rdt);

/* Packs / unpacks whole typed buffers to / from byte streams (memcpy when contiguous). */
void mf_coll_pack(const void *buf, MPI_Count count, const mf_datatype *dt, void *out);
void mf_coll_unpack(const void *in, void *buf, MPI_Count count, const mf_datatype *dt);

/* Waits for the n requests (NULL entries skipped), frees them, returns the first error. */
int mf_coll_waitall_free(int n, mf_request **reqs);

/* Rounds down to a power of two. */
static inline int mf_coll_pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Element offset of block i when `count` elements are cut into `nb` nearly equal blocks (the
 * first count % nb one longer). */
static inline MPI_Count mf_coll_block_at(int i, int nb, MPI_Count count)
{
    MPI_Count q = count / nb, rest = count % nb;
    return (MPI_Count)i * q + (i < rest ? i : rest);
}

/* Participant v of the power-of-two set that recursive doubling and halving work on, when the
 * first 2*rem ranks of n = p2 + rem fold pairwise (even into odd): the real rank. */
static inline int mf_coll_fold_rank(int v, int rem)
{
    return v < rem ? 2 * v + 1 : v + rem;
}

/* The broadcast tree (blocking and nonblocking bcast): a binomial tree on relative ranks
 * vr = (rank - root) mod n in which the parent of vr is vr without its highest set bit and the
 * children are vr + 2^k for every 2^k > vr (below n). It has the depth and message count of the
 * textbook binomial tree (parent = vr without its LOWEST bit), but the root's first child is
 * vr 1, whose subtree is every odd relative rank: with ranks bound round-robin to the cores
 * (rank r on core r mod ncores, as bench/pin binds them), the tree splits into per-core subtrees
 * after the first hop, so on an oversubscribed host each core forwards among its own ranks
 * instead of one core doing all the sending while the other only receives (measured at 4 and 8
 * ranks on 2 cores: 2-6x faster back-to-back small bcasts). Children are served in the order of
 * the loop in the users: the largest subtree (smallest 2^k) first. */
static inline int mf_coll_tree_parent(int vr)
{
    int hb = 1;
    while (hb * 2 <= vr)
        hb *= 2;
    return vr - hb;
}
/* Smallest power of two above vr: the first child is vr + this (then doubling). */
static inline int mf_coll_tree_first_child_mask(int vr)
{
    int m = 1;
    while (m <= vr)
        m *= 2;
    return m;
}

/* Whether more processes run on this host than it has cores (core/state.h): then every wait
 * costs context switches, and algorithms with fewer dependent steps win over those that move
 * fewer bytes. False for a communicator spanning hosts (coll_shm.c): its ranks must choose
 * alike, and other hosts may not be oversubscribed. */
bool mf_coll_oversubscribed(mf_comm *comm);

/* Algorithm choice from an override variable: 0 = automatic, i = names[i-1] forced. An unknown
 * name is reported once and means automatic. The environment is read once per variable (these
 * are asked on every call, and a config lookup is a table search plus getenv). */
int mf_coll_forced(const char *var, const char *const *names, int n);
/* Size thresholds (bytes): below short_msg latency-bound algorithms win, above long_msg
 * bandwidth-bound ones do. Read once. */
size_t mf_coll_short_msg(void);
size_t mf_coll_long_msg(void);
/* Bcast: bytes from which the pipelined chain is chosen, and its chunk (at least 1). */
size_t mf_coll_chain_min(void);
size_t mf_coll_chain_chunk(void);
/* A size setting read once into *cache (a static of the caller, 0 before the first read). */
size_t mf_coll_size_setting(size_t *cache, const char *var);

/* Point-to-point algorithm choices, shared by the blocking collectives and the nonblocking
 * schedules (nbc_build.c) so that both follow one set of thresholds and MANIFOLD_COLL_*
 * settings. They decide among the point-to-point algorithms only: the callers settle the shared
 * segment and the host-leader schemes first (a forced "shm" counts as automatic here). Every
 * rank of a communicator must get the same answer, so the inputs are the same everywhere. */
enum { MF_ALLREDUCE_RD = 1, MF_ALLREDUCE_RABENSEIFNER, MF_ALLREDUCE_RING };
/* Rabenseifner and ring only for commutative ops with a block per participant. */
int mf_coll_allreduce_algo(MPI_Count count, const mf_datatype *dt, const mf_op *op, mf_comm *comm);
enum { MF_BCAST_BINOMIAL = 1, MF_BCAST_SCATTER_ALLGATHER, MF_BCAST_CHAIN };
int mf_coll_bcast_algo(size_t bytes, mf_comm *comm);
enum { MF_ALLGATHER_RD = 1, MF_ALLGATHER_BRUCK, MF_ALLGATHER_RING };
/* total: bytes of the whole gathered vector; recursive doubling only for a power of two. */
int mf_coll_allgather_algo(size_t total, mf_comm *comm);
enum { MF_ALLTOALL_BRUCK = 1, MF_ALLTOALL_PAIRWISE, MF_ALLTOALL_LINEAR };
/* blk: bytes per block. */
int mf_coll_alltoall_algo(size_t blk, mf_comm *comm);
/* Transfers in flight per round of the linear alltoall: ALLTOALL_WINDOW peers at a time. */
#define MF_COLL_ALLTOALL_WINDOW 32
/* Reduce-scatter: REDUCE_SCATTERV is a reduce then a scatterv (any op; forced, or a
 * non-commutative op); SHORT is the automatic choice below MANIFOLD_COLL_LONG_MSG for a
 * commutative op, which the blocking code runs as reduce + scatterv and the schedules as
 * recursive halving (the same rounds, less data); RING needs a commutative op. */
enum { MF_RS_REDUCE_SCATTERV = 1, MF_RS_SHORT, MF_RS_RING };
int mf_coll_reduce_scatter_algo(size_t total, const mf_op *op);

/* Shared-memory collectives (coll_shm.c) for a communicator whose ranks share this host. The
 * communicator's segment, or NULL when it has none (yet): every rank must ask at the same
 * point (same collective, same arguments' sizes), since the second such call maps it. */
struct mf_coll_shm;
struct mf_coll_shm *mf_coll_shm_get(mf_comm *comm);
/* Bytes from which bcast takes the segment, and up to which every operation does. */
size_t mf_coll_shm_bcast_min(void);
size_t mf_coll_shm_max(void);
/* The segment for a reduce or allreduce of count elements of dt, or NULL when it should not be
 * used (forced: the setting asks for it, whatever the size). */
struct mf_coll_shm *mf_coll_shm_reduction(mf_comm *comm, MPI_Count count, const mf_datatype *dt,
                                          bool forced);
int mf_coll_shm_barrier(struct mf_coll_shm *s, mf_comm *comm);
int mf_coll_shm_bcast(struct mf_coll_shm *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                      mf_comm *comm);
/* Alltoall of uniform blocks (not MPI_IN_PLACE), in pieces of mf_coll_shm_alltoall_piece
 * bytes per block and step (0: the segment's slots are too small for n pieces). */
int mf_coll_shm_alltoall(struct mf_coll_shm *s, const void *sbuf, MPI_Count scount,
                         mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                         mf_comm *comm);
size_t mf_coll_shm_alltoall_piece(const struct mf_coll_shm *s, int n);
int mf_coll_shm_allgather(struct mf_coll_shm *s, const void *sbuf, MPI_Count scount,
                          mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                          mf_comm *comm);
/* displs: element offsets of the ranks' blocks, displs[n] the total. Type as for reductions. */
int mf_coll_shm_reduce_scatter(struct mf_coll_shm *s, const void *sbuf, void *rbuf,
                               const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *dt,
                               mf_op *op, mf_comm *comm);
/* root >= 0: reduce to root; root < 0: allreduce. */
int mf_coll_shm_reduce(struct mf_coll_shm *s, const void *sbuf, void *rbuf, MPI_Count count,
                       mf_datatype *dt, mf_op *op, int root, mf_comm *comm);

/* Host-leader collectives (coll_hier.c) for a communicator whose ranks span several hosts, at
 * least one of them with two or more: a phase among the ranks of each host (which takes the
 * segment there), one among one leader per host, and one within each host again. Only for
 * commutative reductions: the leaders combine whole hosts, whose ranks need not be
 * consecutive in comm. */
struct mf_coll_hier {
    mf_comm *node;       /* comm's ranks on this host, in comm's order */
    mf_comm *leaders;    /* the first of comm's ranks on each host (NULL if not one of them) */
    int *leader_of_node; /* by host index (mf_g.node_of): rank in leaders of that host's leader */
    int leader;          /* comm rank of this host's leader */
};
/* The scheme for comm, or NULL: asked at the same points as mf_coll_shm_get, alike. */
const struct mf_coll_hier *mf_coll_hier_get(mf_comm *comm);
int mf_coll_hier_barrier(const struct mf_coll_hier *h);
int mf_coll_hier_bcast(const struct mf_coll_hier *h, void *buf, MPI_Count count, mf_datatype *dt,
                       int root, mf_comm *comm);
/* root >= 0: reduce to root; root < 0: allreduce. op must be commutative. */
int mf_coll_hier_reduce(const struct mf_coll_hier *h, const void *sbuf, void *rbuf, MPI_Count count,
                        mf_datatype *dt, mf_op *op, int root, mf_comm *comm);

/* Intracommunicator algorithms that other files of src/coll reuse. */
int mf_coll_bcast_binomial(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm);
/* Allreduce without the shared segment (what maps it uses this). */
int mf_coll_allreduce_p2p(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                          mf_comm *comm);
int mf_coll_bcast_intra(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm);
int mf_coll_reduce_intra(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                         int root, mf_comm *comm);
int mf_coll_gatherv_linear(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                           const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                           int root, mf_comm *comm, int tag);
int mf_coll_scatterv_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                            mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                            int root, mf_comm *comm, int tag);

/* Intercommunicator versions (inter.c). */
int mf_coll_inter_barrier(mf_comm *comm);
int mf_coll_inter_bcast(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm);
int mf_coll_inter_gather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                         MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm);
int mf_coll_inter_gatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                          const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                          int root, mf_comm *comm);
int mf_coll_inter_scatter(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                          MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm);
int mf_coll_inter_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                           mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                           int root, mf_comm *comm);
int mf_coll_inter_allgather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                            MPI_Count rcount, mf_datatype *rdt, mf_comm *comm);
int mf_coll_inter_allgatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                             const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                             mf_comm *comm);
int mf_coll_inter_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                            mf_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                            const MPI_Aint *rdispls, mf_datatype *const *rdts, mf_comm *comm);
int mf_coll_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                         int root, mf_comm *comm);
int mf_coll_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt,
                            mf_op *op, mf_comm *comm);
int mf_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                 mf_datatype *dt, mf_op *op, mf_comm *comm);

#endif
