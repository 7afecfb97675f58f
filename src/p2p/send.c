/*
 * send.c — starting sends (mf_isend, mf_isend_standard). The data is staged first: the user
 * buffer itself when contiguous or made of few large pieces, else a packed copy. A message
 * within the peer fabric's eager limit goes as one EAGER frame (envelope and data; MF_WIRE_SYNC
 * for synchronous mode, completed by the receiver's SYNC_ACK); a larger one as an RTS with a key
 * the receiver may pull with (rndv.c takes it from there). A standard eager send of contiguous
 * data that the fabric copies at once needs no request at all (mf_isend_standard).
 */
#include <stdlib.h>
#include <string.h>

#include "core/bufcache.h"
#include "core/error.h"
#include "p2p/offload.h"

static void mf_p2p_send_done(mf_fabric_done *done, int status)
{
    mf_request *r = MF_CONTAINER(done, mf_request, rq_send_done);
    if (status)
        mf_p2p_fail(r, status);
    mf_request_unbusy(r);
}

/* Hands a payload frame to the fabric, counting it as a step until the fabric is done. */
void mf_p2p_send_payload(mf_request *r, const mf_wire_hdr *h, struct iovec *iov, int niov)
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
int mf_p2p_range_iov(const mf_request *r, size_t off, size_t len, struct iovec *iov, int max)
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

/* mf_p2p_stage (protocol.h) for non-contiguous data: rq_iovs points at the user buffer's few
 * large pieces (when `iov_ok`: the protocol can carry iovecs), else at a packed copy (`pack`
 * true for sends) or a staging buffer to unpack from (receives). */
int mf_p2p_stage_strided(mf_request *r, size_t len, bool iov_ok, bool pack)
{
    const struct mf_datatype_public *t = mf_datatype_info(r->rq_dt);
    r->rq_iovs = &r->rq_iov_one;
    r->rq_niov = 1;
    /* Pieces too small on average (a matrix column) are packed without trying iovecs. */
    if (iov_ok && t->dt_piece_avg >= MF_P2P_IOV_MIN_PIECE) {
        struct iovec *iov = malloc(MF_P2P_IOV_MAX * sizeof *iov);
        int n = iov ? mf_p2p_user_iov(r, 0, len, iov, MF_P2P_IOV_MAX) : 0;
        if (n > 0) {
            r->rq_iovs = iov;
            r->rq_niov = n;
            return MPI_SUCCESS;
        }
        free(iov);
    }
    r->rq_packed = mf_bufcache_get(len); /* a staging copy per message: kept for the next */
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
    mf_p2p_request_op(r, (void *)buf, count, dt, dest, tag, ctx);
    r->rq_mode = mode;
    r->rq_send_done.fd_fn = mf_p2p_send_done;
    if (dest == MPI_PROC_NULL) {
        r->pub.r_status.MPI_SOURCE = MPI_PROC_NULL;
        mf_request_finish(r);
        return MPI_SUCCESS;
    }
    r->rq_bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    r->rq_peer = mf_comm_peer(comm, dest);
    mf_fabric *toff = mf_p2p_offload(comm);
    if (toff) {
        mf_p2p_offload_isend(r, toff);
        return MPI_SUCCESS; /* errors are reported when the request is completed */
    }
    r->rq_fabric = mf_comm_fabric(comm, r->rq_peer);
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
        } else {
            r->rq_rndv_out = true;
            mf_p2p_rndv_out_bytes += r->rq_bytes;
            if (mf_p2p_rndv_out_bytes > mf_p2p_rndv_out_peak)
                mf_p2p_rndv_out_peak = mf_p2p_rndv_out_bytes;
        }
    }
    mf_request_unbusy(r);
    return MPI_SUCCESS;
}

/* Fills e and returns true if the send qualifies (see mf_p2p_eager); *rc is the peer's error
 * when that is why it does not. */
bool mf_p2p_eager_prepare(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                          mf_comm *comm, unsigned ctx, mf_p2p_eager *e, int *rc)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    *rc = MPI_SUCCESS;
    if (dest == MPI_PROC_NULL || !t->dt_contig)
        return false;
    size_t bytes = (size_t)count * t->dt_size;
    e->peer = mf_comm_peer(comm, dest);
    e->f = mf_comm_fabric(comm, e->peer);
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

void mf_p2p_pack_piece(void *arg, size_t offset, void *at, size_t len)
{
    mf_p2p_typed *t = arg;
    mf_datatype_pack(t->dt, t->buf, t->count, offset, at, len);
}

int mf_p2p_send_in_place(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                         mf_comm *comm, unsigned ctx)
{
    mf_p2p_eager e;
    int rc;
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    if (mf_p2p_offload(comm) ||
        !mf_p2p_eager_prepare(buf, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), dest, tag, comm,
                              ctx, &e, &rc) ||
        !e.f->ops->send_in_place)
        return MF_FABRIC_BUSY;
    mf_p2p_typed t = {dt, (void *)(uintptr_t)buf, (size_t)count, false};
    return e.f->ops->send_in_place(e.f, e.peer, &e.h, &(mf_fabric_mover){mf_p2p_pack_piece, &t});
}

int mf_isend_standard(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                      mf_comm *comm, unsigned ctx, mf_request **out)
{
    mf_p2p_eager e;
    int rc;
    mf_fabric *toff = mf_p2p_offload(comm);
    if (toff && mf_p2p_offload_inject(buf, count, dt, dest, tag, comm, ctx, toff) == MPI_SUCCESS) {
        *out = mf_request_sent();
        return MPI_SUCCESS;
    }
    if (!toff && mf_p2p_eager_prepare(buf, count, dt, dest, tag, comm, ctx, &e, &rc) &&
        (e.f->flags & MF_FABRIC_INJECT) &&
        e.f->ops->send(e.f, e.peer, &e.h, &e.iov, 1, NULL) == MF_FABRIC_DONE) {
        *out = mf_request_sent();
        return MPI_SUCCESS;
    }
    /* A non-contiguous one, packed straight into the frame where the fabric allows. */
    if (!toff && !mf_datatype_info(dt)->dt_contig &&
        mf_p2p_send_in_place(buf, count, dt, dest, tag, comm, ctx) == MF_FABRIC_DONE) {
        *out = mf_request_sent();
        return MPI_SUCCESS;
    }
    /* Not eligible, busy (frames queued ahead, ring full) or failing: the request path sorts it
     * out, in order. */
    return mf_isend(buf, count, dt, dest, tag, comm, ctx, MF_SEND_STANDARD, out);
}
