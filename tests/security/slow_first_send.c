/*
 * slow_first_send.c — a correct program must not fail because it computes for longer than the
 * peer's handshake deadline (MANIFOLD_TCP_AUTH_TIMEOUT) while its first message to that peer
 * is being connected.
 *
 * Rank 0 starts a rendezvous-size send to rank 1 (an eager one would complete at once, queued
 * before the connection exists) and then alternates one MPI_Test with a sleep longer than the
 * deadline, several times: each time rank 1 closes the half-done handshake as a stranger and
 * rank 0 dials again on its next MPI call. Rank 1 sits in MPI_Recv. The message must arrive.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

enum { N = 1 << 18 }; /* 1 MiB of int */
static int buf[N];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    if (size >= 2 && rank == 0) {
        int done = 0;
        MPI_Request rq;
        for (int i = 0; i < N; i++)
            buf[i] = i ^ 0x5a5a;
        MF_CHECK_MPI(MPI_Isend(buf, N, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq));
        for (int i = 0; i < rounds && !done; i++) {
            MF_CHECK_MPI(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
            if (!done)
                usleep(1400 * 1000); /* longer than the peer's 1 s deadline */
        }
        if (!done)
            MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (size >= 2 && rank == 1) {
        MF_CHECK_MPI(MPI_Recv(buf, N, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += buf[i] != (i ^ 0x5a5a);
        MF_CHECK(bad == 0, "%d of %d integers wrong", bad, N);
    }
    return mftest_finish();
}
