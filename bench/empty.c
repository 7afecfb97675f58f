/*
 * empty — MPI_Init and MPI_Finalize, nothing else: the runner times `mpiexec -n N empty` from
 * start to finish (start-up and tear-down of a job). With --check, rank 0 prints one CSV line
 * with the job size, so the test suite can see that every rank took part.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "--check")) {
        int rank, np, one = 1, sum = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &np);
        MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("empty,%d,ranks,%d\n", np, sum);
    }
    MPI_Finalize();
    return 0;
}
