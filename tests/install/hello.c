/* Built by the installed mpicc (or by pkg-config flags) in tests/install/install.sh. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("installed hello from rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
