/*
 * MPI-4.1's MPI_Request_get_status_all, _any and _some: they report as MPI_Testall, _any and
 * _some do, but leave every request as it was, so the same requests can be asked again and are
 * completed (freed) by MPI_Waitall afterwards.
 *
 * Each rank posts receives from its left neighbour (one matched at once, one only after the
 * first round of checks), a send, a null request and an inactive persistent request; and a
 * generalized request, which the rank completes itself, whose query function reports an error
 * in its status: the array forms then return MPI_ERR_IN_STATUS, and the query runs at every
 * call while the free function runs only once, at the final wait. Also the answers for arrays
 * with no active request, and the argument errors.
 *
 * Built with the mpicc of the mpich 5.0.2 wheel, the one-process run passes on MPICH as well;
 * with two processes MPICH's MPI_Request_get_status_some never makes progress, so the first
 * loop spins.
 */
#include <string.h>

#include "mftest.h"

#define GREQ_ERROR MPI_ERR_OTHER

static int queries, frees;

static int greq_query(void *state, MPI_Status *st)
{
    queries++;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = GREQ_ERROR;
    return GREQ_ERROR; /* the operation failed */
}

static int error_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static int greq_free(void *state)
{
    frees++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete)
{
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* generalized requests' errors */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int early = -1, late = -1, out[2] = {rank, rank + 100};

    /* [0] receive matched at once, [1] send, [2] null, [3] inactive persistent, [4] receive
     * matched later */
    MPI_Request rq[5];
    MF_CHECK_MPI(MPI_Irecv(&early, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
    MF_CHECK_MPI(MPI_Isend(&out[0], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[1]));
    rq[2] = MPI_REQUEST_NULL;
    MF_CHECK_MPI(MPI_Recv_init(&late, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[3]));
    MF_CHECK_MPI(MPI_Irecv(&late, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[4]));
    MPI_Request copy[5];
    memcpy(copy, rq, sizeof rq);

    /* Until the first two are done, _some reports them (and no other) without freeing. */
    int outcount = 0, idx[5], flag = 0;
    MPI_Status st[5];
    for (int seen = 0; seen < 2;) {
        MF_CHECK_MPI(MPI_Request_get_status_some(5, rq, &outcount, idx, st));
        seen = outcount;
        for (int i = 0; i < outcount; i++)
            MF_CHECK(idx[i] == 0 || idx[i] == 1, "get_status_some reported request %d", idx[i]);
    }
    MF_CHECK(memcmp(copy, rq, sizeof rq) == 0, "get_status_some changed the handles");
    MF_CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1 && mftest_count(&st[0], MPI_INT) == 1,
             "the receive's status: source %d tag %d", st[0].MPI_SOURCE, st[0].MPI_TAG);
    MF_CHECK(early == left, "received %d, expected %d", early, left);
    /* _all: not all done while [4] waits for its message. */
    MF_CHECK_MPI(MPI_Request_get_status_all(5, rq, &flag, MPI_STATUSES_IGNORE));
    MF_CHECK(!flag, "get_status_all says done before the late message was sent");
    /* _any gives the first done one, again and again: it stays. */
    for (int k = 0; k < 3; k++) {
        int index = -1;
        MPI_Status one;
        MF_CHECK_MPI(MPI_Request_get_status_any(5, rq, &index, &flag, &one));
        MF_CHECK(flag && index == 0 && one.MPI_SOURCE == left,
                 "get_status_any: flag %d index %d source %d", flag, index, one.MPI_SOURCE);
    }
    MF_CHECK(memcmp(copy, rq, sizeof rq) == 0, "get_status_any changed the handles");

    /* Now the late message, once every rank checked the above: everything completes; the
     * statuses say so, the handles stay. */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request late_send;
    MF_CHECK_MPI(MPI_Isend(&out[1], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &late_send));
    for (flag = 0; !flag;)
        MF_CHECK_MPI(MPI_Request_get_status_all(5, rq, &flag, st));
    MF_CHECK(st[4].MPI_SOURCE == left && st[4].MPI_TAG == 2, "late status: source %d tag %d",
             st[4].MPI_SOURCE, st[4].MPI_TAG);
    MF_CHECK(st[2].MPI_SOURCE == MPI_ANY_SOURCE && st[3].MPI_TAG == MPI_ANY_TAG,
             "null/inactive requests must give empty statuses");
    MF_CHECK(memcmp(copy, rq, sizeof rq) == 0, "get_status_all changed the handles");
    MF_CHECK_MPI(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
    MF_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL && rq[4] == MPI_REQUEST_NULL &&
                 rq[3] != MPI_REQUEST_NULL,
             "Waitall after the get_status calls did not free the requests");
    MF_CHECK(late == left + 100, "late message %d, expected %d", late, left + 100);
    MF_CHECK_MPI(MPI_Wait(&late_send, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Request_free(&rq[3]));

    /* Nothing active: _any says flag with MPI_UNDEFINED, _some MPI_UNDEFINED, _all flag. */
    MPI_Request none[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int index = 0;
    MF_CHECK_MPI(MPI_Request_get_status_any(2, none, &index, &flag, MPI_STATUS_IGNORE));
    MF_CHECK(flag && index == MPI_UNDEFINED, "any over nothing: flag %d index %d", flag, index);
    MF_CHECK_MPI(MPI_Request_get_status_some(2, none, &outcount, idx, MPI_STATUSES_IGNORE));
    MF_CHECK(outcount == MPI_UNDEFINED, "some over nothing: outcount %d", outcount);
    MF_CHECK_MPI(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    MF_CHECK(flag, "all over nothing: flag %d", flag);

    /* A generalized request whose operation failed: the error shows in every form, the query
     * runs each time, the free only at the end. */
    MPI_Request g[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MF_CHECK_MPI(MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g[0]));
    MF_CHECK_MPI(MPI_Request_get_status_all(1, g, &flag, st));
    MF_CHECK(!flag && queries == 0, "an incomplete generalized request: flag %d, %d queries", flag,
             queries);
    MF_CHECK_MPI(MPI_Grequest_complete(g[0]));
    int rc = MPI_Request_get_status_all(2, g, &flag, st);
    MF_CHECK(rc == MPI_ERR_IN_STATUS && flag && error_class(st[0].MPI_ERROR) == GREQ_ERROR &&
                 st[1].MPI_ERROR == MPI_SUCCESS,
             "get_status_all: rc %d flag %d errors %d %d", rc, flag, st[0].MPI_ERROR,
             st[1].MPI_ERROR);
    rc = MPI_Request_get_status_some(2, g, &outcount, idx, st);
    MF_CHECK(rc == MPI_ERR_IN_STATUS && outcount == 1 && idx[0] == 0 &&
                 error_class(st[0].MPI_ERROR) == GREQ_ERROR,
             "get_status_some: rc %d outcount %d error %d", rc, outcount, st[0].MPI_ERROR);
    rc = MPI_Request_get_status_any(2, g, &index, &flag, &st[0]);
    MF_CHECK(error_class(rc) == GREQ_ERROR && flag && index == 0,
             "get_status_any: rc %d flag %d index %d", rc, flag, index);
    rc = MPI_Request_get_status(g[0], &flag, &st[0]);
    MF_CHECK(error_class(rc) == GREQ_ERROR && flag, "get_status: rc %d flag %d", rc, flag);
    MF_CHECK(queries >= 4 && frees == 0, "%d queries and %d frees before the wait", queries, frees);
    MF_CHECK(error_class(MPI_Wait(&g[0], MPI_STATUS_IGNORE)) == GREQ_ERROR &&
                 g[0] == MPI_REQUEST_NULL,
             "the wait must report the error and free the request");
    MF_CHECK(frees == 1, "%d frees after the wait", frees);

    /* Bad arguments, named. */
    MF_CHECK_CLASS(MPI_Request_get_status_all(1, none, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG,
                   "all without flag");
    MF_CHECK_CLASS(MPI_Request_get_status_any(1, none, &index, NULL, MPI_STATUS_IGNORE),
                   MPI_ERR_ARG, "any without flag");
    MF_CHECK_CLASS(MPI_Request_get_status_some(1, none, NULL, idx, MPI_STATUSES_IGNORE),
                   MPI_ERR_ARG, "some without outcount");
    MF_CHECK_CLASS(MPI_Request_get_status_all(-1, none, &flag, MPI_STATUSES_IGNORE), MPI_ERR_COUNT,
                   "a negative count");
    MPI_Request bogus = (MPI_Request)0x12345;
    MF_CHECK_CLASS(MPI_Request_get_status_any(1, &bogus, &index, &flag, MPI_STATUS_IGNORE),
                   MPI_ERR_REQUEST, "an invalid request");
    return mftest_finish();
}
