/*
 * The point-to-point protocols: eager and rendezvous, over any fabric.
 *
 * Eager (message <= the fabric's eager limit): one EAGER frame carries envelope and data. A
 * synchronous send (MPI_Ssend) sets MF_WIRE_SYNC and completes only when the receiver's SYNC_ACK
 * says the message was matched.
 *
 * Rendezvous (larger): the sender sends an RTS with the envelope and size. When the receiver
 * matches it, it takes min(size, its buffer) bytes:
 *   - pull: if the fabric can rget and the RTS carries a key, the receiver copies the data itself
 *     (CMA on shm: one copy, sender's memory to receiver's) and sends FIN;
 *   - push: otherwise it sends CTS with its request id and how much it takes, and the sender
 *     streams DATA frames (at most max_frame bytes each) that land straight in the receive buffer.
 * Truncation (MPI_ERR_TRUNCATE) delivers the part that fits; the sender completes normally.
 *
 * Request state lives in request.h; rq_busy counts the protocol steps a request still waits for
 * (payload handed to the fabric, acknowledgement, CTS/FIN, DATA), and the request completes when
 * it drops to zero.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "p2p/match.h"
#include "p2p/p2p_internal.h"

/* First error seen for each world rank, once its fabric declared it unreachable. */
static int *mf_p2p_peer_error;

static void mf_p2p_ctrl_done_fn(mf_fabric_done *done, int status)
{
}
/* Completion object for control frames, whose header fabrics copy at once. */
static mf_fabric_done mf_p2p_ctrl_done = {mf_p2p_ctrl_done_fn};

#define MF_CONTAINER(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

int mf_p2p_peer_status(int peer)
{
    return mf_p2p_peer_error ? mf_p2p_peer_error[peer] : MPI_SUCCESS;
}

static void mf_p2p_fail(mf_request *r, int code)
{
    if (!r->rq_error)
        r->rq_error = code;
}

/* Sends a control frame (no payload) to r's peer. */
static int mf_p2p_send_ctrl(mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    int rc = f->ops->send(f, peer, h, NULL, 0, &mf_p2p_ctrl_done);
    return rc == MF_FABRIC_DONE || rc == MF_FABRIC_PENDING ? MPI_SUCCESS : rc;
}

/* ---- Sender side ---- */

static void mf_p2p_send_done(mf_fabric_done *done, int status)
{
    mf_request *r = MF_CONTAINER(done, mf_request, rq_send_done);
    if (status)
        mf_p2p_fail(r, status);
    mf_request_unbusy(r);
}

/* Hands a payload frame to the fabric, counting it as a step until the fabric is done. */
static void mf_p2p_send_payload(mf_request *r, const mf_wire_hdr *h, struct iovec *iov, int niov)
{
    r->rq_busy++;
    int rc = r->rq_fabric->ops->send(r->rq_fabric, r->rq_peer, h, iov, niov, &r->rq_send_done);
    if (rc == MF_FABRIC_PENDING)
        return;
    if (rc != MF_FABRIC_DONE)
        mf_p2p_fail(r, rc);
    mf_request_unbusy(r);
}

/* Describes stream bytes [off, off + len) of r's user buffer as at most `max` iovecs. Returns
 * how many, or 0 when that takes more than `max`. */
static int mf_p2p_range_iov(const mf_request *r, size_t off, size_t len, struct iovec *iov, int max)
{
    size_t covered;
    int n = mf_datatype_iov(r->rq_dt, r->rq_buf, (size_t)r->rq_count, off, iov, max, &covered);
    if (n == 0 || covered < len)
        return 0;
    for (size_t extra = covered - len; extra > 0;) { /* trim what lies beyond len */
        if (iov[n - 1].iov_len <= extra) {
            extra -= iov[n - 1].iov_len;
            n--;
        } else {
            iov[n - 1].iov_len -= extra;
            extra = 0;
        }
    }
    return n;
}

/* As mf_p2p_range_iov, but also 0 when the pieces average less than MF_P2P_IOV_MIN_PIECE bytes:
 * gathering tiny pieces costs more than packing them. */
static int mf_p2p_user_iov(const mf_request *r, size_t off, size_t len, struct iovec *iov, int max)
{
    int n = mf_p2p_range_iov(r, off, len, iov, max);
    return n > 0 && len / (size_t)n >= MF_P2P_IOV_MIN_PIECE ? n : 0;
}

