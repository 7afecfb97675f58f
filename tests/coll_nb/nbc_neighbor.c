/* Nonblocking and persistent neighborhood collectives on Cartesian (periodic or not), graph and
 * distributed-graph topologies, checked against neighbours computed locally. */
#include <mpi.h>
#include <stdlib.h>

#include "mftest.h"

#define MAXN 16

/* Block j sent to destination j carries tag(me, j); what slot i of the receiver expects. */
static int val(int from, int j)
{
    return from * 100 + j + 1;
}

/* The index under which `from` sends to `me` the block that my slot i receives. */
typedef int (*slot_fn)(MPI_Comm c, int me, int from, int i);

static int slot_same(MPI_Comm c, int me, int from, int i)
{
    (void)c, (void)me, (void)from;
    return i;
}

static int slot_cart(MPI_Comm c, int me, int from, int i)
{
    (void)c, (void)me, (void)from;
    return i ^ 1;
}

static int slot_graph(MPI_Comm c, int me, int from, int i)
{
    int nn, nb[MAXN];
    (void)i;
    MPI_Graph_neighbors_count(c, from, &nn);
    MPI_Graph_neighbors(c, from, MAXN, nb);
    for (int j = 0; j < nn; j++)
        if (nb[j] == me)
            return j;
    return -1;
}

static void check(MPI_Comm c, int indeg, const int *src, int outdeg, slot_fn slot, const char *what)
{
    int me;
    MPI_Comm_rank(c, &me);
    int sall = val(me, 0), sb[MAXN], rg[MAXN], ra[MAXN], rv[2 * MAXN], rw[MAXN], rp[MAXN];
    int cnt[MAXN], dsp[MAXN], rcnt[MAXN], rdsp[MAXN];
    MPI_Aint wsd[MAXN], wrd[MAXN];
    MPI_Datatype ty[MAXN];
    for (int j = 0; j < outdeg; j++) {
        sb[j] = val(me, j);
        cnt[j] = 1;
        dsp[j] = j;
        wsd[j] = j * (MPI_Aint)sizeof(int);
        ty[j] = MPI_INT;
    }
    for (int i = 0; i < indeg; i++) {
        rg[i] = ra[i] = rw[i] = rp[i] = rv[2 * i] = rv[2 * i + 1] = -1;
        rcnt[i] = 1;
        rdsp[i] = 2 * i + 1; /* gaps stay untouched */
        wrd[i] = i * (MPI_Aint)sizeof(int);
    }
    MPI_Request r[5], p;
    MF_CHECK_MPI(MPI_Ineighbor_allgather(&sall, 1, MPI_INT, rg, 1, MPI_INT, c, &r[0]));
    MF_CHECK_MPI(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, ra, 1, MPI_INT, c, &r[1]));
    MF_CHECK_MPI(MPI_Ineighbor_alltoallv(sb, cnt, dsp, MPI_INT, rv, rcnt, rdsp, MPI_INT, c, &r[2]));
    MF_CHECK_MPI(MPI_Ineighbor_alltoallw(sb, cnt, wsd, ty, rw, rcnt, wrd, ty, c, &r[3]));
    MF_CHECK_MPI(MPI_Ibarrier(c, &r[4]));
    MF_CHECK_MPI(MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, rp, 1, MPI_INT, c, MPI_INFO_NULL, &p));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < indeg; i++)
            rp[i] = -1;
        MF_CHECK_MPI(MPI_Start(&p));
        MF_CHECK_MPI(MPI_Wait(&p, MPI_STATUS_IGNORE));
        for (int i = 0; i < indeg; i++) {
            int want = src[i] == MPI_PROC_NULL ? -1 : val(src[i], slot(c, me, src[i], i));
            MF_CHECK(rp[i] == want, "%s persistent round %d slot %d: %d != %d", what, round, i,
                     rp[i], want);
        }
    }
    MPI_Request_free(&p);
    MF_CHECK_MPI(MPI_Waitall(5, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < indeg; i++) {
        int nul = src[i] == MPI_PROC_NULL;
        int want = nul ? -1 : val(src[i], slot(c, me, src[i], i));
        MF_CHECK(rg[i] == (nul ? -1 : val(src[i], 0)), "%s allgather slot %d: %d", what, i, rg[i]);
        MF_CHECK(ra[i] == want, "%s alltoall slot %d: %d != %d", what, i, ra[i], want);
        MF_CHECK(rv[2 * i + 1] == want && rv[2 * i] == -1, "%s alltoallv slot %d: %d", what, i,
                 rv[2 * i + 1]);
        MF_CHECK(rw[i] == want, "%s alltoallw slot %d: %d != %d", what, i, rw[i], want);
    }
    /* allgatherv, _c form */
    MPI_Count cc[MAXN];
    MPI_Aint cd[MAXN];
    for (int i = 0; i < indeg; i++) {
        cc[i] = 1;
        cd[i] = indeg - 1 - i;
        rg[i] = -1;
    }
    MPI_Request q;
    MF_CHECK_MPI(MPI_Ineighbor_allgatherv_c(&sall, 1, MPI_INT, rg, cc, cd, MPI_INT, c, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < indeg; i++) {
        int nul = src[i] == MPI_PROC_NULL;
        MF_CHECK(rg[indeg - 1 - i] == (nul ? -1 : val(src[i], 0)), "%s allgatherv_c slot %d", what,
                 i);
    }
}

static void test_cart(int periodic)
{
    int size, dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    int src[4], dst[4];
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(c, d, 1, &src[2 * d], &src[2 * d + 1]);
    for (int d = 0; d < 2; d++) {
        dst[2 * d] = src[2 * d];
        dst[2 * d + 1] = src[2 * d + 1];
    }
    (void)dst;
    check(c, 4, src, 4, slot_cart, periodic ? "cart periodic" : "cart");
    MPI_Comm_free(&c);
}

static void test_graph(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 3)
        return;
    int index[MAXN], edges[2 * MAXN];
    for (int r = 0; r < n; r++) {
        index[r] = 2 * (r + 1);
        edges[2 * r] = (r + 1) % n;
        edges[2 * r + 1] = (r - 1 + n) % n;
    }
    MPI_Comm c;
    MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &c);
    int me, nb[MAXN], nn;
    MPI_Comm_rank(c, &me);
    MPI_Graph_neighbors_count(c, me, &nn);
    MPI_Graph_neighbors(c, me, MAXN, nb);
    check(c, nn, nb, nn, slot_graph, "graph");
    MPI_Comm_free(&c);
}

static void test_dist_graph(void)
{
    int n, r;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int src[2] = {(r - 1 + n) % n, (r - 2 + 2 * n) % n}, dst[2] = {(r + 1) % n, (r + 2) % n};
    MPI_Comm c;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &c);
    check(c, 2, src, 2, slot_same, "dist graph");
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_cart(1);
    test_cart(0);
    test_graph();
    test_dist_graph();
    return mftest_finish();
}
