/*
 * coll_move.c — data-movement collectives on MPI_COMM_WORLD: Barrier, Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), at sizes that cross every algorithm switch (the
 * default thresholds are 2 KiB and 64 KiB), with MPI_IN_PLACE and a strided derived type.
 * Every rank computes the expected contents itself from val(rank, i).
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;

static int val(int r, int i)
{
    return r * 100003 + i;
}

static const int counts[] = {0, 1, 5, 300, 17000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static void test_bcast(int count)
{
    for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
        int *buf = malloc(((size_t)count + 1) * sizeof *buf);
        for (int i = 0; i < count; i++)
            buf[i] = rank == root ? val(root, i) : -1;
        MF_CHECK_MPI(MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++)
            if (buf[i] != val(root, i)) {
                MF_CHECK(0, "bcast count=%d root=%d: buf[%d]=%d", count, root, i, buf[i]);
                break;
            }
        free(buf);
    }
    /* strided derived type: every other int, the gaps must stay untouched */
    MPI_Datatype vec;
    MPI_Type_vector(count ? count : 1, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = malloc((2 * (size_t)count + 2) * sizeof *b);
    for (int i = 0; i < 2 * count; i++)
        b[i] = rank == 0 || i % 2 ? val(0, i) : -7;
    MF_CHECK_MPI(MPI_Bcast(b, count ? 1 : 0, vec, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * count; i++)
        if (b[i] != val(0, i)) {
            MF_CHECK(0, "bcast vector count=%d: b[%d]=%d", count, i, b[i]);
            break;
        }
    free(b);
    MPI_Type_free(&vec);
}

static void test_gather_scatter(int count)
{
    int root = size - 1;
    int *mine = malloc(((size_t)count + 1) * sizeof *mine);
    int *all = malloc(((size_t)count * size + 1) * sizeof *all);
    for (int i = 0; i < count; i++)
        mine[i] = val(rank, i);
    /* Gather, then with MPI_IN_PLACE at the root */
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count * size; i++)
            all[i] = rank == root && ip ? val(i / count, i % count) * (i / count == root) : -1;
        const void *s = ip && rank == root ? MPI_IN_PLACE : mine;
        MF_CHECK_MPI(MPI_Gather(s, count, MPI_INT, all, count, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < count * size; i++)
                if (all[i] != val(i / count, i % count)) {
                    MF_CHECK(0, "gather ip=%d count=%d: all[%d]=%d", ip, count, i, all[i]);
                    break;
                }
    }
    /* Scatter, then with MPI_IN_PLACE at the root */
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count * size; i++)
            all[i] = val(i / count, i % count);
        for (int i = 0; i < count; i++)
            mine[i] = -1;
        void *r = ip && rank == root ? MPI_IN_PLACE : mine;
        MF_CHECK_MPI(MPI_Scatter(all, count, MPI_INT, r, count, MPI_INT, root, MPI_COMM_WORLD));
        if (!(ip && rank == root))
            for (int i = 0; i < count; i++)
                if (mine[i] != val(rank, i)) {
                    MF_CHECK(0, "scatter ip=%d count=%d: mine[%d]=%d", ip, count, i, mine[i]);
                    break;
                }
    }
    /* Gatherv / Scatterv: rank r has count/(r+1) + r elements, placed in reverse rank order
     * with a gap of 3 */
    int *cnt = malloc(size * sizeof *cnt), *dsp = malloc(size * sizeof *dsp), total = 0;
    for (int r = size - 1; r >= 0; r--) {
        cnt[r] = count / (r + 1) + r;
        dsp[r] = total;
        total += cnt[r] + 3;
    }
    int *v = malloc(((size_t)total + 1) * sizeof *v),
        *m2 = malloc(((size_t)cnt[rank] + 1) * sizeof *m2);
    for (int i = 0; i < cnt[rank]; i++)
        m2[i] = val(rank, i);
    for (int i = 0; i < total; i++)
        v[i] = -5;
    MF_CHECK_MPI(MPI_Gatherv(m2, cnt[rank], MPI_INT, v, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < cnt[r]; i++)
                MF_CHECK(v[dsp[r] + i] == val(r, i), "gatherv: from %d [%d]=%d", r, i,
                         v[dsp[r] + i]);
            MF_CHECK(v[dsp[r] + cnt[r]] == -5, "gatherv wrote into the gap after %d", r);
        }
    for (int i = 0; i < cnt[rank]; i++)
        m2[i] = -1;
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r]; i++)
                v[dsp[r] + i] = val(r, i);
    MF_CHECK_MPI(MPI_Scatterv(v, cnt, dsp, MPI_INT, m2, cnt[rank], MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < cnt[rank]; i++)
        if (m2[i] != val(rank, i)) {
            MF_CHECK(0, "scatterv count=%d: m2[%d]=%d", count, i, m2[i]);
            break;
        }
    free(v);
    free(m2);
    free(cnt);
    free(dsp);
    free(mine);
    free(all);
}

