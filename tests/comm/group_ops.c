/*
 * Group operations against tables computed here: incl/excl/range_incl/range_excl, union,
 * intersection, difference, translate_ranks, compare, and the rank/size of each result.
 * Groups are local, so every rank checks the same tables over MPI_COMM_WORLD's group.
 */
#include <stdlib.h>

#include "mftest.h"

/* Checks g's members (as world ranks) against expect[0..n-1]. */
static void check_members(MPI_Group g, const int *expect, int n, const char *what)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int size, rank, wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MF_CHECK_MPI(MPI_Group_size(g, &size));
    MF_CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    if (size != n) {
        MPI_Group_free(&world);
        return;
    }
    int *idx = malloc((size_t)n * sizeof *idx + 1), *out = malloc((size_t)n * sizeof *out + 1);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MF_CHECK_MPI(MPI_Group_translate_ranks(g, n, idx, world, out));
    int my = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        MF_CHECK(out[i] == expect[i], "%s: member %d is world %d, expected %d", what, i, out[i],
                 expect[i]);
        if (expect[i] == wrank)
            my = i;
    }
    MF_CHECK_MPI(MPI_Group_rank(g, &rank));
    MF_CHECK(rank == my, "%s: my rank %d, expected %d", what, rank, my);
    free(idx);
    free(out);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *a = malloc(((size_t)size + 1) * sizeof *a), *b = malloc(((size_t)size + 1) * sizeof *b);
    int *e = malloc((2 * (size_t)size + 1) * sizeof *e);

    /* incl: reverse order; excl: drop rank 0. */
    for (int i = 0; i < size; i++)
        a[i] = size - 1 - i;
    MPI_Group rev, noz, evens, odds, u, in, d;
    MF_CHECK_MPI(MPI_Group_incl(world, size, a, &rev));
    check_members(rev, a, size, "incl reversed");
    int zero = 0;
    MF_CHECK_MPI(MPI_Group_excl(world, 1, &zero, &noz));
    for (int i = 1; i < size; i++)
        e[i - 1] = i;
    check_members(noz, e, size - 1, "excl 0");

    /* range_incl (0, size-1, 2) = evens; range_excl of the same = odds. */
    int range[1][3] = {{0, size - 1, 2}};
    MF_CHECK_MPI(MPI_Group_range_incl(world, 1, range, &evens));
    int ne = 0;
    for (int r = 0; r < size; r += 2)
        e[ne++] = r;
    check_members(evens, e, ne, "range_incl evens");
    MF_CHECK_MPI(MPI_Group_range_excl(world, 1, range, &odds));
    int no = 0;
    for (int r = 1; r < size; r += 2)
        e[no++] = r;
    check_members(odds, e, no, "range_excl evens");
    /* A descending range: (size-1, 0, -3). */
    int down[1][3] = {{size - 1, 0, -3}};
    MPI_Group dg;
    MF_CHECK_MPI(MPI_Group_range_incl(world, 1, down, &dg));
    int nd = 0;
    for (int r = size - 1; r >= 0; r -= 3)
        e[nd++] = r;
    check_members(dg, e, nd, "range_incl descending");
    MPI_Group_free(&dg);

    /* union(odds, reversed) = odds then the evens in reversed order. */
    MF_CHECK_MPI(MPI_Group_union(odds, rev, &u));
    int nu = 0;
    for (int r = 1; r < size; r += 2)
        e[nu++] = r;
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == 0)
            e[nu++] = r;
    check_members(u, e, nu, "union");
    /* intersection(reversed, evens) = evens in descending order. */
    MF_CHECK_MPI(MPI_Group_intersection(rev, evens, &in));
    int ni = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == 0)
            e[ni++] = r;
    check_members(in, e, ni, "intersection");
    /* difference(reversed, excl-0) = {0}. */
    MF_CHECK_MPI(MPI_Group_difference(rev, noz, &d));
    e[0] = 0;
    check_members(d, e, 1, "difference");
    MPI_Group empty;
    MF_CHECK_MPI(MPI_Group_difference(evens, evens, &empty));
    int es;
    MPI_Group_size(empty, &es);
    MF_CHECK(es == 0, "evens minus evens has %d members", es);
    int cmp;
    MF_CHECK_MPI(MPI_Group_compare(empty, MPI_GROUP_EMPTY, &cmp));
    MF_CHECK(cmp == MPI_IDENT, "empty vs MPI_GROUP_EMPTY = %d", cmp);
    MPI_Group_free(&empty);

    /* translate_ranks: world -> evens, with MPI_PROC_NULL passed through. */
    for (int i = 0; i < size; i++)
        a[i] = i;
    a[size] = MPI_PROC_NULL;
    MF_CHECK_MPI(MPI_Group_translate_ranks(world, size + 1, a, evens, b));
    for (int i = 0; i < size; i++)
        MF_CHECK(b[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate %d -> %d", i, b[i]);
    MF_CHECK(b[size] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", b[size]);

    /* compare */
    MF_CHECK_MPI(MPI_Group_compare(world, world, &cmp));
    MF_CHECK(cmp == MPI_IDENT, "world vs world = %d", cmp);
    MF_CHECK_MPI(MPI_Group_compare(world, rev, &cmp));
    MF_CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "world vs reversed = %d", cmp);
    MF_CHECK_MPI(MPI_Group_compare(world, noz, &cmp));
    MF_CHECK(cmp == MPI_UNEQUAL, "world vs excl-0 = %d", cmp);

    MPI_Group all[] = {rev, noz, evens, odds, u, in, d, world};
    for (int i = 0; i < 8; i++) {
        MF_CHECK_MPI(MPI_Group_free(&all[i]));
        MF_CHECK(all[i] == MPI_GROUP_NULL, "Group_free did not null the handle");
    }
    free(a);
    free(b);
    free(e);
    return mftest_finish();
}
