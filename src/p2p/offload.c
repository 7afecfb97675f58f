/*
 * offload.c — point-to-point with tag matching offloaded to a fabric (offload.h has when it
 * applies; fabric.h the tagged ops; ofi_tagged.c the one fabric that has them).
 *
 * Contract, per MPI operation on an offloaded communicator:
 *   send     staged as on the message path (user buffer, its pieces, or a packed copy), handed
 *            to tsend whole (the fabric's own rendezvous moves large ones); one rq_busy step
 *            until the fabric is done with the buffer. Synchronous mode registers a wire id the
 *            message carries; the receiver answers with a SYNC_ACK frame of the message path,
 *            which protocol.c hands to the send as always (one more step).
 *            A standard send of contiguous data within the fabric's inject size needs no
 *            request (mf_p2p_offload_inject).
 *   receive  posted with trecv; its completion gives the envelope (status source and tag), the
 *            bytes landed, truncation (MPI_ERR_TRUNCATE, status count = bytes received) or
 *            cancellation; a synchronous sender is acknowledged then.
 *   probe    tprobe, waited for here (it is local to the fabric); a matched probe claims the
 *            message and hands it over as an mf_unexpected carrying the claim (ux_claim).
 *   cancel   receives: tcancel (the receive completes cancelled, or received if it matched
 *            first); sends: the receiver is asked with a CANCEL frame of the message path
 *            naming the fabric's sequence number (offload.h), and drops the message if it is
 *            still unmatched there (claim and discard), else the send completes normally.
 * Peer failure: a receive that names the failed peer is cancelled and ends with its error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "p2p/offload.h"

mf_fabric *mf_p2p_toff;
mf_fabric *const *mf_p2p_toff_table;
uint32_t mf_p2p_toff_maxctx;

/* ---- The switch ---- */

/* Why instance f cannot carry all point-to-point traffic (NULL: it can), into why[len]. The
 * answer is the same on every rank: routes are built from the job's settings and host layout
 * (fabric.h, "route"), and the host layout is checked here as a whole, not just from here. */
static const char *mf_p2p_offload_why(mf_fabric *f, mf_fabric *const *picks, char *why, size_t len)
{
    for (int p = 0; p < mf_g.size; p++) {
        if (p != mf_g.rank && picks[p] != f) {
            snprintf(why, len, "point-to-point to rank %d goes over %s, not only %s", p,
                     picks[p] ? picks[p]->name : "nothing", f->name);
            return why;
        }
    }
    /* shm carries the ranks of one host: where any two share one, some ranks' routes are not f */
    if (mf_config_bool("MANIFOLD_SHM") && mf_g.num_nodes < mf_g.size) {
        /* name the first two ranks that share a host: one pass, first rank seen per host */
        int *first = malloc((size_t)mf_g.num_nodes * sizeof *first);
        for (int h = 0; first && h < mf_g.num_nodes; h++)
            first[h] = -1;
        for (int p = 0; first && p < mf_g.size; p++) {
            int *seen = &first[mf_g.node_of[p]];
            if (*seen >= 0) {
                snprintf(why, len, "ranks %d and %d share a host, where shm carries them", *seen,
                         p);
                break;
            }
            *seen = p;
        }
        if (!first)
            snprintf(why, len, "ranks share a host, where shm carries them");
        free(first);
        return why;
    }
    return NULL;
}

int mf_p2p_offload_init(void)
{
    mf_fabric **all;
    int n = mf_fabrics_all(&all);
    mf_fabric *const *picks = mf_fabric_picks(MF_ROUTE_P2P);
    mf_p2p_toff = NULL;
    for (int i = 0; i < n; i++) {
        mf_fabric *f = all[i];
        if (!f->ops->tagged_enable)
            continue;
        char buf[160];
        const char *why = mf_p2p_toff ? "another instance offloads already"
                                      : mf_p2p_offload_why(f, picks, buf, sizeof buf);
        bool on = false;
        uint32_t maxctx = 0;
        int rc = f->ops->tagged_enable(f, why, &on, &maxctx);
        if (rc)
            return rc;
        if (on) {
            mf_p2p_toff = f;
            mf_p2p_toff_table = picks;
            mf_p2p_toff_maxctx = maxctx;
            mf_debug("p2p: tag matching offloaded to %s (contexts <= %u)", f->name, maxctx);
        }
    }
    return MPI_SUCCESS;
}

/* ---- Sends ---- */

