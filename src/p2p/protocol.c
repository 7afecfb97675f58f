/*
 * protocol.c — receives and the arrival of frames: matching glue and dispatch.
 *
 * mf_irecv matches a new receive against the unexpected queue or posts it. Every frame a fabric
 * receives reaches mf_fabric_rx_header (the fabrics' upcall, fabric.h): an EAGER or RTS is
 * matched against the posted receives of its context (match.h) or queued as unexpected, its
 * payload landing in a buffer of its own; an EAGER matched by a synchronous send's receive is
 * answered with SYNC_ACK; CTS, FIN, SYNC_ACK, CANCEL_ACK and DATA go to the request they name,
 * after checking that it waits for exactly that from that peer (a bad frame fails the peer, never
 * the process). mf_fabric_peer_failed records a peer's error and fails what waits for it.
 * The protocols themselves: protocol.h; request state and rq_busy: request.h.
 */
#include <stdlib.h>
#include <string.h>

#include "core/bufcache.h"
#include "core/error.h"
#include "core/iov.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "p2p/match.h"
#include "p2p/p2p_internal.h"
#include "p2p/offload.h"
#include "tool/mpit.h"

/* p2p_internal.h */
int *mf_p2p_peer_error;

static void mf_p2p_ctrl_done_fn(mf_fabric_done *done, int status)
{
}
mf_fabric_done mf_p2p_ctrl_done = {mf_p2p_ctrl_done_fn};

/* ---- Receiver side ---- */

static inline void mf_p2p_ack_sync(mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    mf_wire_hdr a = {.type = MF_MSG_SYNC_ACK, .context = h->context, .src = 0, .sreq = h->sreq};
    int rc = mf_p2p_send_ctrl(f, peer, &a);
    if (rc)
        mf_warn("could not acknowledge a synchronous send to rank %d", peer);
}

static void mf_p2p_eager_sink_done(mf_fabric_sink *sink, int status)
{
    mf_request *r = sink->fs_ctx;
    if (status)
        mf_p2p_fail(r, status);
    mf_p2p_recv_landed(r);
    mf_request_unbusy(r);
}

/* The mover of a receive unpacked where the fabric holds the payload (mf_p2p_match_eager). */
static void mf_p2p_unpack_request_piece(void *arg, size_t offset, void *at, size_t len)
{
    mf_p2p_recv_unpack(arg, offset, at, len);
}

/* A receive matched an EAGER header whose payload is about to arrive: give the fabric a sink.
 * A non-contiguous one on a fabric that moves payloads in place (fabric.h rx_take_in_place)
 * is unpacked from where the payload lies, without a staging copy. */
static void mf_p2p_match_eager(mf_request *r, mf_fabric *f, int peer, const mf_wire_hdr *h,
                               mf_fabric_sink *sink)
{
    r->rq_peer = peer;
    r->rq_fabric = f;
    mf_p2p_accept(r, h, h->len);
    bool in_place = f->ops->rx_take_in_place && !mf_datatype_info(r->rq_dt)->dt_contig;
    int rc = in_place ? MPI_SUCCESS : mf_p2p_stage_recv(r);
    if (rc)
        mf_p2p_fail(r, rc);
    if (h->flags & MF_WIRE_SYNC)
        mf_p2p_ack_sync(f, peer, h);
    r->rq_busy++;
    if (in_place) {
        *sink = (mf_fabric_sink){.fs_done = mf_p2p_eager_sink_done,
                                 .fs_ctx = r,
                                 .fs_mover = {mf_p2p_unpack_request_piece, r},
                                 .fs_move_len = r->rq_accepted};
        return;
    }
    /* Written straight into the fabric's sink: a copy through a field of r read back its
     * just-written halves as one 16-byte load, a store-forwarding stall perf showed as a tenth
     * of a streaming receiver's time. */
    *sink =
        (mf_fabric_sink){rc ? NULL : r->rq_iovs, rc ? 0 : r->rq_niov, mf_p2p_eager_sink_done, r};
}

