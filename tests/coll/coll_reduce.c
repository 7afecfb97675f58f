/*
 * coll_reduce.c — reducing collectives on MPI_COMM_WORLD: Reduce, Allreduce,
 * Reduce_scatter(_block), Scan, Exscan with MPI_SUM/MPI_MAX on sizes across the algorithm
 * switches, MPI_IN_PLACE, a strided derived type, and a non-commutative user op (decimal digit
 * concatenation: rank r contributes the digit r % 9 + 1, so any operand reordering shows up in
 * the number). Expected values are computed locally from the rank-dependent inputs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mftest.h"

static int rank, size;

static const int counts[] = {1, 3, 100, 700, 20000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static int in(int r, int i)
{
    return r + i % 7;
}

static int sum_upto(int n, int i) /* sum of in(r, i) over r < n */
{
    return n * (n - 1) / 2 + n * (i % 7);
}

static void test_allreduce(int count)
{
    int *s = malloc(count * sizeof *s), *r = malloc(count * sizeof *r);
    double *ds = malloc(count * sizeof *ds), *dr = malloc(count * sizeof *dr);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count; i++) {
            s[i] = in(rank, i);
            r[i] = ip ? s[i] : -1;
        }
        MF_CHECK_MPI(
            MPI_Allreduce(ip ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++)
            if (r[i] != sum_upto(size, i)) {
                MF_CHECK(0, "allreduce sum ip=%d count=%d: r[%d]=%d", ip, count, i, r[i]);
                break;
            }
    }
    for (int i = 0; i < count; i++)
        ds[i] = (double)((rank * 7 + i) % size) + 0.5;
    MF_CHECK_MPI(MPI_Allreduce(ds, dr, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        double e = 0;
        for (int q = 0; q < size; q++)
            e = (double)((q * 7 + i) % size) + 0.5 > e ? (double)((q * 7 + i) % size) + 0.5 : e;
        if (dr[i] != e) {
            MF_CHECK(0, "allreduce max count=%d: dr[%d]=%g expected %g", count, i, dr[i], e);
            break;
        }
    }
    free(s);
    free(r);
    free(ds);
    free(dr);
}

static void test_reduce(int count)
{
    int *s = malloc(count * sizeof *s), *r = malloc(count * sizeof *r);
    for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1))
        for (int ip = 0; ip < 2; ip++) {
            for (int i = 0; i < count; i++) {
                s[i] = in(rank, i);
                r[i] = ip && rank == root ? s[i] : -1;
            }
            const void *sb = ip && rank == root ? MPI_IN_PLACE : s;
            MF_CHECK_MPI(MPI_Reduce(sb, r, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < count; i++)
                    if (r[i] != sum_upto(size, i)) {
                        MF_CHECK(0, "reduce root=%d ip=%d count=%d: r[%d]=%d", root, ip, count, i,
                                 r[i]);
                        break;
                    }
        }
    free(s);
    free(r);
}

static void test_reduce_scatter(int count)
{
    /* block form: every rank gets `count` elements of the sum */
    size_t total = (size_t)count * size;
    int *s = malloc(total * sizeof *s), *r = malloc(total * sizeof *r);
    for (int ip = 0; ip < 2; ip++) {
        for (size_t i = 0; i < total; i++)
            s[i] = r[i] = in(rank, (int)i);
        MF_CHECK_MPI(MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM,
                                              MPI_COMM_WORLD));
        for (int i = 0; i < count; i++)
            if (r[i] != sum_upto(size, rank * count + i)) {
                MF_CHECK(0, "reduce_scatter_block ip=%d count=%d: r[%d]=%d", ip, count, i, r[i]);
                break;
            }
    }
    /* uneven counts: rank q gets (q % 3) * count / 2 */
    int *rc = malloc(size * sizeof *rc), tot = 0, off = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = q % 3 * count / 2;
        tot += rc[q];
        off += q < rank ? rc[q] : 0;
    }
    int *vs = malloc(((size_t)tot + 1) * sizeof *vs), *vr = malloc(((size_t)tot + 1) * sizeof *vr);
    for (int i = 0; i < tot; i++)
        vs[i] = in(rank, i);
    MF_CHECK_MPI(MPI_Reduce_scatter(vs, vr, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < rc[rank]; i++)
        if (vr[i] != sum_upto(size, off + i)) {
            MF_CHECK(0, "reduce_scatter count=%d: vr[%d]=%d", count, i, vr[i]);
            break;
        }
    free(vs);
    free(vr);
    free(rc);
    free(s);
    free(r);
}

static void test_scan(int count)
{
    int *s = malloc(count * sizeof *s), *r = malloc(count * sizeof *r);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count; i++)
            s[i] = r[i] = in(rank, i);
        MF_CHECK_MPI(MPI_Scan(ip ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++)
            if (r[i] != sum_upto(rank + 1, i)) {
                MF_CHECK(0, "scan ip=%d count=%d: r[%d]=%d", ip, count, i, r[i]);
                break;
            }
        for (int i = 0; i < count; i++)
            s[i] = r[i] = in(rank, i);
        MF_CHECK_MPI(MPI_Exscan(ip ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < count && rank > 0; i++)
            if (r[i] != sum_upto(rank, i)) {
                MF_CHECK(0, "exscan ip=%d count=%d: r[%d]=%d", ip, count, i, r[i]);
                break;
            }
    }
    free(s);
    free(r);
}

