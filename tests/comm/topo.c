/*
 * Virtual topologies: MPI_Dims_create against the standard's examples and against a brute-force
 * search for the most balanced factorization; Cartesian coordinates, ranks, shifts (checked by
 * actual messages) and sub-grids; graphs; distributed graphs (adjacent and general).
 */
#include <stdlib.h>

#include "mftest.h"

/* Exhaustive: all non-increasing tuples with product n; returns the minimal spread. */
static void search(int n, int k, int i, int bound, int *cur, int *best)
{
    if (i == k - 1) {
        if (n > bound)
            return;
        cur[i] = n;
        int spread = cur[0] - cur[k - 1];
        if (*best < 0 || spread < *best)
            *best = spread;
        return;
    }
    for (int d = 1; d <= bound && d <= n; d++)
        if (n % d == 0) {
            cur[i] = d;
            search(n / d, k, i + 1, d, cur, best);
        }
}

static void check_dims_known(int n, int k, const int *in, const int *expect)
{
    int dims[8];
    for (int i = 0; i < k; i++)
        dims[i] = in[i];
    MF_CHECK_MPI(MPI_Dims_create(n, k, dims));
    for (int i = 0; i < k; i++)
        MF_CHECK(dims[i] == expect[i], "Dims_create(%d, %d): dims[%d]=%d, expected %d", n, k, i,
                 dims[i], expect[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* The standard's examples (MPI-4.0 8.5.2) and a few more. */
    check_dims_known(6, 2, (int[]){0, 0}, (int[]){3, 2});
    check_dims_known(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims_known(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    check_dims_known(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    check_dims_known(12, 2, (int[]){0, 0}, (int[]){4, 3});
    check_dims_known(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    check_dims_known(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    /* Balanced and non-increasing for every n <= 64, k <= 4. */
    for (int n = 1; n <= 64; n++)
        for (int k = 1; k <= 4; k++) {
            int dims[4] = {0, 0, 0, 0}, cur[4], best = -1;
            MF_CHECK_MPI(MPI_Dims_create(n, k, dims));
            search(n, k, 0, n, cur, &best);
            long prod = 1;
            for (int i = 0; i < k; i++) {
                prod *= dims[i];
                MF_CHECK(i == 0 || dims[i] <= dims[i - 1], "Dims_create(%d,%d) not sorted", n, k);
            }
            MF_CHECK(prod == n, "Dims_create(%d,%d): product %ld", n, k, prod);
            MF_CHECK(dims[0] - dims[k - 1] == best, "Dims_create(%d,%d): spread %d, best %d", n, k,
                     dims[0] - dims[k - 1], best);
        }

    /* A 2-D grid over all processes: periodic in dim 0, not in dim 1. */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MF_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    int status;
    MF_CHECK_MPI(MPI_Topo_test(cart, &status));
    MF_CHECK(status == MPI_CART, "Topo_test %d", status);
    MF_CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
    MF_CHECK(status == MPI_UNDEFINED, "world Topo_test %d", status);
    int ndims, gd[2], gp[2], coords[2];
    MF_CHECK_MPI(MPI_Cartdim_get(cart, &ndims));
    MF_CHECK(ndims == 2, "Cartdim_get %d", ndims);
    MF_CHECK_MPI(MPI_Cart_get(cart, 2, gd, gp, coords));
    MF_CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get");
    MF_CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords (%d,%d)",
             coords[0], coords[1]);
    for (int r = 0; r < size; r++) {
        int c[2], back;
        MF_CHECK_MPI(MPI_Cart_coords(cart, r, 2, c));
        MF_CHECK_MPI(MPI_Cart_rank(cart, c, &back));
        MF_CHECK(c[0] == r / dims[1] && c[1] == r % dims[1] && back == r, "rank %d roundtrip", r);
    }
    /* Periodic wrap in Cart_rank. */
    int wrapped[2] = {coords[0] + dims[0], coords[1]}, wr;
    MF_CHECK_MPI(MPI_Cart_rank(cart, wrapped, &wr));
    MF_CHECK(wr == rank, "periodic Cart_rank gave %d", wr);
    /* Shifts, checked with expected ranks and with messages. */
    for (int dim = 0; dim < 2; dim++) {
        int src, dst;
        MF_CHECK_MPI(MPI_Cart_shift(cart, dim, 1, &src, &dst));
        int c[2] = {coords[0], coords[1]}, es, ed;
        if (dim == 0) {
            c[0] = (coords[0] + 1) % dims[0];
            ed = c[0] * dims[1] + c[1];
            c[0] = (coords[0] - 1 + dims[0]) % dims[0];
            es = c[0] * dims[1] + c[1];
        } else {
            ed = coords[1] + 1 < dims[1] ? rank + 1 : MPI_PROC_NULL;
            es = coords[1] > 0 ? rank - 1 : MPI_PROC_NULL;
        }
        MF_CHECK(src == es && dst == ed, "shift dim %d: (%d,%d), expected (%d,%d)", dim, src, dst,
                 es, ed);
        int got = -5;
        MF_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart,
                                  MPI_STATUS_IGNORE));
        MF_CHECK(src == MPI_PROC_NULL ? got == -5 : got == src, "shift message got %d", got);
    }
    /* Sub-grid keeping dim 1: a row. */
    MPI_Comm row;
    MF_CHECK_MPI(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    int rr, rs, rd;
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(row, &rs);
    MPI_Cartdim_get(row, &rd);
    MF_CHECK(rr == coords[1] && rs == dims[1] && rd == 1, "Cart_sub row rank %d size %d", rr, rs);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);

    /* A 1-D grid one short: the last process is left out. */
    if (size > 1) {
        int d1 = size - 1, p1 = 0;
        MF_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 1, &cart));
        MF_CHECK((rank == size - 1) == (cart == MPI_COMM_NULL), "short grid membership");
        if (cart != MPI_COMM_NULL)
            MPI_Comm_free(&cart);
        int newrank;
        MF_CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, &d1, &p1, &newrank));
        MF_CHECK(newrank == (rank < size - 1 ? rank : MPI_UNDEFINED), "Cart_map %d", newrank);
    }

    /* A ring graph. */
    int *index = malloc((size_t)size * sizeof *index),
        *edges = malloc(2 * (size_t)size * sizeof *edges);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + size) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm graph;
    MF_CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph));
    int nn, ne, cnt, nb[2];
    MF_CHECK_MPI(MPI_Graphdims_get(graph, &nn, &ne));
    MF_CHECK(nn == size && ne == 2 * size, "Graphdims_get %d %d", nn, ne);
    MF_CHECK_MPI(MPI_Graph_neighbors_count(graph, rank, &cnt));
    MF_CHECK_MPI(MPI_Graph_neighbors(graph, rank, 2, nb));
    MF_CHECK(cnt == 2 && nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1],
             "graph neighbours");
    MPI_Topo_test(graph, &status);
    MF_CHECK(status == MPI_GRAPH, "graph Topo_test %d", status);
    MPI_Comm_free(&graph);

    /* Distributed graph: each rank declares its edge r -> r+1 with weight r. */
    int src = rank, deg = 1, dst = (rank + 1) % size, w = rank;
    MPI_Comm dg;
    MF_CHECK_MPI(
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 0, &dg));
    int indeg, outdeg, weighted, s, sw, d, dw;
    MF_CHECK_MPI(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MF_CHECK(indeg == 1 && outdeg == 1 && weighted, "dist graph degrees %d %d %d", indeg, outdeg,
             weighted);
    MF_CHECK_MPI(MPI_Dist_graph_neighbors(dg, 1, &s, &sw, 1, &d, &dw));
    int left = (rank - 1 + size) % size;
    MF_CHECK(s == left && sw == left && d == dst && dw == rank, "dist graph: in %d(%d) out %d(%d)",
             s, sw, d, dw);
    MPI_Comm_free(&dg);
    /* Adjacent form, unweighted. */
    int srcs[2] = {left, dst};
    MF_CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 1, &dst,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    MF_CHECK_MPI(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MF_CHECK(indeg == 2 && outdeg == 1 && !weighted, "adjacent degrees %d %d %d", indeg, outdeg,
             weighted);
    int s2[2];
    MF_CHECK_MPI(MPI_Dist_graph_neighbors(dg, 2, s2, MPI_UNWEIGHTED, 1, &d, MPI_UNWEIGHTED));
    MF_CHECK(s2[0] == left && s2[1] == dst && d == dst, "adjacent neighbours");
    MPI_Topo_test(dg, &status);
    MF_CHECK(status == MPI_DIST_GRAPH, "dist graph Topo_test %d", status);
    MPI_Comm_free(&dg);
    free(index);
    free(edges);
    return mftest_finish();
}
