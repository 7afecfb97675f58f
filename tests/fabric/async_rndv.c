/*
 * async_rndv.c — the progress thread (MANIFOLD_ASYNC_PROGRESS=1) completes a rendezvous while
 * the receiver computes without calling MPI: rank 1 posts a large MPI_Irecv, computes for a
 * while, then asks once with MPI_Test, which must find the message complete (without the
 * thread, that one call could at most answer the rendezvous request; the data would still be on
 * its way). Rank 0 sends with a blocking MPI_Send. Run with 2 ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN (8 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(LEN);
    int rc = 0;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "async_rndv: run with 2 ranks\n");
        rc = 2;
    } else if (rank == 0) {
        for (size_t i = 0; i < LEN; i++)
            buf[i] = (unsigned char)(i * 7 + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, LEN, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else {
        MPI_Request rq;
        MPI_Irecv(buf, LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Compute, no MPI call: a second of arithmetic. */
        volatile double x = 0;
        for (double end = MPI_Wtime() + 1.0; MPI_Wtime() < end;)
            for (int i = 0; i < 10000; i++)
                x += i * 0.5;
        int flag = 0;
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            fprintf(stderr, "async_rndv: the message did not complete while rank 1 computed\n");
            rc = 1;
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        for (size_t i = 0; i < LEN && !rc; i++)
            if (buf[i] != (unsigned char)(i * 7 + 1)) {
                fprintf(stderr, "async_rndv: byte %zu differs\n", i);
                rc = 1;
            }
        if (!rc)
            printf("async_rndv: %d bytes arrived while rank 1 computed\n", LEN);
    }
    free(buf);
    MPI_Finalize();
    return rc;
}
