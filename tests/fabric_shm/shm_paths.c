/*
 * Messages between same-host ranks over every shm path: sizes around 64-byte slot boundaries,
 * around the eager limit and up to several MiB (rendezvous: CMA rget or streamed, as the
 * environment selects); many messages in flight at once (full rings, queued frames, ordering);
 * and a receiver that sleeps while its sender pauses (doorbell wake-up). Pairs: (0,1), (2,3)...
 * With MANIFOLD_SHM_STREAM_STORES=1 or 0, MPI_T shm0_copies_streamed must count the payloads
 * of 8 KiB or more written into the rings (some), or none.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mftest.h"

static unsigned char val(int src, size_t len, size_t i)
{
    return (unsigned char)(src * 29 + len * 7 + i * 13 + (i >> 10));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    int peer = rank ^ 1;
    if (peer >= size)
        return mftest_finish_tools();
    const char *stream = getenv("MANIFOLD_SHM_STREAM_STORES");
    mftest_counter streamed;
    mftest_counter_open(&streamed, "shm0_copies_streamed");
    unsigned long long streamed0 = mftest_counter_read(&streamed);

    static const size_t sizes[] = {0,     1,     8,      63,      64,           65,    1000,
                                   4095,  4096,  8191,   8193,    16383,        16384, 16385,
                                   32768, 65537, 200000, 1 << 20, (4 << 20) + 3};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    size_t max = sizes[nsizes - 1];
    unsigned char *out = malloc(max), *in = malloc(max);
    MF_CHECK(out && in, "no memory");

    /* Both directions at once, every size. */
    for (size_t k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++)
            out[i] = val(rank, n, i);
        memset(in, 0xff, n);
        MPI_Status st;
        MF_CHECK_MPI(MPI_Sendrecv(out, (int)n, MPI_BYTE, peer, (int)k, in, (int)n, MPI_BYTE, peer,
                                  (int)k, MPI_COMM_WORLD, &st));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MF_CHECK((size_t)count == n, "size %zu: count %d", n, count);
        for (size_t i = 0; i < n; i++)
            if (in[i] != val(peer, n, i)) {
                MF_CHECK(0, "size %zu: byte %zu is %d, expected %d", n, i, in[i], val(peer, n, i));
                break;
            }
    }
    /* Five eager sizes of 8 KiB or more (8193 to 32768) and the rendezvous ones went out. */
    unsigned long long nstreamed = mftest_counter_read(&streamed) - streamed0;
    if (stream && strcmp(stream, "1") == 0)
        MF_CHECK(nstreamed >= 5, "%llu payloads streamed with MANIFOLD_SHM_STREAM_STORES=1",
                 nstreamed);
    if (stream && strcmp(stream, "0") == 0)
        MF_CHECK(nstreamed == 0, "%llu payloads streamed with MANIFOLD_SHM_STREAM_STORES=0",
                 nstreamed);
    mftest_counter_close(&streamed);

    /* 200 messages in flight from the lower rank, same tag: they must match in order. */
    enum { INFLIGHT = 200 };
    size_t lens[INFLIGHT];
    unsigned char *bufs[INFLIGHT];
    MPI_Request reqs[INFLIGHT];
    for (int m = 0; m < INFLIGHT; m++) {
        lens[m] = sizes[(size_t)m % nsizes] % 70000;
        bufs[m] = malloc(lens[m] + 1);
        if (rank < peer)
            for (size_t i = 0; i < lens[m]; i++)
                bufs[m][i] = val(m, lens[m], i);
    }
    for (int m = 0; m < INFLIGHT; m++) {
        if (rank < peer)
            MF_CHECK_MPI(
                MPI_Isend(bufs[m], (int)lens[m], MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[m]));
        else
            MF_CHECK_MPI(
                MPI_Irecv(bufs[m], (int)lens[m], MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[m]));
    }
    MF_CHECK_MPI(MPI_Waitall(INFLIGHT, reqs, MPI_STATUSES_IGNORE));
    if (rank > peer)
        for (int m = 0; m < INFLIGHT; m++)
            for (size_t i = 0; i < lens[m]; i++)
                if (bufs[m][i] != val(m, lens[m], i)) {
                    MF_CHECK(0, "in-flight message %d (%zu bytes): byte %zu wrong", m, lens[m], i);
                    break;
                }
    for (int m = 0; m < INFLIGHT; m++)
        free(bufs[m]);

    /* The receiver blocks (and, past its spin budget, sleeps) while the sender pauses. */
    int token = 0;
    if (rank < peer) {
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        token = 42;
        MF_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, peer, 9, MPI_COMM_WORLD));
    } else {
        double t0 = now();
        MF_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double dt = now() - t0;
        MF_CHECK(token == 42, "token %d", token);
        MF_CHECK(dt < 5.0, "woken only after %.2f s", dt);
    }
    free(out);
    free(in);
    return mftest_finish_tools();
}