static void test_allgather(int count)
{
    int *mine = malloc(((size_t)count + 1) * sizeof *mine);
    int *all = malloc(((size_t)count * size + 1) * sizeof *all);
    for (int i = 0; i < count; i++)
        mine[i] = val(rank, i);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count * size; i++)
            all[i] = ip && i / count == rank ? val(rank, i % count) : -1;
        MF_CHECK_MPI(MPI_Allgather(ip ? MPI_IN_PLACE : mine, count, MPI_INT, all, count, MPI_INT,
                                   MPI_COMM_WORLD));
        for (int i = 0; i < count * size; i++)
            if (all[i] != val(i / count, i % count)) {
                MF_CHECK(0, "allgather ip=%d count=%d: all[%d]=%d", ip, count, i, all[i]);
                break;
            }
    }
    /* Allgatherv, uneven blocks in reverse order */
    int *cnt = malloc(size * sizeof *cnt), *dsp = malloc(size * sizeof *dsp), total = 0;
    for (int r = size - 1; r >= 0; r--) {
        cnt[r] = (count + r) / (r + 1);
        dsp[r] = total;
        total += cnt[r] + 1;
    }
    int *v = malloc(((size_t)total + 1) * sizeof *v);
    for (int i = 0; i < total; i++)
        v[i] = -5;
    MF_CHECK_MPI(MPI_Allgatherv(mine, cnt[rank], MPI_INT, v, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < cnt[r]; i++)
            if (v[dsp[r] + i] != val(r, i)) {
                MF_CHECK(0, "allgatherv: from %d [%d]=%d", r, i, v[dsp[r] + i]);
                break;
            }
        MF_CHECK(v[dsp[r] + cnt[r]] == -5, "allgatherv wrote into the gap after %d", r);
    }
    free(v);
    free(cnt);
    free(dsp);
    free(mine);
    free(all);
}

/* what rank `from` sends to rank `to`, element i */
static int a2a(int from, int to, int i)
{
    return from * 1000 + to * 10 + i % 10 + (i / 10) * 100000;
}

static void test_alltoall(int count)
{
    size_t n = (size_t)count * size + 1;
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (int ip = 0; ip < 2; ip++) {
        for (int p = 0; p < size; p++)
            for (int i = 0; i < count; i++) {
                s[p * count + i] = a2a(rank, p, i);
                r[p * count + i] = ip ? a2a(rank, p, i) : -1;
            }
        MF_CHECK_MPI(
            MPI_Alltoall(ip ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD));
        for (int p = 0; p < size; p++)
            for (int i = 0; i < count; i++)
                if (r[p * count + i] != a2a(p, rank, i)) {
                    MF_CHECK(0, "alltoall ip=%d count=%d: from %d [%d]=%d", ip, count, p, i,
                             r[p * count + i]);
                    p = size;
                    break;
                }
    }
    /* Alltoallv: rank a sends (a + b) % 3 * count / 4 elements to b, blocks in reverse order */
    int *sc = malloc(size * sizeof *sc), *sd = malloc(size * sizeof *sd);
    int *rc = malloc(size * sizeof *rc), *rd = malloc(size * sizeof *rd);
    int st = 0, rt = 0;
    for (int p = size - 1; p >= 0; p--) {
        sc[p] = (rank + p) % 3 * count / 4;
        rc[p] = (p + rank) % 3 * count / 4;
        sd[p] = st;
        rd[p] = rt;
        st += sc[p];
        rt += rc[p];
    }
    int *vs = malloc(((size_t)st + 1) * sizeof *vs), *vr = malloc(((size_t)rt + 1) * sizeof *vr);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < sc[p]; i++)
            vs[sd[p] + i] = a2a(rank, p, i);
    MF_CHECK_MPI(MPI_Alltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rc[p]; i++)
            if (vr[rd[p] + i] != a2a(p, rank, i)) {
                MF_CHECK(0, "alltoallv count=%d from %d [%d]=%d", count, p, i, vr[rd[p] + i]);
                break;
            }
    /* Alltoallw: same exchange, but received through a contiguous type of 1 int, displacements
     * in bytes */
    MPI_Datatype one;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_commit(&one);
    MPI_Datatype *stypes = malloc(size * sizeof *stypes), *rtypes = malloc(size * sizeof *rtypes);
    int *sdb = malloc(size * sizeof *sdb), *rdb = malloc(size * sizeof *rdb);
    for (int p = 0; p < size; p++) {
        stypes[p] = MPI_INT;
        rtypes[p] = one;
        sdb[p] = sd[p] * (int)sizeof(int);
        rdb[p] = rd[p] * (int)sizeof(int);
    }
    memset(vr, 0xff, ((size_t)rt + 1) * sizeof *vr);
    MF_CHECK_MPI(MPI_Alltoallw(vs, sc, sdb, stypes, vr, rc, rdb, rtypes, MPI_COMM_WORLD));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rc[p]; i++)
            if (vr[rd[p] + i] != a2a(p, rank, i)) {
                MF_CHECK(0, "alltoallw count=%d from %d [%d]=%d", count, p, i, vr[rd[p] + i]);
                break;
            }
    MPI_Type_free(&one);
    free(stypes);
    free(rtypes);
    free(sdb);
    free(rdb);
    free(vs);
    free(vr);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < NCOUNTS; k++) {
        MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        test_bcast(counts[k]);
        test_gather_scatter(counts[k]);
        test_allgather(counts[k]);
        test_alltoall(counts[k]);
    }
    /* arguments: a bad root is MPI_ERR_ROOT, a negative count MPI_ERR_COUNT */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, cls = 0;
    MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_ROOT, "bcast root=size gave class %d", cls);
    MPI_Error_class(MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_COUNT, "bcast count=-1 gave class %d", cls);
    MPI_Error_class(MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_TYPE, "bcast MPI_DATATYPE_NULL gave class %d", cls);
    MPI_Error_class(MPI_Barrier(MPI_COMM_NULL), &cls);
    MF_CHECK(cls == MPI_ERR_COMM, "barrier MPI_COMM_NULL gave class %d", cls);
    return mftest_finish();
}
