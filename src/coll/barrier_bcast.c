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

int mf_coll_barrier(mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_barrier(comm);
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    mf_datatype *byte = mf_coll_byte();
    for (int k = 1; k < n && !rc; k <<= 1)
        rc = mf_sendrecv(NULL, 0, byte, (r + k) % n, MF_TAG_BARRIER, NULL, 0, byte, (r - k + n) % n,
                         MF_TAG_BARRIER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    return rc;
}

static int bcast_binomial(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    int n = comm->c_size, vr = (comm->c_rank - root + n) % n, rc = MPI_SUCCESS;
    if (vr != 0) {
        rc = mf_recv(buf, count, dt, (mf_coll_tree_parent(vr) + root) % n, MF_TAG_BCAST, comm,
                     MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            return rc;
    }
    /* All children at once: eager sends complete as they are queued, and rendezvous ones let
     * every child pull the data whenever it runs instead of one after the other, which on an
     * oversubscribed host would cost a context switch per child. */
    mf_request *reqs[32];
    int m = 0;
    for (int mask = mf_coll_tree_first_child_mask(vr); vr + mask < n && !rc; mask <<= 1)
        rc = mf_isend_standard(buf, count, dt, (vr + mask + root) % n, MF_TAG_BCAST, comm,
                               MF_CTX_COLL, &reqs[m++]);
    if (rc)
        m--; /* the failed isend made no request */
    int wrc = mf_coll_waitall_free(m, reqs);
    return rc ? rc : wrc;
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

static const char *const bcast_algos[] = {"binomial", "scatter_allgather"};

int mf_coll_bcast_intra(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    if (comm->c_size == 1 || count == 0 || mf_coll_dt(dt)->dt_size == 0)
        return MPI_SUCCESS;
    int algo = mf_coll_forced("MANIFOLD_COLL_BCAST", bcast_algos, 2);
    if (!algo) {
        /* Scatter + allgather takes log2(n) + n - 1 dependent steps against the tree's log2(n):
         * it pays off once the bytes dominate. On an oversubscribed host every dependent step
         * is a context switch or more, so the tree stays ahead up to 8x further. */
        size_t limit = mf_coll_long_msg() * (mf_coll_oversubscribed() ? 8 : 1);
        algo = (mf_coll_bytes(count, dt) < limit || comm->c_size < 3) ? 1 : 2;
    }
    if (algo == 1)
        return bcast_binomial(buf, count, dt, root, comm);
    return bcast_scatter_allgather(buf, count, dt, root, comm);
}

int mf_coll_bcast(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_bcast(buf, count, dt, root, comm);
    return mf_coll_bcast_intra(buf, count, dt, root, comm);
}
