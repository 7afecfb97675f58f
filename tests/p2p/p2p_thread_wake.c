/*
 * p2p_thread_wake.c — a request that one thread completes outside any progress pass wakes
 * another thread asleep in MPI_Wait on it, instead of leaving it asleep until the sleep's
 * safety-net bound (100 ms).
 *
 * MPI_THREAD_MULTIPLE. In each round the main thread waits on a request while a second thread,
 * DELAY_MS later, completes it:
 *   greq    MPI_Grequest_complete on a generalized request;
 *   cancel  MPI_Cancel on a receive nothing matches (the wait returns it cancelled);
 *   self    MPI_Send to this rank, for a receive posted before (the self fabric queues the
 *           frame in memory and has no descriptor);
 *   isend   MPI_Isend to this rank, then no MPI call for LINGER_MS: the sending thread makes
 *           no pass that would complete the receive for the sleeper (MPI_Send's does), so only
 *           the self fabric's own kick can wake it.
 * Nothing arrives on any descriptor for these, so only the library's own wake-up ends the
 * sleep. With a partner rank (np >= 2; ranks pair up 0-1, 2-3, ...; an odd last rank skips
 * these), the partner sends DELAY_MS later while a second thread of the waiting rank polls
 * (MPI_Iprobe on another tag) and so may take the frame, and the descriptor's wake-up with it,
 * from under the sleeper:
 *   wait    MPI_Irecv + MPI_Wait;
 *   recv    MPI_Recv (which does not take its message straight from the ring with threads);
 *   probe   MPI_Probe, then MPI_Recv.
 * Both ranks of a pair take turns at waiting. Checks: no late wake-up (MPI_T progress_late_wakeups, which counts a wait whose
 * condition held right after a sleep that ran out at the cap), and the waiter did sleep
 * (progress_sleeps, at least once: on a loaded host a wait may end within its spin or yield),
 * so the check cannot pass by never sleeping.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "mftest.h"

/* LINGER_MS: longer than the 100 ms cap after DELAY_MS, so that a sleeper nobody wakes runs
 * into the cap before the sending thread's MPI_Wait makes a pass. */
enum { DELAY_MS = 30, LINGER_MS = 120, ROUNDS = 3 };

enum kind { GREQ, CANCEL, SELF, ISEND, WAIT, RECV, PROBE };
static const char *const kind_names[] = {"greq", "cancel", "self", "isend",
                                         "wait", "recv",   "probe"};

static MPI_Request shared_req;
static enum kind kind;
static int rank, size;
static atomic_int polling;

static int greq_query(void *state, MPI_Status *st)
{
    (void)state;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *state)
{
    (void)state;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

static void *complete_later(void *arg)
{
    (void)arg;
    struct timespec d = {0, DELAY_MS * 1000000L};
    nanosleep(&d, NULL);
    int v = 42;
    if (kind == CANCEL)
        MF_CHECK_MPI(MPI_Cancel(&shared_req));
    else if (kind == GREQ)
        MF_CHECK_MPI(MPI_Grequest_complete(shared_req));
    else if (kind == SELF)
        MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, rank, 777, MPI_COMM_WORLD));
    else {
        MPI_Request rq;
        MF_CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, rank, 777, MPI_COMM_WORLD, &rq));
        struct timespec linger = {0, LINGER_MS * 1000000L};
        nanosleep(&linger, NULL);
        MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    return NULL;
}

/* The second thread of the waiting rank in the partner rounds: passes of its own. */
static void *poll_meanwhile(void *arg)
{
    (void)arg;
    int flag;
    while (atomic_load(&polling))
        MF_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    return NULL;
}

/* One partner round: `waiter` waits for a message its partner sends DELAY_MS later. */
static void partner_round(enum kind k, int waiter, int r)
{
    int partner = rank ^ 1, v = 0;
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (partner >= size)
        return;
    if (rank != waiter) {
        struct timespec d = {0, DELAY_MS * 1000000L};
        nanosleep(&d, NULL);
        v = 100 + r;
        MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD));
        return;
    }
    atomic_store(&polling, 1);
    pthread_t t;
    MF_CHECK(pthread_create(&t, NULL, poll_meanwhile, NULL) == 0, "pthread_create");
    if (k == WAIT) {
        MPI_Request rq;
        MF_CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &rq));
        MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        if (k == PROBE)
            MF_CHECK_MPI(MPI_Probe(partner, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    atomic_store(&polling, 0);
    pthread_join(t, NULL);
    MF_CHECK(v == 100 + r, "%s round %d: received %d", kind_names[k], r, v);
}

static void rounds(enum kind k)
{
    const char *what = kind_names[k];
    kind = k;
    mftest_counter late, sleeps;
    mftest_counter_open(&late, "progress_late_wakeups");
    mftest_counter_open(&sleeps, "progress_sleeps");
    unsigned long long late0 = mftest_counter_read(&late), sleeps0 = mftest_counter_read(&sleeps);
    for (int r = 0; r < ROUNDS && k >= WAIT; r++) {
        partner_round(k, rank & ~1, r);       /* the even rank waits */
        partner_round(k, (rank & ~1) + 1, r); /* then the odd one */
    }
    for (int r = 0; r < ROUNDS && k < WAIT; r++) {
        int buf = 0;
        if (k == CANCEL)
            MF_CHECK_MPI(
                MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &shared_req));
        else if (k == SELF || k == ISEND)
            MF_CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, rank, 777, MPI_COMM_WORLD, &shared_req));
        else
            MF_CHECK_MPI(MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &shared_req));
        pthread_t t;
        MF_CHECK(pthread_create(&t, NULL, complete_later, NULL) == 0, "pthread_create");
        MPI_Status st;
        MF_CHECK_MPI(MPI_Wait(&shared_req, &st));
        pthread_join(t, NULL);
        if (k == CANCEL) {
            int cancelled = 0;
            MPI_Test_cancelled(&st, &cancelled);
            MF_CHECK(cancelled, "%s round %d: the receive was not cancelled", what, r);
        }
        if (k == SELF || k == ISEND)
            MF_CHECK(buf == 42, "%s round %d: received %d", what, r, buf);
    }
    unsigned long long nlate = mftest_counter_read(&late) - late0;
    unsigned long long nsleeps = mftest_counter_read(&sleeps) - sleeps0;
    MF_CHECK(nlate == 0, "%s: %llu late wake-ups in %d rounds: the waiter was not woken", what,
             nlate, ROUNDS);
    if (k < WAIT || (rank ^ 1) < size) /* else it had no partner: no waits */
        MF_CHECK(nsleeps >= 1, "%s: no sleep in %d waits of %d ms", what, ROUNDS, DELAY_MS);
    mftest_counter_close(&late);
    mftest_counter_close(&sleeps);
}

int main(int argc, char **argv)
{
    int provided;
    MF_CHECK_MPI(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MF_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (enum kind k = GREQ; k <= PROBE; k++)
        rounds(k);
    int errs = mftest_finish();
    MPI_T_finalize();
    return errs;
}
