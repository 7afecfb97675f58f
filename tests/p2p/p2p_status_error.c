/*
 * Calls that return one status never write its MPI_ERROR field (MPI-4.0 section 3.2.5): probes
 * (also matched ones), receives on every path (direct, through a request, rendezvous, from
 * MPI_PROC_NULL), waits and tests, MPI_Request_get_status, MPI_Sendrecv. The field is set to
 * a sentinel before each call and must still hold it after.
 */
#include <stdlib.h>

#include "mftest.h"

#define SENTINEL MPI_ERR_DIMS

static int rank, size;

static void fresh(MPI_Status *st)
{
    st->MPI_SOURCE = -5;
    st->MPI_TAG = -5;
    st->MPI_ERROR = SENTINEL;
}

#define KEPT(st, what)                                                                             \
    MF_CHECK((st).MPI_ERROR == SENTINEL, "%s (%d ints) wrote MPI_ERROR=%d", what, n, (st).MPI_ERROR)

/* Rank 0 sends to rank 1 (or itself) n ints under several tags; the receiver probes and
 * receives them in different ways. */
static void one_size(int n)
{
    int peer = size > 1 ? 1 : 0;
    int *buf = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        buf[i] = i;
    MPI_Request sreq[8];
    int nsend = 0;
    if (rank == 0)
        for (int tag = 1; tag <= 8; tag++)
            MF_CHECK_MPI(MPI_Isend(buf, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &sreq[nsend++]));
    if (rank == peer) {
        MPI_Status st;
        int flag = 0;
        MPI_Message msg;
        MPI_Request rq;

        fresh(&st);
        MF_CHECK_MPI(MPI_Probe(0, 1, MPI_COMM_WORLD, &st));
        KEPT(st, "MPI_Probe");
        fresh(&st);
        do
            MF_CHECK_MPI(MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, &st));
        while (!flag);
        KEPT(st, "MPI_Iprobe");
        fresh(&st);
        MF_CHECK_MPI(MPI_Recv(in, n, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
        KEPT(st, "MPI_Recv");
        MF_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "MPI_Recv status source/tag");

        fresh(&st);
        MF_CHECK_MPI(MPI_Mprobe(0, 2, MPI_COMM_WORLD, &msg, &st));
        KEPT(st, "MPI_Mprobe");
        MF_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 2, "MPI_Mprobe status source/tag");
        fresh(&st);
        MF_CHECK_MPI(MPI_Mrecv(in, n, MPI_INT, &msg, &st));
        KEPT(st, "MPI_Mrecv");

        fresh(&st);
        do
            MF_CHECK_MPI(MPI_Improbe(0, 3, MPI_COMM_WORLD, &flag, &msg, &st));
        while (!flag);
        KEPT(st, "MPI_Improbe");
        MF_CHECK_MPI(MPI_Imrecv(in, n, MPI_INT, &msg, &rq));
        fresh(&st);
        MF_CHECK_MPI(MPI_Wait(&rq, &st));
        KEPT(st, "MPI_Wait after MPI_Imrecv");

        MF_CHECK_MPI(MPI_Irecv(in, n, MPI_INT, 0, 4, MPI_COMM_WORLD, &rq));
        fresh(&st);
        do
            MF_CHECK_MPI(MPI_Request_get_status(rq, &flag, &st));
        while (!flag);
        KEPT(st, "MPI_Request_get_status");
        fresh(&st);
        MF_CHECK_MPI(MPI_Test(&rq, &flag, &st));
        MF_CHECK(flag, "MPI_Test after get_status");
        KEPT(st, "MPI_Test");

        MF_CHECK_MPI(MPI_Irecv(in, n, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq));
        int index = -1;
        fresh(&st);
        MF_CHECK_MPI(MPI_Waitany(1, &rq, &index, &st));
        KEPT(st, "MPI_Waitany");

        /* Truncation: the call returns the error, the status keeps the sentinel. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        fresh(&st);
        int rc = MPI_Recv(in, n - 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &st);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        MF_CHECK(n == 1 || cls == MPI_ERR_TRUNCATE, "truncated MPI_Recv returned class %d", cls);
        if (n > 1)
            KEPT(st, "truncated MPI_Recv");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

        fresh(&st);
        MF_CHECK_MPI(MPI_Sendrecv(buf, 0, MPI_INT, MPI_PROC_NULL, 0, in, n, MPI_INT, 0, 7,
                                  MPI_COMM_WORLD, &st));
        KEPT(st, "MPI_Sendrecv");
        fresh(&st);
        MF_CHECK_MPI(MPI_Recv(in, n, MPI_INT, 0, 8, MPI_COMM_WORLD, &st));
        KEPT(st, "MPI_Recv");
    }
    if (rank == 0)
        MF_CHECK_MPI(MPI_Waitall(nsend, sreq, MPI_STATUSES_IGNORE));

    /* MPI_PROC_NULL: probes and receives complete at once. */
    MPI_Status st;
    MPI_Message msg;
    int flag;
    fresh(&st);
    MF_CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Probe(MPI_PROC_NULL)");
    fresh(&st);
    MF_CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    KEPT(st, "MPI_Improbe(MPI_PROC_NULL)");
    fresh(&st);
    MF_CHECK_MPI(MPI_Mrecv(in, n, MPI_INT, &msg, &st));
    KEPT(st, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    fresh(&st);
    MF_CHECK_MPI(MPI_Recv(in, n, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Recv(MPI_PROC_NULL)");
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    one_size(1);
    one_size(1000);
    one_size(100000); /* rendezvous */
    return mftest_finish();
}
