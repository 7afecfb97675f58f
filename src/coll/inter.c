/*
 * inter.c — collectives on intercommunicators.
 *
 * Shape: each group works on its own intracommunicator (c_local_comm), and the two local rank 0s
 * ("leaders") carry whatever crosses between the groups over the intercommunicator. Results
 * follow the standard: an allreduce on group A yields the reduction of group B's data, an
 * allgather on A yields B's blocks, and rooted operations name the root as MPI_ROOT in its own
 * group, MPI_PROC_NULL for the root's group mates, and the root's rank in the other group.
 * Gather/scatter(v) and alltoall(v,w) go straight between the root/peers, linearly.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

int mf_coll_inter_barrier(mf_comm *comm)
{
    mf_comm *local = comm->c_local_comm;
    mf_datatype *byte = mf_coll_byte();
    /* everyone of ours has arrived; leaders swap that fact; then release ours */
    int rc = mf_coll_barrier(local);
    if (!rc && local->c_rank == 0)
        rc = mf_sendrecv(NULL, 0, byte, 0, MF_TAG_INTER, NULL, 0, byte, 0, MF_TAG_INTER, comm,
                         MF_CTX_COLL, MPI_STATUS_IGNORE);
    if (!rc)
        rc = mf_coll_barrier(local);
    return rc;
}

int mf_coll_inter_bcast(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return mf_send(buf, count, dt, 0, MF_TAG_BCAST, comm, MF_CTX_COLL);
    mf_comm *local = comm->c_local_comm;
    int rc = MPI_SUCCESS;
    if (local->c_rank == 0)
        rc = mf_recv(buf, count, dt, root, MF_TAG_BCAST, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    return rc ? rc : mf_coll_bcast_intra(buf, count, dt, 0, local);
}

/* The root posts one request per remote rank. */
static int root_linear(bool receive, void *buf, const MPI_Count *counts, const MPI_Aint *displs,
                       mf_datatype *dt, int tag, mf_comm *comm)
{
    int m = mf_comm_peer_size(comm), rc = MPI_SUCCESS;
    mf_request **reqs = calloc((size_t)m, sizeof *reqs);
    if (!reqs)
        return mf_coll_nomem();
    for (int i = 0; i < m && !rc; i++) {
        void *at = mf_coll_at(buf, displs[i], dt);
        rc = receive ? mf_irecv(at, counts[i], dt, i, tag, comm, MF_CTX_COLL, &reqs[i])
                     : mf_isend_standard(at, counts[i], dt, i, tag, comm, MF_CTX_COLL, &reqs[i]);
    }
    int wrc = mf_coll_waitall_free(m, reqs);
    free(reqs);
    return rc ? rc : wrc;
}

static int root_uniform(bool receive, void *buf, MPI_Count count, mf_datatype *dt, int tag,
                        mf_comm *comm)
{
    int m = mf_comm_peer_size(comm);
    MPI_Count *counts = malloc((size_t)m * sizeof *counts);
    MPI_Aint *displs = malloc((size_t)m * sizeof *displs);
    int rc = counts && displs ? MPI_SUCCESS : mf_coll_nomem();
    for (int i = 0; i < m && !rc; i++) {
        counts[i] = count;
        displs[i] = (MPI_Aint)i * count;
    }
    if (!rc)
        rc = root_linear(receive, buf, counts, displs, dt, tag, comm);
    free(counts);
    free(displs);
    return rc;
}

int mf_coll_inter_gather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                         MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return root_uniform(true, rbuf, rcount, rdt, MF_TAG_GATHER, comm);
    return mf_send(sbuf, scount, sdt, root, MF_TAG_GATHER, comm, MF_CTX_COLL);
}

int mf_coll_inter_gatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                          const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                          int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return root_linear(true, rbuf, rcounts, displs, rdt, MF_TAG_GATHER, comm);
    return mf_send(sbuf, scount, sdt, root, MF_TAG_GATHER, comm, MF_CTX_COLL);
}

