/*
 * rndv.c — the rendezvous protocol (messages above the fabric's eager limit).
 *
 * The sender sent an RTS with the envelope and size (send.c). When the receiver matches it,
 * it takes min(size, its buffer) bytes:
 *   - pull: if the fabric can rget, the RTS carries a key and the receiving rank's own
 *     rendezvous sends in flight reach the fabric's rget_min_busy (fabric.h; rget_min_busy_shared
 *     while the receiving thread shares its core with other load), the receiver copies the data
 *     itself (CMA on shm: one copy) and sends FIN, on which the sender releases the key and
 *     completes;
 *   - push: otherwise it sends CTS with its request id and how much it takes, and the sender
 *     (releasing its key) streams DATA frames (at most max_frame bytes each) that land straight
 *     in the receive buffer.
 * Truncation delivers the part that fits; the sender completes normally. Each wait (CTS, FIN,
 * the pulled or pushed data) is one rq_busy step of its request.
 */
#include <stdlib.h>

#include "core/core_share.h"
#include "core/error.h"
#include "p2p/protocol.h"

/* CTS: the receiver takes hdr->total bytes; stream them as DATA frames. */
void mf_p2p_on_cts(mf_request *r, const mf_wire_hdr *h)
{
    mf_p2p_release_rkey(r); /* the receiver chose not to pull */
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

void mf_p2p_release_rkey(mf_request *r)
{
    if (r->rq_rkey)
        r->rq_fabric->ops->rkey_release(r->rq_fabric, r->rq_rkey);
    r->rq_rkey = 0;
}

void mf_p2p_on_fin(mf_request *r)
{
    mf_p2p_release_rkey(r);
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

/* Whether the receiver of RTS h on f pulls its data (see the top of this file). The core's
 * sharing is read last: only a rank whose sends in flight fall between the two thresholds
 * pays for the look (core_share.h: tens of nanoseconds, a few microseconds once in 4 ms). */
static bool mf_p2p_pulls(const mf_fabric *f, const mf_wire_hdr *h, size_t busy)
{
    if (!mf_p2p_pull_possible(f, h))
        return false;
    return busy >= f->rget_min_busy || (busy >= f->rget_min_busy_shared && mf_core_shared());
}

/* A receive matched an RTS: pull the data, or ask the sender to push it. */
void mf_p2p_start_rndv(mf_request *r, mf_fabric *f, int peer, const mf_wire_hdr *h, size_t busy)
{
    r->rq_peer = peer;
    r->rq_fabric = f;
    r->rq_peer_id = h->sreq;
    mf_p2p_accept(r, h, h->total);
    int rc = mf_p2p_stage_recv(r);
    r->rq_busy++;
    if (!rc && mf_p2p_pulls(f, h, busy)) {
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

/* DATA frame for a pushed rendezvous: lands at its offset in the receive buffer. */
void mf_p2p_data_sink_done(mf_fabric_sink *sink, int status)
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
