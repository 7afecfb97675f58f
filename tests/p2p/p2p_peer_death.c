/* Rank 1 dies (SIGKILL) while rank 0 waits for a message from it; the job must end promptly with
 * a message naming rank 1. Driven by p2p_peer_death.sh, which checks the outcome. */
#include <signal.h>
#include <unistd.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    int rank, v = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* A first exchange makes sure the connection is up before the peer dies. */
    if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
    } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        usleep(100000);
        kill(getpid(), SIGKILL);
    }
    MPI_Finalize();
    return 0;
}
