/*
 * protocol.h — what the protocol files of src/p2p share; not for use outside src/p2p.
 *
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
 *
 * Where each part lives:
 *   send.c      sends: staging the data, the EAGER frame (one frame: envelope and data) or the
 *               RTS that starts a rendezvous; the request-less eager send (mf_isend_standard);
 *   protocol.c  receives and the arrival of every frame (mf_fabric_rx_header, the fabrics'
 *               upcall): matching an EAGER or RTS against posted receives or queueing it as
 *               unexpected, dispatching CTS/FIN/SYNC_ACK/CANCEL/DATA; peer failure
 *               (mf_fabric_peer_failed); probing;
 *   blocking.c  blocking send and receive (collectives' workhorses), with their request-less
 *               fast paths (an eager send waited on the stack; a direct receive from one peer);
 *   rndv.c      rendezvous: RTS matched -> rget + FIN, or CTS -> DATA frames; the sender's side
 *               of CTS and FIN;
 *   cancel.c    MPI_Cancel of sends (CANCEL / CANCEL_ACK) and of receives;
 *   sendrecv.c  a send and a receive as one request (MPI_Isendrecv);
 *   partitioned.c  partitioned communication (partitioned.h): channels of ordinary messages on
 *               the collective context, moved by a progress source;
 *   offload.c   all of the above for communicators whose matching a fabric does (tagged
 *               ops, fabric.h; offload.h says when): the entry points hand over to it first.
 * Synchronous mode is not a file of its own: send.c sets MF_WIRE_SYNC (or sends an RTS, which
 * is matched anyway), protocol.c answers a matched EAGER with SYNC_ACK and hands the SYNC_ACK
 * to the waiting send.
 *
 * The helpers below that the eager path uses are static inline so that splitting the files cost
 * that path no call; the extern ones were out of line already (or serve rendezvous and cancel):
 * compare `nm` of the objects, only rendezvous and cancel code lost inlining.
 * Callers hold the library lock.
 */
#ifndef MF_P2P_PROTOCOL_H
#define MF_P2P_PROTOCOL_H

#include <stddef.h>
#include <stdlib.h>

#include "core/bufcache.h"
#include "core/error.h"
#include "p2p/match.h"
#include "p2p/p2p_internal.h"
#include "p2p/request.h"

#define MF_CONTAINER(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Completion object for control frames, whose header fabrics copy at once (protocol.c). */
extern mf_fabric_done mf_p2p_ctrl_done;

/* Records r's first error; later ones are dropped. */
static inline void mf_p2p_fail(mf_request *r, int code)
{
    if (!r->rq_error)
        r->rq_error = code;
}

/* Sends a control frame (no payload) to r's peer. */
static inline int mf_p2p_send_ctrl(mf_fabric *f, int peer, const mf_wire_hdr *h)
{
    int rc = f->ops->send(f, peer, h, NULL, 0, &mf_p2p_ctrl_done);
    return rc == MF_FABRIC_DONE || rc == MF_FABRIC_PENDING ? MPI_SUCCESS : rc;
}

/* ---- send.c ---- */
/* Hands a frame with payload `iov` to r's fabric; one rq_busy step until the fabric is done. */
void mf_p2p_send_payload(mf_request *r, const mf_wire_hdr *h, struct iovec *iov, int niov);
/* Describes stream bytes [off, off + len) of r's user buffer as at most `max` iovecs. Returns
 * how many, or 0 when that takes more than `max`. */
int mf_p2p_range_iov(const mf_request *r, size_t off, size_t len, struct iovec *iov, int max);
/* mf_p2p_stage's case of non-contiguous data (iovecs or a packed copy), out of line. */
int mf_p2p_stage_strided(mf_request *r, size_t len, bool iov_ok, bool pack);
/* Points rq_iovs at the first `len` bytes of the data: the user buffer itself when it is
 * contiguous or made of few large pieces (and `iov_ok`), else a packed copy (`pack` true for
 * sends) or a staging buffer to unpack from (receives). Inline: every send and receive with a
 * request passes here, nearly always with contiguous data. */
