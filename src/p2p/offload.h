/*
 * offload.h — point-to-point with tag matching offloaded to the fabric (fabric.h, the tagged
 * ops): the switch that decides at start-up whether and where it applies, and the operations
 * send.c, protocol.c, blocking.c and cancel.c hand to it. Not for use outside src/p2p.
 *
 * When: one instance with the tagged ops carries the point-to-point route to every other rank
 * (no shm between ranks of a host, no rails or wrapper), decided identically on every rank
 * (settings and host layout are the job's); messages to the own rank go through that instance
 * too, so a wildcard receive is matched by the fabric alone. A communicator uses it when its
 * table is the point-to-point one (a window's private duplicate keeps the message path) and its
 * context ids fit the fabric's tag bits; all its messages then go that way, on every rank
 * alike, so a context's messages are never matched by two engines.
 */
#ifndef MF_P2P_OFFLOAD_H
#define MF_P2P_OFFLOAD_H

#include "p2p/protocol.h"

/* The instance that matches (NULL: none), the table it serves, the largest context it takes. */
extern mf_fabric *mf_p2p_toff;
extern mf_fabric *const *mf_p2p_toff_table;
extern uint32_t mf_p2p_toff_maxctx;

/* The fabric that matches comm's messages itself, or NULL (the message path). Inline: every
 * send and receive asks. */
static inline mf_fabric *mf_p2p_offload(const mf_comm *c)
{
    if (__builtin_expect(mf_p2p_toff == NULL, 1))
        return NULL;
    return c->c_fabrics == mf_p2p_toff_table && c->c_context + MF_CTX_COLL <= mf_p2p_toff_maxctx
               ? mf_p2p_toff
               : NULL;
}

/* Starts send r (peer, bytes, mode set by mf_isend) through f. Errors end up in r. */
void mf_p2p_offload_isend(mf_request *r, mf_fabric *f);
/* A standard send of contiguous data copied by the fabric at once: MPI_SUCCESS, or
 * MF_FABRIC_BUSY when it would not be (then the request path), or an error. */
int mf_p2p_offload_inject(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                          mf_comm *comm, unsigned ctx, mf_fabric *f);
/* Posts receive r (rank, tag, bytes set) to f. Errors end up in r. */
void mf_p2p_offload_irecv(mf_request *r, mf_fabric *f);
/* Receives the message a claiming probe took (u->ux_claim) into r. */
void mf_p2p_offload_recv_claimed(mf_request *r, mf_unexpected *u);
/* MPI_Iprobe / MPI_Improbe through f (see mf_p2p_iprobe). */
int mf_p2p_offload_iprobe(mf_fabric *f, int source, int tag, mf_comm *comm, unsigned ctx, bool take,
                          int *flag, MPI_Status *status, mf_unexpected **msg);
/* MPI_Cancel of an offloaded receive: the fabric is asked to cancel it (it completes cancelled,
 * or received if it matched first). Sends ask the receiver as on the message path (cancel.c),
 * with a CANCEL frame whose rreq is MF_P2P_CANCEL_TAGGED, answered by
 * mf_p2p_offload_on_cancel on the receiver (rkey: the fabric's sequence number, tm_seq). */
bool mf_p2p_offload_cancel(mf_request *r);
#define MF_P2P_CANCEL_TAGGED 1
void mf_p2p_offload_on_cancel(mf_fabric *f, int peer, const mf_wire_hdr *h);
/* Peer `peer` failed: an offloaded receive that names it ends with `code`. */
void mf_p2p_offload_peer_failed(mf_request *r, int peer, int code);

#endif
