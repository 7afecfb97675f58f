/*
 * A long stream of eager non-contiguous messages, blocking send to blocking receive: the path
 * on which shm packs a message straight into its ring frame and unpacks it straight out of it
 * (fabric.h send_in_place, rx_take_in_place); other fabrics stage it.
 *
 * Frames of many lengths wrap around the end of the ring at every offset, so the payload of
 * some arrives in two pieces, often splitting one of the type's pieces: a vector of 3-byte
 * blocks, and a column of doubles (the pack fast path, datatype/copy.c). Each message is
 * checked byte by byte, and the gaps between blocks must stay as they were. Then:
 *   - the same nonblocking, 16 messages in flight (MPI_Isend packs in place too),
 *   - a burst sent while the receiver sleeps (the ring fills: the frames that find no room
 *     are staged and queued, and all must still arrive in order),
 *   - truncation: a receive of fewer elements gets MPI_ERR_TRUNCATE, with the part that fits
 *     unpacked and nothing written past it.
 * Rank r sends to r + 1 and receives from r - 1 (pairs 0→1, 2→3...: odd counts leave one out).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define NMSG 6000  /* messages in the stream */
#define BURST 1500 /* messages sent while the receiver sleeps (7-18 MB) */
#define MAXN 3000  /* most blocks (or doubles) in one message: 9 KB, 24 KB */
#define WINDOW 16  /* nonblocking messages in flight */
#define GAP 0x5a   /* what the bytes between blocks hold */
#define ROW 5      /* doubles per row of the matrix whose column is sent */

enum { BLOCKS, COLUMN, NSHAPES };

/* Blocks (or doubles) in message k: every count up to MAXN, in an order that changes the
 * frame length, and so where it wraps, from message to message. */
static int count_of(int k)
{
    return 1 + (int)((k * 7919u) % MAXN);
}

/* The byte the sender puts at position i (stream order) of message k. */
static unsigned char byte_of(int k, size_t i)
{
    return (unsigned char)(k * 31 + i * 7 + 1);
}

/* Sets up buf as the sender (values) or receiver (gaps everywhere, and zeroed values) for
 * message k of shape s with n elements. Returns the bytes the type spans. */
static size_t layout(int s, int k, int n, unsigned char *buf, int sender)
{
    if (s == BLOCKS) { /* vector(n, 3, 7, MPI_CHAR): 3 bytes of every 7 */
        size_t span = (size_t)(n - 1) * 7 + 3;
        memset(buf, GAP, span + 16);
        for (int b = 0; b < n; b++)
            for (int j = 0; j < 3; j++)
                buf[b * 7 + j] = sender ? byte_of(k, (size_t)b * 3 + j) : 0;
        return span;
    }
    double *d = (double *)(void *)buf; /* vector(n, 1, ROW, MPI_DOUBLE) */
    size_t span = ((size_t)(n - 1) * ROW + 1) * sizeof(double);
    memset(buf, GAP, span + 16);
    for (int b = 0; b < n; b++)
        d[(size_t)b * ROW] = sender ? (double)byte_of(k, (size_t)b) + k * 0.5 : 0.0;
    return span;
}

/* Whether buf holds message k's first `got` elements of shape s, gaps untouched, and nothing
 * changed past them up to the span of `n` elements. */
static int received_ok(int s, int k, int got, int n, const unsigned char *buf)
{
    if (s == BLOCKS) {
        size_t span = (size_t)(n - 1) * 7 + 3;
        for (size_t i = 0; i < span + 16; i++) {
            size_t b = i / 7, j = i % 7;
            unsigned char want = j >= 3 || (int)b >= n ? GAP
                                 : (int)b < got        ? byte_of(k, b * 3 + j)
                                                       : 0;
            if (buf[i] != want)
                return 0;
        }
        return 1;
    }
    const double *d = (const double *)(const void *)buf;
    for (int b = 0; b < n; b++) {
        double want = b < got ? (double)byte_of(k, (size_t)b) + k * 0.5 : 0.0;
        if (d[(size_t)b * ROW] != want)
            return 0;
        const unsigned char *gap = (const unsigned char *)&d[(size_t)b * ROW + 1];
        for (size_t i = 0; b + 1 < n && i < (ROW - 1) * sizeof(double); i++)
            if (gap[i] != GAP)
                return 0;
    }
    return 1;
}

