/*
 * allgather.c — MPI_Allgather(v) on intracommunicators.
 *
 * Allgather algorithms (Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication
 * Operations in MPICH", 2005):
 *   recursive doubling  n a power of two: log2 n exchanges, the data held doubling each time;
 *                       works in the user's buffer since the blocks exchanged are contiguous;
 *   Bruck               any n, short data: ceil(log2 n) steps on a packed buffer rotated so
 *                       that the own block comes first, un-rotated at the end;
 *   ring                long data: n-1 steps, each block passed to the right neighbour; every
 *                       link carries each block once, which is bandwidth-optimal.
 * Allgatherv uses the ring (block sizes may be uneven, which the other two handle badly).
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

static int allgather_recursive_doubling(void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                                        mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        int peer = r ^ mask;
        MPI_Count mine = (MPI_Count)(r & ~(mask - 1)), theirs = (MPI_Count)(peer & ~(mask - 1));
        rc = mf_sendrecv(mf_coll_at(rbuf, mine * rcount, rdt), mask * rcount, rdt, peer,
                         MF_TAG_ALLGATHER, mf_coll_at(rbuf, theirs * rcount, rdt), mask * rcount,
                         rdt, peer, MF_TAG_ALLGATHER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    return rc;
}

static int allgather_bruck(void *rbuf, MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t blk = mf_coll_bytes(rcount, rdt);
    char *tmp = mf_coll_malloc((size_t)n * blk, &rc);
    if (!tmp)
        return rc;
    mf_datatype *byte = mf_coll_byte();
    /* tmp[i] will hold the block of rank r + i */
    mf_coll_pack(mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt), rcount, rdt, tmp);
    for (int k = 1; k < n && !rc; k <<= 1) {
        int cnt = k < n - k ? k : n - k;
        rc = mf_sendrecv(tmp, (MPI_Count)((size_t)cnt * blk), byte, (r - k + n) % n,
                         MF_TAG_ALLGATHER, tmp + (size_t)k * blk, (MPI_Count)((size_t)cnt * blk),
                         byte, (r + k) % n, MF_TAG_ALLGATHER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    for (int i = 1; i < n && !rc; i++)
        mf_coll_unpack(tmp + (size_t)i * blk,
                       mf_coll_at(rbuf, (MPI_Count)((r + i) % n) * rcount, rdt), rcount, rdt);
    free(tmp);
    return rc;
}

static int allgatherv_ring(void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs,
                           mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int i = 0; i < n - 1 && !rc; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        rc = mf_sendrecv(mf_coll_at(rbuf, displs[sb], rdt), rcounts[sb], rdt, right,
                         MF_TAG_ALLGATHER, mf_coll_at(rbuf, displs[rb], rdt), rcounts[rb], rdt,
                         left, MF_TAG_ALLGATHER, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    return rc;
}

static int allgather_ring(void *rbuf, MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int i = 0; i < n - 1 && !rc; i++) {
        MPI_Count sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        rc = mf_sendrecv(mf_coll_at(rbuf, sb * rcount, rdt), rcount, rdt, right, MF_TAG_ALLGATHER,
                         mf_coll_at(rbuf, rb * rcount, rdt), rcount, rdt, left, MF_TAG_ALLGATHER,
                         comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    return rc;
}

static const char *const allgather_algos[] = {"recursive_doubling", "bruck", "ring", "shm"};

int mf_coll_allgather_algo(size_t total, mf_comm *comm)
{
    int n = comm->c_size, algo = mf_coll_forced("MANIFOLD_COLL_ALLGATHER", allgather_algos, 4);
    bool pow2 = (n & (n - 1)) == 0;
    if (algo == MF_ALLGATHER_RD && !pow2)
        return MF_ALLGATHER_BRUCK; /* recursive doubling needs a power of two; Bruck is its
                                      general form */
    if (algo && algo != 4)
        return algo;
    if (total < mf_coll_short_msg())
        return pow2 ? MF_ALLGATHER_RD : MF_ALLGATHER_BRUCK;
    if (total < mf_coll_long_msg() && pow2)
        return MF_ALLGATHER_RD;
    return MF_ALLGATHER_RING;
}

int mf_coll_allgather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                      MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    int algo = mf_coll_forced("MANIFOLD_COLL_ALLGATHER", allgather_algos, 4);
    struct mf_coll_shm *s;
    if ((!algo || algo == 4) && n > 1 && mf_coll_bytes(rcount, rdt) > 0 &&
        (s = mf_coll_shm_get(comm))) {
        /* the own block moves with the others' (IN_PLACE: from where it is) */
        if (sbuf != MPI_IN_PLACE)
            rc = mf_coll_copy(sbuf, scount, sdt, mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt),
                              rcount, rdt);
        return rc ? rc : mf_coll_shm_allgather(s, MPI_IN_PLACE, 0, rdt, rbuf, rcount, rdt, comm);
    }
    if (sbuf != MPI_IN_PLACE)
        rc = mf_coll_copy(sbuf, scount, sdt, mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt), rcount,
                          rdt);
    if (rc || n == 1)
        return rc;
    algo = mf_coll_allgather_algo((size_t)n * mf_coll_bytes(rcount, rdt), comm);
    if (algo == 1)
        return allgather_recursive_doubling(rbuf, rcount, rdt, comm);
    if (algo == 2)
        return allgather_bruck(rbuf, rcount, rdt, comm);
    return allgather_ring(rbuf, rcount, rdt, comm);
}

int mf_coll_allgatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                       const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                       mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
    int r = comm->c_rank, rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = mf_coll_copy(sbuf, scount, sdt, mf_coll_at(rbuf, displs[r], rdt), rcounts[r], rdt);
    if (rc || comm->c_size == 1)
        return rc;
    return allgatherv_ring(rbuf, rcounts, displs, rdt, comm);
}
