/*
 * ofi.c — the ofi fabric's class and ops table over libfabric (design in ofi.h), and the
 * instance's life: open (load libfabric, choose provider and domain, open the endpoint,
 * publish the address: ofi_setup.c, ofi_addr.c), close (let handed-over operations drain for
 * up to MF_OFI_FLUSH_S, then release everything), and the helpers every part uses.
 *
 * Where the rest is: ofi_setup.c provider, domain and endpoint; ofi_addr.c address exchange;
 * ofi_msg.c the message data path (send, receive buffers, frame order); ofi_post.c handing
 * operations to the provider and the -FI_EAGAIN FIFO; ofi_rma.c registrations, rendezvous by
 * fi_read and native put; ofi_atomic.c native atomics; ofi_progress.c the completion queue,
 * failures and sleeping; ofi_describe.c the report; ofi_lib.c loading libfabric.
 *
 * Contract of release (open's failure path and close): closes every libfabric object and frees
 * every buffer, whatever open got to; operations still waiting were never handed over and are
 * freed without completing.
 */
#include "fabric/ofi/ofi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/state.h"

/* How long close lets queued sends drain. */
#define MF_OFI_FLUSH_S 10.0

static int mf_ofi_open(mf_fabric *f);
static int mf_ofi_close(mf_fabric *f);

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
    .rx_peek = mf_ofi_rx_peek,
    .rx_take = mf_ofi_rx_take,
    .break_peer = mf_fabric_no_break_peer,
    .describe = mf_ofi_describe,
    /* revive_peer stays NULL: after a failure the two ends' frame sequence numbers (o_tx_seq,
     * o_rx_seq) no longer agree, and nothing here resynchronises them yet */
    .rma_key = mf_ofi_rma_key,
    .rput = mf_ofi_rput,
    .atomic_max = mf_ofi_atomic_max,
    .ratomic = mf_ofi_ratomic,
    .tagged_enable = mf_ofi_tagged_enable,
    .tsend = mf_ofi_tsend,
    .trecv = mf_ofi_trecv,
    .tprobe = mf_ofi_tprobe,
    .tcancel = mf_ofi_tcancel,
    .tiov_max = mf_ofi_tiov_max,
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
            MF_FABRIC_CAP_TAGGED | MF_FABRIC_CAP_NETWORK | MF_FABRIC_CAP_IFACES,
    .max_message = MF_OFI_FRAME,
    .instance_size = sizeof(mf_ofi),
    .init = mf_ofi_init,
};

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

static void mf_ofi_release(mf_ofi *o)
{
    if (o->o_ep)
        fi_close(&o->o_ep->fid);
    o->o_ep = NULL;
    o->o_rx_later = NULL;
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
    free(o->o_tspill);
    free(o->o_tseq_tx);
    o->o_tseq_tx = NULL;
    o->o_tspill = NULL;
    mf_fabric_failures_free(&o->o_fails);
    free(o->o_tx_seq);
    free(o->o_rx_seq);
    o->o_tx_seq = o->o_rx_seq = NULL;
    while (o->o_held) {
        mf_ofi_held *e = o->o_held;
        o->o_held = e->h_next;
        free(e);
    }
    o->o_addr = NULL;
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
    o->o_poll_us = 50; /* until start knows whether ranks outnumber cores (mf_ofi_start) */
    o->o_npeers = mf_g.size;
    o->o_addr = malloc((size_t)mf_g.size * sizeof *o->o_addr);
    o->o_tx_seq = calloc((size_t)mf_g.size, sizeof *o->o_tx_seq);
    o->o_rx_seq = calloc((size_t)mf_g.size, sizeof *o->o_rx_seq);
    o->o_aq_head = calloc((size_t)mf_g.size, sizeof *o->o_aq_head);
    o->o_aq_tail = calloc((size_t)mf_g.size, sizeof *o->o_aq_tail);
    o->o_abusy = calloc((size_t)mf_g.size, sizeof *o->o_abusy);
    o->o_self = FI_ADDR_NOTAVAIL;
    int rc = mf_fabric_failures_init(&o->o_fails, mf_g.size, f->name);
    if (rc == MPI_SUCCESS && (!o->o_addr || !o->o_tx_seq || !o->o_rx_seq || !o->o_aq_head ||
                              !o->o_aq_tail || !o->o_abusy))
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

static int mf_ofi_close(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    if (!o->o_ep) {
        mf_ofi_release(o);
        return MPI_SUCCESS;
    }
    /* Let what was handed over complete, for a bounded time (peers progress in their close). */
    double deadline = mf_clock_s() + MF_OFI_FLUSH_S;
    while (!mf_ofi_tx_idle(f) && mf_clock_s() < deadline)
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
