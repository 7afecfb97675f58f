/*
 * The MPI point-to-point semantics that tag matching offloaded to libfabric (FI_TAGGED, the
 * ofi fabric's tagged data path) must keep, each case checked:
 *   order     one sender, one tag, many messages of mixed sizes (inject, eager, the provider's
 *             rendezvous) arrive in sending order, also received with MPI_ANY_SOURCE/ANY_TAG
 *             and posted late (unexpected) or early;
 *   wildcard  MPI_ANY_SOURCE and MPI_ANY_TAG report the real source and tag, from every rank
 *             and the own one;
 *   probe     MPI_Iprobe (nothing there, then the message), MPI_Probe, MPI_Mprobe + MPI_Mrecv
 *             and MPI_Improbe + MPI_Imrecv, small and large, with the claimed message received
 *             exactly once while another matching one stays queued;
 *   cancel    a posted receive that nothing matches is cancelled; one that matched is not;
 *   ssend     MPI_Ssend completes only once the receive is posted (the receiver posts late and
 *             says when; the sender's completion must come after);
 *   truncate  a message longer than the buffer: MPI_ERR_TRUNCATE, the status counts the bytes
 *             received, and they are the message's first ones (eager and large).
 * Usage: ofi_tagged [tagged|message] — the data path the report line of this run must show is
 * checked by the test registration (--report-fabrics); the program itself checks semantics.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

static int rank, size;

static int size_of(int i)
{
    static const int sizes[] = {0, 1, 8, 60, 64, 100, 1000, 4096, 16384, 20000, 70000, 300000};
    return sizes[i % (int)(sizeof sizes / sizeof sizes[0])];
}

/* Rank 0 receives NMSG messages from every other rank (and itself) on one tag; each carries its
 * sequence number in its first bytes. */
