/*
 * MPI_Cancel of sends (MPI-4.0 3.8.4): either the cancel succeeds and the receiver never sees
 * the message, or the send completes normally and the message is received — never both.
 * Where the outcome is certain it is checked too:
 *   - a rendezvous send the receiver has not matched is cancelled (its RTS waits unmatched);
 *   - an eager send still queued at the sender (the receiver, asleep, left the queue full) is
 *     cancelled, also when the fabric has copied it and the request is complete locally;
 *   - a send the receiver has matched and received is not;
 *   - nor an eager send a blocking receive already waits for (the receive is posted in MPI's
 *     terms, even where it waits without a request: with the progress thread, a pass could
 *     queue the message and then honour the cancel that follows it in one go).
 * Ranks pair up (0-1, 2-3, ...); the sender tells the receiver the outcome, and the receiver
 * checks that nothing of a cancelled message remains while the others arrive intact.
 * Sends to the own rank, probed but not received, are cancelled by the time MPI_Cancel returns:
 * MPI_Request_get_status says complete and cancelled at once, as with MPICH and Open MPI
 * (mpi4py's tests receive the message when the status right after the cancel says otherwise).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define BIG (1 << 20) /* bytes: rendezvous on every fabric */
#define SMALL 1000    /* bytes: eager on every fabric */
#define FLOOD_BYTES 60000
#define FLOOD_COUNT 300 /* 18 MB of eager frames: more than shm rings and socket buffers hold */
#define TAG_NOTE 99

static int rank, size;
static char *big, *flood;

enum expect { MUST_CANCEL, MUST_NOT_CANCEL, EITHER };

static void fill(char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(seed + i * 7);
}

static int filled(const char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (char)(seed + i * 7))
            return 0;
    return 1;
}

/* Sender: cancels r (a send of n bytes with `tag`), waits, tells the receiver the outcome. */
static void sender_cancel(MPI_Request *r, int peer, int tag, enum expect ex, const char *what)
{
    MPI_Status st;
    int cancelled = -1;
    MF_CHECK_MPI(MPI_Cancel(r));
    MF_CHECK_MPI(MPI_Wait(r, &st));
    MF_CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    if (ex == MUST_CANCEL)
        MF_CHECK(cancelled, "%s: the send was not cancelled", what);
    else if (ex == MUST_NOT_CANCEL)
        MF_CHECK(!cancelled, "%s: a matched send was cancelled", what);
    int note[2] = {tag, cancelled};
    MF_CHECK_MPI(MPI_Send(note, 2, MPI_INT, peer, TAG_NOTE, MPI_COMM_WORLD));
}

