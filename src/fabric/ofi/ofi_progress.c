/*
 * ofi_progress.c — progress and sleeping of the ofi fabric: reading the completion queue,
 * retrying what the provider refused, reporting failed peers, and what the engine needs to
 * sleep (wait fd, fi_trywait, the bound on timed sleeps).
 *
 * Contract: each progress pass first hands over the completions a direct receive staged
 * (ofi_direct.c) and the early frames its takes made deliverable, then reads the CQ until it is empty (manual progress: this also moves
 * the provider's connection set-up and the target side of peers' reads and writes), hands each
 * completion to its operation (a receive buffer's frame to mf_ofi_arrived, then the buffer
 * posted again; a send's buffer back to the cache; a piece to its rget/rput/atomic), reposts
 * receive buffers refused earlier, drains the wait FIFO, reports peers marked failed through
 * mf_fabric_up_peer_failed (never while closing), and recomputes poll_interval_us. It returns
 * how many events it handled (0: nothing happened). A CQ error entry's message names the
 * provider, the libfabric call, the rank and the provider's reason.
 */
#include <stdio.h>
#include <sys/prctl.h>

#include "core/error.h"
#include "core/log.h"
#include "fabric/ofi/ofi.h"

/* Marks a peer failed (first failure wins); the report goes out from progress. */
void mf_ofi_peer_fail(mf_ofi *o, int peer, int code)
{
    mf_fabric_failures_mark(&o->o_fails, peer, code);
}

static void mf_ofi_report_one(mf_fabric *f, int peer, int code)
{
    if (!mf_ofi_of(f)->o_closing)
        mf_fabric_up_peer_failed(f, peer, code);
}

/* A CQ error entry: names the provider, the operation and the reason. */
static void mf_ofi_cq_error(mf_ofi *o)
{
    struct fi_cq_err_entry e = {0};
    if (fi_cq_readerr(o->o_cq, &e, 0) != 1)
        return;
    mf_ofi_op *op = e.op_context;
    char prov[128] = "";
    if (e.prov_errno)
        snprintf(prov, sizeof prov, " (%s)",
                 fi_cq_strerror(o->o_cq, e.prov_errno, e.err_data, NULL, 0));
    if (!op)
        return;
    if (op->o_kind >= MF_OFI_TSEND)
        return mf_ofi_tagged_error(o, op, &e, prov);
    if (op->o_kind == MF_OFI_RECV) {
        mf_ofi_buf *b = (mf_ofi_buf *)op;
        b->b_posted = false;
        if (e.err != FI_ECANCELED && !o->o_closing)
            mf_warn("%s (libfabric provider %s): a receive completed with an error: %s%s",
                    o->o_base.name, o->o_prov, o->o_lib->strerror(e.err), prov);
        if (!o->o_closing && !mf_ofi_rx_post(o, b))
            o->o_rx_unposted++;
        return;
    }
    o->o_tx_inflight--;
    int code = mf_error(MPI_ERR_OTHER, "%s (libfabric provider %s): %s with rank %d failed: %s%s",
                        o->o_base.name, o->o_prov, mf_ofi_op_name(op), op->o_peer,
                        o->o_lib->strerror(e.err), prov);
    if (op->o_kind == MF_OFI_SEND) {
        mf_ofi_peer_fail(o, op->o_peer, code);
        mf_ofi_tx_put(o, (mf_ofi_buf *)op);
    } else if (op->o_kind == MF_OFI_ATOMIC) {
        mf_ofi_atomic_done(o, (mf_ofi_atom *)op, code);
    } else {
        mf_ofi_read_piece_done(o, (mf_ofi_piece *)op, code);
    }
}

