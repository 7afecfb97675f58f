/*
 * sctp_stream.c — a checksummed stream from rank 0 to rank 1 for a given time, for failover
 * tests and bench/failover: rank 0 sends 1 MiB messages (8 in flight) whose every word derives
 * from the message's index; rank 1 checks each one, that none is missing or out of order, and
 * prints the bandwidth in every 100 ms interval ("sample <ms> <MB/s>"), then the longest gap
 * between two arrivals and "stream ok <messages>" (or "stream BAD ..."; exit 1).
 *
 *   sctp_stream [seconds (default 5)] [message bytes (default 1 MiB)]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 8
#define TAG_DATA 1
#define TAG_END 2

static uint64_t word(uint64_t msg, size_t i)
{
    return (msg + 1) * 0x9e3779b97f4a7c15ull ^ i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : (size_t)1 << 20;
    size_t words = bytes / sizeof(uint64_t);
    if (np < 2) {
        MPI_Finalize();
        return 0;
    }
    uint64_t *buf[WINDOW];
    for (int i = 0; i < WINDOW; i++)
        buf[i] = malloc(words * sizeof(uint64_t));
    int bad = 0;
    if (rank == 0) {
        MPI_Request req[WINDOW];
        for (int i = 0; i < WINDOW; i++)
            req[i] = MPI_REQUEST_NULL;
        double t0 = MPI_Wtime();
        uint64_t n = 0;
        while (MPI_Wtime() - t0 < secs) {
            int k = (int)(n % WINDOW);
            MPI_Wait(&req[k], MPI_STATUS_IGNORE);
            for (size_t i = 0; i < words; i++)
                buf[k][i] = word(n, i);
            MPI_Isend(buf[k], (int)words, MPI_UINT64_T, 1, TAG_DATA, MPI_COMM_WORLD, &req[k]);
            n++;
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Send(&n, 1, MPI_UINT64_T, 1, TAG_END, MPI_COMM_WORLD);
    } else if (rank == 1) {
        double t0 = MPI_Wtime(), last = t0, gap = 0, slot_start = t0;
        uint64_t n = 0, slot_bytes = 0, sent = 0;
        for (;;) {
            MPI_Status st;
            MPI_Recv(buf[0], (int)words, MPI_UINT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            double now = MPI_Wtime();
            if (st.MPI_TAG == TAG_END) {
                sent = buf[0][0];
                break;
            }
            for (size_t i = 0; i < words; i++)
                if (buf[0][i] != word(n, i)) {
                    if (bad++ < 3)
                        printf("stream BAD: message %llu word %zu differs\n", (unsigned long long)n,
                               i);
                    break;
                }
            n++;
            if (now - last > gap)
                gap = now - last;
            last = now;
            slot_bytes += bytes;
            while (now - slot_start >= 0.1) {
                printf("sample %.0f %.1f\n", (slot_start - t0) * 1e3, slot_bytes / 0.1 / 1e6);
                slot_bytes = 0;
                slot_start += 0.1;
            }
        }
        if (sent != n) {
            printf("stream BAD: %llu messages sent, %llu received\n", (unsigned long long)sent,
                   (unsigned long long)n);
            bad++;
        }
        printf("longest gap %.1f ms\n", gap * 1e3);
        if (!bad)
            printf("stream ok %llu\n", (unsigned long long)n);
        fflush(stdout);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
    for (int i = 0; i < WINDOW; i++)
        free(buf[i]);
    MPI_Finalize();
    return bad != 0;
}
