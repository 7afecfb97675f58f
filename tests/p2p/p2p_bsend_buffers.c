/*
 * MPI-4.1's buffers for buffered sends: attached to a communicator, to a session, or to the
 * process (MPI_Buffer_attach), in that order of precedence; MPI_BUFFER_AUTOMATIC; flush and
 * iflush; freeing a communicator that has one. Ranks work in pairs (rank ^ 1); an odd last rank
 * only runs the local checks.
 *
 * Large messages (1 MiB, sent by rendezvous on every fabric) stay in a buffer until the partner
 * receives them, which it does only when told to: so an iflush's request must not complete
 * before that, and must complete after.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define BIG (1 << 20)
#define NBIG 4

static int rank, size, partner;

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7 + (size_t)seed);
}

static int bad_bytes(const unsigned char *b, size_t n, int seed)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != (unsigned char)(i * 7 + (size_t)seed);
    return bad;
}

/* The partner with the lower rank sends NBIG big messages on comm through whatever buffer
 * applies, checks that `flush` (an iflush starter) does not complete before the other receives
 * them, then tells it to; the other receives and checks them. */
static void big_exchange(MPI_Comm comm, int (*iflush)(MPI_Comm, MPI_Request *), const char *what)
{
    unsigned char *b = malloc(BIG);
    if (rank < partner) {
        for (int i = 0; i < NBIG; i++) {
            fill(b, BIG, i);
            MF_CHECK_MPI(MPI_Bsend(b, BIG, MPI_BYTE, partner, i, comm));
        }
        memset(b, 0, BIG); /* the messages are in the buffer */
        MPI_Request rq;
        int flag = 1;
        MF_CHECK_MPI(iflush(comm, &rq));
        for (int k = 0; k < 100; k++)
            MF_CHECK_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        MF_CHECK(!flag, "%s: the iflush completed before the messages were received", what);
        MF_CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, partner, 99, MPI_COMM_WORLD));
        MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < NBIG; i++) {
            MF_CHECK_MPI(MPI_Recv(b, BIG, MPI_BYTE, partner, i, comm, MPI_STATUS_IGNORE));
            MF_CHECK(!bad_bytes(b, BIG, i), "%s: message %d arrived changed", what, i);
        }
    }
    free(b);
}

static int comm_iflush(MPI_Comm comm, MPI_Request *rq)
{
    return MPI_Comm_iflush_buffer(comm, rq);
}

static int process_iflush(MPI_Comm comm, MPI_Request *rq)
{
    return MPI_Buffer_iflush(rq);
}

static MPI_Session session_for_iflush;
static int session_iflush(MPI_Comm comm, MPI_Request *rq)
{
    return MPI_Session_iflush_buffer(session_for_iflush, rq);
}

/* A communicator's buffer, attached and automatic; no process buffer meanwhile. */
static void comm_buffers(void)
{
    MPI_Comm dup;
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int one = 7;
    MF_CHECK_CLASS(MPI_Bsend(&one, 1, MPI_INT, rank, 0, dup), MPI_ERR_BUFFER,
                   "a buffered send with no buffer anywhere");

    int len = 4 * (64 + MPI_BSEND_OVERHEAD);
    char *mem = malloc((size_t)len);
    MF_CHECK_MPI(MPI_Comm_attach_buffer(dup, mem, len));
    MF_CHECK_CLASS(MPI_Comm_attach_buffer(dup, mem, len), MPI_ERR_BUFFER, "a second attach");
    MF_CHECK_MPI(MPI_Bsend(&one, 1, MPI_INT, rank, 5, dup)); /* to itself, through dup's buffer */
    MF_CHECK_CLASS(MPI_Bsend(&one, 1, MPI_INT, rank, 5, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                   "the world's buffered send must not take dup's buffer");
    int got = 0;
    MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, rank, 5, dup, MPI_STATUS_IGNORE));
    MF_CHECK(got == 7, "received %d through dup's buffer", got);
    MF_CHECK_MPI(MPI_Comm_flush_buffer(dup));
    void *back = NULL;
    int backlen = 0;
    MF_CHECK_MPI(MPI_Comm_detach_buffer(dup, &back, &backlen));
    MF_CHECK(back == mem && backlen == len, "detach gave %p/%d, attached %p/%d", back, backlen,
             (void *)mem, len);
    MF_CHECK_CLASS(MPI_Comm_detach_buffer(dup, &back, &backlen), MPI_ERR_BUFFER,
                   "a detach with nothing attached");
    free(mem);

    /* Automatic: 4 MiB of messages without a buffer of that size, flushed with iflush. */
    MF_CHECK_MPI(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    if (partner < size)
        big_exchange(dup, comm_iflush, "automatic communicator buffer");
    MPI_Count backc = -1;
    MF_CHECK_MPI(MPI_Comm_detach_buffer_c(dup, &back, &backc));
    MF_CHECK(back == MPI_BUFFER_AUTOMATIC && backc == 0,
             "detach of the automatic buffer gave %p/%lld", back, (long long)backc);

    /* Freeing a communicator with a buffer waits for its messages (then takes the buffer off). */
    if (partner < size) {
        char *m2 = malloc(BIG + MPI_BSEND_OVERHEAD);
        unsigned char *b = malloc(BIG);
        MF_CHECK_MPI(MPI_Comm_attach_buffer(dup, m2, BIG + MPI_BSEND_OVERHEAD));
        if (rank < partner) {
            fill(b, BIG, 42);
            MF_CHECK_MPI(MPI_Bsend(b, BIG, MPI_BYTE, partner, 1, dup));
        } else {
            MF_CHECK_MPI(MPI_Recv(b, BIG, MPI_BYTE, partner, 1, dup, MPI_STATUS_IGNORE));
            MF_CHECK(!bad_bytes(b, BIG, 42), "the message sent before the free arrived changed");
        }
        MF_CHECK_MPI(MPI_Comm_free(&dup));
        memset(m2, 0, BIG + MPI_BSEND_OVERHEAD); /* ours again */
        free(m2);
        free(b);
    } else {
        MF_CHECK_MPI(MPI_Comm_free(&dup));
    }
}