/* Copies len bytes from src into the request's staged iovecs (receives). */
static void mf_p2p_copy_in(mf_request *r, const unsigned char *src, size_t len)
{
    for (int i = 0; i < r->rq_niov && len > 0; i++) {
        size_t n = r->rq_iovs[i].iov_len < len ? r->rq_iovs[i].iov_len : len;
        memcpy(r->rq_iovs[i].iov_base, src, n);
        src += n;
        len -= n;
    }
}

/* Points rq_iovs at the first `len` bytes of the data: the user buffer itself when it is
 * contiguous or made of few large pieces (and `iov_ok`: the protocol can carry iovecs), else a
 * packed copy (`pack` true for sends) or a staging buffer to unpack from (receives). */
static int mf_p2p_stage(mf_request *r, size_t len, bool iov_ok, bool pack)
{
    const struct mf_datatype_public *t = mf_datatype_info(r->rq_dt);
    r->rq_iovs = &r->rq_iov_one;
    r->rq_niov = 1;
    if (t->dt_contig || len == 0) {
        r->rq_iov_one.iov_base = (char *)r->rq_buf + t->dt_true_lb;
        r->rq_iov_one.iov_len = len;
        return MPI_SUCCESS;
    }
    if (iov_ok) {
        struct iovec *iov = malloc(MF_P2P_IOV_MAX * sizeof *iov);
        int n = iov ? mf_p2p_user_iov(r, 0, len, iov, MF_P2P_IOV_MAX) : 0;
        if (n > 0) {
            r->rq_iovs = iov;
            r->rq_niov = n;
            return MPI_SUCCESS;
        }
        free(iov);
    }
    r->rq_packed = malloc(len);
    if (!r->rq_packed)
        return mf_error(MPI_ERR_NO_MEM, "no memory to stage %zu bytes of a strided message", len);
    if (pack)
        mf_datatype_pack(r->rq_dt, r->rq_buf, (size_t)r->rq_count, 0, r->rq_packed, len);
    r->rq_iov_one.iov_base = r->rq_packed;
    r->rq_iov_one.iov_len = len;
    return MPI_SUCCESS;
}

int mf_isend(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag, mf_comm *comm,
             unsigned ctx, enum mf_send_mode mode, mf_request **out)
{
    mf_request *r = mf_request_alloc(MF_REQ_SEND, comm);
    if (!r)
        return mf_error(MPI_ERR_NO_MEM, "send: no memory for a request");
    *out = r;
    r->pub.r_active = true;
    r->rq_buf = (void *)buf;
    r->rq_count = count;
    r->rq_dt = dt;
    mf_datatype_retain(dt);
    r->rq_rank = dest;
    r->rq_tag = tag;
    r->rq_ctx = ctx;
    r->rq_mode = mode;
    r->rq_send_done.fd_fn = mf_p2p_send_done;
    if (dest == MPI_PROC_NULL) {
        r->pub.r_status.MPI_SOURCE = MPI_PROC_NULL;
        mf_request_finish(r);
        return MPI_SUCCESS;
    }
    r->rq_bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    r->rq_peer = mf_comm_peer(comm, dest);
    r->rq_fabric = mf_fabric_of(r->rq_peer);
    mf_fabric *f = r->rq_fabric;
    bool eager = r->rq_bytes <= f->eager_limit;
    int rc = mf_p2p_peer_status(r->rq_peer);
    /* Strided data goes as iovecs where it travels in one frame and the peer does not pull it
     * (an rget key covers one contiguous region); otherwise it is packed once. */
    bool one_frame = eager || (!(f->flags & MF_FABRIC_RGET) && r->rq_bytes <= f->max_frame);
    if (!rc)
        rc = mf_p2p_stage(r, r->rq_bytes, one_frame, true);
    /* Sends the peer will answer need an id: synchronous and rendezvous ones; so do user sends
     * (MPI_Cancel names them to the receiver). Sends finished without a request (mf_send_eager,
     * mf_isend_standard) never come here. */
    r->rq_awaits_peer = !eager || mode == MF_SEND_SYNC;
    if (!rc && (r->rq_awaits_peer || ctx == MF_CTX_P2P))
        rc = mf_request_register_wire(r);
    if (rc) {
        mf_p2p_fail(r, rc);
        mf_request_finish(r);
        return MPI_SUCCESS; /* the error is reported when the request is completed */
    }
    mf_wire_hdr h = {
        .context = comm->c_context + ctx,
        .src = (int32_t)comm->c_rank,
        .tag = tag,
        .total = r->rq_bytes,
        .sreq = r->rq_wire_id,
    };
    /* One step for the whole send; released below once the first frame is handed over. */
    r->rq_busy = 1;
    if (eager) {
        h.type = MF_MSG_EAGER;
        h.len = r->rq_bytes;
        if (mode == MF_SEND_SYNC) {
            h.flags = MF_WIRE_SYNC;
            r->rq_busy++; /* the SYNC_ACK */
        }
        mf_p2p_send_payload(r, &h, r->rq_iovs, r->rq_niov);
    } else {
        h.type = MF_MSG_RTS;
        if ((f->flags & MF_FABRIC_RGET) && r->rq_niov == 1) {
            rc = f->ops->rkey_make(f, r->rq_iovs[0].iov_base, r->rq_bytes, &r->rq_rkey);
            if (rc)
                r->rq_rkey = 0; /* fall back to the push protocol */
        }
        h.rkey = r->rq_rkey;
        r->rq_busy++; /* the CTS or FIN */
        rc = mf_p2p_send_ctrl(f, r->rq_peer, &h);
        if (rc) {
            mf_p2p_fail(r, rc);
            r->rq_busy--;
            r->rq_awaits_peer = false;
        }
    }
    mf_request_unbusy(r);
    return MPI_SUCCESS;
}

