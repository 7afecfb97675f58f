/*
 * ofi_msg.c — the message data path of the ofi fabric: the send op and the frames that arrive
 * in receive buffers (ofi.h: "Message path").
 *
 * Contract: send lays out one frame (the wire header, or the short form where only that fits
 * the inject size, then the payload gathered from the iovecs) and sends it with
 * fi_injectdata from the stack when it fits the inject size and nothing waits, else from a
 * transmit buffer (cached, MF_OFI_TX_CACHE) with fi_senddata through the wait FIFO; the remote
 * CQ data carries our rank and the peer's sequence number. It returns MF_FABRIC_DONE (the frame
 * is the provider's or queued), MF_FABRIC_BUSY (no memory for a transmit buffer and no request
 * to fail), or an error code (the peer unreachable or failed, no memory with a request, or a
 * frame larger than max_frame or than its iovecs). mf_ofi_arrived validates a received frame
 * (source rank, header, length), drops a stranger's with a rate-limited warning, and delivers
 * each peer's frames in sequence order, holding early ones aside (o_held).
 */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/iov.h"
#include "core/log.h"
#include "core/ratelimit.h"
#include "core/state.h"
#include "fabric/ofi/ofi.h"

void mf_ofi_buf_free(mf_ofi_buf *b)
{
    if (b && b->b_mr)
        fi_close(&b->b_mr->fid);
    free(b);
}

mf_ofi_buf *mf_ofi_buf_new(mf_ofi *o, int kind)
{
    size_t size = MF_WIRE_HDR_SIZE + o->o_base.max_frame;
    mf_ofi_buf *b = calloc(1, sizeof *b + size);
    if (!b)
        return NULL;
    b->b_op.o_kind = kind;
    if (mf_ofi_reg_local(o, b->b_data, size, kind == MF_OFI_RECV ? FI_RECV : FI_SEND, &b->b_mr,
                         &b->b_desc)) {
        free(b);
        return NULL;
    }
    return b;
}

static mf_ofi_buf *mf_ofi_tx_get(mf_ofi *o)
{
    mf_ofi_buf *b = o->o_tx_free;
    if (!b)
        return mf_ofi_buf_new(o, MF_OFI_SEND);
    o->o_tx_free = (mf_ofi_buf *)b->b_op.o_next;
    o->o_tx_nfree--;
    return b;
}

void mf_ofi_tx_put(mf_ofi *o, mf_ofi_buf *b)
{
    if (o->o_tx_nfree >= MF_OFI_TX_CACHE) {
        mf_ofi_buf_free(b);
        return;
    }
    b->b_op.o_next = (mf_ofi_op *)o->o_tx_free;
    o->o_tx_free = b;
    o->o_tx_nfree++;
}

/* Hands a receive buffer to the provider; false when it refused for now (-FI_EAGAIN). What
 * rx_peek remembered of the buffer's last frame is forgotten: the next one goes there. */
bool mf_ofi_rx_post(mf_ofi *o, mf_ofi_buf *b)
{
    if (o->o_peeked == b)
        o->o_peeked = NULL;
    ssize_t rc = fi_recv(o->o_ep, b->b_data, MF_WIRE_HDR_SIZE + o->o_base.max_frame, b->b_desc,
                         FI_ADDR_UNSPEC, &b->b_op.o_ctx);
    b->b_posted = rc == 0;
    if (rc && rc != -FI_EAGAIN)
        mf_warn("%s", "ofi: fi_recv failed; a receive buffer is lost");
    return rc == 0;
}

void mf_ofi_rx_repost(mf_ofi *o)
{
    for (int i = 0; i < MF_OFI_RX_BUFS && o->o_rx_unposted > 0; i++)
        if (!o->o_rx[i]->b_posted && o->o_rx[i] != o->o_rx_later && mf_ofi_rx_post(o, o->o_rx[i]))
            o->o_rx_unposted--;
}

void mf_ofi_rx_defer(mf_ofi *o, mf_ofi_buf *b)
{
    if (o->o_rx_later)
        mf_ofi_rx_post_later(o);
    o->o_rx_later = b;
}

void mf_ofi_rx_post_later(mf_ofi *o)
{
    mf_ofi_buf *b = o->o_rx_later;
    o->o_rx_later = NULL;
    if (!mf_ofi_rx_post(o, b))
        o->o_rx_unposted++;
}

/* Whether a frame may travel in the short form (ofi.h): an eager message whose other fields
 * are zero. */
static bool mf_ofi_shortable(const mf_wire_hdr *h)
{
    return h->type == MF_MSG_EAGER && h->total == h->len && h->rreq == 0 && h->rkey == 0 &&
           h->len <= UINT32_MAX;
}

/* Lays a frame out in `out`: the header (short form when `short_form`), then hdr->len bytes
 * gathered from iov. False when the iovecs hold fewer. Inline: it is most of an injected
 * send, whose call and register saves showed in the 8-byte latency. */
