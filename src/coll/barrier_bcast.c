/*
 * barrier_bcast.c — MPI_Barrier and MPI_Bcast on intracommunicators.
 *
 * Barrier: dissemination (Hensgen, Finkel, Manber): in round k every rank signals rank + 2^k and
 * waits for rank - 2^k; after ceil(log2 n) rounds everyone has heard, transitively, from all.
 *
 * Bcast: binomial tree for short messages (log2 n steps, each carrying the whole message; the
 * tree's shape is in coll_impl.h); for long messages the van de Geijn scheme: a binomial
 * scatter of n pieces followed by a ring allgather, which moves about 2x the message per rank
 * instead of log2(n)x.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"
#include "core/error.h"
#include "datatype/status.h"

static const char *const barrier_algos[] = {"dissemination", "shm"};

int mf_coll_barrier(mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_barrier(comm);
    int algo = mf_coll_forced("MANIFOLD_COLL_BARRIER", barrier_algos, 2);
    const struct mf_coll_hier *h;
    if (!algo && (h = mf_coll_hier_get(comm)))
        return mf_coll_hier_barrier(h);
    struct mf_coll_shm *s;
    if (algo != 1 && (s = mf_coll_shm_get(comm)))
        return mf_coll_shm_barrier(s, comm);
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    mf_datatype *byte = mf_coll_byte();
    for (int k = 1; k < n && !rc; k <<= 1)
        rc = mf_sendrecv(NULL, 0, byte, (r + k) % n, MF_TAG_BARRIER, NULL, 0, byte, (r - k + n) % n,
                         MF_TAG_BARRIER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    return rc;
}

/* A bcast whose counts differ between processes is erroneous, but common enough (MPICH's tests
 * have one) to deserve an error instead of a hang. A process that receives more or fewer bytes
 * than its count describes reports it, and still forwards, so that its subtree finishes the
 * bcast rather than waits for data that would never come; it forwards an empty message, which
 * tells every process below (those with data to receive) that the bcast failed above them.
 * Returns the error a received message earns (truncated: the receive's MPI_ERR_TRUNCATE, or
 * MPI_SUCCESS), MPI_SUCCESS when it matches the count. */
static int bcast_check_size(const MPI_Status *st, MPI_Count count, mf_datatype *dt, int truncated,
                            int parent, int root)
{
    size_t want = mf_coll_bytes(count, dt);
    if (truncated)
        return mf_error(MPI_ERR_TRUNCATE,
                        "MPI_Bcast: rank %d sent more than the %zu bytes of count and datatype "
                        "here (every process must pass the root's type signature)",
                        parent, want);
    size_t got = (size_t)mf_status_get_bytes(st);
    if (got == want)
        return MPI_SUCCESS;
    if (got == 0 && parent != root)
        return mf_error(MPI_ERR_COUNT,
                        "MPI_Bcast: a process between the root and this one (its parent in the "
                        "tree: rank %d) found counts that do not match the root's",
                        parent);
    return mf_error(MPI_ERR_COUNT,
                    "MPI_Bcast: rank %d sent %zu bytes, not the %zu bytes of count and datatype "
                    "here (every process must pass the root's type signature)",
                    parent, got, want);
}

int mf_coll_bcast_binomial(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    int n = comm->c_size, vr = (comm->c_rank - root + n) % n, rc = MPI_SUCCESS;
    int mismatch = MPI_SUCCESS;
    if (vr != 0) {
        int parent = (mf_coll_tree_parent(vr) + root) % n;
        MPI_Status st;
        rc = mf_recv(buf, count, dt, parent, MF_TAG_BCAST, comm, MF_CTX_COLL, &st);
        if (rc && mf_error_class(rc) != MPI_ERR_TRUNCATE)
            return rc;
        /* reported below, once the subtree has its data */
        mismatch = bcast_check_size(&st, count, dt, rc, parent, root);
        rc = MPI_SUCCESS;
    }
    /* All children at once: eager sends complete as they are queued, and rendezvous ones let
     * every child pull the data whenever it runs instead of one after the other, which on an
     * oversubscribed host would cost a context switch per child. */
    mf_request *reqs[32];
    int m = 0;
    for (int mask = mf_coll_tree_first_child_mask(vr); vr + mask < n && !rc; mask <<= 1)
        rc = mf_isend_standard(buf, mismatch ? 0 : count, dt, (vr + mask + root) % n, MF_TAG_BCAST,
                               comm, MF_CTX_COLL, &reqs[m++]);
    if (rc)
        m--; /* the failed isend made no request */
    int wrc = mf_coll_waitall_free(m, reqs);
    return rc ? rc : wrc ? wrc : mismatch;
}

