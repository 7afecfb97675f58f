/*
 * shm_pull.c — which rendezvous messages shm pulls (single copy, the receiver reads the sender's
 * buffer) and which it has pushed through the rings, read from the MPI_T counter
 * shm0_rendezvous_pulled, and every byte of both checked.
 *
 * Ranks pair up (0-1, 2-3, ...). Two patterns, each counted on every rank:
 *   - ping-pong of 1 MiB messages: a receiver with no sends of its own in flight;
 *   - an exchange of W messages of 1 MiB each way (W MiB of sends in flight on each side). The
 *     odd rank posts its receives after the even rank's RTS came (it waited for a token sent
 *     behind them), the case where the choice is deferred to the next progress pass; then it
 *     stays out of MPI for 30 ms after its sends, so that a peer that pulls them has finished
 *     them by that pass (the choice must still count them).
 * EXPECT_PINGPONG and EXPECT_EXCHANGE (0 or 1) say whether every receive of that pattern is
 * pulled or none is: with MANIFOLD_SHM_CMA=auto that depends on MANIFOLD_SHM_PULL_BUSY against
 * the W MiB in flight, with 1 everything is pulled, with 0 nothing.
 *
 * SHARE_CORE=1 makes every rank share its core with other load: a thread of the test spins on
 * the same core from after MPI_Init to the end (the rank's own thread is pinned there too).
 * Uncounted exchange rounds come first, until both ranks of a pair have found their core shared
 * (MPI_T progress_core_shared, a window of 20 ms of runnable time; at most 200 rounds). Then
 * MANIFOLD_SHM_PULL_SHARED (default: any own send in flight) decides instead of
 * MANIFOLD_SHM_PULL_BUSY. Except where the job has more ranks than the host has cores: there the
 * rule is off, no rank looks at its core's sharing, and no receive of the exchange may be
 * pulled, whatever EXPECT_EXCHANGE says. Without SHARE_CORE, the tests that check the busy rule
 * set MANIFOLD_SHM_PULL_SHARED out of the way, since ctest may run other load beside them.
 * CROWDED=1 replaces EXPECT_EXCHANGE: on a host whose ranks outnumber its cores more than twice,
 * MANIFOLD_SHM_PULL_SHARED (any send in flight) decides for every receive and the exchange is
 * pulled; with fewer ranks the defaults hold and it is not (8 MiB in flight is under
 * MANIFOLD_SHM_PULL_BUSY).
 *
 * Last, a receive whose start waits for the next progress pass must not wait for a sleep: the
 * even rank posts it after the RTS came, then blocks receiving a small message from the same
 * peer (the direct receive, which looks at that peer's ring and makes a full pass only now and
 * then), which the peer sends only once its large send is over. With MANIFOLD_SPIN_US=0 a
 * waiter sleeps at once: before the deferred start kept the engine awake, each round took 16
 * sleeps of 100 ms (1.5 s, so 7.5 s for all STALL_ROUNDS); all of them must take under 3 s (a
 * sanitizer build with 4 ranks and their spinning threads on 2 cores took 1.15 s).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

enum { MSG = 1 << 20, W = 8, ROUNDS = 3, PINGS = 4, STALL_ROUNDS = 5, SHARE_ROUNDS = 200 };

static unsigned char pattern(int rank, int k, size_t i)
{
    return (unsigned char)(rank * 31 + k * 7 + i * 13 + (i >> 12));
}

static void fill(unsigned char *p, int rank, int k)
{
    for (size_t i = 0; i < MSG; i++)
        p[i] = pattern(rank, k, i);
}

static void check(const unsigned char *p, int from, int k, const char *what)
{
    for (size_t i = 0; i < MSG; i++)
        MF_CHECK(p[i] == pattern(from, k, i), "%s: message %d from rank %d wrong at byte %zu", what,
                 k, from, i);
}

/* One round of the exchange: W messages each way, the odd rank's receives posted after the even
 * rank's RTS came. */
static void exchange(unsigned char *sbuf, unsigned char *rbuf, int peer, bool even)
{
    MPI_Request req[2 * W];
    memset(rbuf, 0, (size_t)W * MSG);
    if (even) {
        for (int k = 0; k < W; k++)
            MF_CHECK_MPI(MPI_Irecv(rbuf + (size_t)k * MSG, MSG, MPI_BYTE, peer, 2 + k,
                                   MPI_COMM_WORLD, &req[k]));
        for (int k = 0; k < W; k++)
            MF_CHECK_MPI(MPI_Isend(sbuf + (size_t)k * MSG, MSG, MPI_BYTE, peer, 2 + k,
                                   MPI_COMM_WORLD, &req[W + k]));
        MF_CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD)); /* behind the RTS */
    } else {
        MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < W; k++) /* their RTS are here already */
            MF_CHECK_MPI(MPI_Irecv(rbuf + (size_t)k * MSG, MSG, MPI_BYTE, peer, 2 + k,
                                   MPI_COMM_WORLD, &req[k]));
        for (int k = 0; k < W; k++)
            MF_CHECK_MPI(MPI_Isend(sbuf + (size_t)k * MSG, MSG, MPI_BYTE, peer, 2 + k,
                                   MPI_COMM_WORLD, &req[W + k]));
        /* Out of MPI for a while: a peer that pulls our sends meanwhile has their FINs waiting
         * for the pass that also starts our deferred receives, and finishes them first. */
        usleep(30000);
    }
    MF_CHECK_MPI(MPI_Waitall(2 * W, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < W; k++)
        check(rbuf + (size_t)k * MSG, peer, k, "exchange");
}

