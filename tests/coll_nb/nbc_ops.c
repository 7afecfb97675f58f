/*
 * Every nonblocking collective and its persistent form on MPI_COMM_WORLD, checked against
 * values computed locally: in-place variants, a derived (strided) datatype, a non-commutative
 * user op, persistent requests started several times with new data each time; then the
 * intercommunicator forms (Ibarrier, Ibcast, Iallreduce) and the MPI_ERR_COMM of the others.
 */
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "mftest.h"

#define N 7     /* elements per block */
#define ITERS 3 /* starts of each persistent request */

static int rank, size;

static int val(int r, int i, int it)
{
    return r * 1000 + i * 7 + it * 13 + 1;
}

static int sbuf[64 * N], rbuf[64 * N], expect[64 * N];

/* Non-commutative op: 2x2 integer matrices mod 9973 under multiplication (mftest_matmul). */

static void mat_of(int r, int it, int *m)
{
    m[0] = r + 2 + it;
    m[1] = 1;
    m[2] = r % 3;
    m[3] = 1 + it;
}

static void check_ints(const int *got, const int *want, int n, const char *what, int it)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            MF_CHECK(0, "%s it=%d: [%d] = %d, expected %d", what, it, i, got[i], want[i]);
            return;
        }
}

/* Starts (persistent: starts and waits ITERS times) and waits. */
#define DO(persist, icall, initcall, fillcode, checkcode, what)                                    \
    do {                                                                                           \
        MPI_Request rq_;                                                                           \
        if (!(persist)) {                                                                          \
            int it = 0;                                                                            \
            (void)it;                                                                              \
            fillcode;                                                                              \
            MF_CHECK_MPI(icall);                                                                   \
            MF_CHECK_MPI(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                       \
            MF_CHECK(rq_ == MPI_REQUEST_NULL, "%s: request not freed", what);                      \
            checkcode;                                                                             \
        } else {                                                                                   \
            MF_CHECK_MPI(initcall);                                                                \
            for (int it = 0; it < ITERS; it++) {                                                   \
                fillcode;                                                                          \
                MF_CHECK_MPI(MPI_Start(&rq_));                                                     \
                MF_CHECK_MPI(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                   \
                checkcode;                                                                         \
            }                                                                                      \
            MF_CHECK(rq_ != MPI_REQUEST_NULL, "%s: persistent request lost", what);                \
            MF_CHECK_MPI(MPI_Request_free(&rq_));                                                  \
        }                                                                                          \
    } while (0)

static void test_all(int p)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info info = MPI_INFO_NULL;
    int root = size - 1;

    DO(p, MPI_Ibarrier(w, &rq_), MPI_Barrier_init(w, info, &rq_), (void)0, (void)0, "barrier");

    /* bcast, with a strided type: every other int of 2N */
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    DO(
        p, MPI_Ibcast(rbuf, 1, vec, root, w, &rq_),
        MPI_Bcast_init(rbuf, 1, vec, root, w, info, &rq_),
        {
            for (int i = 0; i < 2 * N; i++)
                rbuf[i] = rank == root ? val(root, i, it) : -1;
        },
        {
            for (int i = 0; i < 2 * N; i++)
                expect[i] = i % 2 == 0 ? val(root, i, it) : rank == root ? val(root, i, it) : -1;
            check_ints(rbuf, expect, 2 * N, "bcast", it);
        },
        "bcast");

    /* gather and gatherv (rank r contributes r+1 ints at displacement 10*r), in place at root */
    DO(
        p, MPI_Igather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, w, &rq_),
        MPI_Gather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, w, info, &rq_),
        {
            for (int i = 0; i < N; i++)
                sbuf[i] = val(rank, i, it);
        },
        {
            if (rank == root) {
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < N; i++)
                        expect[r * N + i] = val(r, i, it);
                check_ints(rbuf, expect, size * N, "gather", it);
            }
        },
        "gather");
    int counts[64], displs[64];
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = 10 * r;
    }
    DO(
        p,
        MPI_Igatherv(rank == root ? MPI_IN_PLACE : sbuf, rank + 1, MPI_INT, rbuf, counts, displs,
                     MPI_INT, root, w, &rq_),
        MPI_Gatherv_init(rank == root ? MPI_IN_PLACE : sbuf, rank + 1, MPI_INT, rbuf, counts,
                         displs, MPI_INT, root, w, info, &rq_),
        {
            for (int i = 0; i < rank + 1; i++)
                sbuf[i] = val(rank, i, it);
            for (int i = 0; i < 10 * size; i++)
                rbuf[i] = -1;
            if (rank == root)
                memcpy(rbuf + displs[rank], sbuf, (size_t)(rank + 1) * sizeof(int));
        },
        {
            if (rank == root) {
                for (int i = 0; i < 10 * size; i++)
                    expect[i] = i % 10 <= i / 10 ? val(i / 10, i % 10, it) : -1;
                check_ints(rbuf, expect, 10 * size, "gatherv", it);
            }
        },
        "gatherv");

    /* scatter and scatterv (the mirror images) */
    DO(
        p, MPI_Iscatter(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, w, &rq_),
        MPI_Scatter_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, w, info, &rq_),
        {
            for (int i = 0; i < size * N; i++)
                sbuf[i] = val(i / N, i % N, it);
        },
        {
            for (int i = 0; i < N; i++)
                expect[i] = val(rank, i, it);
            check_ints(rbuf, expect, N, "scatter", it);
        },
        "scatter");
    DO(
        p,
        MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rank == root ? MPI_IN_PLACE : rbuf, rank + 1,
                      MPI_INT, root, w, &rq_),
        MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, rank == root ? MPI_IN_PLACE : rbuf,
                          rank + 1, MPI_INT, root, w, info, &rq_),
        {
            for (int i = 0; i < 10 * size; i++)
                sbuf[i] = val(i / 10, i % 10, it);
            memset(rbuf, 0, sizeof rbuf);
        },
        {
            if (rank != root) {
                for (int i = 0; i < rank + 1; i++)
                    expect[i] = val(rank, i, it);
                check_ints(rbuf, expect, rank + 1, "scatterv", it);
            }
        },
        "scatterv");

    /* allgather with the strided receive type; allgatherv in place */
    DO(
        p, MPI_Iallgather(sbuf, N, MPI_INT, rbuf, 1, vec, w, &rq_),
        MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, 1, vec, w, info, &rq_),
        {
            for (int i = 0; i < N; i++)
                sbuf[i] = val(rank, i, it);
            for (int i = 0; i < 64 * N; i++)
                rbuf[i] = -1;
        },
        {
            /* block r starts at extent(vec) * r = (2N-1) ints */
            for (int i = 0; i < (2 * N - 1) * size + 1; i++)
                expect[i] = -1;
            for (int r = 0; r < size; r++)
                for (int i = 0; i < N; i++)
                    expect[(2 * N - 1) * r + 2 * i] = val(r, i, it);
            check_ints(rbuf, expect, (2 * N - 1) * size, "allgather", it);
        },
        "allgather");
    DO(
        p, MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_INT, rbuf, counts, displs, MPI_INT, w, &rq_),
        MPI_Allgatherv_init(MPI_IN_PLACE, 0, MPI_INT, rbuf, counts, displs, MPI_INT, w, info, &rq_),
        {
            for (int i = 0; i < 10 * size; i++)
                rbuf[i] = -1;
            for (int i = 0; i < rank + 1; i++)
                rbuf[displs[rank] + i] = val(rank, i, it);
        },
        {
            for (int i = 0; i < 10 * size; i++)
                expect[i] = i % 10 <= i / 10 ? val(i / 10, i % 10, it) : -1;
            check_ints(rbuf, expect, 10 * size, "allgatherv", it);
        },
        "allgatherv");

    /* alltoall, in place; alltoallv with per-pair sizes; alltoallw */
    DO(
        p, MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, rbuf, N, MPI_INT, w, &rq_),
        MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_INT, rbuf, N, MPI_INT, w, info, &rq_),
        {
            for (int i = 0; i < size * N; i++)
                rbuf[i] = val(rank, i, it);
        },
        {
            for (int r = 0; r < size; r++)
                for (int i = 0; i < N; i++)
                    expect[r * N + i] = val(r, rank * N + i, it);
            check_ints(rbuf, expect, size * N, "alltoall", it);
        },
        "alltoall");
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype types[64];
    for (int r = 0; r < size; r++) {
        sc[r] = (rank + r) % 3 + 1; /* to r: depends on both */
        sd[r] = 5 * r;
        rc[r] = (r + rank) % 3 + 1;
        rd[r] = 6 * r;
        types[r] = MPI_INT;
    }
    DO(
        p, MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w, &rq_),
        MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w, info, &rq_),
        {
            for (int i = 0; i < 5 * size; i++)
                sbuf[i] = val(rank, i, it);
            for (int i = 0; i < 6 * size; i++)
                rbuf[i] = -1;
        },
        {
            for (int i = 0; i < 6 * size; i++) {
                int r = i / 6;
                int k = i % 6;
                expect[i] = k < rc[r] ? val(r, 5 * rank + k, it) : -1;
            }
            check_ints(rbuf, expect, 6 * size, "alltoallv", it);
        },
        "alltoallv");
    int sdb[64], rdb[64];
    for (int r = 0; r < size; r++) {
        sdb[r] = sd[r] * (int)sizeof(int);
        rdb[r] = rd[r] * (int)sizeof(int);
    }
    DO(
        p, MPI_Ialltoallw(sbuf, sc, sdb, types, rbuf, rc, rdb, types, w, &rq_),
        MPI_Alltoallw_init(sbuf, sc, sdb, types, rbuf, rc, rdb, types, w, info, &rq_),
        {
            for (int i = 0; i < 5 * size; i++)
                sbuf[i] = val(rank, i, it);
            for (int i = 0; i < 6 * size; i++)
                rbuf[i] = -1;
        },
        {
            for (int i = 0; i < 6 * size; i++) {
                int r = i / 6;
                int k = i % 6;
                expect[i] = k < rc[r] ? val(r, 5 * rank + k, it) : -1;
            }
            check_ints(rbuf, expect, 6 * size, "alltoallw", it);
        },
        "alltoallw");

    /* reductions: sum on ints, and the non-commutative matrix product */
    MPI_Op mop;
    MPI_Datatype mat;
    MPI_Op_create(mftest_matmul, 0, &mop);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    for (int rt = 0; rt<size; rt += size> 2 ? size - 2 : 1) {
        DO(
            p, MPI_Ireduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, rt, w, &rq_),
            MPI_Reduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, rt, w, info, &rq_),
            {
                for (int i = 0; i < N; i++)
                    sbuf[i] = val(rank, i, it);
            },
            {
                if (rank == rt) {
                    for (int i = 0; i < N; i++) {
                        expect[i] = 0;
                        for (int r = 0; r < size; r++)
                            expect[i] += val(r, i, it);
                    }
                    check_ints(rbuf, expect, N, "reduce sum", it);
                }
            },
            "reduce");
        DO(
            p, MPI_Ireduce(rank == rt ? MPI_IN_PLACE : sbuf, rbuf, 2, mat, mop, rt, w, &rq_),
            MPI_Reduce_init(rank == rt ? MPI_IN_PLACE : sbuf, rbuf, 2, mat, mop, rt, w, info, &rq_),
            {
                mat_of(rank, it, sbuf);
                mat_of(rank + 5, it, sbuf + 4);
                if (rank == rt)
                    memcpy(rbuf, sbuf, 8 * sizeof(int));
            },
            {
                if (rank == rt) {
                    int *e = expect;
                    mat_of(0, it, e);
                    mat_of(5, it, e + 4);
                    for (int r = 1; r < size; r++) {
                        int m[8];
                        int one = 2;
                        mat_of(r, it, m);
                        mat_of(r + 5, it, m + 4);
                        mftest_matmul(e, m, &one, NULL);
                        memcpy(e, m, sizeof m);
                    }
                    check_ints(rbuf, expect, 8, "reduce matmul", it);
                }
            },
            "reduce matmul");
    }
    DO(
        p, MPI_Iallreduce(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_MAX, w, &rq_),
        MPI_Allreduce_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_MAX, w, info, &rq_),
        {
            for (int i = 0; i < N; i++)
                rbuf[i] = (i + rank) % size * 3 + it;
        },
        {
            for (int i = 0; i < N; i++)
                expect[i] = (size - 1) * 3 + it;
            check_ints(rbuf, expect, N, "allreduce max", it);
        },
        "allreduce");
    DO(
        p, MPI_Iallreduce(sbuf, rbuf, 1, mat, mop, w, &rq_),
        MPI_Allreduce_init(sbuf, rbuf, 1, mat, mop, w, info, &rq_), { mat_of(rank, it, sbuf); },
        {
            mat_of(0, it, expect);
            for (int r = 1; r < size; r++) {
                int m[4];
                int one = 1;
                mat_of(r, it, m);
                mftest_matmul(expect, m, &one, NULL);
                memcpy(expect, m, sizeof m);
            }
            check_ints(rbuf, expect, 4, "allreduce matmul", it);
        },
        "allreduce matmul");
    /* reduce_scatter: rank r gets r+1 elements; block form N each */
    int total = 0;
    for (int r = 0; r < size; r++)
        total += counts[r];
    DO(
        p, MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w, &rq_),
        MPI_Reduce_scatter_init(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w, info, &rq_),
        {
            for (int i = 0; i < total; i++)
                sbuf[i] = val(rank, i, it);
        },
        {
            int off = rank * (rank + 1) / 2;
            for (int i = 0; i < rank + 1; i++) {
                expect[i] = 0;
                for (int r = 0; r < size; r++)
                    expect[i] += val(r, off + i, it);
            }
            check_ints(rbuf, expect, rank + 1, "reduce_scatter", it);
        },
        "reduce_scatter");
    DO(
        p, MPI_Ireduce_scatter_block(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, w, &rq_),
        MPI_Reduce_scatter_block_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, w, info, &rq_),
        {
            for (int i = 0; i < size * N; i++)
                rbuf[i] = val(rank, i, it);
        },
        {
            for (int i = 0; i < N; i++) {
                expect[i] = 0;
                for (int r = 0; r < size; r++)
                    expect[i] += val(r, rank * N + i, it);
            }
            check_ints(rbuf, expect, N, "reduce_scatter_block", it);
        },
        "reduce_scatter_block");
    /* scans with the matrix product: order matters */
    DO(
        p, MPI_Iscan(sbuf, rbuf, 1, mat, mop, w, &rq_),
        MPI_Scan_init(sbuf, rbuf, 1, mat, mop, w, info, &rq_), { mat_of(rank, it, sbuf); },
        {
            mat_of(0, it, expect);
            for (int r = 1; r <= rank; r++) {
                int m[4];
                int one = 1;
                mat_of(r, it, m);
                mftest_matmul(expect, m, &one, NULL);
                memcpy(expect, m, sizeof m);
            }
            check_ints(rbuf, expect, 4, "scan", it);
        },
        "scan");
    DO(
        p, MPI_Iexscan(MPI_IN_PLACE, rbuf, 1, mat, mop, w, &rq_),
        MPI_Exscan_init(MPI_IN_PLACE, rbuf, 1, mat, mop, w, info, &rq_),
        { mat_of(rank, it, rbuf); },
        {
            if (rank > 0) {
                mat_of(0, it, expect);
                for (int r = 1; r < rank; r++) {
                    int m[4];
                    int one = 1;
                    mat_of(r, it, m);
                    mftest_matmul(expect, m, &one, NULL);
                    memcpy(expect, m, sizeof m);
                }
                check_ints(rbuf, expect, 4, "exscan", it);
            }
        },
        "exscan");
    /* freeing the datatype and op while a collective runs is allowed */
    MPI_Request r2;
    mat_of(rank, 0, sbuf);
    MF_CHECK_MPI(MPI_Iallreduce(sbuf, rbuf, 1, mat, mop, w, &r2));
    MPI_Op_free(&mop);
    MPI_Type_free(&mat);
    MPI_Type_free(&vec);
    MF_CHECK_MPI(MPI_Wait(&r2, MPI_STATUS_IGNORE));
}