/* ---- non-commutative: digit strings ---- */
typedef struct {
    int64_t val, len;
} digits;

static void concat(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    digits *a = invec, *b = inoutvec;
    for (int i = 0; i < *len; i++) {
        int64_t p = 1;
        for (int64_t k = 0; k < b[i].len; k++)
            p *= 10;
        b[i].val = a[i].val * p + b[i].val; /* b = a op b: a's digits first */
        b[i].len += a[i].len;
    }
}

static digits expect_range(int lo, int hi, int i) /* ranks lo..hi-1, element i */
{
    digits d = {0, 0};
    for (int q = lo; q < hi; q++) {
        d.val = d.val * 10 + (q + i) % 9 + 1;
        d.len++;
    }
    return d;
}

static void test_noncommutative(void)
{
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Type_contiguous(2, MPI_INT64_T, &dt);
    MPI_Type_commit(&dt);
    MPI_Op_create(concat, 0, &op);
    int commute = 1;
    MPI_Op_commutative(op, &commute);
    MF_CHECK(commute == 0, "MPI_Op_commutative says %d", commute);
    enum { N = 3 };
    digits s[N * 16], r[N * 16];
    for (int i = 0; i < N * size && i < N * 16; i++)
        s[i] = (digits){(rank + i) % 9 + 1, 1};
    for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
        MF_CHECK_MPI(MPI_Reduce(s, r, N, dt, op, root, MPI_COMM_WORLD));
        for (int i = 0; i < N && rank == root; i++) {
            digits e = expect_range(0, size, i);
            MF_CHECK(r[i].val == e.val && r[i].len == e.len,
                     "noncommutative reduce root=%d [%d]=%lld expected %lld", root, i,
                     (long long)r[i].val, (long long)e.val);
        }
    }
    MF_CHECK_MPI(MPI_Allreduce(s, r, N, dt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        MF_CHECK(r[i].val == expect_range(0, size, i).val, "noncommutative allreduce [%d]=%lld", i,
                 (long long)r[i].val);
    MF_CHECK_MPI(MPI_Scan(s, r, N, dt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        MF_CHECK(r[i].val == expect_range(0, rank + 1, i).val, "noncommutative scan [%d]=%lld", i,
                 (long long)r[i].val);
    MF_CHECK_MPI(MPI_Exscan(s, r, N, dt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N && rank > 0; i++)
        MF_CHECK(r[i].val == expect_range(0, rank, i).val, "noncommutative exscan [%d]=%lld", i,
                 (long long)r[i].val);
    if (size <= 16) {
        /* element j of block q is element q*N+j of the vector */
        for (int i = 0; i < N * size; i++)
            s[i] = (digits){(rank + i) % 9 + 1, 1};
        MF_CHECK_MPI(MPI_Reduce_scatter_block(s, r, N, dt, op, MPI_COMM_WORLD));
        for (int j = 0; j < N; j++)
            MF_CHECK(r[j].val == expect_range(0, size, rank * N + j).val,
                     "noncommutative reduce_scatter_block [%d]=%lld", j, (long long)r[j].val);
    }
    MPI_Op_free(&op);
    MF_CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    MPI_Type_free(&dt);
}

/* predefined op on a derived type: every other int of a vector */
static void test_derived(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int s[2 * 4 * 2], r[2 * 4 * 2];
    for (int i = 0; i < 16; i++) {
        s[i] = in(rank, i);
        r[i] = -9;
    }
    MF_CHECK_MPI(MPI_Allreduce(s, r, 2, vec, MPI_SUM, MPI_COMM_WORLD));
    /* element 0 spans ints 0..6 (extent 7 ints), element 1 starts at int 7 */
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 8; k++) {
            int at = e * 7 + k;
            if (k % 2 == 0 && k < 8)
                MF_CHECK(r[at] == sum_upto(size, at), "derived allreduce r[%d]=%d", at, r[at]);
        }
    MF_CHECK(r[1] == -9, "derived allreduce wrote into a gap");
    MPI_Type_free(&vec);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double d = 1, e;
    int cls = 0, x = 1, y;
    MPI_Error_class(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_OP, "MPI_BAND on MPI_DOUBLE gave class %d", cls);
    MPI_Error_class(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_OP, "MPI_OP_NULL gave class %d", cls);
    MPI_Error_class(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, -2, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_ROOT, "reduce root=-2 gave class %d", cls);
    MPI_Error_class(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), &cls);
    MF_CHECK(cls == MPI_ERR_BUFFER, "aliased buffers gave class %d", cls);
    MPI_Error_class(MPI_Op_free(&(MPI_Op){MPI_SUM}), &cls);
    MF_CHECK(cls == MPI_ERR_OP, "freeing MPI_SUM gave class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < NCOUNTS; k++) {
        test_allreduce(counts[k]);
        test_reduce(counts[k]);
        test_reduce_scatter(counts[k]);
        test_scan(counts[k]);
    }
    test_noncommutative();
    test_derived();
    test_errors();
    return mftest_finish();
}
