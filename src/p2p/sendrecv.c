/*
 * sendrecv.c — a send and a receive as one request (MPI_Isendrecv): the outer request completes
 * when both parts have; its status is the receive's, its error the first of either.
 */
#include "core/error.h"
#include "p2p/protocol.h"

static void mf_p2p_part_done(mf_request *part, void *arg)
{
    mf_request *outer = arg;
    if (part == outer->rq_parts[0]) {
        int err = outer->pub.r_status.MPI_ERROR;
        outer->pub.r_status = part->pub.r_status;
        outer->pub.r_status.MPI_ERROR = err;
    }
    if (part->pub.r_status.MPI_ERROR)
        mf_p2p_fail(outer, part->pub.r_status.MPI_ERROR);
    if (--outer->rq_parts_left == 0)
        mf_request_finish(outer);
}

/* Makes `part` (already started) count towards outer's completion. */
static void mf_p2p_attach_part(mf_request *outer, int i, mf_request *part)
{
    outer->rq_parts[i] = part;
    mf_request_when_done(part, mf_p2p_part_done, outer);
}

int mf_isendrecv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, int dest, int stag,
                 void *rbuf, MPI_Count rcount, mf_datatype *rdt, int source, int rtag,
                 mf_comm *comm, unsigned ctx, mf_request **out)
{
    mf_request *outer = mf_request_alloc(MF_REQ_RECV, comm), *rr = NULL, *sr = NULL;
    if (!outer)
        return mf_error(MPI_ERR_NO_MEM, "sendrecv: no memory for a request");
    outer->pub.r_active = true;
    outer->rq_parts_left = 2;
    int rc = mf_irecv(rbuf, rcount, rdt, source, rtag, comm, ctx, &rr);
    if (!rc) {
        mf_p2p_attach_part(outer, 0, rr);
        rc = mf_isend(sbuf, scount, sdt, dest, stag, comm, ctx, MF_SEND_STANDARD, &sr);
    }
    if (!rc) {
        mf_p2p_attach_part(outer, 1, sr);
    } else {
        /* The receive stays posted and is freed with outer; the request reports the error. */
        mf_p2p_fail(outer, rc);
        outer->rq_parts_left = 0;
        mf_request_finish(outer);
    }
    *out = outer;
    return MPI_SUCCESS;
}
