/* Ranks keep exchanging messages for the number of seconds given (default 3), so that a test
 * can poke at the job from outside meanwhile (p2p_intruder.sh). */
#include <stdlib.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 3.0, end = MPI_Wtime() + seconds;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, go = 1, rounds = 0;
    while (go) {
        int v = rounds, got = -1;
        MF_CHECK_MPI(MPI_Sendrecv(&v, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(got == rounds, "round %d: got %d", rounds, got);
        rounds++;
        /* Rank 0 decides when to stop and tells everyone, so all leave the loop together. */
        go = rank == 0 ? MPI_Wtime() < end : 1;
        MF_CHECK_MPI(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    return mftest_finish();
}
