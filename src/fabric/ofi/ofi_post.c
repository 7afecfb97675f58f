/*
 * ofi_post.c — handing operations to the provider, with flow control: every send, read, write
 * and atomic that is not a fi_inject goes through here.
 *
 * Contract: mf_ofi_post calls the libfabric function behind an operation (by o_kind) and counts
 * it in o_tx_inflight when taken. mf_ofi_submit posts it unless operations already wait;
 * refused with -FI_EAGAIN it joins the wait FIFO (o_wait_head/tail), which progress drains in
 * order (mf_ofi_wait_drain) after reading the completion queue, so later operations never pass
 * earlier ones. An operation refused for good, or one waiting for a peer that failed meanwhile,
 * ends with an error naming the provider, the libfabric call and the rank: a send fails its
 * peer, a read/write/atomic piece completes its operation with the error.
 */
#include "core/error.h"
#include "fabric/ofi/ofi.h"

/* Appends an operation the provider refused for now. */
void mf_ofi_wait_push(mf_ofi *o, mf_ofi_op *op)
{
    op->o_next = NULL;
    if (o->o_wait_tail)
        o->o_wait_tail->o_next = op;
    else
        o->o_wait_head = op;
    o->o_wait_tail = op;
}

ssize_t mf_ofi_post(mf_ofi *o, mf_ofi_op *op)
{
    ssize_t rc;
    if (op->o_kind >= MF_OFI_TSEND) {
        rc = mf_ofi_tagged_post(o, op);
        if (rc == 0 && op->o_kind == MF_OFI_TSEND)
            o->o_tx_inflight++; /* receives and probes are no transmits */
        return rc;
    }
    if (op->o_kind == MF_OFI_ATOMIC) {
        rc = mf_ofi_atomic_post(o, (mf_ofi_atom *)op);
    } else if (op->o_kind == MF_OFI_SEND) {
        mf_ofi_buf *b = (mf_ofi_buf *)op;
        rc = fi_senddata(o->o_ep, b->b_data, b->b_len, b->b_desc, b->b_cqdata,
                         o->o_addr[op->o_peer], &op->o_ctx);
    } else {
        mf_ofi_piece *p = (mf_ofi_piece *)op;
        void *desc = p->p_mr ? fi_mr_desc(p->p_mr) : NULL;
        if (p->p_write) {
            /* complete once in the target's memory: a flush's remote completion */
            struct iovec v = {p->p_buf, p->p_len};
            struct fi_rma_iov r = {.addr = p->p_raddr, .len = p->p_len, .key = p->p_key};
            struct fi_msg_rma m = {.msg_iov = &v,
                                   .desc = &desc,
                                   .iov_count = 1,
                                   .addr = o->o_addr[op->o_peer],
                                   .rma_iov = &r,
                                   .rma_iov_count = 1,
                                   .context = &op->o_ctx};
            rc = fi_writemsg(o->o_ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
        } else {
            rc = fi_read(o->o_ep, p->p_buf, p->p_len, desc, o->o_addr[op->o_peer], p->p_raddr,
                         p->p_key, &op->o_ctx);
        }
    }
    if (rc == 0)
        o->o_tx_inflight++;
    return rc;
}

/* The libfabric call behind an operation, for messages. */
const char *mf_ofi_op_name(const mf_ofi_op *op)
{
    if (op->o_kind == MF_OFI_SEND)
        return "fi_senddata";
    if (op->o_kind == MF_OFI_TSEND)
        return "fi_tsendmsg";
    if (op->o_kind == MF_OFI_TRECV)
        return "fi_trecvmsg";
    if (op->o_kind == MF_OFI_TPEEK)
        return "fi_trecvmsg (FI_PEEK)";
    if (op->o_kind == MF_OFI_ATOMIC) {
        const mf_ofi_atom *a = (const mf_ofi_atom *)op;
        return a->a_args.fa_op == MF_AOP_CSWAP ? "fi_compare_atomic"
               : a->a_args.fa_result           ? "fi_fetch_atomic"
                                               : "fi_atomicmsg";
    }
    return ((const mf_ofi_piece *)op)->p_write ? "fi_writemsg" : "fi_read";
}

/* An operation the provider rejected for good: its peer fails (sends) or its rget does. */
static void mf_ofi_post_failed(mf_ofi *o, mf_ofi_op *op, ssize_t rc)
{
    const char *what = mf_ofi_op_name(op);
    int code = mf_ofi_err(o, MPI_ERR_OTHER, rc, "%s to rank %d", what, op->o_peer);
    if (op->o_kind >= MF_OFI_TSEND) {
        if (op->o_kind == MF_OFI_TSEND)
            mf_ofi_peer_fail(o, op->o_peer, code);
        mf_fabric_tmsg *m = (mf_fabric_tmsg *)(void *)op;
        m->tm_done(m, code);
    } else if (op->o_kind == MF_OFI_SEND) {
        mf_ofi_peer_fail(o, op->o_peer, code);
        mf_ofi_buf_free((mf_ofi_buf *)op);
    } else if (op->o_kind == MF_OFI_ATOMIC) {
        mf_ofi_atomic_done(o, (mf_ofi_atom *)op, code);
    } else {
        mf_ofi_read_piece_done(o, (mf_ofi_piece *)op, code);
    }
}

void mf_ofi_submit(mf_ofi *o, mf_ofi_op *op)
{
    ssize_t rc = o->o_wait_head ? -FI_EAGAIN : mf_ofi_post(o, op);
    if (rc == -FI_EAGAIN)
        mf_ofi_wait_push(o, op);
    else if (rc) /* completes its operation with the error */
        mf_ofi_post_failed(o, op, rc);
}

/* Retries what waits, in order, until the provider refuses again. */
int mf_ofi_wait_drain(mf_ofi *o)
{
    int n = 0;
    while (o->o_wait_head) {
        mf_ofi_op *op = o->o_wait_head;
        ssize_t rc = o->o_fails.code[op->o_peer] ? 0 : mf_ofi_post(o, op);
        if (rc == -FI_EAGAIN)
            break;
        o->o_wait_head = op->o_next;
        if (!o->o_wait_head)
            o->o_wait_tail = NULL;
        if (o->o_fails.code[op->o_peer])
            mf_ofi_post_failed(o, op, -FI_ECANCELED);
        else if (rc)
            mf_ofi_post_failed(o, op, rc);
        n++;
    }
    return n;
}
