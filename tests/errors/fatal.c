/*
 * The default handler MPI_ERRORS_ARE_FATAL ends the job with a message naming the function
 * (checked by the test's regular expressions): an invalid communicator on every rank.
 */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_NULL, &size);
    printf("NOT REACHED: MPI_Comm_size(MPI_COMM_NULL) returned\n");
    MPI_Finalize();
    return 0;
}
