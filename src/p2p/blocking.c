/*
 * blocking.c — blocking send and receive (mf_send, mf_recv, mf_sendrecv), which collectives and
 * communicator construction run on. Each first tries a request-less fast path: an eager send
 * handed to the fabric and, if queued, waited on the stack; a receive from one named peer that
 * looks at that peer's next frame itself and copies it straight into the buffer. Anything else
 * goes through a request as usual (send.c, protocol.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/bufcache.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/state.h"
#include "p2p/offload.h"

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
static inline __attribute__((always_inline)) int mf_send_eager(const void *buf, MPI_Count count,
                                                               mf_datatype *dt, int dest, int tag,
                                                               mf_comm *comm, unsigned ctx)
{
    mf_p2p_eager e;
    int rc;
    mf_fabric *toff = mf_p2p_offload(comm);
    if (toff) { /* copied by the fabric, or a request */
        rc = mf_p2p_offload_inject(buf, count, dt, dest, tag, comm, ctx, toff);
        return rc == MF_FABRIC_BUSY ? MF_FABRIC_UNAVAILABLE : rc;
    }
    if (!mf_p2p_eager_prepare(buf, count, dt, dest, tag, comm, ctx, &e, &rc))
        return rc ? rc : MF_FABRIC_UNAVAILABLE;
    mf_p2p_stack_done d = {{mf_p2p_stack_done_fn}, false, MPI_SUCCESS};
    rc = e.f->ops->send(e.f, e.peer, &e.h, &e.iov, 1, &d.done);
    if (rc != MF_FABRIC_PENDING)
        return rc; /* MF_FABRIC_DONE is MPI_SUCCESS */
    rc = mf_progress_wait(mf_p2p_stack_finished, &d);
    return rc ? rc : d.status;
}

/* Eager messages of a non-contiguous type take the request-less paths too: packed straight
 * into the fabric's frame and unpacked straight out of it where the fabric allows
 * (send_in_place, rx_take_in_place: shm's rings, up to its eager limit), else, up to this many
 * bytes, packed into a buffer on the stack (the copy the request path would make anyway) and
 * sent as bytes, or received into one and unpacked. Larger ones pipeline their packing through
 * a request (send.c). */
#define MF_P2P_STACK_PACK 4096

/* The receiver's mover (protocol.h mf_p2p_typed). */
static void mf_p2p_unpack_piece(void *arg, size_t offset, void *at, size_t len)
{
    mf_p2p_typed *t = arg;
    mf_datatype_unpack(t->dt, t->buf, t->count, offset, at, len);
    t->moved = true;
}

/* mf_send_eager of a non-contiguous message: packed into the fabric's frame
 * (mf_p2p_send_in_place), or on the stack first when it is small enough (MF_FABRIC_UNAVAILABLE
 * otherwise); out of line, so that contiguous sends do not carry the buffer in their frame. */
static __attribute__((noinline)) int mf_send_packed(const void *buf, MPI_Count count,
                                                    mf_datatype *dt, int dest, int tag,
                                                    mf_comm *comm, unsigned ctx)
{
    int rc = mf_p2p_send_in_place(buf, count, dt, dest, tag, comm, ctx);
    if (rc != MF_FABRIC_BUSY)
        return rc; /* MF_FABRIC_DONE is MPI_SUCCESS */
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    if (bytes > MF_P2P_STACK_PACK)
        return MF_FABRIC_UNAVAILABLE;
    unsigned char packed[MF_P2P_STACK_PACK];
    mf_datatype_pack(dt, buf, (size_t)count, 0, packed, bytes);
    return mf_send_eager(packed, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), dest, tag, comm, ctx);
}

int mf_send(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag, mf_comm *comm,
            unsigned ctx)
{
    int rc = mf_datatype_info(dt)->dt_contig || dest == MPI_PROC_NULL
                 ? mf_send_eager(buf, count, dt, dest, tag, comm, ctx)
                 : mf_send_packed(buf, count, dt, dest, tag, comm, ctx);
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
    const mf_fabric_mover *in_place; /* or NULL: the payload goes to buf (rx_take_in_place) */
    unsigned idle;                   /* passes that found the peer's queue empty */
    MPI_Status status;
    int rc;               /* the receive's error, once done */
    bool received;        /* taken from the fabric */
    mf_unexpected *found; /* or found in the unexpected queue: finish with a request */
    uint64_t unexp_seen;  /* mf_match_unexpected_added when we last searched that queue */
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

/* Searches the unexpected queue for our message (taken out if there), noting how much had
 * joined that queue by then. */
static void mf_p2p_direct_search(mf_p2p_direct *d)
{
    d->unexp_seen = mf_match_unexpected_added();
    d->found = mf_match_unexpected(d->context, d->src, d->tag, true);
}

/* mf_p2p_direct_search if anything joined the unexpected queue since we last did. With
 * threads sharing the library (MPI_THREAD_MULTIPLE, the progress thread), another thread's pass
 * may have queued our peer's earlier frames there between two of our looks at the ring; the frame
 * now at the ring's head came after them and must not overtake one that matches (MPI orders one
 * sender's messages: bcast pieces landed at each other's offsets, coll_algo with
 * MANIFOLD_ASYNC_PROGRESS=1, when the direct receive did not look). Every pass holds the library
 * lock, as this look does, so the queue and the ring are seen at one moment. */
static bool mf_p2p_direct_queued_since(mf_p2p_direct *d)
{
    if (mf_match_unexpected_added() == d->unexp_seen)
        return false;
    mf_p2p_direct_search(d);
    return d->found != NULL;
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
        size_t take = mf_p2p_direct_accept(d, &h);
        if (!d->in_place || !f->ops->rx_take_in_place ||
            !f->ops->rx_take_in_place(f, d->peer, &h, take, d->in_place)) {
            struct iovec iov = {d->buf, take};
            f->ops->rx_take(f, d->peer, &h, &iov, 1);
        }
        return 1;
    }
    /* Not ours (another tag, a rendezvous, a synchronous send) or time for everyone else: a
     * full pass, after which what matches us may wait in the unexpected queue. */
    int n = mf_progress_poll();
    mf_p2p_direct_search(d);
    d->rc = mf_p2p_peer_status(d->peer);
    return n;
}

