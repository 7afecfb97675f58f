/*
 * match.h — MPI message matching: posted receives and unexpected messages, per context id.
 *
 * An arriving EAGER or RTS frame is matched against the posted receives of its context in posting
 * order; if none fits, it joins the unexpected queue in arrival order, where later receives and
 * probes look for it first. Because every fabric delivers a peer's frames in order, this gives
 * MPI's non-overtaking rule per (source, communicator), also when small (eager) and large
 * (rendezvous) messages interleave. Wildcards: MPI_ANY_SOURCE, MPI_ANY_TAG (receives only).
 */
#ifndef MF_P2P_MATCH_H
#define MF_P2P_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "p2p/request.h"

/* A message that arrived before its receive was posted. */
typedef struct mf_unexpected {
    struct mf_unexpected *ux_next, *ux_prev;
    mf_wire_hdr ux_hdr; /* the EAGER or RTS header as received */
    int ux_peer;        /* world rank of the sender */
    mf_fabric *ux_fabric;
    unsigned char *ux_data; /* EAGER: the payload (hdr.len bytes; core/bufcache.h) */
    bool ux_arrived;        /* EAGER: the whole payload has landed in ux_data */
    mf_request *ux_waiter;  /* receive matched before the payload landed */
    struct iovec ux_iov;
    mf_fabric_sink ux_sink;
    /* Tag matching offloaded (offload.c): a message a claiming probe took in the fabric, to
     * receive with this operation; then only ux_hdr's src, tag, total, ux_peer and ux_fabric
     * are set. NULL otherwise. */
    mf_fabric_tmsg *ux_claim;
} mf_unexpected;

/* Posts a receive (r->pub.r_comm context + r->rq_ctx, rq_rank, rq_tag) at the queue's end. */
int mf_match_post(mf_request *r);
/* Removes a posted receive (MPI_Cancel); false if it was already matched. */
bool mf_match_unpost(mf_request *r);
/* Removes and returns the first posted receive matching an arriving envelope, or NULL. */
mf_request *mf_match_posted(uint32_t context, int src, int tag);

/* A new receive: removes and returns the first unexpected message that fits r (context +
 * ctx, rq_rank, rq_tag), or posts r and returns NULL; one context lookup for both. */
mf_unexpected *mf_match_take_or_post(mf_request *r, int *rc);

/* A blocking receive that waits without being posted (the direct receive, p2p/blocking.c)
 * announces itself on its context while it waits. In MPI's terms it is posted: the message it
 * will take is matched, so a cancel of that message's send must fail (mf_match_cancel). */
typedef struct mf_match_waiter {
    struct mf_match_waiter *mw_next;
    struct mf_match_waiter **mw_list; /* the context's list, newest first */
    int mw_src, mw_tag;
} mf_match_waiter;

/* Registers w (mw_src, mw_tag set) on the context if no receive is posted there, and returns
 * true; false otherwise (a new receive would queue behind those, so it must be posted too). */
bool mf_match_wait_begin(uint32_t context, mf_match_waiter *w);
void mf_match_wait_unlink(mf_match_waiter *w);
/* Unregisters w, once its receive has its message or was abandoned; inline, as the direct
 * receive is a hot path: w is the newest unless threads wait on one context. */
static inline void mf_match_wait_end(mf_match_waiter *w)
{
    if (*w->mw_list == w)
        *w->mw_list = w->mw_next;
    else
        mf_match_wait_unlink(w);
}

/* Appends an unexpected message. */
int mf_match_add_unexpected(uint32_t context, mf_unexpected *u);
/* How many unexpected messages have been appended so far, on any context: a receive that
 * checked the queue when this read n need not look again while it still reads n. */
extern uint64_t mf_match_unexp_added;
static inline uint64_t mf_match_unexpected_added(void)
{
    return mf_match_unexp_added;
}
/* The first unexpected message fitting (src, tag), removed from the queue if `take`. */
mf_unexpected *mf_match_unexpected(uint32_t context, int src, int tag, bool take);

/* Removes and returns the unexpected message that world rank `peer` sent with request id `sreq`
 * on `context`, if it is there whole and no waiting receive will take it (MPI_Cancel of that
 * send); NULL otherwise. */
mf_unexpected *mf_match_cancel(uint32_t context, int peer, uint64_t sreq);

/* Frees every queue (MPI_Finalize); unexpected messages left over are counted for a warning. */
int mf_match_finalize(void);

#endif
