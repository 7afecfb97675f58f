/*
 * The ofi message path's direct receive (rx_peek/rx_take, src/fabric/ofi/ofi_direct.c): blocking
 * receives from one peer take its eager frames straight from the receive buffers, while the
 * completions they read on the way (other peers' frames, rendezvous, synchronous sends, send
 * completions) are left to progress in order. Checked: ping-pong data; a stream of mixed
 * eager, synchronous and rendezvous messages received in order with the right contents and
 * status; messages that wait while the receiver sleeps (staged, held, unexpected) and are
 * received in another order than sent. The test's CMake entry checks from --report-fabrics that
 * frames were taken directly.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define BIG 20000 /* above the ofi eager limit (16384): rendezvous */
#define STREAM 200
#define WAITING 64

static int rank, size;

static void test_pingpong(int peer)
{
    long v = 0;
    for (int i = 0; i < 2000; i++) {
        if (rank == 0) {
            v = i;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(v == -i, "ping-pong %d: got %ld", i, v);
        } else {
            MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(v == i, "ping-pong %d: got %ld", i, v);
            v = -v;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD));
        }
    }
}

static int stream_len(int i)
{
    return i % 5 == 0 ? BIG : (i * 37) % 3000;
}

/* Mixed messages sent without waiting, received one by one in order. */
static void test_stream(int peer)
{
    unsigned char *b = malloc((size_t)BIG * STREAM);
    if (rank == 0) {
        MPI_Request r[STREAM];
        for (int i = 0; i < STREAM; i++) {
            unsigned char *p = b + (size_t)i * BIG;
            mftest_fill(p, stream_len(i), i);
            if (i % 7 == 3)
                MF_CHECK_MPI(
                    MPI_Issend(p, stream_len(i), MPI_BYTE, peer, 2 + i % 3, MPI_COMM_WORLD, &r[i]));
            else
                MF_CHECK_MPI(
                    MPI_Isend(p, stream_len(i), MPI_BYTE, peer, 2 + i % 3, MPI_COMM_WORLD, &r[i]));
        }
        MF_CHECK_MPI(MPI_Waitall(STREAM, r, MPI_STATUSES_IGNORE));
    } else {
        for (int i = 0; i < STREAM; i++) {
            MPI_Status st;
            int count = -1;
            memset(b, 0, BIG);
            MF_CHECK_MPI(MPI_Recv(b, BIG, MPI_BYTE, peer, 2 + i % 3, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            MF_CHECK(count == stream_len(i), "stream %d: %d bytes, not %d", i, count,
                     stream_len(i));
            MF_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 2 + i % 3, "stream %d: status", i);
            MF_CHECK(mftest_filled(b, stream_len(i), i), "stream %d: data", i);
        }
    }
    free(b);
}

/* Messages that arrive while the receiver sleeps, received in reverse order. */
static void test_waiting(int peer)
{
    int v[WAITING];
    if (rank == 0) {
        for (int i = 0; i < WAITING; i++) {
            v[i] = 1000 + i;
            MF_CHECK_MPI(MPI_Send(&v[i], 1, MPI_INT, peer, 10 + i, MPI_COMM_WORLD));
        }
    } else {
        usleep(100000);
        for (int i = WAITING - 1; i >= 0; i--) {
            MF_CHECK_MPI(
                MPI_Recv(&v[i], 1, MPI_INT, peer, 10 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(v[i] == 1000 + i, "waiting %d: got %d", i, v[i]);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* pairs 0-1, 2-3, ...; an odd last rank only joins the barriers */
    int peer = rank ^ 1;
    int me = rank;
    if (peer < size) {
        rank = (me & 1) ^ 1; /* the pair's roles: its odd rank sends (the even one reports) */
        test_pingpong(peer);
        test_stream(peer);
        test_waiting(peer);
        rank = me;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mftest_finish();
}
