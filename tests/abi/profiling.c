/*
 * ABI check (e): the profiling interface. This program is its own "tool": it defines
 * MPI_Comm_rank, counts the calls and forwards them to PMPI_Comm_rank. Linked dynamically it
 * shows PMPI_ entry points work; linked against the static archive it also shows MPI_Comm_rank
 * is a weak alias in the library (a strong one would be a duplicate definition at link time).
 */
#include <mpi.h>
#include <stdio.h>

static int calls;

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    calls++;
    return PMPI_Comm_rank(comm, rank);
}

int main(int argc, char **argv)
{
    int rank = -1, prank = -1, size = 0;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 3; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_rank(MPI_COMM_WORLD, &prank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ok = calls == 3 && rank == prank && rank >= 0 && rank < size;
    printf("rank %d: intercepted %d MPI_Comm_rank calls%s\n", rank, calls, ok ? "" : " FAIL");
    MPI_Finalize();
    if (ok && rank == 0)
        printf(" No Errors\n");
    return ok ? 0 : 1;
}
