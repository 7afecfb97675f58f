/*
 * cancel.c — MPI_Cancel. A receive not matched yet leaves its queue and completes cancelled. A
 * send asks its receiver (CANCEL) to drop the message if not matched yet; the receiver's
 * CANCEL_ACK (dispatched by protocol.c) says whether it did, and the send completes then.
 */
#include "core/error.h"
#include "core/progress.h"
#include "core/state.h"
#include "p2p/p2p_internal.h"
#include "p2p/offload.h"

/* The answer is in, and a dropped send is complete (the fabric may still be moving the message
 * it drops; a send that was not dropped completes when its receive comes, if ever). */
static bool mf_p2p_cancel_settled(void *arg)
{
    mf_request *r = arg;
    return !r->rq_cancel_asked && (!mf_status_cancelled(&r->pub.r_status) || r->pub.r_complete);
}

/* MPI_Cancel of a send: ask the receiver to drop the message if it has not matched it. The
 * answer (CANCEL_ACK) comes after the message itself, whether its frame is still queued here
 * or waits in the receiver's unexpected queue; until then the request is not complete. An
 * eager send complete here only means the fabric has the data: while the program holds the
 * request it is reopened for the answer (requests whose completion a layer above watches,
 * rq_on_complete, are not). A complete rendezvous or synchronous send was matched: not
 * cancelled. So are sends that never had a request (mf_request_sent). */
static bool mf_p2p_cancel_send(mf_request *r)
{
    if (!r->rq_wire_id || r->rq_cancel_asked || r->rq_peer < 0 || r->rq_error ||
        mf_p2p_peer_status(r->rq_peer))
        return false;
    bool tagged = r->rq_fabric == mf_p2p_toff && mf_p2p_offload(r->pub.r_comm);
    if (r->pub.r_complete) {
        /* offloaded: a complete send is matched only when synchronous (the receiver says) */
        bool matched =
            (!tagged && r->rq_bytes > r->rq_fabric->eager_limit) || r->rq_mode == MF_SEND_SYNC;
        if (matched || r->rq_on_complete)
            return false;
        r->pub.r_complete = false;
    }
    mf_wire_hdr h = {.type = MF_MSG_CANCEL,
                     .context = r->pub.r_comm->c_context + r->rq_ctx,
                     .src = (int32_t)r->pub.r_comm->c_rank,
                     .tag = r->rq_tag,
                     .sreq = r->rq_wire_id,
                     .rreq = tagged ? MF_P2P_CANCEL_TAGGED : 0,
                     .rkey = tagged ? r->rq_tmsg.tm_seq : 0};
    r->rq_cancel_asked = true;
    r->rq_busy++; /* the CANCEL_ACK */
    if (mf_p2p_send_ctrl(r->rq_fabric, r->rq_peer, &h)) {
        r->rq_cancel_asked = false;
        mf_request_unbusy(r); /* completes a reopened request again */
        return false;
    }
    /* A send to this very process: our own progress answers (the fabric may have to move the
     * message to drop it), so MPI_Cancel waits for the outcome, as MPICH and Open MPI do. A
     * program may then test the status at once (mpi4py's tests do, ignoring the flag of
     * MPI_Request_get_status) and, seeing no cancel, receive the message; with the answer still
     * out it would wait for a message that was dropped. */
    if (r->rq_peer == mf_g.rank)
        (void)mf_progress_wait(mf_p2p_cancel_settled, r);
    return true;
}

/* The receiver answered a CANCEL: `dropped` when the message is gone, so the send is
 * cancelled and the CTS, FIN or SYNC_ACK it waited for will not come. */
void mf_p2p_on_cancel_ack(mf_request *r, bool dropped)
{
    r->rq_cancel_asked = false;
    if (dropped) {
        mf_status_set_cancelled(&r->pub.r_status, true);
        mf_p2p_release_rkey(r);
        if (r->rq_awaits_peer) {
            r->rq_awaits_peer = false;
            mf_request_unbusy(r); /* never the last step: the answer's is still held */
        }
    }
    mf_request_unbusy(r); /* the CANCEL_ACK */
}

bool mf_p2p_cancel(mf_request *r)
{
    if (r->pub.r_kind == MF_REQ_RECV && r->rq_tm)
        return mf_p2p_offload_cancel(r); /* the fabric matches: it cancels */
    if (r->pub.r_kind == MF_REQ_SEND)
        return mf_p2p_cancel_send(r);
    if (r->pub.r_kind != MF_REQ_RECV || r->pub.r_complete || !mf_match_unpost(r))
        return false; /* matched receives complete normally */
    mf_status_set_cancelled(&r->pub.r_status, true);
    mf_request_finish(r);
    return true;
}
