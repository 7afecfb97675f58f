// C++ against mpi.h through the installed mpicxx: the header must be usable from C++ as is.
#include <mpi.h>

#include <iostream>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::cout << "installed c++ hello from rank " << rank << " of " << size << std::endl;
    MPI_Finalize();
    return 0;
}