/* Hands a fully landed unexpected eager payload to the receive that matched it: through its
 * staging, or unpacked straight from the payload when it has none (mf_p2p_take_unexpected). */
static void mf_p2p_unexp_deliver(mf_request *r, mf_unexpected *u)
{
    if (r->rq_iovs)
        mf_iov_scatter(r->rq_iovs, r->rq_niov, u->ux_data, r->rq_accepted);
    else
        mf_p2p_recv_unpack(r, 0, u->ux_data, r->rq_accepted);
    mf_p2p_recv_landed(r);
    mf_bufcache_put(u->ux_data);
    free(u);
    mf_request_unbusy(r);
}

/* An unexpected eager payload has fully landed. */
static void mf_p2p_unexp_done(mf_fabric_sink *sink, int status)
{
    mf_unexpected *u = sink->fs_ctx;
    u->ux_arrived = true;
    mf_request *r = u->ux_waiter;
    if (!r)
        return;
    /* A receive matched while the payload was streaming in: finish it now. */
    if (status)
        mf_p2p_fail(r, status);
    mf_p2p_unexp_deliver(r, u);
}

/* Rendezvous messages whose receive was posted after their RTS came, waiting for the next
 * progress pass to start (mf_p2p_take_unexpected): each an unexpected record, linked by ux_next,
 * with its receive in ux_waiter. */
static mf_unexpected *mf_p2p_deferred, **mf_p2p_deferred_end = &mf_p2p_deferred;

static int mf_p2p_start_deferred(void *arg);

/* While the list is not empty the engine must not sleep: its peers wait for our answer (CTS or
 * the pull), and a waiter with a pass of its own (the direct receive) makes a full one only now
 * and then. */
static long long mf_p2p_deferred_sleep_ns(void *arg)
{
    return mf_p2p_deferred ? 0 : -1;
}

/* A progress source, added while the list is not empty. */
static mf_progress_source mf_p2p_deferred_source = {
    .fd = -1, .poll = mf_p2p_start_deferred, .sleep_ns = mf_p2p_deferred_sleep_ns};

/* The source's pass: starts the deferred rendezvous. */
static int mf_p2p_start_deferred(void *arg)
{
    int n = 0;
    for (mf_unexpected *u; (u = mf_p2p_deferred) != NULL; n++) {
        mf_p2p_deferred = u->ux_next;
        if (!mf_p2p_deferred)
            mf_p2p_deferred_end = &mf_p2p_deferred;
        mf_request *r = u->ux_waiter;
        if (!r->pub.r_complete) /* else it failed meanwhile: its peer is gone */
            mf_p2p_start_rndv(r, u->ux_fabric, u->ux_peer, &u->ux_hdr, mf_p2p_rndv_out_peak);
        mf_request_unbusy(r); /* the hold taken when it was deferred */
        free(u);
    }
    mf_progress_source_remove(&mf_p2p_deferred_source);
    return n;
}

/* Starts the rendezvous of a receive posted after its RTS came: from the next progress pass
 * where the fabric may pull, since whether it does depends on this rank's own rendezvous sends
 * (rget_min_busy), and a receive is most often posted just before the sends it pairs with
 * (MPI_Irecv, MPI_Isend, MPI_Waitall; MPI_Sendrecv). At once otherwise. The pass judges by the
 * most that was in flight meanwhile (mf_p2p_rndv_out_peak): a peer that pulled those sends at
 * once would otherwise have finished them before it, as a sanitizer build showed (8 of 24
 * exchange receives of shm_pull_busy pulled). */
static void mf_p2p_take_rts(mf_request *r, mf_unexpected *u)
{
    mf_fabric *f = u->ux_fabric;
    bool defer = mf_p2p_pull_possible(f, &u->ux_hdr) && f->rget_min_busy > 0;
    if (defer && !mf_p2p_deferred && mf_progress_source_add(&mf_p2p_deferred_source) != 0)
        defer = false;
    if (!defer) {
        mf_p2p_start_rndv(r, f, u->ux_peer, &u->ux_hdr, mf_p2p_rndv_out_bytes);
        free(u);
        return;
    }
    if (!mf_p2p_deferred) /* the first of a batch: the peak starts from here */
        mf_p2p_rndv_out_peak = mf_p2p_rndv_out_bytes;
    r->rq_peer = u->ux_peer; /* involved if that peer fails meanwhile */
    r->rq_busy++;
    u->ux_waiter = r;
    u->ux_next = NULL;
    *mf_p2p_deferred_end = u;
    mf_p2p_deferred_end = &u->ux_next;
}

