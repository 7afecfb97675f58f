/*
 * Blocking receives from a named source take the fabric's direct path where it has one (shm):
 * every way out of that path must keep MPI's matching rules. Pairs of ranks (2k, 2k+1) check:
 * a frame of another tag ahead of ours (queued as unexpected, then received in order), a
 * receive posted earlier that must match first, MPI_ANY_TAG, a synchronous send, a rendezvous
 * message, truncation (class, count and status), a message that arrived before the receive,
 * and a zero-byte message; then sends that finish as they start (MPI_Isend's shared request)
 * through every completion call. Odd process counts leave the last rank out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = rank ^ 1;
    if (peer >= size)
        return mftest_finish();
    int v = 0, w = 0;
    MPI_Status st;
    char *big = malloc(BIG);
    MF_CHECK(big != NULL, "malloc");

    for (int round = 0; round < 50; round++) {
        if (rank % 2 == 0) {
            /* 1. Tag 5 then tag 7; the receiver asks for 7 first. */
            v = 5;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
            v = 7;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
            /* 2. Two messages with tag 3: the earlier Irecv of the receiver takes the first. */
            for (v = 30; v < 32; v++)
                MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
            /* 3. MPI_ANY_TAG, 4. Ssend, 5. rendezvous. */
            v = 42;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD));
            v = 43;
            MF_CHECK_MPI(MPI_Ssend(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD));
            memset(big, round & 0x7f, BIG);
            MF_CHECK_MPI(MPI_Send(big, BIG, MPI_CHAR, peer, 13, MPI_COMM_WORLD));
            /* 6. Truncation: 3 ints into a buffer of 2. */
            int three[3] = {1, 2, 3};
            MF_CHECK_MPI(MPI_Send(three, 3, MPI_INT, peer, 14, MPI_COMM_WORLD));
            /* 7. Sent before the receiver posts anything (it waits for our go first). */
            v = 70;
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 15, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Send(&v, 0, MPI_INT, peer, 16, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 17, MPI_COMM_WORLD)); /* go */
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 18, MPI_COMM_WORLD, &st));
            MF_CHECK(w == round, "round echo %d, expected %d", w, round);
        } else {
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &st));
            MF_CHECK(w == 7 && st.MPI_TAG == 7 && st.MPI_SOURCE == peer, "tag 7: got %d", w);
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &st));
            MF_CHECK(w == 5 && st.MPI_TAG == 5, "tag 5: got %d", w);

            MPI_Request rq;
            int first = -1;
            MF_CHECK_MPI(MPI_Irecv(&first, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &rq));
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &st));
            MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MF_CHECK(first == 30 && w == 31, "posted order: irecv %d recv %d", first, w);

            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MF_CHECK(w == 42 && st.MPI_TAG == 11, "any tag: %d tag %d", w, st.MPI_TAG);
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &st));
            MF_CHECK(w == 43, "ssend: %d", w);
            MF_CHECK_MPI(MPI_Recv(big, BIG, MPI_CHAR, peer, 13, MPI_COMM_WORLD, &st));
            int n;
            MPI_Get_count(&st, MPI_CHAR, &n);
            MF_CHECK(n == BIG && big[0] == (round & 0x7f) && big[BIG - 1] == (round & 0x7f),
                     "rendezvous: %d bytes", n);

            int two[2] = {0, 0};
            int rc = MPI_Recv(two, 2, MPI_INT, peer, 14, MPI_COMM_WORLD, &st);
            int cls;
            MPI_Error_class(rc, &cls);
            MPI_Get_count(&st, MPI_INT, &n);
            MF_CHECK(cls == MPI_ERR_TRUNCATE && n == 2 && two[0] == 1 && two[1] == 2,
                     "truncation: class %d count %d", cls, n);

            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 17, MPI_COMM_WORLD, &st)); /* go */
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 15, MPI_COMM_WORLD, &st));
            MF_CHECK(w == 70, "early message: %d", w);
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 16, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_INT, &n);
            MF_CHECK(n == 0 && st.MPI_TAG == 16, "empty message: count %d", n);
            MF_CHECK_MPI(MPI_Send(&round, 1, MPI_INT, peer, 18, MPI_COMM_WORLD));
        }
    }
    /* Immediate sends (MPI_Isend finished as it starts, a shared request on shm): every
     * completion call must treat each handle as its own, finished request. */
    if (rank % 2 == 0) {
        int vals[6] = {1, 2, 3, 4, 5, 6};
        MPI_Request rq[6];
        for (int i = 0; i < 6; i++)
            MF_CHECK_MPI(MPI_Isend(&vals[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rq[i]));
        int flag = 0, idx = -1, outcount = 0, indices[6];
        MF_CHECK_MPI(MPI_Request_get_status(rq[0], &flag, &st));
        MF_CHECK(flag == 1, "get_status: not complete");
        MF_CHECK_MPI(MPI_Cancel(&rq[0]));
        MF_CHECK_MPI(MPI_Wait(&rq[0], &st));
        MPI_Test_cancelled(&st, &flag);
        MF_CHECK(flag == 0 && rq[0] == MPI_REQUEST_NULL, "cancelled send, or handle not null");
        MF_CHECK_MPI(MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE));
        MF_CHECK(flag == 1 && rq[1] == MPI_REQUEST_NULL, "test: flag %d", flag);
        MF_CHECK_MPI(MPI_Request_free(&rq[2]));
        MF_CHECK(rq[2] == MPI_REQUEST_NULL, "request_free left the handle");
        MF_CHECK_MPI(MPI_Waitany(6, rq, &idx, MPI_STATUS_IGNORE));
        MF_CHECK(idx == 3 && rq[3] == MPI_REQUEST_NULL, "waitany: index %d", idx);
        MF_CHECK_MPI(MPI_Testsome(6, rq, &outcount, indices, MPI_STATUSES_IGNORE));
        MF_CHECK(outcount == 2 && indices[0] == 4 && indices[1] == 5, "testsome: %d", outcount);
        MF_CHECK_MPI(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
    } else {
        for (int i = 0; i < 6; i++) {
            MF_CHECK_MPI(MPI_Recv(&w, 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &st));
            MF_CHECK(w == i + 1, "immediate send %d: got %d", i, w);
        }
    }
    free(big);
    return mftest_finish();
}