/* A standard send that can go as one eager frame without a request: contiguous data within
 * the eager limit of the peer's fabric, to a peer not known to have failed. */
typedef struct mf_p2p_eager {
    mf_fabric *f;
    int peer;
    mf_wire_hdr h;
    struct iovec iov;
} mf_p2p_eager;

/* Fills e and returns true if the send qualifies (see mf_p2p_eager); *rc is the peer's error
 * when that is why it does not. */
static bool mf_p2p_eager_prepare(const void *buf, MPI_Count count, mf_datatype *dt, int dest,
                                 int tag, mf_comm *comm, unsigned ctx, mf_p2p_eager *e, int *rc)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    *rc = MPI_SUCCESS;
    if (dest == MPI_PROC_NULL || !t->dt_contig)
        return false;
    size_t bytes = (size_t)count * t->dt_size;
    e->peer = mf_comm_peer(comm, dest);
    e->f = mf_fabric_of(e->peer);
    if (bytes > e->f->eager_limit || (*rc = mf_p2p_peer_status(e->peer)))
        return false;
    e->h = (mf_wire_hdr){
        .type = MF_MSG_EAGER,
        .context = comm->c_context + ctx,
        .src = (int32_t)comm->c_rank,
        .tag = tag,
        .len = bytes,
        .total = bytes,
    };
    e->iov = (struct iovec){(char *)buf + t->dt_true_lb, bytes};
    return true;
}

int mf_isend_standard(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                      mf_comm *comm, unsigned ctx, mf_request **out)
{
    mf_p2p_eager e;
    int rc;
    if (mf_p2p_eager_prepare(buf, count, dt, dest, tag, comm, ctx, &e, &rc) &&
        (e.f->flags & MF_FABRIC_INJECT) &&
        e.f->ops->send(e.f, e.peer, &e.h, &e.iov, 1, NULL) == MF_FABRIC_DONE) {
        *out = mf_request_sent();
        return MPI_SUCCESS;
    }
    /* Not eligible, busy (frames queued ahead, ring full) or failing: the request path sorts it
     * out, in order. */
    return mf_isend(buf, count, dt, dest, tag, comm, ctx, MF_SEND_STANDARD, out);
}