/* World rank of remote rank i when the groups are the even and the odd world ranks. */
static int inter_world(int color, int i)
{
    return 2 * i + (1 - color);
}

/* Rooted collectives across (group 0's rank 0 is the root): gather, gatherv, scatterv, reduce,
 * the gather also persistent. */
static void inter_rooted(MPI_Comm inter, int color, int lrank, int rsize)
{
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    bool at_root = root == MPI_ROOT;
    int g[8] = {0}, gv[64] = {0}, counts[8], displs[8], sv[64], mine[8] = {0}, sum = -1;
    for (int i = 0, off = 0; i < rsize && i < 8; i++) {
        counts[i] = i + 1;
        displs[i] = off;
        off += i + 1;
    }
    int me = rank * 10, k = (color == 1) ? (rank - 1) / 2 + 1 : 0; /* group 1: lrank + 1 */
    for (int i = 0; i < 64; i++)
        sv[i] = 1000 + i;
    int mv[8];
    for (int i = 0; i < 8; i++)
        mv[i] = rank * 10 + i;
    MPI_Request rq[4];
    MF_CHECK_MPI(MPI_Igather(&me, 1, MPI_INT, g, 1, MPI_INT, root, inter, &rq[0]));
    MF_CHECK_MPI(MPI_Igatherv(mv, k, MPI_INT, gv, counts, displs, MPI_INT, root, inter, &rq[1]));
    MF_CHECK_MPI(MPI_Iscatterv(sv, counts, displs, MPI_INT, mine, k, MPI_INT, root, inter, &rq[2]));
    int one = rank + 1;
    MF_CHECK_MPI(MPI_Ireduce(&one, &sum, 1, MPI_INT, MPI_SUM, root, inter, &rq[3]));
    MF_CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    if (at_root) {
        int want = 0;
        for (int i = 0; i < rsize && i < 8; i++) {
            int w = inter_world(color, i);
            want += w + 1;
            MF_CHECK(g[i] == w * 10, "inter gather [%d] = %d, expected %d", i, g[i], w * 10);
            for (int j = 0; j <= i; j++)
                MF_CHECK(gv[displs[i] + j] == w * 10 + j, "inter gatherv [%d][%d] = %d", i, j,
                         gv[displs[i] + j]);
        }
        MF_CHECK(sum == want, "inter reduce: %d, expected %d", sum, want);
    } else if (color == 1) {
        for (int j = 0; j < k; j++)
            MF_CHECK(mine[j] == 1000 + displs[k - 1] + j, "inter scatterv [%d] = %d", j, mine[j]);
    }
    /* persistent gather, started twice */
    MPI_Request pr;
    MF_CHECK_MPI(MPI_Gather_init(&me, 1, MPI_INT, g, 1, MPI_INT, root, inter, MPI_INFO_NULL, &pr));
    for (int it = 0; it < 2; it++) {
        memset(g, 0, sizeof g);
        MF_CHECK_MPI(MPI_Start(&pr));
        MF_CHECK_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        for (int i = 0; at_root && i < rsize && i < 8; i++)
            MF_CHECK(g[i] == inter_world(color, i) * 10, "inter persistent gather [%d] = %d", i,
                     g[i]);
    }
    MPI_Request_free(&pr);
}

