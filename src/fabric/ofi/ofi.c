/*
 * ofi.c — the ofi fabric's ops table over libfabric (design in ofi.h): open (provider, domain,
 * endpoint, publish the address), start (resolve the peers' addresses), send, rget, progress,
 * sleeping support and close.
 *
 * Coded to the libfabric 1.17 API (Debian 12); later versions accept it.
 */
#include "fabric/ofi/ofi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "runtime/pm.h"

/* How long close lets queued sends drain. */
#define MF_OFI_FLUSH_S 10.0

static int mf_ofi_open(mf_fabric *f);
static int mf_ofi_close(mf_fabric *f);
static int mf_ofi_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                       int niov, mf_fabric_done *done);

static const mf_fabric_ops mf_ofi_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_ofi_open,
    .start = mf_ofi_start,
    .close = mf_ofi_close,
    .reachable = mf_ofi_reachable,
    .send = mf_ofi_send,
    .rkey_make = mf_ofi_rkey_make,
    .rkey_release = mf_ofi_rkey_release,
    .rget = mf_ofi_rget,
    .progress = mf_ofi_progress,
    .wait_fd = mf_ofi_wait_fd,
    .sleep_prepare = mf_ofi_sleep_prepare,
    .sleep_end = mf_fabric_no_sleep_end,
    .tx_idle = mf_ofi_tx_idle,
    .break_peer = mf_fabric_no_break_peer,
    .describe = mf_ofi_describe,
    /* revive_peer stays NULL: after a failure the two ends' frame sequence numbers (o_tx_seq,
     * o_rx_seq) no longer agree, and nothing here resynchronises them yet */
    .rma_key = mf_ofi_rma_key,
    .rput = mf_ofi_rput,
    .atomic_max = mf_ofi_atomic_max,
    .ratomic = mf_ofi_ratomic,
};

static void mf_ofi_init(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    /* Not MF_FABRIC_INJECT: the provider takes every frame at once (its own queues are out of
     * sight), so a request-less send could never be cancelled while it waits there. */
    f->flags = MF_FABRIC_NETWORK;
    f->eager_limit = 16384;
    f->max_frame = MF_OFI_FRAME;
    o->o_wait_fd = -1;
    o->o_rl_stranger = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
}

const mf_fabric_class mf_ofi_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "ofi",
    .ops = &mf_ofi_ops,
    .caps = MF_FABRIC_CAP_RELIABLE | MF_FABRIC_CAP_ORDERED | MF_FABRIC_CAP_RMA_READ |
            MF_FABRIC_CAP_RMA_WRITE | MF_FABRIC_CAP_RMA_ATOMIC | MF_FABRIC_CAP_RAIL |
            MF_FABRIC_CAP_NETWORK | MF_FABRIC_CAP_IFACES,
    .max_message = MF_OFI_FRAME,
    .instance_size = sizeof(mf_ofi),
    .init = mf_ofi_init,
};

static double mf_ofi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An error code naming the instance, its provider, the operation and libfabric's reason. */
int mf_ofi_err(mf_ofi *o, int err_class, ssize_t fi_rc, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mf_error(err_class, "%s (libfabric provider %s): %s: %s", o->o_base.name,
                    o->o_prov[0] ? o->o_prov : "?", what, o->o_lib->strerror((int)-fi_rc));
}

/* ---- Buffers ---- */

/* Registers local memory when the provider asks for it (FI_MR_LOCAL); else nothing to do. */
int mf_ofi_reg_local(mf_ofi *o, void *buf, size_t len, uint64_t access, struct fid_mr **mr,
                     void **desc)
{
    *mr = NULL;
    *desc = NULL;
    if (!(o->o_mr_mode & FI_MR_LOCAL))
        return MPI_SUCCESS;
    int rc = fi_mr_reg(o->o_domain, buf, len, access, 0, 0, 0, mr, NULL);
    if (rc)
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_mr_reg of a local buffer of %zu bytes", len);
    *desc = fi_mr_desc(*mr);
    return MPI_SUCCESS;
}

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

/* Hands a receive buffer to the provider; false when it refused for now (-FI_EAGAIN). */
bool mf_ofi_rx_post(mf_ofi *o, mf_ofi_buf *b)
{
    ssize_t rc = fi_recv(o->o_ep, b->b_data, MF_WIRE_HDR_SIZE + o->o_base.max_frame, b->b_desc,
                         FI_ADDR_UNSPEC, &b->b_op.o_ctx);
    b->b_posted = rc == 0;
    if (rc && rc != -FI_EAGAIN)
        mf_warn("%s", "ofi: fi_recv failed; a receive buffer is lost");
    return rc == 0;
}

