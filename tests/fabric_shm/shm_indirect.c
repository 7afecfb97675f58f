/*
 * Indirect frames (src/fabric/shm/shm.c): large frames that wait for ring space while the
 * receiver does not drain are handed over as addresses, and the receiver reads them from the
 * sender itself, without the sender running. Ranks 0 and 1 (others idle):
 *   - rank 1 posts its receives and answers rank 0's rendezvous requests, then stays out of MPI
 *     for a while, so the data rank 0 streams fills the ring (1 MiB) and the rest (3 MiB more)
 *     waits at rank 0; rank 0 polls MPI_Testall long enough for a stalled ring (auto mode) to
 *     send it indirect, then leaves MPI for INDIRECT_OUT_S seconds;
 *   - rank 1 receives all of them and records when it had the last one; rank 0 records when it
 *     came back. With indirect frames rank 1 is done before rank 0 is back; with the rings
 *     alone the queued 3 MiB can only move once rank 0 calls MPI again. Every byte is checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mftest.h"

#define NMSG 16
#define INDIRECT_OUT_S 1.5

static unsigned char val(int m, size_t i)
{
    return (unsigned char)(m * 31 + i * 7 + (i >> 9));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* one host: the same clock in both ranks */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Sizes of the messages: rendezvous ones, streamed in frames of 64 KiB (the last one shorter). */
static size_t len_of(int m)
{
    static const size_t lens[] = {262144, 200000, 262144, 300001};
    return lens[m % 4];
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MF_CHECK(size >= 2, "needs 2 ranks");
    unsigned char *bufs[NMSG];
    MPI_Request reqs[NMSG];
    for (int m = 0; m < NMSG; m++) {
        bufs[m] = malloc(len_of(m));
        MF_CHECK(bufs[m], "no memory");
        if (rank == 0)
            for (size_t i = 0; i < len_of(m); i++)
                bufs[m][i] = val(m, i);
        else
            memset(bufs[m], 0xee, len_of(m));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double times[2] = {0, 0}; /* rank 0: back in MPI; rank 1: had every message */
    if (rank == 0) {
        for (int m = 0; m < NMSG; m++)
            MF_CHECK_MPI(
                MPI_Isend(bufs[m], (int)len_of(m), MPI_BYTE, 1, m, MPI_COMM_WORLD, &reqs[m]));
        /* Out of MPI while rank 1 matches and asks for the data (0.2 s), then in MPI for 0.4 s
         * while rank 1 is away (0.2 s - 1.2 s): the ring fills and stalls. */
        pause_s(0.4);
        int flag;
        for (double t0 = now(); now() - t0 < 0.4;)
            MF_CHECK_MPI(MPI_Testall(NMSG, reqs, &flag, MPI_STATUSES_IGNORE));
        pause_s(INDIRECT_OUT_S);
        times[0] = now();
        MF_CHECK_MPI(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
        MF_CHECK_MPI(MPI_Send(times, 1, MPI_DOUBLE, 1, NMSG, MPI_COMM_WORLD));
    } else if (rank == 1) {
        for (int m = 0; m < NMSG; m++)
            MF_CHECK_MPI(
                MPI_Irecv(bufs[m], (int)len_of(m), MPI_BYTE, 0, m, MPI_COMM_WORLD, &reqs[m]));
        /* Matches the rendezvous requests and asks for the data (0.2 s), then stays away while
         * rank 0 streams and polls. */
        int flag;
        for (double t0 = now(); now() - t0 < 0.2;)
            MF_CHECK_MPI(MPI_Testall(NMSG, reqs, &flag, MPI_STATUSES_IGNORE));
        pause_s(1.0);
        MF_CHECK_MPI(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
        times[1] = now();
        MF_CHECK_MPI(MPI_Recv(times, 1, MPI_DOUBLE, 0, NMSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int m = 0; m < NMSG; m++)
            for (size_t i = 0; i < len_of(m); i++)
                if (bufs[m][i] != val(m, i)) {
                    MF_CHECK(0, "message %d: byte %zu is %d, expected %d", m, i, bufs[m][i],
                             val(m, i));
                    break;
                }
        MF_CHECK(times[1] < times[0],
                 "rank 1 had every message only %.3f s after rank 0 came back: the frames "
                 "queued at rank 0 were not read while it was away",
                 times[1] - times[0]);
    }
    for (int m = 0; m < NMSG; m++)
        free(bufs[m]);
    return mftest_finish();
}
