/*
 * MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works (MPI-4.0
 * 11.2.5): the delete callback frees a communicator and prints a line the test looks for.
 */
#include <stdio.h>

#include <mpi.h>

static MPI_Comm cached;

static int on_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)value;
    (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    int rc = MPI_Comm_free(&cached); /* MPI must still work here */
    if (comm == MPI_COMM_SELF && !finalized && rc == MPI_SUCCESS)
        printf("self attribute deleted at finalize\n");
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int key;
    MPI_Comm_dup(MPI_COMM_WORLD, &cached);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    MPI_Comm_free_keyval(&key);
    MPI_Finalize();
    return 0;
}
