/* A token ring and an all-to-all exchange with many rounds: the progress engine must keep
 * oversubscribed ranks (8 on 2 cores) moving instead of spinning against each other. */
#include <stdlib.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int round = 0; round < 200; round++) {
        int token = round;
        if (rank == 0) {
            MF_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, next, round, MPI_COMM_WORLD));
            MF_CHECK_MPI(
                MPI_Recv(&token, 1, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(token == round + size - 1, "round %d: token %d", round, token);
        } else {
            MF_CHECK_MPI(
                MPI_Recv(&token, 1, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            token++;
            MF_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, next, round, MPI_COMM_WORLD));
        }
    }
    /* All-to-all by pairwise Isend/Irecv, 50 rounds of 4 KiB blocks. */
    int n = 1024;
    int *sb = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int *rb = malloc(sizeof(int) * (size_t)n * (size_t)size);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    for (int round = 0; round < 50; round++) {
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                sb[p * n + i] = rank * 1000000 + p * 1000 + round + i;
        for (int p = 0; p < size; p++) {
            MPI_Irecv(rb + p * n, n, MPI_INT, p, round, MPI_COMM_WORLD, &rq[p]);
            MPI_Isend(sb + p * n, n, MPI_INT, p, round, MPI_COMM_WORLD, &rq[size + p]);
        }
        MF_CHECK_MPI(MPI_Waitall(2 * size, rq, MPI_STATUSES_IGNORE));
        for (int p = 0; p < size; p++)
            MF_CHECK(rb[p * n + 7] == p * 1000000 + rank * 1000 + round + 7, "alltoall %d", p);
    }
    free(sb);
    free(rb);
    free(rq);
    return mftest_finish();
}