static int expect(const char *var)
{
    const char *v = getenv(var);
    MF_CHECK(v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0), "%s must be 0 or 1", var);
    return atoi(v);
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    MF_CHECK(size % 2 == 0, "needs an even number of ranks");
    int want_pp = expect("EXPECT_PINGPONG"), want_ex = expect("EXPECT_EXCHANGE");
    const char *share = getenv("SHARE_CORE");
    bool sharing = share && strcmp(share, "1") == 0;
    const char *crowd = getenv("CROWDED");
    long cores;
    bool over = mftest_oversubscribed(size, &cores);
    if (crowd && strcmp(crowd, "1") == 0)
        want_ex = over && size > 2 * cores;
    if (sharing) {
        mftest_share_core();
        if (over)
            want_ex = 0;
    }
    int peer = rank ^ 1;
    bool even = rank % 2 == 0;

    mftest_counter pulled;
    mftest_counter_open(&pulled, "shm0_rendezvous_pulled");

    unsigned char *sbuf = malloc((size_t)W * MSG), *rbuf = malloc((size_t)W * MSG);
    MF_CHECK(sbuf && rbuf, "out of memory");
    for (int k = 0; k < W; k++)
        fill(sbuf + (size_t)k * MSG, rank, k);

    /* Ping-pong: every receive finds its rank with nothing of its own in flight. */
    unsigned long long before = mftest_counter_read(&pulled);
    for (int i = 0; i < PINGS; i++) {
        if (even) {
            MF_CHECK_MPI(MPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MF_CHECK_MPI(MPI_Recv(rbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK_MPI(MPI_Send(sbuf, MSG, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        }
        check(rbuf, peer, 0, "ping-pong");
    }
    unsigned long long pp = mftest_counter_read(&pulled) - before;
    MF_CHECK(pp == (want_pp ? PINGS : 0), "ping-pong: %llu of %d receives pulled, expected %s", pp,
             PINGS, want_pp ? "all" : "none");

    /* Sharing: uncounted rounds until both ranks of the pair found their core shared. */
    if (sharing && !over) {
        int found = 0, peer_found = 0, rounds = 0;
        mftest_counter shared;
        mftest_counter_open(&shared, "progress_core_shared");
        double t0 = MPI_Wtime();
        while (!(found && peer_found) && rounds < SHARE_ROUNDS) { /* both ranks alike */
            exchange(sbuf, rbuf, peer, even);
            rounds++;
            found = mftest_counter_read(&shared) > 0;
            MF_CHECK_MPI(MPI_Sendrecv(&found, 1, MPI_INT, peer, 100, &peer_found, 1, MPI_INT, peer,
                                      100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MF_CHECK(found,
                 "a rank sharing its core with a spinning thread was not found sharing it in %d "
                 "exchange rounds (%.1f s)",
                 rounds, MPI_Wtime() - t0);
        mftest_counter_close(&shared);
    }

    /* Exchange: both sides have W MiB of sends in flight while they receive. */
    before = mftest_counter_read(&pulled);
    for (int round = 0; round < ROUNDS; round++)
        exchange(sbuf, rbuf, peer, even);
    unsigned long long ex = mftest_counter_read(&pulled) - before;
    MF_CHECK(ex == (want_ex ? ROUNDS * W : 0), "exchange: %llu of %d receives pulled, expected %s",
             ex, ROUNDS * W, want_ex ? "all" : "none");

    /* A deferred start and a blocking receive from the same peer. */
    double t0 = MPI_Wtime();
    for (int round = 0; round < STALL_ROUNDS; round++) {
        MPI_Request req;
        int small = 0;
        if (even) {
            MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK_MPI(MPI_Irecv(rbuf, MSG, MPI_BYTE, peer, 97, MPI_COMM_WORLD, &req));
            MF_CHECK_MPI(MPI_Recv(&small, 1, MPI_INT, peer, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            MF_CHECK(small == round + 1, "small message %d, expected %d", small, round + 1);
            check(rbuf, peer, 0, "deferred start");
        } else {
            MF_CHECK_MPI(MPI_Isend(sbuf, MSG, MPI_BYTE, peer, 97, MPI_COMM_WORLD, &req));
            MF_CHECK_MPI(
                MPI_Send(NULL, 0, MPI_BYTE, peer, 98, MPI_COMM_WORLD)); /* behind the RTS */
            MF_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            small = round + 1;
            MF_CHECK_MPI(MPI_Send(&small, 1, MPI_INT, peer, 96, MPI_COMM_WORLD));
        }
    }
    double took = MPI_Wtime() - t0;
    MF_CHECK(took < 3.0, "%d rounds of a deferred start beside a blocking receive took %.2f s",
             STALL_ROUNDS, took);

    mftest_counter_close(&pulled);
    free(sbuf);
    free(rbuf);
    if (sharing)
        mftest_share_core_end();
    return mftest_finish_tools();
}
