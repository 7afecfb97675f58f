/*
 * gather_scatter.c — MPI_Gather(v) and MPI_Scatter(v) on intracommunicators.
 *
 * Gather/Scatter: binomial trees over ranks relative to the root for short blocks (log2 n
 * message start-ups at the root instead of n-1; inner nodes forward their subtree's blocks as
 * one packed message), linear for long blocks (every block crosses the network once).
 * Gatherv/Scatterv: linear with nonblocking requests, since block sizes are only known at the
 * root.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

static const char *const gather_algos[] = {"binomial", "linear"};

static bool gather_use_binomial(size_t block, mf_comm *comm)
{
    int algo = mf_coll_forced("MANIFOLD_COLL_GATHER", gather_algos, 2);
    if (algo)
        return algo == 1;
    return comm->c_size > 2 && block < mf_coll_short_msg();
}

/* Subtree of relative rank v in a binomial tree over n: [v, v + size). */
static int subtree_size(int v, int n)
{
    int low = v ? (v & -v) : n;
    return low < n - v ? low : n - v;
}

int mf_coll_gatherv_linear(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                           const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                           int root, mf_comm *comm, int tag)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    if (r != root)
        return mf_send(sbuf, scount, sdt, root, tag, comm, MF_CTX_COLL);
    mf_request **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs)
        return mf_coll_nomem();
    for (int i = 0; i < n && !rc; i++) {
        void *at = mf_coll_at(rbuf, displs[i], rdt);
        if (i == r) {
            if (sbuf != MPI_IN_PLACE)
                rc = mf_coll_copy(sbuf, scount, sdt, at, rcounts[i], rdt);
        } else {
            rc = mf_irecv(at, rcounts[i], rdt, i, tag, comm, MF_CTX_COLL, &reqs[i]);
        }
    }
    int wrc = mf_coll_waitall_free(n, reqs);
    free(reqs);
    return rc ? rc : wrc;
}

int mf_coll_scatterv_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                            mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                            int root, mf_comm *comm, int tag)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    if (r != root)
        return mf_recv(rbuf, rcount, rdt, root, tag, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    mf_request **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs)
        return mf_coll_nomem();
    for (int i = 0; i < n && !rc; i++) {
        const void *at = mf_coll_at(sbuf, displs[i], sdt);
        if (i == r) {
            if (rbuf != MPI_IN_PLACE)
                rc = mf_coll_copy(at, scounts[i], sdt, rbuf, rcount, rdt);
        } else {
            rc = mf_isend_standard(at, scounts[i], sdt, i, tag, comm, MF_CTX_COLL, &reqs[i]);
        }
    }
    int wrc = mf_coll_waitall_free(n, reqs);
    free(reqs);
    return rc ? rc : wrc;
}

/* Equal counts and consecutive displacements, for the linear versions of Gather/Scatter. */
static int uniform_layout(int n, MPI_Count count, MPI_Count **counts, MPI_Aint **displs, int *rc)
{
    *counts = malloc((size_t)n * sizeof **counts);
    *displs = malloc((size_t)n * sizeof **displs);
    if (!*counts || !*displs) {
        free(*counts);
        free(*displs);
        *rc = mf_coll_nomem();
        return -1;
    }
    for (int i = 0; i < n; i++) {
        (*counts)[i] = count;
        (*displs)[i] = (MPI_Aint)i * count;
    }
    return 0;
}

static int gather_binomial(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                           MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, vr = (r - root + n) % n, rc = MPI_SUCCESS;
    bool in_place = (r == root && sbuf == MPI_IN_PLACE);
    size_t blk = r == root ? mf_coll_bytes(rcount, rdt) : mf_coll_bytes(scount, sdt);
    int sub = subtree_size(vr, n);
    char *tmp = mf_coll_malloc((size_t)sub * blk, &rc);
    if (!tmp)
        return rc;
    /* own block first, then the children's subtrees in relative-rank order */
    if (r != root)
        mf_coll_pack(sbuf, scount, sdt, tmp);
    mf_datatype *byte = mf_coll_byte();
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        if (vr & mask) {
            rc = mf_send(tmp, (MPI_Count)((size_t)sub * blk), byte, (vr - mask + root) % n,
                         MF_TAG_GATHER, comm, MF_CTX_COLL);
            break;
        }
        if (vr + mask < n) {
            int csub = subtree_size(vr + mask, n);
            rc = mf_recv(tmp + (size_t)mask * blk, (MPI_Count)((size_t)csub * blk), byte,
                         (vr + mask + root) % n, MF_TAG_GATHER, comm, MF_CTX_COLL,
                         MPI_STATUS_IGNORE);
        }
    }
    if (r == root && !rc) {
        for (int v = 1; v < n; v++)
            mf_coll_unpack(tmp + (size_t)v * blk,
                           mf_coll_at(rbuf, (MPI_Count)((v + root) % n) * rcount, rdt), rcount,
                           rdt);
        if (!in_place)
            rc = mf_coll_copy(sbuf, scount, sdt, mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt),
                              rcount, rdt);
    }
    free(tmp);
    return rc;
}

