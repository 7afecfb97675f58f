/*
 * async_rndv.c — the progress thread (MANIFOLD_ASYNC_PROGRESS=1) completes a rendezvous while
 * the receiver computes without calling MPI: rank 1 posts a large MPI_Irecv, computes, then
 * asks once with MPI_Test, which must find the message complete (without the thread, that one
 * call could at most answer the rendezvous request; the data would still be on its way). Rank 0
 * sends with a blocking MPI_Send.
 *
 * How long rank 1 computes: until rank 0's MPI_Send has returned, which rank 0 tells it by
 * creating a file (no MPI call on rank 1's side), then one second more for what the sender's
 * last writes left in the socket buffers. Without the thread that file never comes (8 MiB is
 * more than any eager limit, ring or socket buffer: the send needs the receiver to progress),
 * and after MAX_WAIT seconds MPI_Test finds the message incomplete. A fixed second of compute
 * was too short once in CI (ThreadSanitizer, two such jobs on two cores). Run with 2 ranks.
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LEN (8 << 20)
#define MAX_WAIT 60.0 /* seconds rank 1 computes at most, waiting for the sender */

/* Arithmetic for `seconds`, less if `path` is given and the file appears. */
static void compute(double seconds, const char *path)
{
    volatile double x = 0;
    for (double end = MPI_Wtime() + seconds; MPI_Wtime() < end;) {
        for (int i = 0; i < 10000; i++)
            x += i * 0.5;
        if (path && access(path, F_OK) == 0)
            return;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(LEN);
    int rc = 0;
    char done_path[64] = "";
    if (rank == 0)
        snprintf(done_path, sizeof done_path, "/tmp/mf-async-rndv-%ld-%ld", (long)getpid(),
                 (long)(MPI_Wtime() * 1e6) % 1000000);
    MPI_Bcast(done_path, sizeof done_path, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "async_rndv: run with 2 ranks\n");
        rc = 2;
    } else if (rank == 0) {
        for (size_t i = 0; i < LEN; i++)
            buf[i] = (unsigned char)(i * 7 + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, LEN, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        int fd = open(done_path, O_CREAT | O_WRONLY, 0600);
        if (fd >= 0)
            close(fd);
    } else {
        MPI_Request rq;
        MPI_Irecv(buf, LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Compute, no MPI call (MPI_Wtime is local): until the sender is done, then a second. */
        compute(MAX_WAIT, done_path);
        compute(1.0, NULL);
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
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(done_path);
    MPI_Finalize();
    return rc;
}