static void mf_ofi_release(mf_ofi *o)
{
    if (o->o_ep)
        fi_close(&o->o_ep->fid);
    o->o_ep = NULL;
    for (int i = 0; i < MF_OFI_RX_BUFS; i++) {
        mf_ofi_buf_free(o->o_rx[i]);
        o->o_rx[i] = NULL;
    }
    while (o->o_tx_free) {
        mf_ofi_buf *b = o->o_tx_free;
        o->o_tx_free = (mf_ofi_buf *)b->b_op.o_next;
        mf_ofi_buf_free(b);
    }
    o->o_tx_nfree = 0;
    /* Operations still waiting were never handed over: free them. */
    while (o->o_wait_head) {
        mf_ofi_op *op = o->o_wait_head;
        o->o_wait_head = op->o_next;
        if (op->o_kind == MF_OFI_SEND)
            mf_ofi_buf_free((mf_ofi_buf *)op);
    }
    o->o_wait_tail = NULL;
    if (o->o_keys) {
        for (int i = 0; i < MF_OFI_MAX_KEYS; i++)
            if (o->o_keys[i].k_rkey)
                fi_close(&o->o_keys[i].k_mr->fid);
        free(o->o_keys);
        o->o_keys = NULL;
    }
    if (o->o_av)
        fi_close(&o->o_av->fid);
    if (o->o_cq)
        fi_close(&o->o_cq->fid);
    if (o->o_domain)
        fi_close(&o->o_domain->fid);
    if (o->o_fabric)
        fi_close(&o->o_fabric->fid);
    o->o_av = NULL;
    o->o_cq = NULL;
    o->o_domain = NULL;
    o->o_fabric = NULL;
    o->o_wait_fd = -1;
    if (o->o_info)
        o->o_lib->freeinfo(o->o_info);
    o->o_info = NULL;
    free(o->o_addr);
    free(o->o_failed);
    free(o->o_fail_told);
    free(o->o_tx_seq);
    free(o->o_rx_seq);
    o->o_tx_seq = o->o_rx_seq = NULL;
    while (o->o_held) {
        mf_ofi_held *e = o->o_held;
        o->o_held = e->h_next;
        free(e);
    }
    o->o_addr = NULL;
    o->o_failed = NULL;
    o->o_fail_told = NULL;
    free(o->o_aq_head);
    free(o->o_aq_tail);
    free(o->o_abusy);
    o->o_aq_head = o->o_aq_tail = NULL;
    o->o_abusy = NULL;
}

static int mf_ofi_open(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    f->eager_limit = mf_config_size("MANIFOLD_OFI_EAGER_LIMIT");
    if (f->eager_limit > f->max_frame)
        f->eager_limit = f->max_frame;
    o->o_poll_us = (int)mf_config_long("MANIFOLD_OFI_POLL_US");
    o->o_npeers = mf_g.size;
    o->o_addr = malloc((size_t)mf_g.size * sizeof *o->o_addr);
    o->o_failed = calloc((size_t)mf_g.size, sizeof *o->o_failed);
    o->o_fail_told = calloc((size_t)mf_g.size, sizeof *o->o_fail_told);
    o->o_tx_seq = calloc((size_t)mf_g.size, sizeof *o->o_tx_seq);
    o->o_rx_seq = calloc((size_t)mf_g.size, sizeof *o->o_rx_seq);
    o->o_aq_head = calloc((size_t)mf_g.size, sizeof *o->o_aq_head);
    o->o_aq_tail = calloc((size_t)mf_g.size, sizeof *o->o_aq_tail);
    o->o_abusy = calloc((size_t)mf_g.size, sizeof *o->o_abusy);
    o->o_self = FI_ADDR_NOTAVAIL;
    int rc = MPI_SUCCESS;
    if (!o->o_addr || !o->o_failed || !o->o_fail_told || !o->o_tx_seq || !o->o_rx_seq ||
        !o->o_aq_head || !o->o_aq_tail || !o->o_abusy)
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for %d peers", f->name, mf_g.size);
    for (int r = 0; rc == MPI_SUCCESS && r < mf_g.size; r++)
        o->o_addr[r] = FI_ADDR_NOTAVAIL;
    const char *why = NULL;
    if (rc == MPI_SUCCESS && !(o->o_lib = mf_ofi_lib_load(&why)))
        rc = mf_error(MPI_ERR_OTHER, "%s (libfabric): %s", f->name, why);
    if (rc == MPI_SUCCESS)
        rc = mf_ofi_getinfo(o);
    if (rc == MPI_SUCCESS)
        rc = mf_ofi_open_ep(o);
    if (rc == MPI_SUCCESS)
        mf_ofi_atomic_setup(o);
    if (rc == MPI_SUCCESS)
        rc = mf_ofi_addr_publish(o);
    /* Sleeping: the CQ's fd, else a bounded sleep (fabric.h, wait_fd). */
    mf_ofi_sleep_bound(o);
    if (o->o_rma)
        f->flags |= MF_FABRIC_RGET;
    if (rc)
        mf_ofi_release(o);
    return rc;
}

static void mf_ofi_put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t mf_ofi_get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Whether a frame may travel in the short form (ofi.h): an eager message whose other fields
 * are zero. */
static bool mf_ofi_shortable(const mf_wire_hdr *h)
{
    return h->type == MF_MSG_EAGER && h->total == h->len && h->rreq == 0 && h->rkey == 0 &&
           h->len <= UINT32_MAX;
}