/* A new receive takes an unexpected message out of the queue. */
static void mf_p2p_take_unexpected(mf_request *r, mf_unexpected *u)
{
    if (u->ux_hdr.type == MF_MSG_RTS)
        return mf_p2p_take_rts(r, u);
    r->rq_peer = u->ux_peer;
    r->rq_fabric = u->ux_fabric;
    mf_p2p_accept(r, &u->ux_hdr, u->ux_hdr.len);
    /* Landed whole already: a non-contiguous receive unpacks it without staging it first. */
    bool unpack = u->ux_arrived && !mf_datatype_info(r->rq_dt)->dt_contig;
    int rc = unpack ? MPI_SUCCESS : mf_p2p_stage_recv(r);
    if (rc) {
        mf_p2p_fail(r, rc);
        r->rq_accepted = 0;
    }
    if (u->ux_hdr.flags & MF_WIRE_SYNC)
        mf_p2p_ack_sync(u->ux_fabric, u->ux_peer, &u->ux_hdr);
    r->rq_busy++;
    if (!u->ux_arrived) {
        u->ux_waiter = r;
        return;
    }
    mf_p2p_unexp_deliver(r, u);
}

int mf_irecv(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
             unsigned ctx, mf_request **out)
{
    mf_request *r = mf_p2p_recv_request(buf, count, dt, source, tag, comm, ctx);
    if (!r)
        return mf_error(MPI_ERR_NO_MEM, "receive: no memory for a request");
    *out = r;
    if (source == MPI_PROC_NULL) {
        r->pub.r_status.MPI_SOURCE = MPI_PROC_NULL;
        mf_request_finish(r);
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE) {
        int rc = mf_p2p_peer_status(mf_comm_peer(comm, source));
        if (rc) {
            mf_p2p_fail(r, rc);
            mf_request_finish(r);
            return MPI_SUCCESS;
        }
    }
    mf_fabric *toff = mf_p2p_offload(comm);
    if (toff) {
        mf_p2p_offload_irecv(r, toff);
        return MPI_SUCCESS;
    }
    int rc;
    mf_unexpected *u = mf_match_take_or_post(r, &rc);
    return u ? mf_p2p_recv_message(r, u) : rc;
}

int mf_p2p_recv_message(mf_request *r, mf_unexpected *u)
{
    if (u->ux_claim) {
        mf_p2p_offload_recv_claimed(r, u);
        return MPI_SUCCESS;
    }
    r->rq_busy = 1;
    mf_p2p_take_unexpected(r, u);
    mf_request_unbusy(r);
    return MPI_SUCCESS;
}

/* ---- Frames from fabrics ---- */

/* A CTS, FIN or SYNC_ACK from `peer` names send r (NULL if the id was unknown): true if r waits
 * for that answer from that peer, which it then no longer does. */
static bool mf_p2p_answered(mf_request *r, int peer)
{
    if (!r || r->pub.r_kind != MF_REQ_SEND || r->rq_peer != peer || !r->rq_awaits_peer)
        return false;
    r->rq_awaits_peer = false;
    return true;
}

static void mf_p2p_protocol_error(mf_fabric *f, int peer, const mf_wire_hdr *h, const char *why)
{
    mf_fabric_peer_failed(f, peer,
                          mf_error(MPI_ERR_OTHER, "%s: rank %d sent a bad frame (type %d): %s",
                                   f->name, peer, h->type, why));
}

