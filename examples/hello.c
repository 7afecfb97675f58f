/*
 * hello — every rank reports where it runs and which MPI library it uses.
 *   build/bin/mpicc -o hello examples/hello.c && build/bin/mpiexec -n 4 ./hello
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    char version[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0'; /* first line only */

    printf("hello from rank %d of %d on %s (%s)\n", rank, size, host, version);
    MPI_Finalize();
    return 0;
}
