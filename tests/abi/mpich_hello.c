/*
 * Built with Debian's mpicc.mpich against MPICH's mpi.h and libmpich.so.12, then run on
 * Manifold's libmpich.so.12 (LD_LIBRARY_PATH): the binary-compatibility promise, end to end.
 * Every rank checks what the library says about itself and the job, exchanges a message with its
 * neighbours and joins an allreduce; exits non-zero on a mismatch.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int errors = 0, rank = -1, size = -1, len = 0, flag = 0;
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 2;
    MPI_Initialized(&flag);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Get_library_version(version, &len);

    int expect = argc > 1 ? atoi(argv[1]) : size;
    if (!flag) {
        printf("rank %d: MPI_Initialized says no\n", rank);
        errors++;
    }
    if (size != expect || rank < 0 || rank >= size) {
        printf("rank %d: bad rank/size %d/%d (expected size %d)\n", rank, rank, size, expect);
        errors++;
    }
    if (!strstr(version, "Manifold")) {
        printf("rank %d: library version \"%s\" is not Manifold's\n", rank, version);
        errors++;
    }
    if (name[0] == '\0') {
        printf("rank %d: empty processor name\n", rank);
        errors++;
    }
    /* Traffic through MPICH-compiled code: MPICH's handle values for MPI_INT/MPI_SUM and its
     * MPI_Status layout must mean the same to Manifold. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1, count = -1;
    MPI_Status st;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    if (got != prev || st.MPI_SOURCE != prev || st.MPI_TAG != 7 || count != 1) {
        printf("rank %d: sendrecv got %d from %d tag %d count %d\n", rank, got, st.MPI_SOURCE,
               st.MPI_TAG, count);
        errors++;
    }
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        printf("rank %d: allreduce sum %d, expected %d\n", rank, sum, size * (size - 1) / 2);
        errors++;
    }

    char firstline[128];
    snprintf(firstline, sizeof firstline, "%s", version);
    firstline[strcspn(firstline, "\n")] = '\0';
    printf("mpich-built hello: rank %d of %d on %s, library: %s\n", rank, size, name, firstline);
    MPI_Finalize();
    return errors ? 1 : 0;
}
