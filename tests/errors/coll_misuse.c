/*
 * Collective calls whose arguments are wrong together rather than one by one (MPICH's
 * test/mpi/errors/coll finds these):
 *  - a send buffer that begins where one of the receive blocks begins (the caller meant
 *    MPI_IN_PLACE) is MPI_ERR_BUFFER, in every rooted, all-gather and all-to-all operation,
 *    blocking and nonblocking, while buffers that share a base address but not a byte pass;
 *  - a bcast whose counts differ between processes ends with an error at every process that
 *    receives a wrong amount, or whose tree parent did, and hangs nobody;
 *  - a constructor that fails leaves MPI_COMM_NULL in its output handle.
 */
#include <stdlib.h>

#include "mftest.h"

static int rank, size;

/* The nonblocking form returns the argument error at the call (nothing is started). */
static void aliasing(void)
{
    int n2 = 2 * size;
    int *buf = calloc((size_t)n2 * 2, sizeof(int));
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    MPI_Datatype *types = malloc((size_t)size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
        types[i] = MPI_INT;
    }
    MPI_Request req;
    MPI_Comm w = MPI_COMM_WORLD;
    int *own = buf + 2 * rank; /* where this process's block lands in buf */
    if (rank == 0) {
        MF_CHECK_CLASS(MPI_Gather(buf, 2, MPI_INT, buf, 2, MPI_INT, 0, w), MPI_ERR_BUFFER,
                       "gather, sendbuf == recvbuf");
        MF_CHECK_CLASS(MPI_Gatherv(own, 2, MPI_INT, buf, counts, displs, MPI_INT, 0, w),
                       MPI_ERR_BUFFER, "gatherv, sendbuf at the root's block");
        MF_CHECK_CLASS(MPI_Igatherv(own, 2, MPI_INT, buf, counts, displs, MPI_INT, 0, w, &req),
                       MPI_ERR_BUFFER, "igatherv, sendbuf at the root's block");
        MF_CHECK_CLASS(MPI_Scatter(buf, 2, MPI_INT, own, 2, MPI_INT, 0, w), MPI_ERR_BUFFER,
                       "scatter, recvbuf at the root's block");
        MF_CHECK_CLASS(MPI_Iscatterv(buf, counts, displs, MPI_INT, own, 2, MPI_INT, 0, w, &req),
                       MPI_ERR_BUFFER, "iscatterv, recvbuf at the root's block");
        if (size > 1) /* the v forms compare every block */
            MF_CHECK_CLASS(MPI_Gatherv(buf + 2, 2, MPI_INT, buf, counts, displs, MPI_INT, 0, w),
                           MPI_ERR_BUFFER, "gatherv, sendbuf at rank 1's block");
    }
    MF_CHECK_CLASS(MPI_Allgather(own, 2, MPI_INT, buf, 2, MPI_INT, w), MPI_ERR_BUFFER,
                   "allgather, sendbuf at the own block");
    MF_CHECK_CLASS(MPI_Iallgather(own, 2, MPI_INT, buf, 2, MPI_INT, w, &req), MPI_ERR_BUFFER,
                   "iallgather, sendbuf at the own block");
    MF_CHECK_CLASS(MPI_Allgatherv(own, 2, MPI_INT, buf, counts, displs, MPI_INT, w), MPI_ERR_BUFFER,
                   "allgatherv, sendbuf at the own block");
    MF_CHECK_CLASS(MPI_Alltoall(buf, 2, MPI_INT, buf, 2, MPI_INT, w), MPI_ERR_BUFFER,
                   "alltoall, sendbuf == recvbuf");
    if (size > 1) {
        /* blocks 8 bytes apart on the send side, 12 on the receive side: block 0 differs
         * (buf + 4 against buf), block 1 is buf + 12 on both */
        MPI_Datatype wide;
        MPI_Type_create_resized(MPI_2INT, 0, 3 * sizeof(int), &wide);
        MPI_Type_commit(&wide);
        MF_CHECK_CLASS(MPI_Alltoall(buf + 1, 2, MPI_INT, buf, 1, wide, w), MPI_ERR_BUFFER,
                       "alltoall, block 1 of both buffers at the same byte");
        MPI_Type_free(&wide);
    }
    MF_CHECK_CLASS(MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, w),
                   MPI_ERR_BUFFER, "alltoallv, same blocks");
    MF_CHECK_CLASS(MPI_Ialltoallw(buf, counts, displs, types, buf, counts, displs, types, w, &req),
                   MPI_ERR_BUFFER, "ialltoallw, same blocks (displs in bytes: block 0)");
    MF_CHECK_CLASS(MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
                   "allreduce, sendbuf == recvbuf");

    /* One allocation, disjoint halves: the base addresses are equal, no byte is shared. */
    for (int i = 0; i < n2; i++)
        buf[i] = 100 * rank + i;
    int *sdispls = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        sdispls[i] = n2 + 2 * i;
    for (int i = 0; i < size; i++)
        buf[n2 + 2 * i] = buf[n2 + 2 * i + 1] = 1000 * rank + i;
    MF_CHECK_MPI(MPI_Alltoallv(buf, counts, sdispls, MPI_INT, buf, counts, displs, MPI_INT, w));
    for (int i = 0; i < size; i++)
        MF_CHECK(buf[2 * i] == 1000 * i + rank && buf[2 * i + 1] == 1000 * i + rank,
                 "alltoallv over disjoint halves: block %d holds %d %d, want %d", i, buf[2 * i],
                 buf[2 * i + 1], 1000 * i + rank);
    /* the root's contribution just past its receive blocks: legal too */
    buf[n2] = buf[n2 + 1] = 7 + rank;
    MF_CHECK_MPI(MPI_Gather(buf + n2, 2, MPI_INT, buf, 2, MPI_INT, 0, w));
    if (rank == 0)
        for (int i = 0; i < size; i++)
            MF_CHECK(buf[2 * i] == 7 + i, "gather from past the blocks: block %d holds %d", i,
                     buf[2 * i]);
    free(sdispls);
    free(types);
    free(displs);
    free(counts);
    free(buf);
}