/* Hands one completion to its operation. */
void mf_ofi_complete(mf_ofi *o, const struct fi_cq_tagged_entry *e)
{
    mf_ofi_op *op = e->op_context;
    if (op->o_kind >= MF_OFI_TSEND) {
        mf_ofi_tagged_done(o, op, e);
    } else if (op->o_kind == MF_OFI_RECV) {
        mf_ofi_buf *b = (mf_ofi_buf *)op;
        b->b_posted = false;
        mf_ofi_arrived(o, b, e->len, e->data);
        if (!mf_ofi_rx_post(o, b))
            o->o_rx_unposted++;
    } else if (op->o_kind == MF_OFI_SEND) {
        o->o_tx_inflight--;
        mf_ofi_tx_put(o, (mf_ofi_buf *)op);
    } else if (op->o_kind == MF_OFI_ATOMIC) {
        o->o_tx_inflight--;
        mf_ofi_atomic_done(o, (mf_ofi_atom *)op, MPI_SUCCESS);
    } else {
        o->o_tx_inflight--;
        mf_ofi_read_piece_done(o, (mf_ofi_piece *)op, MPI_SUCCESS);
    }
}

static int mf_ofi_poll_cq(mf_ofi *o)
{
    struct fi_cq_tagged_entry ev[16];
    int n = 0;
    for (;;) {
        ssize_t k = fi_cq_read(o->o_cq, ev, 16);
        if (k == -FI_EAVAIL) {
            mf_ofi_cq_error(o);
            n++;
            continue;
        }
        if (k <= 0)
            return n;
        for (ssize_t i = 0; i < k; i++)
            mf_ofi_complete(o, &ev[i]);
        n += (int)k;
        if (k < 16)
            return n;
    }
}

int mf_ofi_progress(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    o->o_in_progress++;
    /* what direct receives read from the CQ first, then what they let become deliverable */
    int n = o->o_stage_n ? mf_ofi_stage_drain(o) : 0;
    if (o->o_held_ready)
        mf_ofi_release_held(o);
    n += mf_ofi_poll_cq(o);
    if (o->o_rx_later)
        mf_ofi_rx_post_later(o);
    if (o->o_rx_unposted)
        mf_ofi_rx_repost(o);
    if (o->o_wait_head)
        n += mf_ofi_wait_drain(o);
    if (o->o_fails.npending)
        n += mf_fabric_failures_report(&o->o_fails, f, mf_ofi_report_one);
    o->o_in_progress--;
    mf_ofi_sleep_bound(o);
    return n;
}

void mf_ofi_sleep_bound(mf_ofi *o)
{
    int poll = o->o_poll_us > 0 ? o->o_poll_us : 1, us = poll;
    /* with a CQ fd, only what waits for the provider to take it is retried on a timer (no fd
     * says when); else the fd wakes us */
    if (o->o_wait_fd >= 0 && !o->o_wait_head && !o->o_rx_unposted)
        us = 0;
    /* exposed window memory: peers' puts, gets and atomics need our progress and wake no fd;
     * by default (-1) a thread waiting in MPI polls without sleeping (busy_poll), the progress
     * thread every MF_OFI_POLL_US_DEFAULT */
    int rma_us = o->o_rma_poll_us < 0 ? MF_OFI_POLL_US_DEFAULT : o->o_rma_poll_us;
    if (o->o_nexposed > 0 && rma_us > 0 && (us == 0 || us > rma_us))
        us = rma_us;
    o->o_base.poll_interval_us = us;
    o->o_base.busy_poll = o->o_nexposed > 0 && o->o_rma_poll_us < 0;
}

int mf_ofi_wait_fd(mf_fabric *f)
{
    return mf_ofi_of(f)->o_wait_fd;
}

/* fi_trywait: safe to sleep on the fd only when the provider says nothing is pending. */
bool mf_ofi_sleep_prepare(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    if (o->o_fails.npending || o->o_stage_n || o->o_held_ready)
        return false; /* completions a direct receive staged wake no fd */
    /* A timed poll is only as prompt as the sleeping thread's timer slack (50 us by default,
     * which made a 50 us poll a 100 us one and a shorter poll no shorter): 1 us for the threads
     * that sleep on ours. Set at every bounded sleep (one cheap system call on the way to
     * sleeping) rather than remembered, since each thread has its own. */
    if (f->poll_interval_us > 0)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    if (o->o_wait_fd < 0)
        return true;
    struct fid *fids[1] = {&o->o_cq->fid};
    return fi_trywait(o->o_fabric, fids, 1) == FI_SUCCESS;
}

bool mf_ofi_tx_idle(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    return !o->o_wait_head && o->o_tx_inflight == 0;
}