static int scatter_binomial(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                            MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, vr = (r - root + n) % n, rc = MPI_SUCCESS;
    size_t blk = r == root ? mf_coll_bytes(scount, sdt) : mf_coll_bytes(rcount, rdt);
    int sub = subtree_size(vr, n);
    char *tmp = mf_coll_malloc((size_t)sub * blk, &rc);
    if (!tmp)
        return rc;
    mf_datatype *byte = mf_coll_byte();
    int mask = 1;
    if (r == root) {
        for (int v = 1; v < n; v++)
            mf_coll_pack(mf_coll_at(sbuf, (MPI_Count)((v + root) % n) * scount, sdt), scount, sdt,
                         tmp + (size_t)v * blk);
        for (; mask < n; mask <<= 1)
            ;
    } else {
        for (; mask < n; mask <<= 1) {
            if (vr & mask) {
                rc = mf_recv(tmp, (MPI_Count)((size_t)sub * blk), byte, (vr - mask + root) % n,
                             MF_TAG_SCATTER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
                break;
            }
        }
    }
    for (mask >>= 1; mask > 0 && !rc; mask >>= 1) {
        if (vr + mask < n) {
            int csub = subtree_size(vr + mask, n);
            rc = mf_send(tmp + (size_t)mask * blk, (MPI_Count)((size_t)csub * blk), byte,
                         (vr + mask + root) % n, MF_TAG_SCATTER, comm, MF_CTX_COLL);
        }
    }
    if (!rc) {
        if (r != root)
            mf_coll_unpack(tmp, rbuf, rcount, rdt);
        else if (rbuf != MPI_IN_PLACE)
            rc = mf_coll_copy(mf_coll_at(sbuf, (MPI_Count)r * scount, sdt), scount, sdt, rbuf,
                              rcount, rdt);
    }
    free(tmp);
    return rc;
}

int mf_coll_gather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                   MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    bool is_root = comm->c_rank == root;
    size_t blk = is_root ? mf_coll_bytes(rcount, rdt) : mf_coll_bytes(scount, sdt);
    if (gather_use_binomial(blk, comm))
        return gather_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    MPI_Count *counts = NULL;
    MPI_Aint *displs = NULL;
    int rc = MPI_SUCCESS;
    if (is_root && uniform_layout(comm->c_size, rcount, &counts, &displs, &rc))
        return rc;
    rc = mf_coll_gatherv_linear(sbuf, scount, sdt, rbuf, counts, displs, rdt, root, comm,
                                MF_TAG_GATHER);
    free(counts);
    free(displs);
    return rc;
}

int mf_coll_gatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                    const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt, int root,
                    mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm);
    return mf_coll_gatherv_linear(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                                  MF_TAG_GATHER);
}

int mf_coll_scatter(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                    MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    bool is_root = comm->c_rank == root;
    size_t blk = is_root ? mf_coll_bytes(scount, sdt) : mf_coll_bytes(rcount, rdt);
    if (gather_use_binomial(blk, comm))
        return scatter_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    MPI_Count *counts = NULL;
    MPI_Aint *displs = NULL;
    int rc = MPI_SUCCESS;
    if (is_root && uniform_layout(comm->c_size, scount, &counts, &displs, &rc))
        return rc;
    rc = mf_coll_scatterv_linear(sbuf, counts, displs, sdt, rbuf, rcount, rdt, root, comm,
                                 MF_TAG_SCATTER);
    free(counts);
    free(displs);
    return rc;
}

int mf_coll_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                     mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt, int root,
                     mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm);
    return mf_coll_scatterv_linear(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                                   MF_TAG_SCATTER);
}