/* mf_p2p_direct_poll when threads share the library: before the ring, the queue other threads'
 * passes fill (a pass that queued our message also woke us, and the ring is empty then). A poll
 * of its own keeps the single-threaded look free of the test. */
static int mf_p2p_direct_poll_threads(void *arg)
{
    return mf_p2p_direct_queued_since(arg) ? 1 : mf_p2p_direct_poll(arg);
}

/* The common blocking receive — a named source reached by a fabric with direct receive, a
 * contiguous buffer, no earlier receive posted on the context that could claim the message
 * first, nothing matching queued as unexpected — waits by looking at that peer's next frame
 * itself and copies it straight into the buffer: no request, no matching queues, no upcall.
 * Anything else (a rendezvous, a synchronous send, a message a full pass queued as unexpected)
 * is finished through a request as usual. While it waits it is announced on its context
 * (mf_match_wait_begin): for MPI it is posted, so the send it will take can no longer be
 * cancelled, even when a pass has queued the message as unexpected meanwhile. Returns
 * MF_FABRIC_UNAVAILABLE when the receive does not qualify. */
static inline __attribute__((always_inline)) int
mf_recv_direct(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
               unsigned ctx, MPI_Status *status, const mf_fabric_mover *in_place)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    if (source < 0 || !t->dt_contig || mf_p2p_offload(comm))
        return MF_FABRIC_UNAVAILABLE; /* MPI_ANY_SOURCE, MPI_PROC_NULL; the fabric matches */
    int peer = mf_comm_peer(comm, source);
    mf_fabric *f = mf_comm_fabric(comm, peer);
    uint32_t context = comm->c_context + ctx;
    mf_match_waiter w = {.mw_src = source, .mw_tag = tag};
    if (!f->ops->rx_peek || !mf_match_wait_begin(context, &w))
        return MF_FABRIC_UNAVAILABLE;
    mf_p2p_direct d = {
        .buf = (char *)buf + t->dt_true_lb,
        .bytes = (size_t)count * t->dt_size,
        .context = context,
        .src = source,
        .tag = tag,
        .peer = peer,
        .fabric = f,
        .in_place = in_place,
        .rc = mf_p2p_peer_status(peer),
    };
    mf_p2p_direct_search(&d);
    int rc = mf_progress_wait_poll(
        mf_p2p_direct_done, mf_lock_used ? mf_p2p_direct_poll_threads : mf_p2p_direct_poll, &d);
    mf_match_wait_end(&w);
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
        mf_bufcache_put(u->ux_data);
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

/* mf_recv_direct of a non-contiguous message: unpacked where the fabric holds it, or received
 * into a staging buffer and unpacked from there (out of line, as mf_send_packed). The buffer is
 * on the stack up to MF_P2P_STACK_PACK bytes; up to the eager limit of a fabric that unpacks in
 * place it comes from the buffer cache, needed only when the message does not arrive as one
 * eager frame in the fabric's memory; MF_FABRIC_UNAVAILABLE otherwise. What was received is
 * unpacked whether or not it was truncated, as a receive into the type itself would have
 * placed it. */
static __attribute__((noinline)) int mf_recv_packed(void *buf, MPI_Count count, mf_datatype *dt,
                                                    int source, int tag, mf_comm *comm,
                                                    unsigned ctx, MPI_Status *status)
{
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    unsigned char stack[MF_P2P_STACK_PACK], *packed = stack;
    if (bytes > MF_P2P_STACK_PACK) {
        mf_fabric *f = mf_comm_fabric(comm, mf_comm_peer(comm, source));
        if (!f->ops->rx_take_in_place || bytes > f->eager_limit ||
            !(packed = mf_bufcache_get(bytes)))
            return MF_FABRIC_UNAVAILABLE;
    }
    MPI_Status st = {0};
    mf_p2p_typed t = {dt, buf, (size_t)count, false};
    int rc = mf_recv_direct(packed, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), source, tag, comm,
                            ctx, &st, &(mf_fabric_mover){mf_p2p_unpack_piece, &t});
    if (rc != MF_FABRIC_UNAVAILABLE) {
        size_t got = (size_t)mf_status_get_bytes(&st);
        /* rc is a code of its own (mf_error), of class MPI_ERR_TRUNCATE when it was truncated */
        if ((rc == MPI_SUCCESS || mf_error_class(rc) == MPI_ERR_TRUNCATE) && !t.moved)
            mf_datatype_unpack(dt, buf, (size_t)count, 0, packed, got < bytes ? got : bytes);
        mf_status_out(status, &st);
    }
    if (packed != stack)
        mf_bufcache_put(packed);
    return rc;
}

int mf_recv(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
            unsigned ctx, MPI_Status *status)
{
    int rc = mf_datatype_info(dt)->dt_contig || source < 0
                 ? mf_recv_direct(buf, count, dt, source, tag, comm, ctx, status, NULL)
                 : mf_recv_packed(buf, count, dt, source, tag, comm, ctx, status);
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
