/*
 * alltoall.c — MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw on intracommunicators.
 *
 * Alltoall:
 *   Bruck      small data: ceil(log2 n) steps; in step k every rank forwards, to rank + k, the
 *              packed blocks whose (rotated) index has bit k set. Fewer start-ups at the price
 *              of moving each block up to log2 n times. Not on oversubscribed hosts (linear).
 *   linear     medium data: all receives and sends posted at once (in windows of
 *              MF_COLL_ALLTOALL_WINDOW peers, so that a big communicator does not flood the network),
 *              letting the network overlap everything.
 *   pairwise   large data: n-1 sendrecv steps with rank+i / rank-i, one peer at a time. Not on
 *              oversubscribed hosts (linear).
 * Alltoallv and Alltoallw use the linear scheme. MPI_IN_PLACE (any variant) is an exchange with
 * one peer at a time in a global order of pairs, the own outgoing block being saved in a
 * scratch buffer before the incoming one overwrites it.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"

#define SHM_ALLTOALL_STEPS 4

/* The general form: byte displacements and one type per peer. Linear, windowed. */
static int alltoallw_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                            mf_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                            const MPI_Aint *rdispls, mf_datatype *const *rdts, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc;
    rc = mf_coll_copy((const char *)sbuf + sdispls[r], scounts[r], sdts[r],
                      (char *)rbuf + rdispls[r], rcounts[r], rdts[r]);
    mf_request *reqs[2 * MF_COLL_ALLTOALL_WINDOW];
    for (int base = 1; base < n && !rc; base += MF_COLL_ALLTOALL_WINDOW) {
        int m = 0;
        for (int i = base; i < n && i < base + MF_COLL_ALLTOALL_WINDOW && !rc; i++) {
            int src = (r - i + n) % n, dst = (r + i) % n;
            reqs[m] = reqs[m + 1] = NULL;
            rc = mf_irecv((char *)rbuf + rdispls[src], rcounts[src], rdts[src], src,
                          MF_TAG_ALLTOALL, comm, MF_CTX_COLL, &reqs[m]);
            if (!rc)
                rc = mf_isend_standard((const char *)sbuf + sdispls[dst], scounts[dst], sdts[dst],
                                       dst, MF_TAG_ALLTOALL, comm, MF_CTX_COLL, &reqs[m + 1]);
            m += 2;
        }
        int wrc = mf_coll_waitall_free(m, reqs);
        if (!rc)
            rc = wrc;
    }
    return rc;
}