/* Collectives where everyone takes part across: allgather, alltoall, alltoallw and, with groups
 * of equal size, reduce_scatter_block. */
static void inter_all(MPI_Comm inter, int color, int rsize)
{
    if (rsize > 8)
        return;
    int ag[8] = {0}, sb[8], rb[8] = {0}, wb[8] = {0}, lsize;
    MPI_Comm_size(inter, &lsize);
    for (int i = 0; i < rsize; i++)
        sb[i] = rank * 100 + i;
    int counts[8], displs[8];
    MPI_Datatype types[8];
    for (int i = 0; i < rsize; i++) {
        counts[i] = 1;
        displs[i] = (int)(i * sizeof(int));
        types[i] = MPI_INT;
    }
    MPI_Request rq[3];
    int nrq = 0;
    MF_CHECK_MPI(MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, inter, &rq[nrq++]));
    MF_CHECK_MPI(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, inter, &rq[nrq++]));
    MF_CHECK_MPI(
        MPI_Ialltoallw(sb, counts, displs, types, wb, counts, displs, types, inter, &rq[nrq++]));
    MF_CHECK_MPI(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
    int lrank;
    MPI_Comm_rank(inter, &lrank);
    for (int i = 0; i < rsize; i++) {
        int w = inter_world(color, i);
        MF_CHECK(ag[i] == w, "inter allgather [%d] = %d, expected %d", i, ag[i], w);
        MF_CHECK(rb[i] == w * 100 + lrank, "inter alltoall [%d] = %d", i, rb[i]);
        MF_CHECK(wb[i] == w * 100 + lrank, "inter alltoallw [%d] = %d", i, wb[i]);
    }
    if (lsize != rsize)
        return;
    /* each process gives a vector of lsize elements v[j] = rank + j; process j of the other
     * group receives element j of the sum over this group */
    int v[8], got = -1, want = 0;
    for (int j = 0; j < lsize; j++)
        v[j] = rank + j;
    for (int i = 0; i < rsize; i++)
        want += inter_world(color, i) + lrank;
    MPI_Request r;
    MF_CHECK_MPI(MPI_Ireduce_scatter_block(v, &got, 1, MPI_INT, MPI_SUM, inter, &r));
    MF_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MF_CHECK(got == want, "inter reduce_scatter_block: %d, expected %d", got, want);
}

