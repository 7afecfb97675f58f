/*
 * request.h — the request object and the private state of point-to-point operations.
 *
 * One struct serves sends, receives and requests completed by other layers. A request is
 * referenced by: its creator (until mf_request_free), the matching queues while posted, and the
 * wire-id table while a peer may still name it in a frame (CTS, DATA, FIN, SYNC_ACK). It is freed
 * when the creator has released it and no protocol step is outstanding (rq_busy == 0).
 */
#ifndef MF_P2P_REQUEST_H
#define MF_P2P_REQUEST_H

#include <stdint.h>
#include <sys/uio.h>

#include "datatype/status.h"
#include "fabric/fabric.h"
#include "p2p/p2p.h"

struct mf_unexpected;

/* Strided data travels as iovecs over the user buffer when it takes at most MF_P2P_IOV_MAX pieces
 * averaging at least MF_P2P_IOV_MIN_PIECE bytes; otherwise it is packed (see mf_p2p_stage in send.c). */
#define MF_P2P_IOV_MAX 64
#define MF_P2P_IOV_MIN_PIECE 256

struct mf_request {
    struct mf_request_public pub; /* first: mf_request_info() is a cast */

    /* The operation as posted. */
    void *rq_buf;
    MPI_Count rq_count;
    mf_datatype *rq_dt; /* held (retained) while the request lives */
    int rq_rank;        /* dest or source rank in the communicator (may be ANY_SOURCE) */
    int rq_tag;
    unsigned rq_ctx; /* MF_CTX_P2P or MF_CTX_COLL */
    enum mf_send_mode rq_mode;
    size_t rq_bytes; /* data bytes of the operation: count * type size */
    int rq_peer;     /* world rank of the peer (receives: known once matched) */
    mf_fabric *rq_fabric;

    uint64_t rq_wire_id; /* id peers use to name this request; 0 when not registered */
    int rq_busy;         /* outstanding protocol steps (fabric completions, awaited frames) */
    bool rq_released;    /* the creator called mf_request_free */
    int rq_error;        /* first error, reported in the status */

    /* Where the data is: rq_iovs[0..rq_niov) over the user buffer (one piece when contiguous,
     * several for strided types with large enough pieces), or one piece over rq_packed, an
     * owned packed copy, when the type's pieces are too many or too small for iovecs.
     * rq_iovs is the only description: a strided type whose bytes form one piece has
     * rq_niov == 1 with rq_iovs an owned array, so nothing reads rq_iov_one directly. */
    unsigned char *rq_packed;
    struct iovec rq_iov_one; /* storage rq_iovs may point at; never read as such */
    struct iovec *rq_iovs;   /* &rq_iov_one, or an owned array of up to MF_P2P_IOV_MAX pieces */
    int rq_niov;
    struct iovec *rq_pieces; /* rendezvous push: one iovec per DATA frame (fabrics may keep it) */
    size_t rq_accepted;      /* receive: bytes the receiver takes (<= what the sender offered) */
    size_t rq_received;      /* receive: bytes landed so far */
    uint64_t rq_rkey;        /* send with rget: the key handed out in the RTS */
    uint64_t rq_peer_id;     /* the peer's request id (sreq for receivers, rreq for senders) */
    bool rq_awaits_peer;     /* send: the peer's CTS, FIN or SYNC_ACK is one rq_busy step */
    bool rq_cancel_asked;    /* send: MPI_Cancel sent CANCEL; its answer is one rq_busy step */
    bool rq_rndv_out;        /* send: rq_bytes counted in mf_p2p_rndv_out_bytes until finished */

    /* Tag matching offloaded (offload.c): the fabric's operation for this request (rq_tmsg,
     * or a claimed message's); NULL on the message path. */
    mf_fabric_tmsg *rq_tm;

    /* Completion hooks from the fabric for this request's sends and pulls. */
    mf_fabric_done rq_send_done;
    mf_fabric_done rq_get_done;

    /* Posted-receive queue links. */
    struct mf_request *rq_next, *rq_prev;
    /* Links in the list of all live requests (for failing those of a dead peer). */
    struct mf_request *rq_live_next, *rq_live_prev;

    /* Persistent requests: the operation started by MPI_Start. */
    mf_request *rq_inner;
    /* Composite requests (MPI_Isendrecv): the receive and the send, freed with this request;
     * rq_parts_left counts those not complete yet. */
    mf_request *rq_parts[2];
    int rq_parts_left;

    /* Generalized requests (MPI_Grequest_start): the user's callbacks. */
    MPI_Grequest_query_function *rq_greq_query;
    MPI_Grequest_free_function *rq_greq_free;
    MPI_Grequest_cancel_function *rq_greq_cancel;
    void *rq_greq_state;

    /* Buffered sends: the slice of the attached buffer holding the data. */
    void *rq_bsend_slot;

    /* Completion callback for layers above (called once, from progress). */
    void (*rq_on_complete)(mf_request *r, void *arg);
    void *rq_on_complete_arg;

    /* Last, and not cleared when a request is reused (mf_request_alloc clears what comes
     * before): the tagged operation, which offload.c fills whole before handing it over, so
     * that requests of the message path pay nothing for it. */
    mf_fabric_tmsg rq_tmsg;
    /* Not cleared either: read only when pub.r_owner names a window or a file, which
     * mf_request_set_owner sets together with it. */
    intptr_t rq_owner_handle;
};

/* Bytes of this rank's rendezvous sends from their RTS until they finish (rq_rndv_out): how
 * busy its own sends keep it, which decides pull or push for its receives (rget_min_busy). */
extern size_t mf_p2p_rndv_out_bytes;
/* The most mf_p2p_rndv_out_bytes reached since the receives now waiting for a deferred start
 * (protocol.c) began waiting: the sends posted right after such a receive count for its choice
 * even if the peer pulled them, and they finished, before the pass that starts it. */
extern size_t mf_p2p_rndv_out_peak;

/* Allocation and wire ids. */
mf_request *mf_request_alloc(mf_request_kind kind, mf_comm *comm);
int mf_request_register_wire(mf_request *r);
/* The live request a peer names with `id`, or NULL (stale or forged ids are not dereferenced). */
mf_request *mf_request_by_wire(uint64_t id);
/* Calls fn on every live request that is not complete (fn may finish it, not free it). */
void mf_request_foreach_pending(void (*fn)(mf_request *r, void *arg), void *arg);
/* Marks complete with the status fields; runs the on_complete hook. */
void mf_request_finish(mf_request *r);

#endif
