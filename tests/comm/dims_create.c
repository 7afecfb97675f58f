/*
 * MPI_Dims_create returns the most balanced factorization: the least spread between the largest
 * and the smallest free dimension and, among equally spread ones, the one with the largest small
 * factors (MPICH's and Open MPI's answer: 20 in 4 dimensions is 5x2x2x1, not 5x4x1x1). Checked
 * against a table of known answers, against an exhaustive reference for every count up to 512
 * in 1 to 5 dimensions, with preset entries, and for the error cases.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

/* Exhaustive reference over non-increasing factorizations of m into k factors. */
typedef struct ref_search {
    int k, cur[8], best[8];
    long spread;
} ref_search;

static void ref_rec(ref_search *s, int i, int m, int bound)
{
    if (i == s->k - 1) {
        if (m > bound)
            return;
        s->cur[i] = m;
        long spread = s->cur[0] - m;
        int better = s->spread < 0 || spread < s->spread;
        if (!better && spread == s->spread)
            for (int j = s->k - 1; j >= 0; j--)
                if (s->cur[j] != s->best[j]) {
                    better = s->cur[j] > s->best[j];
                    break;
                }
        if (better) {
            s->spread = spread;
            memcpy(s->best, s->cur, sizeof s->cur);
        }
        return;
    }
    for (int d = bound; d >= 1; d--)
        if (m % d == 0) {
            s->cur[i] = d;
            ref_rec(s, i + 1, m / d, d);
        }
}

static void expect(int nnodes, int ndims, const int *preset, const int *want)
{
    int dims[8];
    memcpy(dims, preset, (size_t)ndims * sizeof *dims);
    int rc = MPI_Dims_create(nnodes, ndims, dims);
    MF_CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d) failed: %d", nnodes, ndims, rc);
    for (int i = 0; i < ndims; i++)
        MF_CHECK(dims[i] == want[i], "Dims_create(%d, %d): dims[%d]=%d, want %d", nnodes, ndims, i,
                 dims[i], want[i]);
}

static void expect_error(int nnodes, int ndims, int *dims, int want_class, const char *what)
{
    int rc = MPI_Dims_create(nnodes, ndims, dims), cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    MF_CHECK(cls == want_class, "%s: class %d, want %d", what, cls, want_class);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* The standard's examples and known answers of MPICH and Open MPI. */
    expect(6, 2, (int[]){0, 0}, (int[]){3, 2});
    expect(7, 2, (int[]){0, 0}, (int[]){7, 1});
    expect(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    expect(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    expect(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    expect(16, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 2});
    expect(20, 4, (int[]){0, 0, 0, 0}, (int[]){5, 2, 2, 1});
    expect(42, 4, (int[]){0, 0, 0, 0}, (int[]){7, 3, 2, 1});
    expect(100, 3, (int[]){0, 0, 0}, (int[]){5, 5, 4});
    expect(100, 5, (int[]){0, 0, 0, 0, 0}, (int[]){5, 5, 2, 2, 1});
    expect(360, 3, (int[]){0, 0, 0}, (int[]){10, 6, 6});
    expect(1024, 3, (int[]){0, 0, 0}, (int[]){16, 8, 8});
    expect(720, 3, (int[]){0, 0, 0}, (int[]){10, 9, 8});
    /* Preset entries stay; the free ones are balanced over what is left, in order. */
    expect(24, 3, (int[]){0, 2, 0}, (int[]){4, 2, 3});
    expect(40, 4, (int[]){0, 0, 5, 0}, (int[]){2, 2, 5, 2});
    expect(60, 4, (int[]){0, 3, 0, 0}, (int[]){5, 3, 2, 2});
    expect(8, 3, (int[]){2, 2, 2}, (int[]){2, 2, 2});
    expect(9, 2, (int[]){9, 0}, (int[]){9, 1});
    expect(5, 0, (int[]){0}, (int[]){0});

    /* Every count up to 512 in 1..5 free dimensions against the exhaustive reference; each rank
     * checks its share. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int n = 1 + rank; n <= 512; n += size)
        for (int k = 1; k <= 5; k++) {
            ref_search s = {.k = k, .spread = -1};
            ref_rec(&s, 0, n, n);
            int dims[8] = {0};
            MPI_Dims_create(n, k, dims);
            for (int i = 0; i < k; i++)
                MF_CHECK(dims[i] == s.best[i], "Dims_create(%d, %d): dims[%d]=%d, reference %d", n,
                         k, i, dims[i], s.best[i]);
        }

    /* Errors: preset entries that do not divide nnodes, all preset but a wrong product, negative
     * entries, negative ndims and
     * nnodes. */
    expect_error(7, 3, (int[]){0, 3, 0}, MPI_ERR_DIMS, "3 does not divide 7");
    expect_error(8, 2, (int[]){2, 2}, MPI_ERR_DIMS, "all preset, product 4 != 8");
    expect_error(8, 2, (int[]){-2, 0}, MPI_ERR_DIMS, "negative entry");
    expect_error(8, -1, (int[]){0}, MPI_ERR_DIMS, "negative ndims");
    expect_error(-4, 2, (int[]){0, 0}, MPI_ERR_ARG, "negative nnodes");

    return mftest_finish();
}
