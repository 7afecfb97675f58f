/*
 * allreduce.c — MPI_Allreduce on intracommunicators.
 *
 *   recursive doubling  short data or non-commutative ops: log2 n exchanges of the whole vector;
 *   Rabenseifner        medium/long data, commutative ops: reduce-scatter by recursive halving,
 *                       then allgather by recursive doubling; each rank sends about 2x the
 *                       vector instead of log2(n)x (R. Rabenseifner, "Optimization of
 *                       Collective Reduction Operations", ICCS 2004);
 *   ring                long data, commutative ops: reduce-scatter and allgather around a ring,
 *                       n-1 steps each; bandwidth-optimal and friendly to any n.
 * The first two work on a power-of-two set: with n = p2 + rem, the first 2*rem ranks pair up
 * (even sends to odd, odd keeps the sum and takes part), and the evens get the result at the
 * end. Pairs are neighbours, so each participant stands for a contiguous range of ranks and the
 * operand order stays right for non-commutative ops.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

/* Folds the first 2*rem ranks pairwise; returns this rank's index among the p2 participants, or
 * -1 if it sits out. */
static int fold_in(void *rbuf, void *tmp, MPI_Count count, mf_datatype *dt, mf_op *op,
                   mf_comm *comm, int rem, int *rc)
{
    int r = comm->c_rank;
    if (r >= 2 * rem)
        return r - rem;
    if (r % 2 == 0) {
        *rc = mf_send(rbuf, count, dt, r + 1, MF_TAG_ALLREDUCE, comm, MF_CTX_COLL);
        return -1;
    }
    *rc = mf_recv(tmp, count, dt, r - 1, MF_TAG_ALLREDUCE, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    if (!*rc)
        *rc = mf_op_apply(op, tmp, rbuf, count, dt); /* rank r-1's data is the left operand */
    return r / 2;
}

static int fold_out(void *rbuf, MPI_Count count, mf_datatype *dt, mf_comm *comm, int rem)
{
    int r = comm->c_rank;
    if (r >= 2 * rem)
        return MPI_SUCCESS;
    if (r % 2)
        return mf_send(rbuf, count, dt, r - 1, MF_TAG_ALLREDUCE, comm, MF_CTX_COLL);
    return mf_recv(rbuf, count, dt, r + 1, MF_TAG_ALLREDUCE, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
}

static int allreduce_recursive_doubling(void *rbuf, void *tmp, MPI_Count count, mf_datatype *dt,
                                        mf_op *op, mf_comm *comm)
{
    int n = comm->c_size, p2 = mf_coll_pow2_floor(n), rem = n - p2, rc = MPI_SUCCESS;
    int v = fold_in(rbuf, tmp, count, dt, op, comm, rem, &rc);
    for (int mask = 1; v >= 0 && mask < p2 && !rc; mask <<= 1) {
        int pv = v ^ mask, peer = mf_coll_fold_rank(pv, rem);
        rc = mf_sendrecv(rbuf, count, dt, peer, MF_TAG_ALLREDUCE, tmp, count, dt, peer,
                         MF_TAG_ALLREDUCE, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            break;
        if (pv < v || op->op_commute) {
            rc = mf_op_apply(op, tmp, rbuf, count, dt);
        } else {
            rc = mf_op_apply(op, rbuf, tmp, count, dt);
            if (!rc)
                rc = mf_coll_copy(tmp, count, dt, rbuf, count, dt);
        }
    }
    return rc ? rc : fold_out(rbuf, count, dt, comm, rem);
}

static int allreduce_rabenseifner(void *rbuf, void *tmp, MPI_Count count, mf_datatype *dt,
                                  mf_op *op, mf_comm *comm)
{
    int n = comm->c_size, p2 = mf_coll_pow2_floor(n), rem = n - p2, rc = MPI_SUCCESS;
    int v = fold_in(rbuf, tmp, count, dt, op, comm, rem, &rc);
    if (v >= 0 && !rc) {
        /* reduce-scatter by recursive halving: keep the half of the current block range that
         * our bit at distance d selects; after log2 p2 steps we own block v */
        int lo = 0, hi = p2;
        for (int d = p2 / 2; d >= 1 && !rc; d /= 2) {
            int peer = mf_coll_fold_rank(v ^ d, rem), mid = lo + d;
            int klo = (v & d) ? mid : lo, khi = (v & d) ? hi : mid; /* kept */
            int slo = (v & d) ? lo : mid, shi = (v & d) ? mid : hi; /* sent */
            MPI_Count ka = mf_coll_block_at(klo, p2, count), kb = mf_coll_block_at(khi, p2, count);
            MPI_Count sa = mf_coll_block_at(slo, p2, count), sb = mf_coll_block_at(shi, p2, count);
            rc = mf_sendrecv(mf_coll_at(rbuf, sa, dt), sb - sa, dt, peer, MF_TAG_ALLREDUCE,
                             mf_coll_at(tmp, ka, dt), kb - ka, dt, peer, MF_TAG_ALLREDUCE, comm,
                             MF_CTX_COLL, MPI_STATUS_IGNORE);
            if (!rc)
                rc =
                    mf_op_apply(op, mf_coll_at(tmp, ka, dt), mf_coll_at(rbuf, ka, dt), kb - ka, dt);
            lo = klo;
            hi = khi;
        }
        /* allgather by recursive doubling: the owned range doubles with the sibling's */
        for (int d = 1; d < p2 && !rc; d *= 2) {
            int peer = mf_coll_fold_rank(v ^ d, rem);
            int plo = (v & d) ? lo - d : hi, phi = plo + d;
            MPI_Count ma = mf_coll_block_at(lo, p2, count), mb = mf_coll_block_at(hi, p2, count);
            MPI_Count pa = mf_coll_block_at(plo, p2, count), pb = mf_coll_block_at(phi, p2, count);
            rc = mf_sendrecv(mf_coll_at(rbuf, ma, dt), mb - ma, dt, peer, MF_TAG_ALLREDUCE,
                             mf_coll_at(rbuf, pa, dt), pb - pa, dt, peer, MF_TAG_ALLREDUCE, comm,
                             MF_CTX_COLL, MPI_STATUS_IGNORE);
            lo = plo < lo ? plo : lo;
            hi = phi > hi ? phi : hi;
        }
    }
    return rc ? rc : fold_out(rbuf, count, dt, comm, rem);
}

static int allreduce_ring(void *rbuf, void *tmp, MPI_Count count, mf_datatype *dt, mf_op *op,
                          mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int s = 0; s < n - 1 && !rc; s++) {
        int sb = (r - s - 1 + 2 * n) % n, rb = (r - s - 2 + 2 * n) % n;
        MPI_Count sa = mf_coll_block_at(sb, n, count), se = mf_coll_block_at(sb + 1, n, count);
        MPI_Count ra = mf_coll_block_at(rb, n, count), re = mf_coll_block_at(rb + 1, n, count);
        rc = mf_sendrecv(mf_coll_at(rbuf, sa, dt), se - sa, dt, right, MF_TAG_ALLREDUCE, tmp,
                         re - ra, dt, left, MF_TAG_ALLREDUCE, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (!rc)
            rc = mf_op_apply(op, tmp, mf_coll_at(rbuf, ra, dt), re - ra, dt);
    }
    /* block r is complete here; pass the complete blocks around */
    for (int s = 0; s < n - 1 && !rc; s++) {
        int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
        MPI_Count sa = mf_coll_block_at(sb, n, count), se = mf_coll_block_at(sb + 1, n, count);
        MPI_Count ra = mf_coll_block_at(rb, n, count), re = mf_coll_block_at(rb + 1, n, count);
        rc = mf_sendrecv(mf_coll_at(rbuf, sa, dt), se - sa, dt, right, MF_TAG_ALLREDUCE,
                         mf_coll_at(rbuf, ra, dt), re - ra, dt, left, MF_TAG_ALLREDUCE, comm,
                         MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    return rc;
}

static const char *const allreduce_algos[] = {"recursive_doubling", "rabenseifner", "ring", "shm"};

int mf_coll_allreduce_algo(MPI_Count count, const mf_datatype *dt, const mf_op *op, mf_comm *comm)
{
    int n = comm->c_size, p2 = mf_coll_pow2_floor(n);
    size_t bytes = mf_coll_bytes(count, dt);
    int algo = mf_coll_forced("MANIFOLD_COLL_ALLREDUCE", allreduce_algos, 4);
    if (!algo || algo == 4)
        algo = bytes < mf_coll_short_msg()  ? MF_ALLREDUCE_RD
               : bytes < mf_coll_long_msg() ? MF_ALLREDUCE_RABENSEIFNER
                                            : MF_ALLREDUCE_RING;
    /* the block algorithms reorder operands and need a block per participant */
    if (algo == MF_ALLREDUCE_RABENSEIFNER && (!op->op_commute || count < p2))
        algo = MF_ALLREDUCE_RD;
    if (algo == MF_ALLREDUCE_RING && (!op->op_commute || count < n))
        algo = count >= p2 && op->op_commute ? MF_ALLREDUCE_RABENSEIFNER : MF_ALLREDUCE_RD;
    return algo;
}

int mf_coll_allreduce_p2p(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                          mf_comm *comm)
{
    int n = comm->c_size, rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = mf_coll_copy(sbuf, count, dt, rbuf, count, dt);
    if (rc || n == 1 || count == 0)
        return rc;
    int algo = mf_coll_allreduce_algo(count, dt, op, comm);
    void *raw;
    mf_coll_stackbuf stack;
    void *tmp = mf_coll_tmp_in(algo == 3 ? count / n + 1 : count, dt, &stack, &raw, &rc);
    if (!tmp)
        return rc;
    if (algo == 1)
        rc = allreduce_recursive_doubling(rbuf, tmp, count, dt, op, comm);
    else if (algo == 2)
        rc = allreduce_rabenseifner(rbuf, tmp, count, dt, op, comm);
    else
        rc = allreduce_ring(rbuf, tmp, count, dt, op, comm);
    free(raw);
    return rc;
}

int mf_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                      mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_allreduce(sbuf, rbuf, count, dt, op, comm);
    int algo = mf_coll_forced("MANIFOLD_COLL_ALLREDUCE", allreduce_algos, 4);
    const struct mf_coll_hier *h;
    if (!algo && op->op_commute && count > 0 && (h = mf_coll_hier_get(comm)))
        return mf_coll_hier_reduce(h, sbuf, rbuf, count, dt, op, -1, comm);
    struct mf_coll_shm *s;
    if ((!algo || algo == 4) && (s = mf_coll_shm_reduction(comm, count, dt, algo == 4)))
        return mf_coll_shm_reduce(s, sbuf, rbuf, count, dt, op, -1, comm);
    return mf_coll_allreduce_p2p(sbuf, rbuf, count, dt, op, comm);
}