static void mf_p2p_tsend_done(mf_fabric_tmsg *m, int status)
{
    mf_request *r = m->tm_ctx;
    if (status)
        mf_p2p_fail(r, status);
    mf_request_unbusy(r);
}

/* The envelope of a message of r on its communicator. */
static void mf_p2p_tmsg_env(mf_fabric_tmsg *m, const mf_request *r, int src)
{
    const mf_comm *c = r->pub.r_comm;
    /* the request part whole (a reused request's rq_tmsg holds its last use) */
    m->tm_sync = false;
    m->tm_id = 0;
    m->tm_context = c->c_context + r->rq_ctx;
    m->tm_src = src;
    m->tm_tag = r->rq_tag;
    m->tm_iov = r->rq_iovs;
    m->tm_niov = r->rq_niov;
    m->tm_ctx = (void *)r;
}

void mf_p2p_offload_isend(mf_request *r, mf_fabric *f)
{
    r->rq_fabric = f;
    bool sync = r->rq_mode == MF_SEND_SYNC;
    int rc = mf_p2p_peer_status(r->rq_peer);
    if (!rc)
        rc = mf_p2p_stage(r, r->rq_bytes, true, true);
    /* an id for the SYNC_ACK, and for MPI_Cancel to name user sends to the receiver */
    if (!rc && (sync || r->rq_ctx == MF_CTX_P2P))
        rc = mf_request_register_wire(r);
    if (rc) {
        mf_p2p_fail(r, rc);
        mf_request_finish(r);
        return;
    }
    mf_fabric_tmsg *m = &r->rq_tmsg;
    r->rq_tm = m;
    mf_p2p_tmsg_env(m, r, r->pub.r_comm->c_rank);
    m->tm_sync = sync;
    m->tm_id = r->rq_wire_id;
    m->tm_done = mf_p2p_tsend_done;
    r->rq_busy = 2; /* the whole send (released below) and the fabric's completion */
    if (sync) {
        r->rq_awaits_peer = true;
        r->rq_busy++; /* the SYNC_ACK */
    }
    rc = f->ops->tsend(f, r->rq_peer, m);
    if (rc != MF_FABRIC_PENDING) {
        if (rc != MF_FABRIC_DONE) {
            mf_p2p_fail(r, rc);
            if (sync) {
                r->rq_awaits_peer = false;
                r->rq_busy--;
            }
        }
        r->rq_busy--;
    }
    mf_request_unbusy(r);
}

int mf_p2p_offload_inject(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                          mf_comm *comm, unsigned ctx, mf_fabric *f)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    if (dest == MPI_PROC_NULL || !t->dt_contig)
        return MF_FABRIC_BUSY;
    int peer = mf_comm_peer(comm, dest);
    int rc = mf_p2p_peer_status(peer);
    if (rc)
        return rc;
    struct iovec iov = {(char *)buf + t->dt_true_lb, (size_t)count * t->dt_size};
    mf_fabric_tmsg m = {.tm_context = comm->c_context + ctx,
                        .tm_src = comm->c_rank,
                        .tm_tag = tag,
                        .tm_iov = &iov,
                        .tm_niov = 1};
    rc = f->ops->tsend(f, peer, &m);
    return rc == MF_FABRIC_DONE ? MPI_SUCCESS : rc;
}

/* ---- Receives ---- */

static void mf_p2p_trecv_done(mf_fabric_tmsg *m, int status)
{
    mf_request *r = m->tm_ctx;
    if (status) {
        mf_p2p_fail(r, status);
    } else if (m->tm_cancelled) {
        if (!r->rq_error) /* not the cancel of a receive whose peer failed */
            mf_status_set_cancelled(&r->pub.r_status, true);
    } else {
        if (r->rq_peer < 0)
            r->rq_peer = mf_comm_peer(r->pub.r_comm, m->tm_msrc);
        MPI_Status *st = &r->pub.r_status;
        st->MPI_SOURCE = m->tm_msrc;
        st->MPI_TAG = m->tm_mtag;
        mf_status_set_bytes(st, (MPI_Count)m->tm_len);
        r->rq_accepted = m->tm_len;
        if (m->tm_size > m->tm_len)
            mf_p2p_fail(r, mf_error(MPI_ERR_TRUNCATE,
                                    "receive: message of %zu bytes from rank %d (tag %d) does not "
                                    "fit the %zu-byte buffer",
                                    m->tm_size, m->tm_msrc, m->tm_mtag, r->rq_bytes));
        mf_p2p_recv_landed(r);
        if (m->tm_msync) {
            mf_wire_hdr a = {.type = MF_MSG_SYNC_ACK, .context = m->tm_context, .sreq = m->tm_id};
            if (mf_p2p_send_ctrl(r->rq_fabric, r->rq_peer, &a))
                mf_warn("could not acknowledge a synchronous send to rank %d", r->rq_peer);
        }
    }
    if (m != &r->rq_tmsg) /* a claimed message's operation, allocated by the probe */
        free(m);
    r->rq_tm = NULL;
    mf_request_unbusy(r);
}

