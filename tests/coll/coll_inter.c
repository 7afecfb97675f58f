/*
 * coll_inter.c — collectives on an intercommunicator between the even and the odd ranks of
 * MPI_COMM_WORLD: Barrier, Bcast and Reduce/Gather/Scatter with MPI_ROOT / MPI_PROC_NULL,
 * Allreduce (each group gets the other group's sum), Allgather, Alltoall, Reduce_scatter_block.
 * Needs at least 2 processes.
 */
#include <stdlib.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2)
        return mftest_finish();
    int color = wrank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
/* world rank of rank r of group g */
#define WR(g, r) (2 * (r) + (g))

    MF_CHECK_MPI(MPI_Barrier(inter));

    /* rooted operations: root is rank 0 of the even group */
    int root_here = color == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int x = color == 0 && rank == 0 ? 4242 : -1;
    MF_CHECK_MPI(MPI_Bcast(&x, 1, MPI_INT, root_here, inter));
    if (color == 1)
        MF_CHECK(x == 4242, "inter bcast got %d", x);

    int v = WR(color, rank), sum = -1;
    MF_CHECK_MPI(MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, root_here, inter));
    int odd_sum = 0, even_sum = 0;
    for (int r = 0; r < (color ? size : rsize); r++)
        odd_sum += WR(1, r);
    for (int r = 0; r < (color ? rsize : size); r++)
        even_sum += WR(0, r);
    if (root_here == MPI_ROOT)
        MF_CHECK(sum == odd_sum, "inter reduce got %d expected %d", sum, odd_sum);

    int *all = malloc((size_t)(size > rsize ? size : rsize) * 2 * sizeof *all);
    MF_CHECK_MPI(MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, root_here, inter));
    if (root_here == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            MF_CHECK(all[r] == WR(1, r), "inter gather [%d]=%d", r, all[r]);
    if (root_here == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            all[r] = 100 + r;
    int got = -1;
    MF_CHECK_MPI(MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, root_here, inter));
    if (color == 1)
        MF_CHECK(got == 100 + rank, "inter scatter got %d", got);

    MF_CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter));
    MF_CHECK(sum == (color ? even_sum : odd_sum), "inter allreduce got %d", sum);

    MF_CHECK_MPI(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        MF_CHECK(all[r] == WR(1 - color, r), "inter allgather [%d]=%d", r, all[r]);

    int *s = malloc((size_t)rsize * sizeof *s);
    for (int r = 0; r < rsize; r++)
        s[r] = v * 1000 + WR(1 - color, r);
    MF_CHECK_MPI(MPI_Alltoall(s, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        MF_CHECK(all[r] == WR(1 - color, r) * 1000 + v, "inter alltoall [%d]=%d", r, all[r]);

    /* both groups must agree on the total count: use the smaller group size per block */
    if (size == rsize) {
        int *in = malloc((size_t)size * sizeof *in), out = -1;
        for (int r = 0; r < size; r++)
            in[r] = v + r;
        MF_CHECK_MPI(MPI_Reduce_scatter_block(in, &out, 1, MPI_INT, MPI_SUM, inter));
        int e = (color ? even_sum : odd_sum) + rsize * rank;
        MF_CHECK(out == e, "inter reduce_scatter_block got %d expected %d", out, e);
        free(in);
    }
    free(s);
    free(all);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mftest_finish();
}