/* CTS: the receiver takes hdr->total bytes; stream them as DATA frames. */
static void mf_p2p_on_cts(mf_request *r, const mf_wire_hdr *h)
{
    size_t take = h->total < r->rq_bytes ? h->total : r->rq_bytes;
    mf_wire_hdr d = {
        .type = MF_MSG_DATA,
        .context = h->context,
        .src = h->src,
        .sreq = r->rq_wire_id,
        .rreq = h->rreq,
    };
    if (r->rq_niov > 1) {
        /* Strided data staged as iovecs fits one frame (see mf_isend): send the first `take`
         * bytes of it. Fabrics may keep the iovec array of a pending frame: it lives here. */
        r->rq_pieces = take ? malloc((size_t)r->rq_niov * sizeof *r->rq_pieces) : NULL;
        if (take && !r->rq_pieces) {
            mf_p2p_fail(r, mf_error(MPI_ERR_NO_MEM, "send: no memory for a data frame"));
        } else if (take) {
            int n = 0;
            for (size_t left = take; left > 0; n++) {
                r->rq_pieces[n] = r->rq_iovs[n];
                if (r->rq_pieces[n].iov_len > left)
                    r->rq_pieces[n].iov_len = left;
                left -= r->rq_pieces[n].iov_len;
            }
            d.len = take;
            mf_p2p_send_payload(r, &d, r->rq_pieces, n);
        }
        mf_request_unbusy(r); /* the CTS step */
        return;
    }
    size_t frame = r->rq_fabric->max_frame;
    size_t nframes = (take + frame - 1) / frame;
    r->rq_pieces = nframes ? calloc(nframes, sizeof *r->rq_pieces) : NULL;
    if (nframes && !r->rq_pieces) {
        mf_p2p_fail(r, mf_error(MPI_ERR_NO_MEM, "send: no memory for %zu frames", nframes));
        nframes = 0;
    }
    for (size_t i = 0; i < nframes; i++) {
        size_t off = i * frame;
        d.len = take - off < frame ? take - off : frame;
        d.total = off;
        r->rq_pieces[i] = (struct iovec){(char *)r->rq_iovs[0].iov_base + off, d.len};
        mf_p2p_send_payload(r, &d, &r->rq_pieces[i], 1);
    }
    mf_request_unbusy(r); /* the CTS step */
}

static void mf_p2p_release_rkey(mf_request *r)
{
    if (r->rq_rkey)
        r->rq_fabric->ops->rkey_release(r->rq_fabric, r->rq_rkey);
    r->rq_rkey = 0;
}

static void mf_p2p_on_fin(mf_request *r)
{
    mf_p2p_release_rkey(r);
    mf_request_unbusy(r);
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
    if (r->pub.r_complete) {
        bool matched = r->rq_bytes > r->rq_fabric->eager_limit || r->rq_mode == MF_SEND_SYNC;
        if (matched || r->rq_on_complete)
            return false;
        r->pub.r_complete = false;
    }
    mf_wire_hdr h = {.type = MF_MSG_CANCEL,
                     .context = r->pub.r_comm->c_context + r->rq_ctx,
                     .src = (int32_t)r->pub.r_comm->c_rank,
                     .sreq = r->rq_wire_id};
    r->rq_cancel_asked = true;
    r->rq_busy++; /* the CANCEL_ACK */
    if (mf_p2p_send_ctrl(r->rq_fabric, r->rq_peer, &h)) {
        r->rq_cancel_asked = false;
        mf_request_unbusy(r); /* completes a reopened request again */
        return false;
    }
    return true;
}

/* The receiver answered a CANCEL: `dropped` when the message is gone, so the send is
 * cancelled and the CTS, FIN or SYNC_ACK it waited for will not come. */
static void mf_p2p_on_cancel_ack(mf_request *r, bool dropped)
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

/* ---- Receiver side ---- */

static void mf_p2p_ack_sync(mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    mf_wire_hdr a = {.type = MF_MSG_SYNC_ACK, .context = h->context, .src = 0, .sreq = h->sreq};
    int rc = mf_p2p_send_ctrl(f, peer, &a);
    if (rc)
        mf_warn("could not acknowledge a synchronous send to rank %d", peer);
}

/* Sets the status and the accepted size of a receive matched with envelope h offering `size`
 * bytes; notes truncation. */
/* The status of a receive of `room` bytes matched with envelope h offering `size` bytes:
 * source, tag, byte count. Returns the bytes taken; *err becomes MPI_ERR_TRUNCATE (with the
 * message) when the message does not fit, and is left alone otherwise. */
static size_t mf_p2p_match_status(MPI_Status *st, const mf_wire_hdr *h, size_t size, size_t room,
                                  int *err)
{
    size_t take = size <= room ? size : room;
    st->MPI_SOURCE = h->src;
    st->MPI_TAG = h->tag;
    mf_status_set_bytes(st, (MPI_Count)take);
    if (size > room)
        *err = mf_error(MPI_ERR_TRUNCATE,
                        "receive: message of %zu bytes from rank %d (tag %d) does not fit the "
                        "%zu-byte buffer",
                        size, h->src, h->tag, room);
    return take;
}

