/*
 * p2p_cancel_late.c — MPI_Wait on a cancelled send returns even when the receiver has already
 * matched the message and gone on into MPI_Finalize.
 *
 * Cancelling a send asks the receiver whether the message is still unmatched (p2p cancel); the
 * answer comes from the receiver's progress. Rank 1 receives the message and finalizes at once;
 * rank 0 cancels only afterwards. MPI_Finalize must keep answering its peers until they reach
 * it too (api/init.c, the closing barrier), or rank 0's MPI_Wait never returns.
 */
#include <unistd.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Connections up first: the send below then takes the ordinary path of a connected peer. */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (size >= 2 && rank == 0) {
        int v = 99, flag = 1;
        MPI_Request rq;
        MPI_Status st;
        /* A persistent send always has a request of its own (a small MPI_Isend may finish as it
         * starts, without one, and is then simply not cancelled). */
        MF_CHECK_MPI(MPI_Send_init(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq));
        MF_CHECK_MPI(MPI_Start(&rq));
        usleep(300 * 1000); /* rank 1 has received it and is in MPI_Finalize by now */
        MF_CHECK_MPI(MPI_Cancel(&rq));
        MF_CHECK_MPI(MPI_Wait(&rq, &st));
        MF_CHECK_MPI(MPI_Test_cancelled(&st, &flag));
        MF_CHECK(flag == 0, "a send the receiver had matched was reported cancelled");
        MF_CHECK_MPI(MPI_Request_free(&rq));
    } else if (size >= 2 && rank == 1) {
        int v = 0;
        MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(v == 99, "received %d, expected 99", v);
    }
    return mftest_finish();
}