/* The process's buffer: MPI_Buffer_flush and _iflush. */
static void process_buffer(void)
{
    MPI_Request rq;
    int flag = 0;
    MF_CHECK_MPI(MPI_Buffer_iflush(&rq)); /* nothing attached: done at once */
    MF_CHECK_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    MF_CHECK(flag, "an iflush with no buffer did not complete at once");
    MF_CHECK_MPI(MPI_Buffer_flush());
    int len = NBIG * (BIG + MPI_BSEND_OVERHEAD);
    char *mem = malloc((size_t)len);
    MF_CHECK_MPI(MPI_Buffer_attach(mem, len));
    if (partner < size)
        big_exchange(MPI_COMM_WORLD, process_iflush, "process buffer");
    MF_CHECK_MPI(MPI_Buffer_flush());
    void *back;
    int backlen;
    MF_CHECK_MPI(MPI_Buffer_detach(&back, &backlen));
    MF_CHECK(back == mem && backlen == len, "MPI_Buffer_detach gave another buffer");
    free(mem);
    MF_CHECK_CLASS(MPI_Buffer_iflush(NULL), MPI_ERR_ARG, "MPI_Buffer_iflush(NULL)");
}

/* A session's buffer serves the communicators made from its groups, and their duplicates. */
static void session_buffer(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc, sdup;
    MF_CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MF_CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MF_CHECK_MPI(
        MPI_Comm_create_from_group(g, "p2p_bsend_buffers", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    MF_CHECK_MPI(MPI_Group_free(&g));
    MF_CHECK_MPI(MPI_Comm_dup(sc, &sdup));
    int len = 2 * (64 + MPI_BSEND_OVERHEAD), one = 11, got = 0;
    char *mem = malloc((size_t)len);
    MF_CHECK_MPI(MPI_Session_attach_buffer(s, mem, len));
    MF_CHECK_MPI(MPI_Bsend(&one, 1, MPI_INT, rank, 3, sdup)); /* a duplicate derives too */
    MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, rank, 3, sdup, MPI_STATUS_IGNORE));
    MF_CHECK(got == 11, "received %d through the session's buffer", got);
    MF_CHECK_CLASS(MPI_Bsend(&one, 1, MPI_INT, rank, 3, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                   "the world's buffered send must not take the session's buffer");
    MF_CHECK_MPI(MPI_Session_flush_buffer(s));
    void *back;
    int backlen;
    MF_CHECK_MPI(MPI_Session_detach_buffer(s, &back, &backlen));
    MF_CHECK(back == mem && backlen == len, "MPI_Session_detach_buffer gave another buffer");
    free(mem);
    MF_CHECK_MPI(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0));
    session_for_iflush = s;
    if (partner < size)
        big_exchange(sc, session_iflush, "automatic session buffer");
    MF_CHECK_MPI(MPI_Comm_free(&sdup));
    MF_CHECK_MPI(MPI_Comm_free(&sc));
    MF_CHECK_MPI(MPI_Session_finalize(&s)); /* detaches the automatic buffer */
    MF_CHECK_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, NULL, 0), MPI_ERR_SESSION,
                   "attach to MPI_SESSION_NULL");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    partner = rank ^ 1;
    comm_buffers();
    process_buffer();
    session_buffer();
    return mftest_finish();
}
