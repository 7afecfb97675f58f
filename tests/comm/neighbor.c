/*
 * Blocking neighborhood collectives on the three topology kinds, with values that identify
 * the sender and the direction: a periodic ring (sizes 1 and 2 put the same process on both
 * sides, so the direction matters), a non-periodic grid (MPI_PROC_NULL neighbours leave their
 * blocks untouched), a distributed graph with variable counts, and a graph with alltoallw.
 */
#include "mftest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;

    /* Periodic ring: block 0 goes to the negative side, block 1 to the positive side. */
    MPI_Comm ring;
    int period = 1;
    MF_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &period, 0, &ring));
    int sbuf[2] = {100 * rank, 100 * rank + 1}, rbuf[2] = {-1, -1};
    MF_CHECK_MPI(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, ring));
    MF_CHECK(rbuf[0] == 100 * left + 1 && rbuf[1] == 100 * right,
             "ring alltoall got (%d,%d), expected (%d,%d)", rbuf[0], rbuf[1], 100 * left + 1,
             100 * right);
    MF_CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, ring));
    MF_CHECK(rbuf[0] == left && rbuf[1] == right, "ring allgather got (%d,%d)", rbuf[0], rbuf[1]);
    MPI_Comm_free(&ring);

    /* Non-periodic line: the ends have MPI_PROC_NULL on one side. */
    MPI_Comm line;
    period = 0;
    MF_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &period, 0, &line));
    rbuf[0] = rbuf[1] = -1;
    MF_CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, line));
    MF_CHECK(rbuf[0] == (rank > 0 ? rank - 1 : -1) && rbuf[1] == (rank < size - 1 ? rank + 1 : -1),
             "line allgather got (%d,%d)", rbuf[0], rbuf[1]);
    MPI_Comm_free(&line);

    /* Distributed graph: r -> r+1 (1 int) and r -> r+2 (2 ints), so each process receives
     * from r-1 and r-2 (in the order the edges were gathered). */
    int dsts[2] = {right, (rank + 2) % size}, srcs[2] = {left, (rank - 2 + 2 * size) % size};
    MPI_Comm dg;
    MF_CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    int scounts[2] = {1, 2}, sdispls[2] = {0, 1}, rcounts[2] = {1, 2}, rdispls[2] = {0, 1};
    int sv[3] = {rank, 1000 + rank, 2000 + rank}, rv[3] = {-1, -1, -1};
    MF_CHECK_MPI(
        MPI_Neighbor_alltoallv(sv, scounts, sdispls, MPI_INT, rv, rcounts, rdispls, MPI_INT, dg));
    MF_CHECK(rv[0] == left && rv[1] == 1000 + srcs[1] && rv[2] == 2000 + srcs[1],
             "dist graph alltoallv got (%d,%d,%d)", rv[0], rv[1], rv[2]);
    int gv[2] = {-1, -1}, counts1[2] = {1, 1}, displs1[2] = {1, 0};
    MF_CHECK_MPI(MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, gv, counts1, displs1, MPI_INT, dg));
    MF_CHECK(gv[1] == srcs[0] && gv[0] == srcs[1], "dist graph allgatherv got (%d,%d)", gv[0],
             gv[1]);
    MPI_Comm_free(&dg);

    /* Graph ring with alltoallw: an int to the left, a double to the right. */
    int index[64], edges[128];
    for (int i = 0; i < size && i < 64; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + size) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    if (size <= 64) {
        MPI_Comm g;
        MF_CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
        struct {
            int i;
            double d;
        } out = {rank, rank + 0.5}, in = {-1, -1.0};
        int wc[2] = {1, 1};
        MPI_Aint sd[2] = {0, (MPI_Aint)((char *)&out.d - (char *)&out)},
                 rd[2] = {(MPI_Aint)((char *)&in.d - (char *)&in), 0};
        MPI_Datatype st[2] = {MPI_INT, MPI_DOUBLE}, rt[2] = {MPI_DOUBLE, MPI_INT};
        /* Graph neighbours are matched in order: from the left comes its message to its right
         * neighbour (a double, received into slot 0), from the right its int. When the ring has
         * one or two processes, both messages come from the same process, in send order. */
        if (size > 2) {
            MF_CHECK_MPI(MPI_Neighbor_alltoallw(&out, wc, sd, st, &in, wc, rd, rt, g));
            MF_CHECK(in.d == left + 0.5 && in.i == right, "graph alltoallw got (%d,%g)", in.i,
                     in.d);
        }
        MPI_Comm_free(&g);
    }
    return mftest_finish();
}