void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *h, mf_fabric_sink *sink)
{
    *sink = (mf_fabric_sink){0}; /* default: discard any payload */
    mf_request *r;
    switch (h->type) {
    case MF_MSG_EAGER:
    case MF_MSG_RTS:
        r = mf_match_posted(h->context, h->src, h->tag);
        if (r) {
            if (h->type == MF_MSG_EAGER) {
                mf_p2p_match_eager(r, f, peer, h, sink);
            } else {
                r->rq_busy++;
                mf_p2p_start_rndv(r, f, peer, h, mf_p2p_rndv_out_bytes);
                mf_request_unbusy(r);
            }
            return;
        }
        mf_unexpected *u = calloc(1, sizeof *u);
        if (u && h->type == MF_MSG_EAGER && h->len)
            u->ux_data = mf_bufcache_get(h->len); /* windows of these come and go at once */
        if (!u || (h->type == MF_MSG_EAGER && h->len && !u->ux_data)) {
            free(u);
            mf_fatal("no memory to hold an unexpected message of %llu bytes from rank %d",
                     (unsigned long long)h->len, peer);
        }
        u->ux_hdr = *h;
        u->ux_peer = peer;
        u->ux_fabric = f;
        u->ux_arrived = h->type != MF_MSG_EAGER || h->len == 0;
        if (mf_match_add_unexpected(h->context, u) != MPI_SUCCESS)
            mf_fatal("no memory for the unexpected-message queue");
        if (!u->ux_arrived) {
            u->ux_iov = (struct iovec){u->ux_data, h->len};
            u->ux_sink = (mf_fabric_sink){&u->ux_iov, 1, mf_p2p_unexp_done, u};
            *sink = u->ux_sink;
        }
        return;
    case MF_MSG_CTS:
        r = mf_request_by_wire(h->sreq);
        if (!mf_p2p_answered(r, peer))
            return mf_p2p_protocol_error(f, peer, h, "clear-to-send for an unknown send");
        return mf_p2p_on_cts(r, h);
    case MF_MSG_FIN:
        r = mf_request_by_wire(h->sreq);
        if (!mf_p2p_answered(r, peer))
            return mf_p2p_protocol_error(f, peer, h, "completion for an unknown send");
        return mf_p2p_on_fin(r);
    case MF_MSG_SYNC_ACK:
        r = mf_request_by_wire(h->sreq);
        if (!mf_p2p_answered(r, peer))
            return mf_p2p_protocol_error(f, peer, h, "acknowledgement for an unknown send");
        return mf_request_unbusy(r);
    case MF_MSG_CANCEL: {
        if (h->rreq == MF_P2P_CANCEL_TAGGED && f == mf_p2p_toff)
            return mf_p2p_offload_on_cancel(f, peer, h);
        mf_unexpected *gone = mf_match_cancel(h->context, peer, h->sreq);
        mf_wire_hdr a = {.type = MF_MSG_CANCEL_ACK, .total = gone != NULL, .sreq = h->sreq};
        if (gone) {
            mf_bufcache_put(gone->ux_data);
            free(gone);
        }
        if (mf_p2p_send_ctrl(f, peer, &a))
            mf_warn("could not answer a cancel request of rank %d", peer);
        return;
    }
    case MF_MSG_CANCEL_ACK:
        r = mf_request_by_wire(h->sreq);
        if (!r || r->pub.r_kind != MF_REQ_SEND || r->rq_peer != peer || !r->rq_cancel_asked ||
            h->total > 1)
            return mf_p2p_protocol_error(f, peer, h, "cancel answer for an unknown send");
        return mf_p2p_on_cancel_ack(r, h->total == 1);
    case MF_MSG_DATA: {
        r = mf_request_by_wire(h->rreq);
        if (!r || r->pub.r_kind != MF_REQ_RECV || r->rq_peer != peer)
            return mf_p2p_protocol_error(f, peer, h, "data for an unknown receive");
        if (h->total > r->rq_accepted || h->len > r->rq_accepted - h->total)
            return mf_p2p_protocol_error(f, peer, h, "data beyond the accepted size");
        /* The frame's part of the receive buffer: one piece of a contiguous (or staging)
         * buffer, or the pieces of a strided one, which are at most as many as the whole. */
        int n = 1;
        struct iovec *piece = malloc((r->rq_niov > 1 ? MF_P2P_IOV_MAX : 1) * sizeof *piece);
        if (!piece)
            mf_fatal("no memory for a data frame descriptor");
        if (r->rq_niov > 1)
            n = mf_p2p_range_iov(r, h->total, h->len, piece, MF_P2P_IOV_MAX);
        else
            *piece = (struct iovec){(char *)r->rq_iovs[0].iov_base + h->total, h->len};
        *sink = (mf_fabric_sink){piece, n, mf_p2p_data_sink_done, r};
        return;
    }
    default:
        return mf_p2p_protocol_error(f, peer, h, "unknown frame type");
    }
}