/* Receiver: learns the outcome; a cancelled message must not be there, any other arrives. */
static void receiver_check(int peer, int n, int seed, const char *what)
{
    int note[2];
    MF_CHECK_MPI(MPI_Recv(note, 2, MPI_INT, peer, TAG_NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int flag = 1;
    if (note[1]) {
        MF_CHECK_MPI(MPI_Iprobe(peer, note[0], MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MF_CHECK(!flag, "%s: a cancelled message arrived", what);
        return;
    }
    char *b = malloc((size_t)n);
    MF_CHECK_MPI(MPI_Recv(b, n, MPI_CHAR, peer, note[0], MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK(filled(b, n, seed), "%s: the message that was not cancelled is wrong", what);
    free(b);
}

/* An unmatched send: the receiver has posted nothing for it. */
static void unmatched(int peer, int sender, int n, int tag, enum expect ex, const char *what)
{
    if (sender) {
        MPI_Request r;
        fill(big, n, tag);
        MF_CHECK_MPI(MPI_Isend(big, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r));
        sender_cancel(&r, peer, tag, ex, what);
    } else {
        receiver_check(peer, n, tag, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A send the receiver has matched and received before the cancel. */
static void matched(int peer, int sender, int n, int tag, const char *what)
{
    if (sender) {
        MPI_Request r;
        fill(big, n, tag);
        MF_CHECK_MPI(MPI_Issend(big, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r));
        int done;
        MF_CHECK_MPI(
            MPI_Recv(&done, 1, MPI_INT, peer, TAG_NOTE + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        sender_cancel(&r, peer, tag, MUST_NOT_CANCEL, what);
    } else {
        char *b = malloc((size_t)n);
        MF_CHECK_MPI(MPI_Recv(b, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(filled(b, n, tag), "%s: data", what);
        free(b);
        int done = 1;
        MF_CHECK_MPI(MPI_Send(&done, 1, MPI_INT, peer, TAG_NOTE + 1, MPI_COMM_WORLD));
        int note[2];
        MF_CHECK_MPI(MPI_Recv(note, 2, MPI_INT, peer, TAG_NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* An eager send for which the receiver already waits in MPI_Recv (given a head start). */
static void awaited(int peer, int sender, int tag, const char *what)
{
    if (sender) {
        usleep(200000);
        MPI_Request r;
        fill(big, SMALL, tag);
        MF_CHECK_MPI(MPI_Isend(big, SMALL, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r));
        sender_cancel(&r, peer, tag, MUST_NOT_CANCEL, what);
    } else {
        char b[SMALL];
        MF_CHECK_MPI(MPI_Recv(b, SMALL, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(filled(b, SMALL, tag), "%s: data", what);
        int note[2];
        MF_CHECK_MPI(MPI_Recv(note, 2, MPI_INT, peer, TAG_NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* An eager send queued behind a flood the sleeping receiver has not drained. */
static void queued_eager(int peer, int sender, int tag, int sync, const char *what)
{
    MPI_Request fr[FLOOD_COUNT];
    if (sender) {
        for (int i = 0; i < FLOOD_COUNT; i++)
            MF_CHECK_MPI(MPI_Isend(flood, FLOOD_BYTES, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &fr[i]));
        MPI_Request r;
        fill(big, SMALL, tag);
        if (sync)
            MF_CHECK_MPI(MPI_Issend(big, SMALL, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r));
        else
            MF_CHECK_MPI(MPI_Isend(big, SMALL, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r));
        /* Locally complete or not (a fabric may have copied it), it is not matched. */
        sender_cancel(&r, peer, tag, MUST_CANCEL, what);
        MF_CHECK_MPI(MPI_Waitall(FLOOD_COUNT, fr, MPI_STATUSES_IGNORE));
    } else {
        usleep(500000); /* no progress: the sender's queue stays full */
        char *b = malloc(FLOOD_BYTES);
        for (int i = 0; i < FLOOD_COUNT; i++)
            MF_CHECK_MPI(
                MPI_Recv(b, FLOOD_BYTES, MPI_CHAR, peer, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        free(b);
        receiver_check(peer, SMALL, tag, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A send to the own rank, probed, then cancelled: complete and cancelled at once. */
static void to_self(int n, int tag, const char *what)
{
    MPI_Request r;
    MPI_Status st;
    int flag = 0, cancelled = 0;
    MF_CHECK_MPI(MPI_Issend(big, n, MPI_CHAR, rank, tag, MPI_COMM_WORLD, &r));
    MF_CHECK_MPI(MPI_Probe(rank, tag, MPI_COMM_WORLD, &st));
    MF_CHECK_MPI(MPI_Cancel(&r));
    MF_CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    MF_CHECK(flag, "%s: not complete right after MPI_Cancel", what);
    MF_CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    MF_CHECK(cancelled, "%s: not cancelled", what);
    MF_CHECK_MPI(MPI_Iprobe(rank, tag, MPI_COMM_WORLD, &flag, &st));
    MF_CHECK(!flag, "%s: the cancelled message can still be probed", what);
    MF_CHECK_MPI(MPI_Wait(&r, &st));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    big = malloc(BIG);
    flood = calloc(1, FLOOD_BYTES);
    int paired = rank < size - size % 2;
    int peer = rank ^ 1, sender = rank % 2 == 0;
    if (!paired) { /* the odd one out only joins the barriers */
        peer = MPI_PROC_NULL;
        sender = -1;
    }
#define RUN(call)                                                                                  \
    do {                                                                                           \
        if (paired)                                                                                \
            call;                                                                                  \
        else                                                                                       \
            MPI_Barrier(MPI_COMM_WORLD);                                                           \
    } while (0)
    RUN(unmatched(peer, sender, BIG, 1, MUST_CANCEL, "unmatched rendezvous"));
    RUN(matched(peer, sender, BIG, 2, "matched rendezvous"));
    RUN(matched(peer, sender, SMALL, 3, "matched eager"));
    RUN(awaited(peer, sender, 7, "awaited eager"));
    RUN(queued_eager(peer, sender, 4, 0, "queued eager"));
    RUN(queued_eager(peer, sender, 5, 1, "queued synchronous eager"));
    /* A small send the fabric may have delivered already: either outcome, consistently. */
    RUN(unmatched(peer, sender, SMALL, 6, EITHER, "delivered eager"));
    to_self(0, 10, "empty send to self");
    to_self(SMALL, 11, "eager send to self");
    to_self(BIG, 12, "rendezvous send to self");
    free(big);
    free(flood);
    return mftest_finish();
}