/* Byte offset where the piece of relative rank v starts (pieces of `chunk` bytes, the last ones
 * possibly short or empty). */
static size_t piece_at(int v, size_t chunk, size_t total)
{
    size_t off = (size_t)v * chunk;
    return off < total ? off : total;
}

static int bcast_scatter_allgather(void *buf, MPI_Count count, mf_datatype *dt, int root,
                                   mf_comm *comm)
{
    int n = comm->c_size, vr = (comm->c_rank - root + n) % n, rc = MPI_SUCCESS;
    size_t total = mf_coll_bytes(count, dt), chunk = (total + (size_t)n - 1) / (size_t)n;
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    mf_datatype *byte = mf_coll_byte();
    char *data;
    if (di->dt_contig) {
        data = (char *)buf + di->dt_true_lb;
    } else {
        data = mf_coll_malloc(total, &rc);
        if (!data)
            return rc;
        if (vr == 0)
            mf_coll_pack(buf, count, dt, data);
    }

    /* binomial scatter: relative rank v ends up holding its piece; an inner node also receives
     * (and forwards) the pieces of its subtree [v, v + lowbit(v)) */
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (vr & mask) {
            size_t a = piece_at(vr, chunk, total), b = piece_at(vr + mask, chunk, total);
            rc = mf_recv(data + a, (MPI_Count)(b - a), byte, (vr - mask + root) % n, MF_TAG_BCAST,
                         comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
            break;
        }
    }
    for (mask >>= 1; mask > 0 && !rc; mask >>= 1) {
        if (vr + mask < n) {
            size_t a = piece_at(vr + mask, chunk, total), b = piece_at(vr + 2 * mask, chunk, total);
            rc = mf_send(data + a, (MPI_Count)(b - a), byte, (vr + mask + root) % n, MF_TAG_BCAST,
                         comm, MF_CTX_COLL);
        }
    }

    /* ring allgather of the pieces: in step i pass on the piece received in step i-1 */
    int right = (comm->c_rank + 1) % n, left = (comm->c_rank - 1 + n) % n;
    for (int i = 0; i < n - 1 && !rc; i++) {
        int sp = (vr - i + n) % n, rp = (vr - i - 1 + n) % n;
        size_t sa = piece_at(sp, chunk, total), sb = piece_at(sp + 1, chunk, total);
        size_t ra = piece_at(rp, chunk, total), rb = piece_at(rp + 1, chunk, total);
        rc = mf_sendrecv(data + sa, (MPI_Count)(sb - sa), byte, right, MF_TAG_BCAST, data + ra,
                         (MPI_Count)(rb - ra), byte, left, MF_TAG_BCAST, comm, MF_CTX_COLL,
                         MPI_STATUS_IGNORE);
    }
    if (!di->dt_contig) {
        if (!rc && vr != 0)
            mf_coll_unpack(data, buf, count, dt);
        free(data);
    }
    return rc;
}

/* Pipelined chain: relative rank v gets the message from v-1 in chunks of
 * MANIFOLD_COLL_CHAIN_CHUNK bytes and passes each to v+1 as soon as it is in, so the chunks
 * stream down the chain: about (n - 2 + chunks) chunk times, every link carrying the message
 * once (scatter + allgather: about twice the message per link). At most CHAIN_WINDOW receives
 * and as many sends are outstanding per rank. */
#define CHAIN_WINDOW 8