/* ---- Peer failure ---- */

typedef struct mf_p2p_failure {
    int peer;
    int code;
} mf_p2p_failure;

static void mf_p2p_fail_pending(mf_request *r, void *arg)
{
    mf_p2p_failure *fl = arg;
    if (r->rq_tm && r->pub.r_kind == MF_REQ_RECV) /* offloaded: cancelled with the error */
        return mf_p2p_offload_peer_failed(r, fl->peer, fl->code);
    bool involved = r->rq_peer == fl->peer;
    if (!involved && r->pub.r_kind == MF_REQ_RECV && r->rq_rank >= 0 && r->rq_peer < 0 &&
        r->pub.r_comm && r->rq_rank < mf_comm_peer_size(r->pub.r_comm) &&
        mf_comm_peer(r->pub.r_comm, r->rq_rank) == fl->peer) {
        involved = mf_match_unpost(r);
    }
    if (!involved || (r->pub.r_kind != MF_REQ_SEND && r->pub.r_kind != MF_REQ_RECV))
        return;
    /* Finish now with the error; protocol steps still outstanding drain (or not) on their own,
     * and the request is freed only when they have. */
    mf_p2p_fail(r, fl->code);
    mf_request_finish(r);
}

void mf_fabric_peer_failed(mf_fabric *f, int peer, int code)
{
    if (!mf_p2p_peer_error) {
        mf_p2p_peer_error = calloc((size_t)mf_g.size, sizeof *mf_p2p_peer_error);
        if (!mf_p2p_peer_error)
            mf_fatal("rank %d is unreachable and no memory is left to record it", peer);
    }
    if (mf_p2p_peer_error[peer])
        return;
    mf_p2p_peer_error[peer] = code;
    char text[MPI_MAX_ERROR_STRING];
    int len;
    mf_error_string(code, text, &len);
    mf_info("lost contact with rank %d over %s: %s", peer, f->name, text);
    mf_t_event_raise(MF_T_EVENT_PEER_LOST, (const int[]){peer, mf_error_class(code)});
    mf_p2p_failure fl = {peer, code};
    mf_request_foreach_pending(mf_p2p_fail_pending, &fl);
}

/* ---- Probing ---- */

int mf_p2p_iprobe(int source, int tag, mf_comm *comm, unsigned ctx, bool take, int *flag,
                  MPI_Status *status, mf_unexpected **msg)
{
    *flag = 0;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status && status != MPI_STATUS_IGNORE) {
            *status = (MPI_Status){0};
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_TAG = MPI_ANY_TAG;
        }
        if (msg)
            *msg = NULL;
        return MPI_SUCCESS;
    }
    mf_fabric *toff = mf_p2p_offload(comm);
    if (toff)
        return mf_p2p_offload_iprobe(toff, source, tag, comm, ctx, take, flag, status, msg);
    mf_progress_poll();
    mf_unexpected *u = mf_match_unexpected(comm->c_context + ctx, source, tag, take);
    if (!u)
        return MPI_SUCCESS;
    *flag = 1;
    if (status && status != MPI_STATUS_IGNORE) {
        *status = (MPI_Status){0};
        status->MPI_SOURCE = u->ux_hdr.src;
        status->MPI_TAG = u->ux_hdr.tag;
        mf_status_set_bytes(status, (MPI_Count)u->ux_hdr.total);
    }
    if (msg)
        *msg = u;
    return MPI_SUCCESS;
}