/* Stages r's buffer and hands m to f: one rq_busy step until its completion. */
static void mf_p2p_trecv_post(mf_request *r, mf_fabric *f, mf_fabric_tmsg *m, bool claimed)
{
    r->rq_fabric = f;
    r->rq_busy = 1;
    int rc = mf_p2p_stage(r, r->rq_bytes, true, false);
    if (rc) {
        mf_p2p_fail(r, rc);
        r->rq_iovs = NULL;
        r->rq_niov = 0;
    }
    r->rq_tm = m;
    m->tm_iov = r->rq_iovs;
    m->tm_niov = r->rq_niov;
    m->tm_ctx = r;
    m->tm_done = mf_p2p_trecv_done;
    rc = f->ops->trecv(f, m, claimed);
    if (rc != MF_FABRIC_PENDING && rc != MF_FABRIC_DONE) {
        mf_p2p_fail(r, rc);
        r->rq_tm = NULL;
        mf_request_unbusy(r);
    }
}

void mf_p2p_offload_irecv(mf_request *r, mf_fabric *f)
{
    mf_fabric_tmsg *m = &r->rq_tmsg;
    mf_p2p_tmsg_env(m, r, r->rq_rank);
    if (r->rq_rank >= 0)
        r->rq_peer = mf_comm_peer(r->pub.r_comm, r->rq_rank);
    mf_p2p_trecv_post(r, f, m, false);
}

void mf_p2p_offload_recv_claimed(mf_request *r, mf_unexpected *u)
{
    mf_fabric_tmsg *m = u->ux_claim;
    r->rq_peer = u->ux_peer;
    mf_fabric *f = u->ux_fabric;
    free(u);
    mf_p2p_trecv_post(r, f, m, true);
}

/* ---- Probes ---- */

static void mf_p2p_tprobe_done(mf_fabric_tmsg *m, int status)
{
    int *done = m->tm_ctx;
    *done = status ? status : 1;
}

int mf_p2p_offload_iprobe(mf_fabric *f, int source, int tag, mf_comm *comm, unsigned ctx, bool take,
                          int *flag, MPI_Status *status, mf_unexpected **msg)
{
    *flag = 0;
    mf_fabric_tmsg local, *m = take ? calloc(1, sizeof *m) : &local;
    if (!m)
        return mf_error(MPI_ERR_NO_MEM, "probe: no memory to hold a matched message");
    int done = 0;
    *m = (mf_fabric_tmsg){.tm_context = comm->c_context + ctx,
                          .tm_src = source,
                          .tm_tag = tag,
                          .tm_done = mf_p2p_tprobe_done,
                          .tm_ctx = &done};
    int rc = f->ops->tprobe(f, m, take);
    if (rc != MF_FABRIC_PENDING && rc != MF_FABRIC_DONE)
        done = rc;
    /* The fabric answers from its own queues: a pass or two. */
    while (!done)
        mf_progress_poll();
    rc = done == 1 ? MPI_SUCCESS : done;
    if (rc || !m->tm_found) {
        if (take)
            free(m);
        return rc;
    }
    *flag = 1;
    if (status && status != MPI_STATUS_IGNORE) {
        *status = (MPI_Status){0};
        status->MPI_SOURCE = m->tm_msrc;
        status->MPI_TAG = m->tm_mtag;
        mf_status_set_bytes(status, (MPI_Count)m->tm_size);
    }
    if (take) {
        mf_unexpected *u = calloc(1, sizeof *u);
        if (!u) {
            free(m);
            return mf_error(MPI_ERR_NO_MEM, "probe: no memory for a matched message");
        }
        u->ux_hdr.src = m->tm_msrc;
        u->ux_hdr.tag = m->tm_mtag;
        u->ux_hdr.total = m->tm_size;
        u->ux_peer = mf_comm_peer(comm, m->tm_msrc);
        u->ux_fabric = f;
        u->ux_claim = m;
        *msg = u;
    }
    return MPI_SUCCESS;
}

