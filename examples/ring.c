/*
 * ring — a token travels around all ranks a few times; each rank adds its rank number.
 * Rank 0 checks the sum at the end of every lap. Shows blocking point-to-point messages:
 *   build/bin/mpicc -o ring examples/ring.c && build/bin/mpiexec -n 4 ./ring
 * Run with MANIFOLD_VERBOSE=1 to see which fabric each pair of ranks uses, and with
 * MANIFOLD_SHM=0 to send even same-host traffic over tcp.
 */
#include <mpi.h>
#include <stdio.h>

#define LAPS 3

int main(int argc, char **argv)
{
    int rank, size, errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long expect_per_lap = (long)size * (size - 1) / 2;

    for (int lap = 0; lap < LAPS; lap++) {
        long token = 0;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("lap %d: token came back as %ld after visiting %d ranks%s\n", lap, token, size,
                   token == expect_per_lap ? "" : "  <-- WRONG");
            if (token != expect_per_lap)
                errors++;
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("ring of %d ranks: %s\n", size, errors ? "FAILED" : "ok");
    MPI_Finalize();
    return errors ? 1 : 0;
}