static void test_inter(void)
{
    if (size < 2)
        return;
    MPI_Comm local, inter;
    int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    int lrank, rsize;
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Request rq[3];
    int b[N], s = rank + 1, sum = -1;
    /* group 0's rank 0 broadcasts to group 1 */
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < N; i++)
        b[i] = color == 0 && lrank == 0 ? val(99, i, 0) : -1;
    MF_CHECK_MPI(MPI_Ibarrier(inter, &rq[0]));
    MF_CHECK_MPI(MPI_Ibcast(b, N, MPI_INT, root, inter, &rq[1]));
    MF_CHECK_MPI(MPI_Iallreduce(&s, &sum, 1, MPI_INT, MPI_SUM, inter, &rq[2]));
    MF_CHECK_MPI(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    if (color == 1)
        for (int i = 0; i < N; i++)
            MF_CHECK(b[i] == val(99, i, 0), "inter bcast [%d] = %d", i, b[i]);
    int want = 0; /* sum of (rank+1) over the other group */
    for (int r = 0; r < size; r++)
        if (r % 2 != color)
            want += r + 1;
    MF_CHECK(sum == want, "inter allreduce: %d, expected %d", sum, want);
    /* persistent allreduce on the intercomm */
    MPI_Request pr;
    MF_CHECK_MPI(MPI_Allreduce_init(&s, &sum, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &pr));
    for (int it = 0; it < ITERS; it++) {
        sum = -1;
        MF_CHECK_MPI(MPI_Start(&pr));
        MF_CHECK_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        MF_CHECK(sum == want, "inter persistent allreduce: %d, expected %d", sum, want);
    }
    MPI_Request_free(&pr);
    inter_rooted(inter, color, lrank, rsize);
    inter_all(inter, color, rsize);
    /* scans are not defined on intercommunicators */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Request x;
    int err = MPI_Iscan(&s, &sum, 1, MPI_INT, MPI_SUM, inter, &x), cls;
    MPI_Error_class(err, &cls);
    MF_CHECK(cls == MPI_ERR_COMM, "Iscan on an intercomm: class %d", cls);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

/* Persistent collectives started in different orders on different processes (MPI-4.0 allows
 * it unless mpi_assert_strict_persistent_collective_ordering is given; MPICH's coll/p_order):
 * matching follows the order of initialisation. Odd ranks start them backwards. */
static void test_start_order(void)
{
    int b = -1, one = 1, sum = -1, g[64];
    MPI_Request rq[4];
    MF_CHECK_MPI(MPI_Bcast_init(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    MF_CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    MF_CHECK_MPI(
        MPI_Allreduce_init(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
    MF_CHECK_MPI(MPI_Allgather_init(&rank, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                    &rq[3]));
    for (int it = 0; it < 3; it++) {
        b = rank == 0 ? 42 + it : -1;
        sum = -1;
        for (int k = 0; k < 4; k++)
            MF_CHECK_MPI(MPI_Start(&rq[rank % 2 ? 3 - k : k]));
        MF_CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        MF_CHECK(b == 42 + it && sum == size, "start order: bcast %d, allreduce %d", b, sum);
        for (int i = 0; i < size && i < 64; i++)
            MF_CHECK(g[i] == i, "start order: allgather [%d] = %d", i, g[i]);
    }
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&rq[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_all(0);
    test_all(1);
    test_inter();
    test_start_order();
    return mftest_finish();
}