static void mf_p2p_accept(mf_request *r, const mf_wire_hdr *h, size_t size)
{
    int err = MPI_SUCCESS;
    r->rq_accepted = mf_p2p_match_status(&r->pub.r_status, h, size, r->rq_bytes, &err);
    if (err)
        mf_p2p_fail(r, err);
}

/* Where the accepted bytes land: the user buffer (contiguous, or as iovecs), else a staging
 * copy unpacked when everything has arrived. */
static int mf_p2p_stage_recv(mf_request *r)
{
    return mf_p2p_stage(r, r->rq_accepted, true, false);
}

/* All accepted bytes have landed: unpack if staged. */
static void mf_p2p_recv_landed(mf_request *r)
{
    if (r->rq_packed) {
        mf_datatype_unpack(r->rq_dt, r->rq_buf, (size_t)r->rq_count, 0, r->rq_packed,
                           r->rq_accepted);
        free(r->rq_packed);
        r->rq_packed = NULL;
    }
}

static void mf_p2p_eager_sink_done(mf_fabric_sink *sink, int status)
{
    mf_request *r = sink->fs_ctx;
    if (status)
        mf_p2p_fail(r, status);
    mf_p2p_recv_landed(r);
    mf_request_unbusy(r);
}

static void mf_p2p_get_done(mf_fabric_done *done, int status)
{
    mf_request *r = MF_CONTAINER(done, mf_request, rq_get_done);
    if (status)
        mf_p2p_fail(r, status);
    mf_p2p_recv_landed(r);
    mf_wire_hdr fin = {.type = MF_MSG_FIN, .context = 0, .sreq = r->rq_peer_id};
    int rc = mf_p2p_send_ctrl(r->rq_fabric, r->rq_peer, &fin);
    if (rc)
        mf_p2p_fail(r, rc);
    mf_request_unbusy(r);
}

/* A receive matched an RTS: pull the data, or ask the sender to push it. */
static void mf_p2p_start_rndv(mf_request *r, mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    r->rq_peer = peer;
    r->rq_fabric = f;
    r->rq_peer_id = h->sreq;
    mf_p2p_accept(r, h, h->total);
    int rc = mf_p2p_stage_recv(r);
    r->rq_busy++;
    if (!rc && (f->flags & MF_FABRIC_RGET) && h->rkey) {
        r->rq_get_done.fd_fn = mf_p2p_get_done;
        rc = f->ops->rget(f, peer, h->rkey, 0, r->rq_iovs, r->rq_niov, r->rq_accepted,
                          &r->rq_get_done);
        if (rc == MF_FABRIC_DONE)
            mf_p2p_get_done(&r->rq_get_done, MPI_SUCCESS);
        else if (rc != MF_FABRIC_PENDING)
            mf_p2p_get_done(&r->rq_get_done, rc);
        return;
    }
    if (!rc)
        rc = mf_request_register_wire(r);
    if (!rc) {
        mf_wire_hdr cts = {.type = MF_MSG_CTS,
                           .context = h->context,
                           .total = r->rq_accepted,
                           .sreq = h->sreq,
                           .rreq = r->rq_wire_id};
        rc = mf_p2p_send_ctrl(f, peer, &cts);
    }
    if (rc) {
        mf_p2p_fail(r, rc);
        mf_request_unbusy(r);
    } else if (r->rq_accepted == 0) {
        mf_request_unbusy(r); /* nothing will come */
    }
}

/* A receive matched an EAGER header whose payload is about to arrive: give the fabric a sink. */
static void mf_p2p_match_eager(mf_request *r, mf_fabric *f, int peer, const mf_wire_hdr *h,
                               mf_fabric_sink *sink)
{
    r->rq_peer = peer;
    r->rq_fabric = f;
    mf_p2p_accept(r, h, h->len);
    int rc = mf_p2p_stage_recv(r);
    if (rc)
        mf_p2p_fail(r, rc);
    if (h->flags & MF_WIRE_SYNC)
        mf_p2p_ack_sync(f, peer, h);
    r->rq_busy++;
    /* Written straight into the fabric's sink: a copy through a field of r read back its
     * just-written halves as one 16-byte load, a store-forwarding stall perf showed as a tenth
     * of a streaming receiver's time. */
    *sink =
        (mf_fabric_sink){rc ? NULL : r->rq_iovs, rc ? 0 : r->rq_niov, mf_p2p_eager_sink_done, r};
}