#define NMSG 40
static void test_order(void)
{
    int maxn = 300000;
    unsigned char *rb = malloc((size_t)maxn);
    for (int late = 0; late < 2; late++) {
        MPI_Request sr[NMSG];
        unsigned char *bufs[NMSG];
        if (rank != 0 || size == 1) {
            for (int i = 0; i < NMSG; i++) {
                int n = size_of(i * 5 + rank);
                bufs[i] = malloc((size_t)n + 8);
                mftest_fill(bufs[i], n, i);
                if (n >= 4)
                    memcpy(bufs[i], &i, 4);
                MF_CHECK_MPI(MPI_Isend(bufs[i], n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &sr[i]));
            }
        }
        if (rank == 0) {
            if (late)
                sleep(1); /* everything has arrived unexpected */
            int nsend = size == 1 ? 1 : size - 1;
            int next[64] = {0};
            for (int k = 0; k < NMSG * nsend; k++) {
                MPI_Status st;
                MF_CHECK_MPI(MPI_Recv(rb, maxn, MPI_BYTE, MPI_ANY_SOURCE, k % 3 ? 7 : MPI_ANY_TAG,
                                      MPI_COMM_WORLD, &st));
                int src = st.MPI_SOURCE, n;
                MPI_Get_count(&st, MPI_BYTE, &n);
                MF_CHECK(st.MPI_TAG == 7, "order: tag %d", st.MPI_TAG);
                int i = next[src]++;
                MF_CHECK(n == size_of(i * 5 + src),
                         "order: from %d message %d has %d bytes, not %d", src, i, n,
                         size_of(i * 5 + src));
                int seq = i;
                if (n >= 4)
                    memcpy(&seq, rb, 4);
                MF_CHECK(seq == i, "order: from %d got message %d where %d was due (late %d)", src,
                         seq, i, late);
                unsigned char *exp = malloc((size_t)n + 8);
                mftest_fill(exp, n, i);
                if (n >= 4)
                    memcpy(exp, &i, 4);
                MF_CHECK(memcmp(exp, rb, (size_t)n) == 0, "order: data of message %d from %d", i,
                         src);
                free(exp);
            }
        }
        if (rank != 0 || size == 1) {
            MF_CHECK_MPI(MPI_Waitall(NMSG, sr, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NMSG; i++)
                free(bufs[i]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(rb);
}

/* Everyone sends to everyone (itself too) with tag = 100 + source; receives by wildcards. */
static void test_wildcard(void)
{
    int *got = calloc((size_t)size, sizeof *got);
    MPI_Request *sr = malloc((size_t)size * sizeof *sr);
    int *vals = malloc((size_t)size * sizeof *vals);
    for (int p = 0; p < size; p++) {
        vals[p] = rank * 1000 + p;
        MF_CHECK_MPI(MPI_Isend(&vals[p], 1, MPI_INT, p, 100 + rank, MPI_COMM_WORLD, &sr[p]));
    }
    for (int k = 0; k < size; k++) {
        int v;
        MPI_Status st;
        MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MF_CHECK(st.MPI_TAG == 100 + st.MPI_SOURCE, "wildcard: tag %d from %d", st.MPI_TAG,
                 st.MPI_SOURCE);
        MF_CHECK(v == st.MPI_SOURCE * 1000 + rank, "wildcard: value %d from %d", v, st.MPI_SOURCE);
        got[st.MPI_SOURCE]++;
    }
    for (int p = 0; p < size; p++)
        MF_CHECK(got[p] == 1, "wildcard: %d messages from %d", got[p], p);
    MF_CHECK_MPI(MPI_Waitall(size, sr, MPI_STATUSES_IGNORE));
    free(got);
    free(sr);
    free(vals);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 1 (or 0 alone) sends two messages of each size to rank 0, tags 200 and 201. */
static void test_probe(void)
{
    int from = size > 1 ? 1 : 0;
    for (int big = 0; big < 2; big++) {
        int n = big ? 200000 : 100;
        /* Separate receive buffers: with one process rank 0 is also the sender, and a send
         * buffer may not be touched before its send completes (rendezvous reads it late). */
        unsigned char *a = malloc((size_t)n), *b = malloc((size_t)n);
        unsigned char *ra = malloc((size_t)n), *rb = malloc((size_t)n);
        MPI_Request sr[2];
        if (rank == 0) {
            int flag = 1;
            MF_CHECK_MPI(MPI_Iprobe(from, 200, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            MF_CHECK(!flag, "probe: a message before any was sent");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == from) {
            mftest_fill(a, n, 1);
            mftest_fill(b, n, 2);
            MF_CHECK_MPI(MPI_Isend(a, n, MPI_BYTE, 0, 200, MPI_COMM_WORLD, &sr[0]));
            MF_CHECK_MPI(MPI_Isend(b, n, MPI_BYTE, 0, 201, MPI_COMM_WORLD, &sr[1]));
        }
        if (rank == 0) {
            MPI_Status st;
            int flag = 0, cnt;
            while (!flag)
                MF_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 201, MPI_COMM_WORLD, &flag, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MF_CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 201 && cnt == n,
                     "iprobe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
            MF_CHECK_MPI(MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MF_CHECK(st.MPI_TAG == 200, "probe: ANY_TAG found tag %d, not the first sent",
                     st.MPI_TAG);
            /* claim the second, receive it; the first stays for a plain receive */
            MPI_Message msg;
            if (big) {
                flag = 0;
                while (!flag)
                    MF_CHECK_MPI(MPI_Improbe(from, 201, MPI_COMM_WORLD, &flag, &msg, &st));
            } else {
                MF_CHECK_MPI(MPI_Mprobe(from, 201, MPI_COMM_WORLD, &msg, &st));
            }
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MF_CHECK(st.MPI_TAG == 201 && cnt == n, "mprobe: tag %d count %d", st.MPI_TAG, cnt);
            /* claimed: a probe no longer sees it */
            MF_CHECK_MPI(MPI_Iprobe(from, 201, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            MF_CHECK(!flag, "mprobe: the claimed message is still visible to probes");
            memset(rb, 0, (size_t)n);
            if (big) {
                MPI_Request r;
                MF_CHECK_MPI(MPI_Imrecv(rb, n, MPI_BYTE, &msg, &r));
                MF_CHECK_MPI(MPI_Wait(&r, &st));
            } else {
                MF_CHECK_MPI(MPI_Mrecv(rb, n, MPI_BYTE, &msg, &st));
            }
            MF_CHECK(mftest_filled(rb, n, 2) && st.MPI_TAG == 201,
                     "mrecv (%d bytes): data %d %d or tag %d", n, rb[0], rb[n - 1], st.MPI_TAG);
            memset(ra, 0, (size_t)n);
            MF_CHECK_MPI(MPI_Recv(ra, n, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MF_CHECK(mftest_filled(ra, n, 1) && st.MPI_TAG == 200,
                     "recv after mprobe: data or tag %d", st.MPI_TAG);
        }
        if (rank == from)
            MF_CHECK_MPI(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
        free(a);
        free(b);
        free(ra);
        free(rb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void test_cancel(void)
{
    int v = 0, flag = 0;
    MPI_Request r;
    MPI_Status st;
    MF_CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &r));
    MF_CHECK_MPI(MPI_Cancel(&r));
    MF_CHECK_MPI(MPI_Wait(&r, &st));
    MF_CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    MF_CHECK(flag, "cancel: an unmatched receive was not cancelled");
    /* matched before the cancel: received, not cancelled */
    int x = 42;
    MF_CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, rank, 301, MPI_COMM_WORLD, &r));
    MF_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, rank, 301, MPI_COMM_WORLD));
    MPI_Status st2;
    int matched = 0;
    while (!matched)
        MF_CHECK_MPI(MPI_Test(&r, &matched, &st2));
    MF_CHECK_MPI(MPI_Test_cancelled(&st2, &flag));
    MF_CHECK(!flag && v == 42, "cancel: a matched receive reports cancelled %d, value %d", flag, v);
    /* a message sent after the cancel goes to the next receive */
    MF_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, rank, 300, MPI_COMM_WORLD));
    v = 0;
    MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, rank, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK(v == 42, "cancel: the next receive got %d", v);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The receiver posts 0.3 s after the barrier; the Ssend must not complete before. */
static void test_ssend(void)
{
    if (size < 2)
        return;
    for (int big = 0; big < 2; big++) {
        int n = big ? 100000 : 4;
        unsigned char *b = malloc((size_t)n);
        mftest_fill(b, n, 5);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double t0 = MPI_Wtime();
            MF_CHECK_MPI(MPI_Ssend(b, n, MPI_BYTE, 1, 400, MPI_COMM_WORLD));
            double dt = MPI_Wtime() - t0;
            MF_CHECK(dt > 0.25,
                     "ssend of %d bytes completed after %.3f s, before the receive was "
                     "posted (0.3 s)",
                     n, dt);
        } else if (rank == 1) {
            usleep(300000);
            memset(b, 0, (size_t)n);
            MF_CHECK_MPI(MPI_Recv(b, n, MPI_BYTE, 0, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(mftest_filled(b, n, 5), "ssend: data");
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_truncate(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int big = 0; big < 2; big++) {
        int n = big ? 150000 : 100, room = n / 2;
        unsigned char *sb = malloc((size_t)n), *rb = calloc(1, (size_t)n);
        mftest_fill(sb, n, 9);
        MPI_Request r;
        MPI_Status st;
        MF_CHECK_MPI(MPI_Irecv(rb, room, MPI_BYTE, from, 500, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD);
        MF_CHECK_MPI(MPI_Send(sb, n, MPI_BYTE, to, 500, MPI_COMM_WORLD));
        int rc = MPI_Wait(&r, &st), cls = -1, cnt = -1;
        MPI_Error_class(rc, &cls);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MF_CHECK(cls == MPI_ERR_TRUNCATE, "truncate (%d bytes into %d): class %d", n, room, cls);
        MF_CHECK(cnt == room, "truncate: status count %d, not the %d bytes received", cnt, room);
        MF_CHECK(mftest_filled(rb, room, 9) && rb[room] == 0, "truncate: the received part");
        MF_CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 500, "truncate: source %d tag %d",
                 st.MPI_SOURCE, st.MPI_TAG);
        free(sb);
        free(rb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_wildcard();
    test_order();
    test_probe();
    test_cancel();
    test_ssend();
    test_truncate();
    return mftest_finish();
}
