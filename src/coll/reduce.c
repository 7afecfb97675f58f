/*
 * reduce.c — MPI_Reduce, MPI_Reduce_scatter(_block), MPI_Scan and MPI_Exscan on
 * intracommunicators.
 *
 * Operand order: the standard fixes the result as x0 op x1 op ... op x(n-1) for
 * non-commutative ops; mf_op_apply(op, a, b) computes b = a op b, so wherever a received partial
 * result covers lower ranks it is the left operand, and where it covers higher ranks the local
 * partial is applied to it (then the buffers swap roles).
 *
 * Reduce: binomial tree. For a commutative op the tree is rooted at `root` (relative ranks);
 * for a non-commutative one it is rooted at rank 0, where every subtree is a contiguous range of
 * ranks, and the result is then sent to the root.
 * Reduce_scatter: reduce to rank 0 + scatterv (any op, short data), or for a commutative op and
 * long data a ring: n-1 steps in which every rank adds its contribution to a block travelling
 * to its owner.
 * Scan / Exscan: recursive doubling, log2 n exchanges of the running total of a subcube.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

static const char *const reduce_algos[] = {"binomial", "shm"};

int mf_coll_reduce_intra(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                         int root, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (n == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : mf_coll_copy(sbuf, count, dt, rbuf, count, dt);
    struct mf_coll_shm *s;
    int algo = mf_coll_forced("MANIFOLD_COLL_REDUCE", reduce_algos, 2);
    const struct mf_coll_hier *h;
    if (!algo && op->op_commute && count > 0 && (h = mf_coll_hier_get(comm)))
        return mf_coll_hier_reduce(h, sbuf, rbuf, count, dt, op, root, comm);
    if (algo != 1 && (s = mf_coll_shm_reduction(comm, count, dt, algo == 2)))
        return mf_coll_shm_reduce(s, sbuf, rbuf, count, dt, op, root, comm);
    bool commute = op->op_commute;
    int tree_root = commute ? root : 0;
    int vr = (r - tree_root + n) % n;
    void *raw_a, *raw_b;
    char *acc = mf_coll_tmp(count, dt, &raw_a, &rc);
    char *got = acc ? mf_coll_tmp(count, dt, &raw_b, &rc) : NULL;
    if (!got) {
        if (acc)
            free(raw_a);
        return rc;
    }
    rc = mf_coll_copy(input, count, dt, acc, count, dt);
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        if (vr & mask) {
            rc = mf_send(acc, count, dt, (vr - mask + tree_root) % n, MF_TAG_REDUCE, comm,
                         MF_CTX_COLL);
            break;
        }
        if (vr + mask < n) {
            rc = mf_recv(got, count, dt, (vr + mask + tree_root) % n, MF_TAG_REDUCE, comm,
                         MF_CTX_COLL, MPI_STATUS_IGNORE);
            if (rc)
                break;
            /* got covers the ranks after acc's: acc op got, then swap */
            rc = mf_op_apply(op, acc, got, count, dt);
            char *t = acc;
            acc = got;
            got = t;
        }
    }
    if (!rc && vr == 0) {
        if (r == root)
            rc = mf_coll_copy(acc, count, dt, rbuf, count, dt);
        else
            rc = mf_send(acc, count, dt, root, MF_TAG_REDUCE, comm, MF_CTX_COLL);
    } else if (!rc && r == root) {
        rc = mf_recv(rbuf, count, dt, tree_root, MF_TAG_REDUCE, comm, MF_CTX_COLL,
                     MPI_STATUS_IGNORE);
    }
    free(raw_a);
    free(raw_b);
    return rc;
}

int mf_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                   int root, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_reduce(sbuf, rbuf, count, dt, op, root, comm);
    return mf_coll_reduce_intra(sbuf, rbuf, count, dt, op, root, comm);
}

static int reduce_scatter_via_reduce(const void *input, void *rbuf, const MPI_Count *rcounts,
                                     const MPI_Aint *displs, MPI_Count total, mf_datatype *dt,
                                     mf_op *op, mf_comm *comm)
{
    int rc = MPI_SUCCESS;
    void *raw = NULL, *tmp = NULL;
    if (comm->c_rank == 0 && !(tmp = mf_coll_tmp(total, dt, &raw, &rc)))
        return rc;
    rc = mf_coll_reduce_intra(input, tmp, total, dt, op, 0, comm);
    if (!rc)
        rc = mf_coll_scatterv_linear(tmp, rcounts, displs, dt, rbuf, rcounts[comm->c_rank], dt, 0,
                                     comm, MF_TAG_REDUCE_SCATTER);
    free(raw);
    return rc;
}