static MPI_Datatype type_of(int s, int n)
{
    MPI_Datatype t;
    if (s == BLOCKS)
        MPI_Type_vector(n, 3, 7, MPI_CHAR, &t);
    else
        MPI_Type_vector(n, 1, ROW, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static size_t buf_bytes(void)
{
    return ((size_t)MAXN * ROW + 1) * sizeof(double) + 64;
}

/* Messages [from, to) of shape s: sent (sender) or received and checked. */
static void stream(int s, int sender, int peer, int from, int to, unsigned char *buf)
{
    for (int k = from; k < to; k++) {
        int n = count_of(k);
        MPI_Datatype t = type_of(s, n);
        layout(s, k, n, buf, sender);
        if (sender) {
            MF_CHECK_MPI(MPI_Send(buf, 1, t, peer, k, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            MF_CHECK_MPI(MPI_Recv(buf, 1, t, peer, k, MPI_COMM_WORLD, &st));
            MF_CHECK(received_ok(s, k, n, n, buf), "shape %d, message %d (%d elements) differs", s,
                     k, n);
        }
        MPI_Type_free(&t);
    }
}

/* The same, nonblocking: windows of WINDOW messages, each in a buffer of its own, all posted
 * before any is waited for (MPI_Isend packs into the frame at once where the fabric allows). */
static void stream_nb(int s, int sender, int peer, int from, int to, unsigned char **bufs)
{
    for (int k0 = from; k0 < to; k0 += WINDOW) {
        int m = to - k0 < WINDOW ? to - k0 : WINDOW;
        MPI_Request rq[WINDOW];
        MPI_Datatype t[WINDOW];
        for (int i = 0; i < m; i++) {
            int k = k0 + i, n = count_of(k);
            t[i] = type_of(s, n);
            layout(s, k, n, bufs[i], sender);
            if (sender)
                MF_CHECK_MPI(MPI_Isend(bufs[i], 1, t[i], peer, k, MPI_COMM_WORLD, &rq[i]));
            else
                MF_CHECK_MPI(MPI_Irecv(bufs[i], 1, t[i], peer, k, MPI_COMM_WORLD, &rq[i]));
        }
        MF_CHECK_MPI(MPI_Waitall(m, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < m; i++) {
            int k = k0 + i, n = count_of(k);
            MF_CHECK(sender || received_ok(s, k, n, n, bufs[i]),
                     "shape %d, nonblocking message %d (%d elements) differs", s, k, n);
            MPI_Type_free(&t[i]);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    int active = peer < size;
    unsigned char *buf = malloc(buf_bytes()), *bufs[WINDOW];
    for (int i = 0; i < WINDOW; i++) {
        bufs[i] = malloc(buf_bytes());
        MF_CHECK(bufs[i] != NULL, "no memory");
    }
    MF_CHECK(buf != NULL, "no memory");

    for (int s = 0; s < NSHAPES && active; s++) {
        stream(s, sender, peer, 0, NMSG, buf);
        stream_nb(s, sender, peer, 0, NMSG / 2, bufs);

        /* The burst, more bytes than a ring holds, while the receiver makes no progress. */
        if (!sender)
            usleep(200000);
        stream(s, sender, peer, 0, BURST, buf);

        /* Truncation: n elements sent, n / 2 + 1 received. */
        for (int k = 0; k < 50; k++) {
            int n = 2 + count_of(k * 13) % (MAXN - 2), part = n / 2 + 1;
            if (sender) {
                MPI_Datatype t = type_of(s, n);
                layout(s, k, n, buf, 1);
                MF_CHECK_MPI(MPI_Send(buf, 1, t, peer, k, MPI_COMM_WORLD));
                MPI_Type_free(&t);
            } else {
                MPI_Datatype t = type_of(s, part);
                layout(s, k, n, buf, 0);
                MPI_Status st;
                int rc = MPI_Recv(buf, 1, t, peer, k, MPI_COMM_WORLD, &st);
                int cls = -1;
                MPI_Error_class(rc, &cls);
                MF_CHECK(cls == MPI_ERR_TRUNCATE, "shape %d: %d elements into %d: class %d", s, n,
                         part, cls);
                MF_CHECK(received_ok(s, k, part, n, buf),
                         "shape %d: truncated message %d (%d of %d elements) placed wrong", s, k,
                         part, n);
                MPI_Type_free(&t);
            }
        }
    }
    free(buf);
    for (int i = 0; i < WINDOW; i++)
        free(bufs[i]);
    return mftest_finish();
}