static inline int mf_p2p_stage(mf_request *r, size_t len, bool iov_ok, bool pack)
{
    const struct mf_datatype_public *t = mf_datatype_info(r->rq_dt);
    if (!t->dt_contig && len != 0)
        return mf_p2p_stage_strided(r, len, iov_ok, pack);
    r->rq_iovs = &r->rq_iov_one;
    r->rq_niov = 1;
    r->rq_iov_one.iov_base = (char *)r->rq_buf + t->dt_true_lb;
    r->rq_iov_one.iov_len = len;
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
bool mf_p2p_eager_prepare(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                          mf_comm *comm, unsigned ctx, mf_p2p_eager *e, int *rc);

/* The typed side of a non-contiguous message moved in place (fabric.h mf_fabric_mover):
 * packed into the fabric's frame by mf_p2p_pack_piece, unpacked out of it by the receiver's
 * mover (blocking.c), which sets `moved`. */
typedef struct mf_p2p_typed {
    mf_datatype *dt;
    void *buf;
    size_t count;
    bool moved;
} mf_p2p_typed;
void mf_p2p_pack_piece(void *arg, size_t offset, void *at, size_t len);
/* The request-less eager send of a non-contiguous message: packed straight into the frame of
 * a fabric with send_in_place when its packed bytes qualify for mf_p2p_eager_prepare. Returns
 * MF_FABRIC_DONE, an error of send_in_place, or MF_FABRIC_BUSY when it was not sent so (not
 * eager, no such fabric, no room now, a failed peer): then send it another way. */
int mf_p2p_send_in_place(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                         mf_comm *comm, unsigned ctx);

/* ---- protocol.c (receives, arrivals) ---- */
/* The status of a receive of `room` bytes matched with envelope h offering `size` bytes:
 * source, tag, byte count. Returns the bytes taken; *err becomes MPI_ERR_TRUNCATE (with the
 * message) when the message does not fit, and is left alone otherwise. */
static inline size_t mf_p2p_match_status(MPI_Status *st, const mf_wire_hdr *h, size_t size,
                                         size_t room, int *err)
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

/* Sets the status and accepted size of receive r matched with envelope h offering `size` bytes;
 * notes truncation as r's error. Inline: every matched receive passes here. */
static inline void mf_p2p_accept(mf_request *r, const mf_wire_hdr *h, size_t size)
{
    int err = MPI_SUCCESS;
    r->rq_accepted = mf_p2p_match_status(&r->pub.r_status, h, size, r->rq_bytes, &err);
    if (__builtin_expect(err != MPI_SUCCESS, 0))
        mf_p2p_fail(r, err);
}

/* Starts request r on an operation: the user's buffer, count and type (referenced until r is
 * destroyed), the peer's rank in the communicator, the tag and traffic class. Sends and receives
 * alike; inline, every request of the eager path is set up here. */
static inline void mf_p2p_request_op(mf_request *r, void *buf, MPI_Count count, mf_datatype *dt,
                                     int rank, int tag, unsigned ctx)
{
    r->pub.r_active = true;
    r->rq_buf = buf;
    r->rq_count = count;
    r->rq_dt = dt;
    mf_datatype_retain(dt);
    r->rq_rank = rank;
    r->rq_tag = tag;
    r->rq_ctx = ctx;
}

/* A receive request for the operation, not yet matched nor posted. */
static inline mf_request *mf_p2p_recv_request(void *buf, MPI_Count count, mf_datatype *dt,
                                              int source, int tag, mf_comm *comm, unsigned ctx)
{
    mf_request *r = mf_request_alloc(MF_REQ_RECV, comm);
    if (!r)
        return NULL;
    mf_p2p_request_op(r, buf, count, dt, source, tag, ctx);
    r->rq_bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    return r;
}

/* Where the accepted bytes land: the user buffer (contiguous, or as iovecs), else a staging
 * copy unpacked when everything has arrived. */
static inline int mf_p2p_stage_recv(mf_request *r)
{
    return mf_p2p_stage(r, r->rq_accepted, true, false);
}

/* Unpacks bytes [offset, offset + len) of receive r's message from `from` into its buffer:
 * from its staging copy, an unexpected payload, or where a fabric holds the frame. */
static inline void mf_p2p_recv_unpack(mf_request *r, size_t offset, const void *from, size_t len)
{
    mf_datatype_unpack(r->rq_dt, r->rq_buf, (size_t)r->rq_count, offset, from, len);
}

/* All accepted bytes have landed: unpack if staged. */
static inline void mf_p2p_recv_landed(mf_request *r)
{
    if (r->rq_packed) {
        mf_p2p_recv_unpack(r, 0, r->rq_packed, r->rq_accepted);
        mf_bufcache_put(r->rq_packed);
        r->rq_packed = NULL;
    }
}

/* ---- rndv.c ---- */
/* Sender: the receiver's CTS takes hdr->total bytes; stream them as DATA frames. */
void mf_p2p_on_cts(mf_request *r, const mf_wire_hdr *h);
/* Sender: the receiver pulled the data (FIN). */
void mf_p2p_on_fin(mf_request *r);
/* Sender: gives back the key that let the receiver pull (none: nothing). */
void mf_p2p_release_rkey(mf_request *r);
/* Receiver: r matched an RTS; pull the data, or ask the sender to push it, judging by `busy`
 * bytes of this rank's own rendezvous sends in flight (rndv.c). */
void mf_p2p_start_rndv(mf_request *r, mf_fabric *f, int peer, const mf_wire_hdr *h, size_t busy);
/* Whether the receiver of RTS h on f could pull its data itself (rndv.c), which it then does
 * while this rank has f->rget_min_busy bytes of its own rendezvous sends in flight (or
 * f->rget_min_busy_shared, while its core is shared with other load). */
static inline bool mf_p2p_pull_possible(const mf_fabric *f, const mf_wire_hdr *h)
{
    return (f->flags & MF_FABRIC_RGET) && h->rkey;
}
/* Receiver: a DATA frame of a pushed rendezvous landed at its offset (fabric sink callback). */
void mf_p2p_data_sink_done(mf_fabric_sink *sink, int status);

/* ---- cancel.c ---- */
/* The receiver answered a CANCEL: `dropped` when the message is gone. */
void mf_p2p_on_cancel_ack(mf_request *r, bool dropped);

#endif