int mf_coll_inter_scatter(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                          MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return root_uniform(false, (void *)sbuf, scount, sdt, MF_TAG_SCATTER, comm);
    return mf_recv(rbuf, rcount, rdt, root, MF_TAG_SCATTER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
}

int mf_coll_inter_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                           mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                           int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return root_linear(false, (void *)sbuf, scounts, displs, sdt, MF_TAG_SCATTER, comm);
    return mf_recv(rbuf, rcount, rdt, root, MF_TAG_SCATTER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
}

/* Gathers every local rank's data, packed, at the local leader: returns the buffer (leader
 * only, else NULL with rc 0) and its size. Contributions may differ in size. */
static char *gather_local_packed(const void *sbuf, MPI_Count scount, mf_datatype *sdt,
                                 mf_comm *local, size_t *total, int *rc)
{
    int n = local->c_size, lr = local->c_rank;
    MPI_Count mine = (MPI_Count)mf_coll_bytes(scount, sdt);
    MPI_Count *sizes = NULL;
    MPI_Aint *displs = NULL;
    char *packed = NULL;
    mf_datatype *cnt_t = mf_datatype_get(MPI_COUNT), *byte = mf_coll_byte();
    *total = 0;
    if (lr == 0) {
        sizes = malloc((size_t)n * sizeof *sizes);
        displs = malloc((size_t)n * sizeof *displs);
        if (!sizes || !displs) {
            *rc = mf_coll_nomem();
            goto out;
        }
    }
    *rc = mf_coll_gather(&mine, 1, cnt_t, sizes, 1, cnt_t, 0, local);
    if (*rc)
        goto out;
    if (lr == 0) {
        for (int i = 0; i < n; i++) {
            displs[i] = (MPI_Aint)*total;
            *total += (size_t)sizes[i];
        }
        if (!(packed = mf_coll_malloc(*total, rc)))
            goto out;
    }
    *rc = mf_coll_gatherv(sbuf, scount, sdt, packed, sizes, displs, byte, 0, local);
out:
    free(sizes);
    free(displs);
    if (*rc) {
        free(packed);
        packed = NULL;
    }
    return packed;
}

/* Leader swaps the packed local data for the other group's, then shares it locally. */
static char *exchange_packed(char *mine, size_t mine_len, size_t theirs_len, mf_comm *comm, int *rc)
{
    mf_comm *local = comm->c_local_comm;
    mf_datatype *byte = mf_coll_byte();
    char *theirs = mf_coll_malloc(theirs_len, rc);
    if (!theirs)
        return NULL;
    if (local->c_rank == 0)
        *rc = mf_sendrecv(mine, (MPI_Count)mine_len, byte, 0, MF_TAG_INTER, theirs,
                          (MPI_Count)theirs_len, byte, 0, MF_TAG_INTER, comm, MF_CTX_COLL,
                          MPI_STATUS_IGNORE);
    if (!*rc)
        *rc = mf_coll_bcast_intra(theirs, (MPI_Count)theirs_len, byte, 0, local);
    if (*rc) {
        free(theirs);
        return NULL;
    }
    return theirs;
}

static int inter_allgatherv_common(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                                   const MPI_Count *rcounts, const MPI_Aint *displs,
                                   mf_datatype *rdt, mf_comm *comm)
{
    int m = mf_comm_peer_size(comm), rc = MPI_SUCCESS;
    size_t mine_len, theirs_len = 0;
    for (int i = 0; i < m; i++)
        theirs_len += mf_coll_bytes(rcounts[i], rdt);
    char *mine = gather_local_packed(sbuf, scount, sdt, comm->c_local_comm, &mine_len, &rc);
    if (rc)
        return rc;
    char *theirs = exchange_packed(mine, mine_len, theirs_len, comm, &rc);
    if (theirs) {
        size_t off = 0;
        for (int i = 0; i < m; i++) {
            mf_coll_unpack(theirs + off, mf_coll_at(rbuf, displs[i], rdt), rcounts[i], rdt);
            off += mf_coll_bytes(rcounts[i], rdt);
        }
    }
    free(mine);
    free(theirs);
    return rc;
}

int mf_coll_inter_allgather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                            MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int m = mf_comm_peer_size(comm);
    MPI_Count *counts = malloc((size_t)m * sizeof *counts);
    MPI_Aint *displs = malloc((size_t)m * sizeof *displs);
    int rc = counts && displs ? MPI_SUCCESS : mf_coll_nomem();
    for (int i = 0; i < m && !rc; i++) {
        counts[i] = rcount;
        displs[i] = (MPI_Aint)i * rcount;
    }
    if (!rc)
        rc = inter_allgatherv_common(sbuf, scount, sdt, rbuf, counts, displs, rdt, comm);
    free(counts);
    free(displs);
    return rc;
}