static int bcast_chain(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, vr = (r - root + n) % n, rc = MPI_SUCCESS;
    size_t total = mf_coll_bytes(count, dt), chunk = mf_coll_chain_chunk();
    size_t nck = (total + chunk - 1) / chunk;
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    mf_datatype *byte = mf_coll_byte();
    char *data;
    if (di->dt_contig) {
        data = (char *)buf + di->dt_true_lb;
    } else {
        data = mf_coll_malloc(total, &rc);
        if (!data)
            return rc;
        if (vr == 0)
            mf_coll_pack(buf, count, dt, data);
    }
    mf_request *rq[CHAIN_WINDOW] = {0}, *sq[CHAIN_WINDOW] = {0};
    int prev = (r - 1 + n) % n, next = (r + 1) % n;
#define CHAIN_LEN(k) (MPI_Count)((k) + 1 < nck ? chunk : total - (k)*chunk)
    for (size_t k = 0; k < nck && vr != 0 && k < CHAIN_WINDOW && !rc; k++)
        rc = mf_irecv(data + k * chunk, CHAIN_LEN(k), byte, prev, MF_TAG_BCAST, comm, MF_CTX_COLL,
                      &rq[k]);
    for (size_t k = 0; k < nck && !rc; k++) {
        int w = (int)(k % CHAIN_WINDOW);
        if (vr != 0) {
            rc = mf_coll_waitall_free(1, &rq[w]);
            size_t more = k + CHAIN_WINDOW;
            if (!rc && more < nck)
                rc = mf_irecv(data + more * chunk, CHAIN_LEN(more), byte, prev, MF_TAG_BCAST, comm,
                              MF_CTX_COLL, &rq[w]);
        }
        if (vr != n - 1 && !rc && !(rc = mf_coll_waitall_free(1, &sq[w])))
            rc = mf_isend_standard(data + k * chunk, CHAIN_LEN(k), byte, next, MF_TAG_BCAST, comm,
                                   MF_CTX_COLL, &sq[w]);
    }
#undef CHAIN_LEN
    int wrc = mf_coll_waitall_free(CHAIN_WINDOW, rq);
    int src = mf_coll_waitall_free(CHAIN_WINDOW, sq);
    rc = rc ? rc : wrc ? wrc : src;
    if (!di->dt_contig) {
        if (!rc && vr != 0)
            mf_coll_unpack(data, buf, count, dt);
        free(data);
    }
    return rc;
}

static const char *const bcast_algos[] = {"binomial", "scatter_allgather", "chain", "shm"};

int mf_coll_bcast_algo(size_t bytes, mf_comm *comm)
{
    int algo = mf_coll_forced("MANIFOLD_COLL_BCAST", bcast_algos, 4);
    if (algo && algo != 4)
        return algo;
    /* Scatter + allgather takes log2(n) + n - 1 dependent steps against the tree's log2(n):
     * it pays off once the bytes dominate. On an oversubscribed host every dependent step
     * is a context switch or more, so the tree stays ahead up to 8x further. */
    size_t limit = mf_coll_long_msg() * (mf_coll_oversubscribed(comm) ? 8 : 1);
    /* the chain's n-1 dependent hops are context switches when oversubscribed (4 MiB, 8
     * ranks on 2 cores: 4.8 ms against 1.4 ms for scatter + allgather) */
    bool chain = bytes >= mf_coll_chain_min() && !mf_coll_oversubscribed(comm);
    return (bytes < limit || comm->c_size < 3) ? MF_BCAST_BINOMIAL
           : chain                             ? MF_BCAST_CHAIN
                                               : MF_BCAST_SCATTER_ALLGATHER;
}

int mf_coll_bcast_intra(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    if (comm->c_size == 1 || count == 0 || mf_coll_dt(dt)->dt_size == 0)
        return MPI_SUCCESS;
    int algo = mf_coll_forced("MANIFOLD_COLL_BCAST", bcast_algos, 4);
    size_t bytes = mf_coll_bytes(count, dt);
    const struct mf_coll_hier *h;
    if (!algo && (h = mf_coll_hier_get(comm)))
        return mf_coll_hier_bcast(h, buf, count, dt, root, comm);
    struct mf_coll_shm *s;
    /* The segment from MANIFOLD_COLL_SHM_BCAST_MIN: below, back-to-back bcasts measured 2-15x
     * faster through the tree, whose eager sends let the root run many operations ahead of its
     * children (the segment's root runs at most 4 steps ahead); above, the segment's one copy
     * in and n parallel copies out won (64 KiB - 1 MiB at 4 and 8 ranks: 1.2-6x). */
    bool shm =
        algo == 4 || (!algo && bytes >= mf_coll_shm_bcast_min() && bytes <= mf_coll_shm_max());
    if (shm && (s = mf_coll_shm_get(comm)))
        return mf_coll_shm_bcast(s, buf, count, dt, root, comm);
    algo = mf_coll_bcast_algo(bytes, comm);
    if (algo == 1)
        return mf_coll_bcast_binomial(buf, count, dt, root, comm);
    if (algo == 3)
        return bcast_chain(buf, count, dt, root, comm);
    return bcast_scatter_allgather(buf, count, dt, root, comm);
}

int mf_coll_bcast(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_bcast(buf, count, dt, root, comm);
    return mf_coll_bcast_intra(buf, count, dt, root, comm);
}