static int reduce_scatter_ring(const void *input, void *rbuf, const MPI_Count *rcounts,
                               const MPI_Aint *displs, MPI_Count total, mf_datatype *dt, mf_op *op,
                               mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    MPI_Count maxc = 0;
    for (int i = 0; i < n; i++)
        maxc = rcounts[i] > maxc ? rcounts[i] : maxc;
    void *raw_a, *raw_b;
    char *acc = mf_coll_tmp(total, dt, &raw_a, &rc);
    char *got = acc ? mf_coll_tmp(maxc, dt, &raw_b, &rc) : NULL;
    if (!got) {
        if (acc)
            free(raw_a);
        return rc;
    }
    rc = mf_coll_copy(input, total, dt, acc, total, dt);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    /* step s: pass on the partial of block r-s-1, fold our data into block r-s-2; after n-1
     * steps the block arriving is our own, with every rank's contribution */
    for (int s = 0; s < n - 1 && !rc; s++) {
        int sb = (r - s - 1 + 2 * n) % n, rb = (r - s - 2 + 2 * n) % n;
        rc = mf_sendrecv(mf_coll_at(acc, displs[sb], dt), rcounts[sb], dt, right,
                         MF_TAG_REDUCE_SCATTER, got, rcounts[rb], dt, left, MF_TAG_REDUCE_SCATTER,
                         comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (!rc)
            rc = mf_op_apply(op, got, mf_coll_at(acc, displs[rb], dt), rcounts[rb], dt);
    }
    if (!rc)
        rc = mf_coll_copy(mf_coll_at(acc, displs[r], dt), rcounts[r], dt, rbuf, rcounts[r], dt);
    free(raw_a);
    free(raw_b);
    return rc;
}

static const char *const reduce_scatter_algos[] = {"reduce_scatterv", "ring", "shm"};

int mf_coll_reduce_scatter_algo(size_t total, const mf_op *op)
{
    int algo = mf_coll_forced("MANIFOLD_COLL_REDUCE_SCATTER", reduce_scatter_algos, 3);
    if (algo == 1 || !op->op_commute)
        return MF_RS_REDUCE_SCATTERV;
    if (algo == 2)
        return MF_RS_RING;
    return total >= mf_coll_long_msg() ? MF_RS_RING : MF_RS_SHORT;
}

int mf_coll_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, mf_datatype *dt,
                           mf_op *op, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm);
    int n = comm->c_size, rc = MPI_SUCCESS;
    MPI_Aint *displs = malloc(((size_t)n + 1) * sizeof *displs);
    if (!displs)
        return mf_coll_nomem();
    displs[0] = 0;
    for (int i = 0; i < n; i++)
        displs[i + 1] = displs[i] + rcounts[i];
    MPI_Count total = displs[n];
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (n == 1) {
        if (sbuf != MPI_IN_PLACE)
            rc = mf_coll_copy(sbuf, total, dt, rbuf, total, dt);
    } else {
        int algo = mf_coll_forced("MANIFOLD_COLL_REDUCE_SCATTER", reduce_scatter_algos, 3);
        struct mf_coll_shm *s;
        if ((!algo || algo == 3) && (s = mf_coll_shm_reduction(comm, total, dt, algo == 3))) {
            rc = mf_coll_shm_reduce_scatter(s, sbuf, rbuf, rcounts, displs, dt, op, comm);
            free(displs);
            return rc;
        }
        if (mf_coll_reduce_scatter_algo(mf_coll_bytes(total, dt), op) == MF_RS_RING)
            rc = reduce_scatter_ring(input, rbuf, rcounts, displs, total, dt, op, comm);
        else
            rc = reduce_scatter_via_reduce(input, rbuf, rcounts, displs, total, dt, op, comm);
    }
    free(displs);
    return rc;
}

int mf_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, mf_datatype *dt,
                                 mf_op *op, mf_comm *comm)
{
    int n = comm->c_size; /* local group, for intercommunicators too */
    MPI_Count *counts = malloc((size_t)n * sizeof *counts);
    if (!counts)
        return mf_coll_nomem();
    for (int i = 0; i < n; i++)
        counts[i] = rcount;
    int rc = mf_coll_reduce_scatter(sbuf, rbuf, counts, dt, op, comm);
    free(counts);
    return rc;
}

/* Scan (inclusive) and Exscan (exclusive) share the loop; `total` is the reduction of the
 * subcube of ranks this rank has heard of so far, passed to the partner at each step. */
static int scan_common(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                       mf_comm *comm, bool inclusive)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *raw_a, *raw_b;
    char *total = mf_coll_tmp(count, dt, &raw_a, &rc);
    char *got = total ? mf_coll_tmp(count, dt, &raw_b, &rc) : NULL;
    if (!got) {
        if (total)
            free(raw_a);
        return rc;
    }
    rc = mf_coll_copy(input, count, dt, total, count, dt);
    if (!rc && inclusive && sbuf != MPI_IN_PLACE)
        rc = mf_coll_copy(sbuf, count, dt, rbuf, count, dt);
    bool have = inclusive; /* exscan: rbuf holds nothing until a lower rank contributes */
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= n)
            continue;
        rc = mf_sendrecv(total, count, dt, peer, MF_TAG_SCAN, got, count, dt, peer, MF_TAG_SCAN,
                         comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            break;
        if (peer < r) {
            /* the partner's ranks come before ours: it is the left operand */
            if (have) {
                rc = mf_op_apply(op, got, rbuf, count, dt);
            } else {
                rc = mf_coll_copy(got, count, dt, rbuf, count, dt);
                have = true;
            }
            if (!rc)
                rc = mf_op_apply(op, got, total, count, dt);
        } else {
            rc = mf_op_apply(op, total, got, count, dt);
            char *t = total;
            total = got;
            got = t;
        }
    }
    free(raw_a);
    free(raw_b);
    return rc;
}

int mf_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                 mf_comm *comm)
{
    return scan_common(sbuf, rbuf, count, dt, op, comm, true);
}

int mf_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                   mf_comm *comm)
{
    return scan_common(sbuf, rbuf, count, dt, op, comm, false);
}