/* ---- Cancel and failure ---- */

/* The receiver's side of a sender's MPI_Cancel (a CANCEL frame naming an offloaded message):
 * the first message of the fabric matching the envelope is looked at; if it is the one named
 * (its id, or where the fabric does not report ids to probes its sequence number: mod 2^K,
 * see ofi_tagged.c; a message of the same envelope exactly a multiple of 2^K messages to this
 * receiver earlier and still unmatched would be taken for it), it is claimed, received into a scratch buffer and dropped, and the answer is
 * "dropped"; otherwise (received already, or behind another message of the same envelope, or
 * not arrived) "not dropped". Asynchronous: steps run from the fabric's completions. */
typedef struct mf_p2p_tcancel {
    mf_fabric_tmsg m;
    mf_fabric *f;
    int peer, stage;
    uint64_t sreq;
    uint32_t seq;
    struct iovec iov;
} mf_p2p_tcancel;

static void mf_p2p_tcancel_answer(mf_p2p_tcancel *c, bool dropped)
{
    mf_wire_hdr a = {.type = MF_MSG_CANCEL_ACK, .total = dropped, .sreq = c->sreq};
    if (mf_p2p_send_ctrl(c->f, c->peer, &a))
        mf_warn("could not answer a cancel request of rank %d", c->peer);
}

static void mf_p2p_tcancel_step(mf_fabric_tmsg *m, int status)
{
    mf_p2p_tcancel *c = m->tm_ctx;
    /* the named message: by its id where the fabric reports it, else by its sequence number */
    bool ours = !status && m->tm_found &&
                (m->tm_id ? m->tm_id == c->sreq : m->tm_seq && m->tm_seq == c->seq);
    if (c->stage == 0 && ours) { /* the first match is the named message: claim it */
        c->stage = 1;
        if (c->f->ops->tprobe(c->f, m, true) == MF_FABRIC_PENDING)
            return;
        ours = false;
    } else if (c->stage == 1 && ours) { /* claimed: receive and drop it */
        c->stage = 2;
        c->iov = (struct iovec){malloc(m->tm_size ? m->tm_size : 1), m->tm_size};
        m->tm_iov = &c->iov;
        m->tm_niov = c->iov.iov_base ? 1 : 0;
        mf_p2p_tcancel_answer(c, true);
        if (c->f->ops->trecv(c->f, m, true) == MF_FABRIC_PENDING)
            return;
    }
    if (c->stage < 2)
        mf_p2p_tcancel_answer(c, false);
    free(c->iov.iov_base);
    free(c);
}

void mf_p2p_offload_on_cancel(mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    mf_p2p_tcancel *c = calloc(1, sizeof *c);
    if (!c) {
        mf_wire_hdr a = {.type = MF_MSG_CANCEL_ACK, .total = 0, .sreq = h->sreq};
        mf_p2p_send_ctrl(f, peer, &a);
        return;
    }
    *c = (mf_p2p_tcancel){.f = f, .peer = peer, .sreq = h->sreq, .seq = (uint32_t)h->rkey};
    c->m = (mf_fabric_tmsg){.tm_context = h->context,
                            .tm_src = h->src,
                            .tm_tag = h->tag,
                            .tm_done = mf_p2p_tcancel_step,
                            .tm_ctx = c};
    if (f->ops->tprobe(f, &c->m, false) != MF_FABRIC_PENDING) {
        mf_p2p_tcancel_answer(c, false);
        free(c);
    }
}

bool mf_p2p_offload_cancel(mf_request *r)
{
    if (r->pub.r_kind != MF_REQ_RECV || r->pub.r_complete || !r->rq_tm)
        return false;
    r->rq_fabric->ops->tcancel(r->rq_fabric, r->rq_tm);
    return true;
}

void mf_p2p_offload_peer_failed(mf_request *r, int peer, int code)
{
    if (r->pub.r_kind != MF_REQ_RECV || !r->rq_tm || r->rq_rank < 0 ||
        r->rq_rank >= mf_comm_peer_size(r->pub.r_comm) ||
        mf_comm_peer(r->pub.r_comm, r->rq_rank) != peer)
        return;
    mf_p2p_fail(r, code);
    r->rq_fabric->ops->tcancel(r->rq_fabric, r->rq_tm);
}