static inline __attribute__((always_inline)) bool mf_ofi_frame(unsigned char *out,
                                                               const mf_wire_hdr *hdr,
                                                               const struct iovec *iov, int niov,
                                                               bool short_form)
{
    size_t hl = short_form ? MF_OFI_SHORT_HDR : MF_WIRE_HDR_SIZE;
    size_t len = (size_t)hdr->len;
    if (short_form) {
        out[0] = hdr->type;
        out[1] = hdr->flags;
        mf_wire_put32(out + 2, hdr->context);
        mf_wire_put32(out + 6, (uint32_t)hdr->src);
        mf_wire_put32(out + 10, (uint32_t)hdr->tag);
        mf_wire_put64(out + 14, hdr->sreq);
    } else {
        mf_wire_encode(hdr, out);
    }
    return mf_iov_gather(out + hl, iov, niov, len) == len;
}

int mf_ofi_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov, int niov,
                mf_fabric_done *done)
{
    mf_ofi *o = mf_ofi_of(f);
    if (peer < 0 || peer >= o->o_npeers || o->o_addr[peer] == FI_ADDR_NOTAVAIL)
        return mf_error(MPI_ERR_INTERN, "%s: send to unreachable rank %d", f->name, peer);
    if (hdr->len > f->max_frame)
        return mf_error(MPI_ERR_INTERN, "%s: frame of %llu bytes exceeds max_frame", f->name,
                        (unsigned long long)hdr->len);
    if (o->o_fails.code[peer])
        return o->o_fails.code[peer];
    size_t total = MF_WIRE_HDR_SIZE + (size_t)hdr->len;
    uint64_t cqdata = ((uint64_t)o->o_tx_seq[peer] << 32) | (uint32_t)mf_g.rank;
    /* Small eager messages in the short form (ofi.h): fewer bytes for the provider to move, and
     * some that fit the inject size only so. */
    bool short_form = mf_ofi_shortable(hdr) && MF_OFI_SHORT_HDR + (size_t)hdr->len <= o->o_inject;
    if (short_form) {
        total = MF_OFI_SHORT_HDR + (size_t)hdr->len;
        cqdata |= MF_OFI_CQ_SHORT;
    }
    /* Small frames with nothing queued: fi_injectdata from the stack, complete at once. */
    if (total <= o->o_inject && !o->o_wait_head) {
        unsigned char frame[MF_WIRE_HDR_SIZE + 4096];
        if (total <= sizeof frame) {
            if (!mf_ofi_frame(frame, hdr, iov, niov, short_form))
                return mf_error(MPI_ERR_INTERN, "%s: the iovecs do not hold %llu bytes", f->name,
                                (unsigned long long)hdr->len);
            ssize_t rc = fi_injectdata(o->o_ep, frame, total, cqdata, o->o_addr[peer]);
            if (rc == 0) {
                o->o_injects++;
                o->o_tx_seq[peer]++;
                mf_fabric_count_tx(f, hdr);
                return MF_FABRIC_DONE;
            }
            if (rc != -FI_EAGAIN) {
                int code = mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_injectdata to rank %d", peer);
                mf_ofi_peer_fail(o, peer, code);
                return code;
            }
        }
    }
    mf_ofi_buf *b = mf_ofi_tx_get(o);
    if (!b)
        return done ? mf_error(MPI_ERR_NO_MEM, "%s: no memory for a frame", f->name)
                    : MF_FABRIC_BUSY;
    if (!mf_ofi_frame(b->b_data, hdr, iov, niov, short_form)) {
        mf_ofi_tx_put(o, b);
        return mf_error(MPI_ERR_INTERN, "%s: the iovecs do not hold %llu bytes", f->name,
                        (unsigned long long)hdr->len);
    }
    b->b_len = total;
    b->b_cqdata = cqdata;
    b->b_op.o_peer = peer;
    ssize_t rc = o->o_wait_head ? -FI_EAGAIN : mf_ofi_post(o, &b->b_op);
    if (rc == -FI_EAGAIN) {
        mf_ofi_wait_push(o, &b->b_op);
    } else if (rc) {
        int code = mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_senddata to rank %d", peer);
        mf_ofi_tx_put(o, b);
        mf_ofi_peer_fail(o, peer, code);
        return code;
    }
    o->o_tx_seq[peer]++;
    mf_fabric_count_tx(f, hdr);
    return MF_FABRIC_DONE;
}

/* Hands one frame (validated header, payload) from `peer` up. */
static void mf_ofi_deliver(mf_ofi *o, int peer, const mf_wire_hdr *h, const unsigned char *payload)
{
    mf_fabric *f = &o->o_base;
    mf_fabric_sink sink = {0};
    mf_fabric_up_rx_header(f, peer, h, &sink);
    size_t off = 0;
    for (int i = 0; i < sink.fs_niov && off < h->len; i++) {
        size_t n = sink.fs_iov[i].iov_len < h->len - off ? sink.fs_iov[i].iov_len : h->len - off;
        memcpy(sink.fs_iov[i].iov_base, payload + off, n);
        off += n;
    }
    mf_fabric_count_rx(f, h);
    if (sink.fs_done)
        sink.fs_done(&sink, MPI_SUCCESS);
}