int mf_coll_inter_allgatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                             const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                             mf_comm *comm)
{
    return inter_allgatherv_common(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
}

int mf_coll_inter_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                            mf_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                            const MPI_Aint *rdispls, mf_datatype *const *rdts, mf_comm *comm)
{
    int m = mf_comm_peer_size(comm), rc = MPI_SUCCESS;
    mf_request **reqs = calloc(2 * (size_t)m, sizeof *reqs);
    if (!reqs)
        return mf_coll_nomem();
    for (int i = 0; i < m && !rc; i++) {
        rc = mf_irecv((char *)rbuf + rdispls[i], rcounts[i], rdts[i], i, MF_TAG_ALLTOALL, comm,
                      MF_CTX_COLL, &reqs[2 * i]);
        if (!rc)
            rc = mf_isend_standard((const char *)sbuf + sdispls[i], scounts[i], sdts[i], i,
                                   MF_TAG_ALLTOALL, comm, MF_CTX_COLL, &reqs[2 * i + 1]);
    }
    int wrc = mf_coll_waitall_free(2 * m, reqs);
    free(reqs);
    return rc ? rc : wrc;
}

int mf_coll_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                         int root, mf_comm *comm)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return mf_recv(rbuf, count, dt, 0, MF_TAG_REDUCE, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    mf_comm *local = comm->c_local_comm;
    void *raw = NULL, *tmp = NULL;
    int rc = MPI_SUCCESS;
    if (local->c_rank == 0 && !(tmp = mf_coll_tmp(count, dt, &raw, &rc)))
        return rc;
    rc = mf_coll_reduce_intra(sbuf, tmp, count, dt, op, 0, local);
    if (!rc && local->c_rank == 0)
        rc = mf_send(tmp, count, dt, root, MF_TAG_REDUCE, comm, MF_CTX_COLL);
    free(raw);
    return rc;
}

/* Reduces the local group's data at the leader and swaps it with the other leader's: on return
 * the leader's `theirs` holds the other group's reduction. */
static int reduce_and_swap(const void *sbuf, void *theirs, MPI_Count count, mf_datatype *dt,
                           mf_op *op, mf_comm *comm)
{
    mf_comm *local = comm->c_local_comm;
    void *raw = NULL, *mine = NULL;
    int rc = MPI_SUCCESS;
    if (local->c_rank == 0 && !(mine = mf_coll_tmp(count, dt, &raw, &rc)))
        return rc;
    rc = mf_coll_reduce_intra(sbuf, mine, count, dt, op, 0, local);
    if (!rc && local->c_rank == 0)
        rc = mf_sendrecv(mine, count, dt, 0, MF_TAG_INTER, theirs, count, dt, 0, MF_TAG_INTER, comm,
                         MF_CTX_COLL, MPI_STATUS_IGNORE);
    free(raw);
    return rc;
}

int mf_coll_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt,
                            mf_op *op, mf_comm *comm)
{
    int rc = reduce_and_swap(sbuf, rbuf, count, dt, op, comm);
    return rc ? rc : mf_coll_bcast_intra(rbuf, count, dt, 0, comm->c_local_comm);
}

int mf_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                 mf_datatype *dt, mf_op *op, mf_comm *comm)
{
    mf_comm *local = comm->c_local_comm;
    int n = local->c_size, rc = MPI_SUCCESS;
    MPI_Aint *displs = malloc((size_t)n * sizeof *displs);
    if (!displs)
        return mf_coll_nomem();
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = (MPI_Aint)total;
        total += rcounts[i];
    }
    void *raw = NULL, *theirs = NULL;
    if (local->c_rank == 0 && !(theirs = mf_coll_tmp(total, dt, &raw, &rc))) {
        free(displs);
        return rc;
    }
    rc = reduce_and_swap(sbuf, theirs, total, dt, op, comm);
    if (!rc)
        rc = mf_coll_scatterv_linear(theirs, rcounts, displs, dt, rbuf, rcounts[local->c_rank], dt,
                                     0, local, MF_TAG_REDUCE_SCATTER);
    free(raw);
    free(displs);
    return rc;
}