/* Lays a frame out in `out`: the header (short form when `short_form`), then hdr->len bytes
 * gathered from iov. False when the iovecs hold fewer. */
static bool mf_ofi_frame(unsigned char *out, const mf_wire_hdr *hdr, const struct iovec *iov,
                         int niov, bool short_form)
{
    size_t hl = short_form ? MF_OFI_SHORT_HDR : MF_WIRE_HDR_SIZE;
    size_t total = hl + (size_t)hdr->len, off = hl;
    if (short_form) {
        out[0] = hdr->type;
        out[1] = hdr->flags;
        mf_ofi_put_le(out + 2, hdr->context, 4);
        mf_ofi_put_le(out + 6, (uint32_t)hdr->src, 4);
        mf_ofi_put_le(out + 10, (uint32_t)hdr->tag, 4);
        mf_ofi_put_le(out + 14, hdr->sreq, 8);
        mf_ofi_put_le(out + 22, hdr->len, 4);
    } else {
        mf_wire_encode(hdr, out);
    }
    for (int i = 0; i < niov && off < total; i++) {
        size_t n = iov[i].iov_len < total - off ? iov[i].iov_len : total - off;
        memcpy(out + off, iov[i].iov_base, n);
        off += n;
    }
    return off == total;
}

static int mf_ofi_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                       int niov, mf_fabric_done *done)
{
    mf_ofi *o = mf_ofi_of(f);
    if (peer < 0 || peer >= o->o_npeers || o->o_addr[peer] == FI_ADDR_NOTAVAIL)
        return mf_error(MPI_ERR_INTERN, "%s: send to unreachable rank %d", f->name, peer);
    if (hdr->len > f->max_frame)
        return mf_error(MPI_ERR_INTERN, "%s: frame of %llu bytes exceeds max_frame", f->name,
                        (unsigned long long)hdr->len);
    if (o->o_failed[peer])
        return o->o_failed[peer];
    size_t total = MF_WIRE_HDR_SIZE + (size_t)hdr->len;
    uint64_t cqdata = ((uint64_t)o->o_tx_seq[peer] << 32) | (uint32_t)mf_g.rank;
    /* Small eager messages in the short form where that makes them fit the inject size. */
    bool short_form = total > o->o_inject && mf_ofi_shortable(hdr) &&
                      MF_OFI_SHORT_HDR + (size_t)hdr->len <= o->o_inject;
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
static const char *mf_ofi_parse(const unsigned char *m, size_t len, bool short_form, mf_wire_hdr *h,
                                const unsigned char **payload)
{
    const char *why = NULL;
    size_t hl = short_form ? MF_OFI_SHORT_HDR : MF_WIRE_HDR_SIZE;
    if (len < hl)
        return "shorter than a frame header";
    if (short_form) {
        *h = (mf_wire_hdr){.type = m[0], .flags = m[1]};
        h->context = (uint32_t)mf_ofi_get_le(m + 2, 4);
        h->src = (int32_t)(uint32_t)mf_ofi_get_le(m + 6, 4);
        h->tag = (int32_t)(uint32_t)mf_ofi_get_le(m + 10, 4);
        h->sreq = mf_ofi_get_le(m + 14, 8);
        h->len = h->total = mf_ofi_get_le(m + 22, 4);
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

/* A frame arrived in receive buffer b (len bytes; remote CQ data `cqdata`): validated, then
 * delivered in its peer's sequence order, with the early frames it unblocks. */
void mf_ofi_arrived(mf_ofi *o, mf_ofi_buf *b, size_t len, uint64_t cqdata)
{
    mf_wire_hdr h;
    const unsigned char *payload = NULL;
    const char *why = NULL;
    uint32_t rank = (uint32_t)cqdata & ~MF_OFI_CQ_SHORT, seq = (uint32_t)(cqdata >> 32);
    if (rank >= (uint32_t)o->o_npeers || rank == (uint32_t)mf_g.rank)
        why = "the source rank is not a peer";
    else
        why = mf_ofi_parse(b->b_data, len, (uint32_t)cqdata & MF_OFI_CQ_SHORT, &h, &payload);
    if (why) {
        unsigned held;
        if (mf_ratelimit_pass(&o->o_rl_stranger, mf_ofi_now(), &held))
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

static int mf_ofi_close(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    if (!o->o_ep) {
        mf_ofi_release(o);
        return MPI_SUCCESS;
    }
    /* Let what was handed over complete, for a bounded time (peers progress in their close). */
    double deadline = mf_ofi_now() + MF_OFI_FLUSH_S;
    while (!mf_ofi_tx_idle(f) && mf_ofi_now() < deadline)
        if (mf_ofi_progress(f) == 0)
            nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL); /* no spin while peers work */
    int rc = MPI_SUCCESS;
    if (!mf_ofi_tx_idle(f))
        rc = mf_error(MPI_ERR_OTHER, "%s: sends still pending after %.0f s at finalize", f->name,
                      MF_OFI_FLUSH_S);
    o->o_closing = true;
    mf_ofi_release(o);
    return rc;
}
