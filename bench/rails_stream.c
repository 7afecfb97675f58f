/*
 * rails_stream — what bench/rails measures over one or several rails (src/fabric/rail), two
 * ranks:
 *   rails_stream stream SECONDS [SIZE]   rank 0 keeps 8 sends of SIZE bytes (default 1 MiB) in
 *       flight to rank 1 for SECONDS, then says how many it sent; rank 1 checks every byte and
 *       the count. Rank 0 prints "start WALL" (CLOCK_REALTIME seconds at the start), one
 *       "done T" line per completed send (T: seconds since the start), then "stream SIZE BYTES
 *       SECONDS MBps"; rank 1 prints "checked N messages, B bad".
 *   rails_stream lat ITERS              8-byte ping-pong: "lat USEC" (half the round trip, best
 *       of 5 batches of ITERS).
 * MB = 10^6 bytes. Exits non-zero when a byte or a message is missing.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 8

static void fill(unsigned char *b, size_t n, uint64_t idx)
{
    memcpy(b, &idx, sizeof idx);
    for (size_t i = sizeof idx; i < n; i++)
        b[i] = (unsigned char)((i * 131u) ^ (idx * 7u));
}

static long check(const unsigned char *b, size_t n, uint64_t idx)
{
    uint64_t got;
    memcpy(&got, b, sizeof got);
    long bad = got != idx;
    for (size_t i = sizeof idx; i < n; i++)
        bad += b[i] != (unsigned char)((i * 131u) ^ (idx * 7u));
    return bad;
}

static int stream(int rank, double seconds, size_t size)
{
    unsigned char *buf = malloc(WINDOW * size);
    MPI_Request rq[WINDOW];
    double *done = malloc(sizeof *done * 1000000);
    long ndone = 0;
    if (rank == 0) {
        uint64_t sent = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall); /* for bench/rails, whose events are wall-clock */
        for (int k = 0; k < WINDOW; k++) {
            fill(buf + (size_t)k * size, size, sent);
            MPI_Isend(buf + (size_t)k * size, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &rq[k]);
            sent++;
        }
        for (;;) {
            int k;
            MPI_Waitany(WINDOW, rq, &k, MPI_STATUS_IGNORE);
            if (k == MPI_UNDEFINED)
                break;
            double t = MPI_Wtime() - t0;
            if (ndone < 1000000)
                done[ndone++] = t;
            if (t < seconds) {
                fill(buf + (size_t)k * size, size, sent);
                MPI_Isend(buf + (size_t)k * size, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                          &rq[k]);
                sent++;
            }
        }
        double t = MPI_Wtime() - t0;
        MPI_Send(&sent, 1, MPI_UINT64_T, 1, 1, MPI_COMM_WORLD);
        printf("start %.6f\n", (double)wall.tv_sec + (double)wall.tv_nsec * 1e-9);
        for (long i = 0; i < ndone; i++)
            printf("done %.4f\n", done[i]);
        printf("stream %zu %llu %.3f %.1f\n", size, (unsigned long long)(sent * size), t,
               (double)sent * (double)size / t / 1e6);
    } else {
        uint64_t got = 0, sent = 0;
        long bad = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < WINDOW; k++)
            MPI_Irecv(buf + (size_t)k * size, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &rq[k]);
        uint64_t *order = malloc(sizeof *order * WINDOW); /* message index each slot holds */
        for (int k = 0; k < WINDOW; k++)
            order[k] = (uint64_t)k;
        uint64_t posted = WINDOW;
        MPI_Request end;
        MPI_Irecv(&sent, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD, &end);
        for (;;) {
            int k, flag = 0;
            MPI_Test(&end, &flag, MPI_STATUS_IGNORE);
            if (flag && got == sent)
                break;
            MPI_Testany(WINDOW, rq, &k, &flag, MPI_STATUS_IGNORE);
            if (!flag || k == MPI_UNDEFINED)
                continue;
            bad += check(buf + (size_t)k * size, size, order[k]);
            got++;
            order[k] = posted++;
            MPI_Irecv(buf + (size_t)k * size, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &rq[k]);
        }
        for (int k = 0; k < WINDOW; k++) {
            MPI_Cancel(&rq[k]);
            MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        }
        printf("checked %llu messages of %llu, %ld bad\n", (unsigned long long)got,
               (unsigned long long)sent, bad);
        free(order);
        if (bad)
            return 1;
    }
    free(buf);
    free(done);
    return 0;
}

static int lat(int rank, long iters)
{
    char b[8] = {0};
    double best = 1e30;
    for (int batch = -1; batch < 5; batch++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / (double)iters / 2;
        if (batch >= 0 && t < best)
            best = t;
    }
    if (rank == 0)
        printf("lat %.2f\n", best * 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 2;
    if (size == 2 && argc >= 3 && strcmp(argv[1], "stream") == 0)
        rc = stream(rank, atof(argv[2]), argc > 3 ? (size_t)atol(argv[3]) : (size_t)1 << 20);
    else if (size == 2 && argc >= 3 && strcmp(argv[1], "lat") == 0)
        rc = lat(rank, atol(argv[2]));
    else if (rank == 0)
        fprintf(stderr, "usage: rails_stream stream SECONDS [SIZE] | lat ITERS (2 ranks)\n");
    MPI_Finalize();
    return rc;
}