/* Hands a fully landed unexpected eager payload to the receive that matched it. */
static void mf_p2p_unexp_deliver(mf_request *r, mf_unexpected *u)
{
    mf_p2p_copy_in(r, u->ux_data, r->rq_accepted);
    mf_p2p_recv_landed(r);
    free(u->ux_data);
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

/* A new receive takes an unexpected message out of the queue. */
static void mf_p2p_take_unexpected(mf_request *r, mf_unexpected *u)
{
    if (u->ux_hdr.type == MF_MSG_RTS) {
        mf_p2p_start_rndv(r, u->ux_fabric, u->ux_peer, &u->ux_hdr);
        free(u);
        return;
    }
    r->rq_peer = u->ux_peer;
    r->rq_fabric = u->ux_fabric;
    mf_p2p_accept(r, &u->ux_hdr, u->ux_hdr.len);
    int rc = mf_p2p_stage_recv(r);
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

/* A receive request for the operation, not yet matched nor posted. */
static mf_request *mf_p2p_recv_request(void *buf, MPI_Count count, mf_datatype *dt, int source,
                                       int tag, mf_comm *comm, unsigned ctx)
{
    mf_request *r = mf_request_alloc(MF_REQ_RECV, comm);
    if (!r)
        return NULL;
    r->pub.r_active = true;
    r->rq_buf = buf;
    r->rq_count = count;
    r->rq_dt = dt;
    mf_datatype_retain(dt);
    r->rq_rank = source;
    r->rq_tag = tag;
    r->rq_ctx = ctx;
    r->rq_bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    return r;
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
    int rc;
    mf_unexpected *u = mf_match_take_or_post(r, &rc);
    return u ? mf_p2p_recv_message(r, u) : rc;
}

int mf_p2p_recv_message(mf_request *r, mf_unexpected *u)
{
    r->rq_busy = 1;
    mf_p2p_take_unexpected(r, u);
    mf_request_unbusy(r);
    return MPI_SUCCESS;
}

/* DATA frame for a pushed rendezvous: lands at its offset in the receive buffer. */
static void mf_p2p_data_sink_done(mf_fabric_sink *sink, int status)
{
    mf_request *r = sink->fs_ctx;
    if (status)
        mf_p2p_fail(r, status);
    for (int i = 0; i < sink->fs_niov; i++)
        r->rq_received += sink->fs_iov[i].iov_len;
    free(sink->fs_iov);
    if (r->rq_received >= r->rq_accepted) {
        mf_p2p_recv_landed(r);
        mf_request_unbusy(r);
    }
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
                mf_p2p_start_rndv(r, f, peer, h);
                mf_request_unbusy(r);
            }
            return;
        }
        mf_unexpected *u = calloc(1, sizeof *u);
        if (u && h->type == MF_MSG_EAGER && h->len)
            u->ux_data = malloc(h->len);
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
        mf_unexpected *gone = mf_match_cancel(h->context, peer, h->sreq);
        mf_wire_hdr a = {.type = MF_MSG_CANCEL_ACK, .total = gone != NULL, .sreq = h->sreq};
        if (gone) {
            free(gone->ux_data);
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
    mf_p2p_failure fl = {peer, code};
    mf_request_foreach_pending(mf_p2p_fail_pending, &fl);
}

/* ---- Blocking forms ---- */

/* Completion of a frame handed to the fabric by mf_send_eager, on its stack. */
typedef struct mf_p2p_stack_done {
    mf_fabric_done done;
    bool finished;
    int status;
} mf_p2p_stack_done;

static void mf_p2p_stack_done_fn(mf_fabric_done *done, int status)
{
    mf_p2p_stack_done *d = MF_CONTAINER(done, mf_p2p_stack_done, done);
    d->status = status;
    d->finished = true;
}

static bool mf_p2p_stack_finished(void *arg)
{
    return ((mf_p2p_stack_done *)arg)->finished;
}

/* The common blocking send — standard mode, contiguous data, within the peer's eager limit —
 * needs no request: the fabric copies the frame (or queues it, and we wait until it is gone,
 * which is when the request would have completed too). Returns MF_FABRIC_UNAVAILABLE when the
 * message does not qualify. Order with earlier sends is kept: they are all with the fabric
 * already, and a fabric sends a peer's frames in order. */
static int mf_send_eager(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                         mf_comm *comm, unsigned ctx)
{
    mf_p2p_eager e;
    int rc;
    if (!mf_p2p_eager_prepare(buf, count, dt, dest, tag, comm, ctx, &e, &rc))
        return rc ? rc : MF_FABRIC_UNAVAILABLE;
    mf_p2p_stack_done d = {{mf_p2p_stack_done_fn}, false, MPI_SUCCESS};
    rc = e.f->ops->send(e.f, e.peer, &e.h, &e.iov, 1, &d.done);
    if (rc != MF_FABRIC_PENDING)
        return rc; /* MF_FABRIC_DONE is MPI_SUCCESS */
    rc = mf_progress_wait(mf_p2p_stack_finished, &d);
    return rc ? rc : d.status;
}

int mf_send(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag, mf_comm *comm,
            unsigned ctx)
{
    int rc = mf_send_eager(buf, count, dt, dest, tag, comm, ctx);
    if (rc != MF_FABRIC_UNAVAILABLE)
        return rc;
    mf_request *r;
    rc = mf_isend(buf, count, dt, dest, tag, comm, ctx, MF_SEND_STANDARD, &r);
    if (rc)
        return rc;
    rc = mf_request_wait(r, NULL);
    mf_request_free(r);
    return rc;
}

/* A blocking receive from one named peer into a contiguous buffer, waiting without a request
 * (mf_recv_direct). */
typedef struct mf_p2p_direct {
    void *buf;
    size_t bytes;
    uint32_t context;
    int src, tag; /* as matched: rank in the communicator, tag or MPI_ANY_TAG */
    int peer;     /* world rank */
    mf_fabric *fabric;
    unsigned idle; /* passes that found the peer's queue empty */
    MPI_Status status;
    int rc;               /* the receive's error, once done */
    bool received;        /* taken from the fabric */
    mf_unexpected *found; /* or found in the unexpected queue: finish with a request */
} mf_p2p_direct;

/* Between two full progress passes, a direct receive looks this many times at its peer only.
 * A full pass could take our message into the unexpected queue (no receive is posted for it),
 * which then costs a copy and a request; other peers' traffic waits a few hundred ns at most. */
#define MF_P2P_DIRECT_SPIN 16

/* The direct receive takes the eager message h: status, truncation; returns the bytes to copy
 * into d->buf. */
static size_t mf_p2p_direct_accept(mf_p2p_direct *d, const mf_wire_hdr *h)
{
    d->received = true;
    return mf_p2p_match_status(&d->status, h, (size_t)h->len, d->bytes, &d->rc);
}

static bool mf_p2p_direct_done(void *arg)
{
    mf_p2p_direct *d = arg;
    return d->received || d->found || d->rc;
}

/* One pass of a direct receive: the peer's next frame if it is an eager message for us; a full
 * progress pass when that frame is something else, and every MF_P2P_DIRECT_SPIN idle looks. */
static int mf_p2p_direct_poll(void *arg)
{
    mf_p2p_direct *d = arg;
    mf_wire_hdr h;
    mf_fabric *f = d->fabric;
    int got = f->ops->rx_peek(f, d->peer, &h);
    /* On an oversubscribed host every idle pass yields the core: a full pass costs nothing
     * next to that, and other ranks may be waiting for what only it moves (queued frames). */
    if (got == 0 && !mf_g.oversubscribed && ++d->idle % MF_P2P_DIRECT_SPIN != 0)
        return 0;
    if (got == 1 && h.flags == 0 && h.context == d->context && h.src == d->src &&
        (d->tag == MPI_ANY_TAG || h.tag == d->tag)) {
        struct iovec iov = {d->buf, mf_p2p_direct_accept(d, &h)};
        f->ops->rx_take(f, d->peer, &h, &iov, 1);
        return 1;
    }
    /* Not ours (another tag, a rendezvous, a synchronous send) or time for everyone else: a
     * full pass, after which what matches us may wait in the unexpected queue. */
    int n = mf_progress_poll();
    d->found = mf_match_unexpected(d->context, d->src, d->tag, true);
    d->rc = mf_p2p_peer_status(d->peer);
    return n;
}

/* The common blocking receive — a named source reached by a fabric with direct receive, a
 * contiguous buffer, no earlier receive posted on the context that could claim the message
 * first, nothing matching queued as unexpected — waits by looking at that peer's next frame
 * itself and copies it straight into the buffer: no request, no matching queues, no upcall.
 * Anything else (a rendezvous, a synchronous send, a message a full pass queued as unexpected)
 * is finished through a request as usual. Returns MF_FABRIC_UNAVAILABLE when the receive does
 * not qualify. */
static int mf_recv_direct(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag,
                          mf_comm *comm, unsigned ctx, MPI_Status *status)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    if (source < 0 || !t->dt_contig)
        return MF_FABRIC_UNAVAILABLE; /* MPI_ANY_SOURCE, MPI_PROC_NULL */
    int peer = mf_comm_peer(comm, source);
    mf_fabric *f = mf_fabric_of(peer);
    uint32_t context = comm->c_context + ctx;
    if (!f->ops->rx_peek || !mf_match_posted_empty(context))
        return MF_FABRIC_UNAVAILABLE;
    mf_p2p_direct d = {
        .buf = (char *)buf + t->dt_true_lb,
        .bytes = (size_t)count * t->dt_size,
        .context = context,
        .src = source,
        .tag = tag,
        .peer = peer,
        .fabric = f,
        .found = mf_match_unexpected(context, source, tag, true),
        .rc = mf_p2p_peer_status(peer),
    };
    int rc = mf_progress_wait_poll(mf_p2p_direct_done, mf_p2p_direct_poll, &d);
    if (rc)
        return rc;
    mf_unexpected *u = d.found;
    if (u && u->ux_hdr.type == MF_MSG_EAGER && u->ux_arrived && u->ux_hdr.flags == 0) {
        /* Arrived whole before we asked (a full pass queued it): copy it out, no request. It
         * is delivered even if its sender has failed since. */
        d.rc = MPI_SUCCESS;
        size_t take = mf_p2p_direct_accept(&d, &u->ux_hdr);
        if (take)
            memcpy(d.buf, u->ux_data, take);
        free(u->ux_data);
        free(u);
    } else if (u) {
        mf_request *r = mf_p2p_recv_request(buf, count, dt, source, tag, comm, ctx);
        if (!r)
            return mf_error(MPI_ERR_NO_MEM, "receive: no memory for a request");
        mf_p2p_recv_message(r, d.found);
        rc = mf_request_wait(r, status);
        mf_request_free(r);
        return rc;
    }
    if (d.received)
        mf_status_out(status, &d.status);
    return d.rc;
}