static void expect_mismatch(int rc, const char *what)
{
    if (rank == 0) {
        MF_CHECK(rc == MPI_SUCCESS, "%s: the root failed (%s)", what, mftest_error_text(rc));
        return;
    }
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT,
             "%s: rank %d returned class %d, want MPI_ERR_TRUNCATE or MPI_ERR_COUNT", what, rank,
             cls);
}

static void bcast_mismatch(void)
{
    int buf[10] = {0};
    expect_mismatch(MPI_Bcast(buf, rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD),
                    "bcast, the root sends less");
    expect_mismatch(MPI_Bcast(buf, rank == 0 ? 10 : 1, MPI_INT, 0, MPI_COMM_WORLD),
                    "bcast, the root sends more");
    /* nonblocking: the schedule runs to its end, the root's children see the truncation */
    MPI_Request req;
    MF_CHECK_MPI(MPI_Ibcast(buf, rank == 0 ? 10 : 1, MPI_INT, 0, MPI_COMM_WORLD, &req));
    int rc = MPI_Wait(&req, MPI_STATUS_IGNORE), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (rank == 1)
        MF_CHECK(cls == MPI_ERR_TRUNCATE, "ibcast, the root sends more: rank 1 got class %d", cls);
    /* nothing is left behind: the next collectives match and deliver */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++)
        buf[i] = rank == 0 ? i : -1;
    MF_CHECK_MPI(MPI_Bcast(buf, 10, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++)
        MF_CHECK(buf[i] == i, "bcast after the errors: element %d is %d", i, buf[i]);
}

static void constructor_outputs(void)
{
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0};
    MPI_Comm out = MPI_COMM_WORLD;
    MF_CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &out), MPI_ERR_DIMS,
                   "cart_create larger than the communicator");
    MF_CHECK(out == MPI_COMM_NULL, "failed cart_create left 0x%x, not MPI_COMM_NULL", (int)out);
    out = MPI_COMM_WORLD;
    int index[1] = {-1}, edges[1] = {0};
    MF_CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &out), MPI_ERR_ARG,
                   "graph_create with a negative index");
    MF_CHECK(out == MPI_COMM_NULL, "failed graph_create left 0x%x, not MPI_COMM_NULL", (int)out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    aliasing();
    if (size > 1)
        bcast_mismatch();
    constructor_outputs();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mftest_finish();
}