/* Decodes and checks a message of len bytes (short form when `short_form`, see ofi.h) into
 * *h; sets *payload. NULL, or why it is no frame. */
const char *mf_ofi_parse(const unsigned char *m, size_t len, bool short_form, mf_wire_hdr *h,
                         const unsigned char **payload)
{
    const char *why = NULL;
    size_t hl = short_form ? MF_OFI_SHORT_HDR : MF_WIRE_HDR_SIZE;
    if (len < hl)
        return "shorter than a frame header";
    if (short_form) {
        *h = (mf_wire_hdr){.type = m[0], .flags = m[1]};
        h->context = mf_wire_get32(m + 2);
        h->src = (int32_t)mf_wire_get32(m + 6);
        h->tag = (int32_t)mf_wire_get32(m + 10);
        h->sreq = mf_wire_get64(m + 14);
        h->len = h->total = len - hl;
        if (h->type != MF_MSG_EAGER)
            return "a short frame that is not eager";
        if (mf_wire_check(h, &why))
            return why;
    } else if (mf_wire_decode(m, h, &why)) {
        return why;
    }
    if (h->len != len - hl)
        return "length differs from the header's";
    *payload = m + hl;
    return NULL;
}

/* Delivers the early frames from `peer` whose turn has come, in order. */
static void mf_ofi_release_peer(mf_ofi *o, int peer)
{
    for (mf_ofi_held **pp = &o->o_held; *pp;) {
        mf_ofi_held *e = *pp;
        if (e->h_peer != peer || e->h_seq != o->o_rx_seq[peer]) {
            pp = &e->h_next;
            continue;
        }
        *pp = e->h_next;
        o->o_rx_seq[peer]++;
        mf_ofi_deliver(o, peer, &e->h_hdr, e->h_data);
        free(e);
        pp = &o->o_held; /* the next one may be anywhere */
    }
}

/* A frame arrived in receive buffer b (len bytes; remote CQ data `cqdata`): validated, then
 * delivered in its peer's sequence order, with the early frames it unblocks. */
void mf_ofi_arrived(mf_ofi *o, mf_ofi_buf *b, size_t len, uint64_t cqdata)
{
    mf_wire_hdr h;
    const unsigned char *payload = NULL;
    const char *why = NULL;
    uint32_t rank = (uint32_t)cqdata & ~MF_OFI_CQ_SHORT, seq = (uint32_t)(cqdata >> 32);
    /* Our own rank is a peer when the tagged ops carry messages to it (ofi_tagged.c puts our
     * address in o_addr): the control frames of those messages (SYNC_ACK, CANCEL) come back
     * through the message path. */
    if (rank >= (uint32_t)o->o_npeers || o->o_addr[rank] == FI_ADDR_NOTAVAIL)
        why = "the source rank is not a peer";
    else
        why = mf_ofi_parse(b->b_data, len, (uint32_t)cqdata & MF_OFI_CQ_SHORT, &h, &payload);
    if (why) {
        unsigned held;
        if (mf_ratelimit_pass(&o->o_rl_stranger, mf_clock_s(), &held))
            mf_warn("%s (libfabric provider %s): dropped a message of %zu bytes: %s (%u more "
                    "dropped)",
                    o->o_base.name, o->o_prov, len, why, held);
        return;
    }
    int peer = (int)rank;
    if (seq != o->o_rx_seq[peer]) {
        mf_ofi_held *e = malloc(sizeof *e + (size_t)h.len);
        if (!e) {
            mf_ofi_peer_fail(
                o, peer,
                mf_error(MPI_ERR_NO_MEM, "%s: no memory to hold an early frame", o->o_base.name));
            return;
        }
        e->h_peer = peer;
        e->h_seq = seq;
        e->h_hdr = h;
        memcpy(e->h_data, payload, (size_t)h.len);
        e->h_next = o->o_held;
        o->o_held = e;
        o->o_early++;
        return;
    }
    o->o_rx_seq[peer]++;
    mf_ofi_deliver(o, peer, &h, payload);
    mf_ofi_release_peer(o, peer);
}

void mf_ofi_release_held(mf_ofi *o)
{
    o->o_held_ready = false;
    mf_ofi_held *e = o->o_held;
    while (e) {
        if (e->h_seq != o->o_rx_seq[e->h_peer]) {
            e = e->h_next;
            continue;
        }
        mf_ofi_release_peer(o, e->h_peer); /* delivers e at least */
        e = o->o_held;                     /* the list changed: look again from the start */
    }
}