/* MPI_IN_PLACE: rbuf holds the outgoing blocks and receives the incoming ones. */
static int alltoallw_in_place(void *rbuf, const MPI_Count *counts, const MPI_Aint *displs,
                              mf_datatype *const *dts, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t max = 0;
    for (int i = 0; i < n; i++)
        if (i != r && mf_coll_bytes(counts[i], dts[i]) > max)
            max = mf_coll_bytes(counts[i], dts[i]);
    char *tmp = mf_coll_malloc(max, &rc);
    if (!tmp)
        return rc;
    mf_datatype *byte = mf_coll_byte();
    /* pairs (i, j), i < j, in lexicographic order: the first pending pair always has both
     * members ready, so this never deadlocks */
    for (int i = 0; i < n && !rc; i++) {
        for (int j = i + 1; j < n && !rc; j++) {
            if (r != i && r != j)
                continue;
            int peer = r == i ? j : i;
            char *at = (char *)rbuf + displs[peer];
            mf_coll_pack(at, counts[peer], dts[peer], tmp);
            rc = mf_sendrecv(tmp, (MPI_Count)mf_coll_bytes(counts[peer], dts[peer]), byte, peer,
                             MF_TAG_ALLTOALL, at, counts[peer], dts[peer], peer, MF_TAG_ALLTOALL,
                             comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        }
    }
    free(tmp);
    return rc;
}

static int alltoall_pairwise(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                             MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank;
    int rc = mf_coll_copy(mf_coll_at(sbuf, (MPI_Count)r * scount, sdt), scount, sdt,
                          mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt), rcount, rdt);
    for (int i = 1; i < n && !rc; i++) {
        MPI_Count dst = (r + i) % n, src = (r - i + n) % n;
        rc = mf_sendrecv(mf_coll_at(sbuf, dst * scount, sdt), scount, sdt, (int)dst,
                         MF_TAG_ALLTOALL, mf_coll_at(rbuf, src * rcount, rdt), rcount, rdt,
                         (int)src, MF_TAG_ALLTOALL, comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    return rc;
}

/* Uniform blocks, all transfers posted at once (in windows): the same schedule as
 * alltoallw_linear without expanding the arguments into per-peer arrays, which for short
 * blocks cost more than the transfers' own set-up. */
static int alltoall_linear(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                           MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank;
    int rc = mf_coll_copy(mf_coll_at(sbuf, (MPI_Count)r * scount, sdt), scount, sdt,
                          mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt), rcount, rdt);
    mf_request *reqs[2 * MF_COLL_ALLTOALL_WINDOW];
    for (int base = 1; base < n && !rc; base += MF_COLL_ALLTOALL_WINDOW) {
        int m = 0;
        for (int i = base; i < n && i < base + MF_COLL_ALLTOALL_WINDOW && !rc; i++) {
            MPI_Count src = (r - i + n) % n, dst = (r + i) % n;
            reqs[m] = reqs[m + 1] = NULL;
            rc = mf_irecv(mf_coll_at(rbuf, src * rcount, rdt), rcount, rdt, (int)src,
                          MF_TAG_ALLTOALL, comm, MF_CTX_COLL, &reqs[m]);
            if (!rc)
                rc = mf_isend_standard(mf_coll_at(sbuf, dst * scount, sdt), scount, sdt, (int)dst,
                                       MF_TAG_ALLTOALL, comm, MF_CTX_COLL, &reqs[m + 1]);
            m += 2;
        }
        int wrc = mf_coll_waitall_free(m, reqs);
        if (!rc)
            rc = wrc;
    }
    return rc;
}

static int alltoall_bruck(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                          MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t blk = mf_coll_bytes(scount, sdt);
    char *tmp = mf_coll_malloc((size_t)n * blk, &rc);
    char *out = tmp ? mf_coll_malloc((size_t)(n / 2 + 1) * blk, &rc) : NULL;
    char *in = out ? mf_coll_malloc((size_t)(n / 2 + 1) * blk, &rc) : NULL;
    mf_datatype *byte = mf_coll_byte();
    if (!in)
        goto done;
    /* rotate: tmp[i] is the block for rank r + i */
    for (int i = 0; i < n; i++)
        mf_coll_pack(mf_coll_at(sbuf, (MPI_Count)((r + i) % n) * scount, sdt), scount, sdt,
                     tmp + (size_t)i * blk);
    /* step k moves every block whose index has bit k set k ranks further; after all steps block
     * i has travelled i ranks, so tmp[i] holds what rank r - i sent to r */
    for (int k = 1; k < n && !rc; k <<= 1) {
        size_t m = 0;
        for (int i = 1; i < n; i++)
            if (i & k)
                memcpy(out + (m++) * blk, tmp + (size_t)i * blk, blk);
        rc = mf_sendrecv(out, (MPI_Count)(m * blk), byte, (r + k) % n, MF_TAG_ALLTOALL, in,
                         (MPI_Count)(m * blk), byte, (r - k + n) % n, MF_TAG_ALLTOALL, comm,
                         MF_CTX_COLL, MPI_STATUS_IGNORE);
        m = 0;
        for (int i = 1; i < n && !rc; i++)
            if (i & k)
                memcpy(tmp + (size_t)i * blk, in + (m++) * blk, blk);
    }
    for (int i = 0; i < n && !rc; i++)
        mf_coll_unpack(tmp + (size_t)i * blk,
                       mf_coll_at(rbuf, (MPI_Count)((r - i + n) % n) * rcount, rdt), rcount, rdt);
done:
    free(in);
    free(out);
    free(tmp);
    return rc;
}

/* Expands uniform or v-style arguments into the w form. */
struct w_args {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
    mf_datatype **st, **rt;
};

static int w_alloc(struct w_args *w, int n)
{
    w->sc = malloc((size_t)n * sizeof *w->sc);
    w->rc = malloc((size_t)n * sizeof *w->rc);
    w->sd = malloc((size_t)n * sizeof *w->sd);
    w->rd = malloc((size_t)n * sizeof *w->rd);
    w->st = malloc((size_t)n * sizeof *w->st);
    w->rt = malloc((size_t)n * sizeof *w->rt);
    if (w->sc && w->rc && w->sd && w->rd && w->st && w->rt)
        return MPI_SUCCESS;
    return mf_coll_nomem();
}

static void w_free(struct w_args *w)
{
    free(w->sc);
    free(w->rc);
    free(w->sd);
    free(w->rd);
    free(w->st);
    free(w->rt);
}

static int alltoallv_as_w(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                          mf_datatype *sdt, void *rbuf, const MPI_Count *rcounts,
                          const MPI_Aint *rdispls, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size;
    struct w_args w = {0};
    int rc = w_alloc(&w, n);
    if (!rc) {
        MPI_Aint se = sbuf == MPI_IN_PLACE ? 0 : mf_coll_dt(sdt)->dt_extent;
        MPI_Aint re = mf_coll_dt(rdt)->dt_extent;
        for (int i = 0; i < n; i++) {
            w.sc[i] = sbuf == MPI_IN_PLACE ? 0 : scounts[i];
            w.sd[i] = sbuf == MPI_IN_PLACE ? 0 : sdispls[i] * se;
            w.rc[i] = rcounts[i];
            w.rd[i] = rdispls[i] * re;
            w.st[i] = sdt;
            w.rt[i] = rdt;
        }
        if (sbuf == MPI_IN_PLACE)
            rc = alltoallw_in_place(rbuf, w.rc, w.rd, w.rt, comm);
        else
            rc = alltoallw_linear(sbuf, w.sc, w.sd, w.st, rbuf, w.rc, w.rd, w.rt, comm);
    }
    w_free(&w);
    return rc;
}

static const char *const alltoall_algos[] = {"bruck", "pairwise", "linear", "shm"};

int mf_coll_alltoall_algo(size_t blk, mf_comm *comm)
{
    int n = comm->c_size, algo = mf_coll_forced("MANIFOLD_COLL_ALLTOALL", alltoall_algos, 4);
    if (algo && algo != 4)
        return algo;
    /* Bruck trades bytes for fewer start-ups, and pairwise bounds what is in flight, but their
     * steps depend on each other (log2(n) and n-1 of them); on an oversubscribed host each is a
     * context switch, while the linear scheme lets a rank post everything and give the core
     * away once. Pairwise against linear, 30 operations per batch, medians of 4-5 interleaved
     * runs: 8 ranks on 2 cores 1037 / 713 us at 128 KiB, 1694 / 1578 at 256 KiB; 4 ranks on 2
     * cores 69 / 68 at 128 KiB, 170 / 141 at 256 KiB, 1072 / 954 at 1 MiB. */
    bool over = mf_coll_oversubscribed(comm);
    bool bruck = blk * (size_t)n <= mf_coll_short_msg() && n > 2 && !over;
    return bruck                              ? MF_ALLTOALL_BRUCK
           : blk < mf_coll_long_msg() || over ? MF_ALLTOALL_LINEAR
                                              : MF_ALLTOALL_PAIRWISE;
}

int mf_coll_alltoall(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                     MPI_Count rcount, mf_datatype *rdt, mf_comm *comm)
{
    int n = comm->c_size;
    if (comm->c_is_inter || sbuf == MPI_IN_PLACE) {
        int rn = mf_comm_peer_size(comm);
        MPI_Count *sc = malloc((size_t)rn * sizeof *sc), *rcs = malloc((size_t)rn * sizeof *rcs);
        MPI_Aint *sd = malloc((size_t)rn * sizeof *sd), *rd = malloc((size_t)rn * sizeof *rd);
        int rc = (sc && rcs && sd && rd) ? MPI_SUCCESS : mf_coll_nomem();
        for (int i = 0; i < rn && !rc; i++) {
            sc[i] = scount;
            rcs[i] = rcount;
            sd[i] = (MPI_Aint)i * scount;
            rd[i] = (MPI_Aint)i * rcount;
        }
        if (!rc)
            rc = mf_coll_alltoallv(sbuf, sc, sd, sdt, rbuf, rcs, rd, rdt, comm);
        free(sc);
        free(rcs);
        free(sd);
        free(rd);
        return rc;
    }
    if (n == 1)
        return mf_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    size_t blk = mf_coll_bytes(scount, sdt);
    int algo = mf_coll_forced("MANIFOLD_COLL_ALLTOALL", alltoall_algos, 4);
    /* The segment while a block takes at most SHM_ALLTOALL_STEPS steps: measured 1.1-2.5x
     * faster than the point-to-point schemes up to there (4 and 8 ranks on 2 cores), slower
     * for blocks of many steps (each a wait for every rank), e.g. 1 MiB at 4 ranks 1.8x. */
    struct mf_coll_shm *s;
    size_t piece;
    if ((!algo || algo == 4) && blk > 0 && (s = mf_coll_shm_get(comm)) &&
        (piece = mf_coll_shm_alltoall_piece(s, n)) > 0 &&
        (algo == 4 || blk <= SHM_ALLTOALL_STEPS * piece))
        return mf_coll_shm_alltoall(s, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    algo = mf_coll_alltoall_algo(blk, comm);
    if (algo == 1)
        return alltoall_bruck(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    if (algo == 2)
        return alltoall_pairwise(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    return alltoall_linear(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

int mf_coll_alltoallv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      mf_datatype *sdt, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, mf_datatype *rdt, mf_comm *comm)
{
    if (!comm->c_is_inter)
        return alltoallv_as_w(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm);
    int n = mf_comm_peer_size(comm);
    struct w_args w = {0};
    int rc = w_alloc(&w, n);
    MPI_Aint se = mf_coll_dt(sdt)->dt_extent, re = mf_coll_dt(rdt)->dt_extent;
    for (int i = 0; i < n && !rc; i++) {
        w.sc[i] = scounts[i];
        w.sd[i] = sdispls[i] * se;
        w.rc[i] = rcounts[i];
        w.rd[i] = rdispls[i] * re;
        w.st[i] = sdt;
        w.rt[i] = rdt;
    }
    if (!rc)
        rc = mf_coll_inter_alltoallw(sbuf, w.sc, w.sd, w.st, rbuf, w.rc, w.rd, w.rt, comm);
    w_free(&w);
    return rc;
}

int mf_coll_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      mf_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, mf_datatype *const *rdts, mf_comm *comm)
{
    if (comm->c_is_inter)
        return mf_coll_inter_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                                       comm);
    if (sbuf == MPI_IN_PLACE)
        return alltoallw_in_place(rbuf, rcounts, rdispls, rdts, comm);
    return alltoallw_linear(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm);
}