int mf_recv(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
            unsigned ctx, MPI_Status *status)
{
    int rc = mf_recv_direct(buf, count, dt, source, tag, comm, ctx, status);
    if (rc != MF_FABRIC_UNAVAILABLE)
        return rc;
    mf_request *r;
    rc = mf_irecv(buf, count, dt, source, tag, comm, ctx, &r);
    if (rc)
        return rc;
    rc = mf_request_wait(r, status);
    mf_request_free(r);
    return rc;
}

int mf_sendrecv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, int dest, int stag,
                void *rbuf, MPI_Count rcount, mf_datatype *rdt, int source, int rtag, mf_comm *comm,
                unsigned ctx, MPI_Status *status)
{
    mf_request *rr, *sr;
    int rc = mf_irecv(rbuf, rcount, rdt, source, rtag, comm, ctx, &rr);
    if (rc)
        return rc;
    rc = mf_isend(sbuf, scount, sdt, dest, stag, comm, ctx, MF_SEND_STANDARD, &sr);
    if (rc) {
        mf_request_free(rr);
        return rc;
    }
    mf_request *both[2] = {rr, sr};
    rc = mf_request_waitall(2, both);
    mf_status_out(status, &rr->pub.r_status);
    mf_request_free(rr);
    mf_request_free(sr);
    return rc;
}

/* ---- Probing and cancelling ---- */

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

bool mf_p2p_cancel(mf_request *r)
{
    if (r->pub.r_kind == MF_REQ_SEND)
        return mf_p2p_cancel_send(r);
    if (r->pub.r_kind != MF_REQ_RECV || r->pub.r_complete || !mf_match_unpost(r))
        return false; /* matched receives complete normally */
    mf_status_set_cancelled(&r->pub.r_status, true);
    mf_request_finish(r);
    return true;
}

/* ---- Send and receive as one request ---- */

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
    if (part->pub.r_complete) {
        mf_p2p_part_done(part, outer);
    } else {
        part->rq_on_complete = mf_p2p_part_done;
        part->rq_on_complete_arg = outer;
    }
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
