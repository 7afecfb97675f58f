/* Matching queues: see match.h. Contexts are few; a small chained hash keeps lookups O(1). */
#include "p2p/match.h"

#include <stdlib.h>

#include "core/bufcache.h"
#include "core/error.h"

#define MF_MATCH_BUCKETS 64

typedef struct mf_match_ctx {
    struct mf_match_ctx *mc_next;
    uint32_t mc_context;
    mf_request *mc_posted_head, *mc_posted_tail;
    mf_unexpected *mc_unexp_head, *mc_unexp_tail;
    mf_match_waiter *mc_waiters; /* mf_match_wait_begin, newest first */
} mf_match_ctx;

static mf_match_ctx *mf_match_table[MF_MATCH_BUCKETS];
/* The context looked up last: a message is looked up about three times (receive, post, arrival),
 * mostly on one communicator. Contexts live until finalize, so the pointer never dangles. */
static mf_match_ctx *mf_match_last;
uint64_t mf_match_unexp_added; /* mf_match_unexpected_added */

/* The hash lookup and creation behind mf_match_ctx_find, out of line so that the usual hit on
 * mf_match_last needs no stack frame. */
static __attribute__((noinline)) mf_match_ctx *mf_match_ctx_lookup(uint32_t context, bool create)
{
    mf_match_ctx **slot = &mf_match_table[(context / 2) % MF_MATCH_BUCKETS];
    for (mf_match_ctx *c = *slot; c; c = c->mc_next)
        if (c->mc_context == context)
            return mf_match_last = c;
    if (!create)
        return NULL;
    mf_match_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->mc_context = context;
    c->mc_next = *slot;
    *slot = c;
    return mf_match_last = c;
}

static inline mf_match_ctx *mf_match_ctx_find(uint32_t context, bool create)
{
    if (mf_match_last && mf_match_last->mc_context == context)
        return mf_match_last;
    return mf_match_ctx_lookup(context, create);
}

static bool mf_match_fits(int want_src, int want_tag, int src, int tag)
{
    return (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* Appends r to c's posted queue. */
static void mf_match_append(mf_match_ctx *c, mf_request *r)
{
    r->rq_next = NULL;
    r->rq_prev = c->mc_posted_tail;
    if (c->mc_posted_tail)
        c->mc_posted_tail->rq_next = r;
    else
        c->mc_posted_head = r;
    c->mc_posted_tail = r;
}

int mf_match_post(mf_request *r)
{
    mf_match_ctx *c = mf_match_ctx_find(r->pub.r_comm->c_context + r->rq_ctx, true);
    if (!c)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a matching queue");
    mf_match_append(c, r);
    return MPI_SUCCESS;
}

static void mf_match_unlink(mf_match_ctx *c, mf_request *r)
{
    if (r->rq_prev)
        r->rq_prev->rq_next = r->rq_next;
    else
        c->mc_posted_head = r->rq_next;
    if (r->rq_next)
        r->rq_next->rq_prev = r->rq_prev;
    else
        c->mc_posted_tail = r->rq_prev;
    r->rq_next = r->rq_prev = NULL;
}

bool mf_match_unpost(mf_request *r)
{
    mf_match_ctx *c = mf_match_ctx_find(r->pub.r_comm->c_context + r->rq_ctx, false);
    if (!c)
        return false;
    for (mf_request *p = c->mc_posted_head; p; p = p->rq_next) {
        if (p == r) {
            mf_match_unlink(c, r);
            return true;
        }
    }
    return false;
}

mf_request *mf_match_posted(uint32_t context, int src, int tag)
{
    mf_match_ctx *c = mf_match_ctx_find(context, false);
    if (!c)
        return NULL;
    for (mf_request *r = c->mc_posted_head; r; r = r->rq_next) {
        if (mf_match_fits(r->rq_rank, r->rq_tag, src, tag)) {
            mf_match_unlink(c, r);
            return r;
        }
    }
    return NULL;
}

bool mf_match_wait_begin(uint32_t context, mf_match_waiter *w)
{
    mf_match_ctx *c = mf_match_ctx_find(context, true);
    if (!c || c->mc_posted_head)
        return false; /* a receive is posted (ours queues behind it), or no memory (the request
                       * path reports it) */
    w->mw_list = &c->mc_waiters;
    w->mw_next = c->mc_waiters;
    c->mc_waiters = w;
    return true;
}

void mf_match_wait_unlink(mf_match_waiter *w)
{
    mf_match_waiter **at = w->mw_list;
    while (*at != w)
        at = &(*at)->mw_next;
    *at = w->mw_next;
}

int mf_match_add_unexpected(uint32_t context, mf_unexpected *u)
{
    mf_match_ctx *c = mf_match_ctx_find(context, true);
    if (!c)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a matching queue");
    u->ux_next = NULL;
    u->ux_prev = c->mc_unexp_tail;
    if (c->mc_unexp_tail)
        c->mc_unexp_tail->ux_next = u;
    else
        c->mc_unexp_head = u;
    c->mc_unexp_tail = u;
    mf_match_unexp_added++;
    return MPI_SUCCESS;
}

static void mf_match_unlink_unexpected(mf_match_ctx *c, mf_unexpected *u)
{
    if (u->ux_prev)
        u->ux_prev->ux_next = u->ux_next;
    else
        c->mc_unexp_head = u->ux_next;
    if (u->ux_next)
        u->ux_next->ux_prev = u->ux_prev;
    else
        c->mc_unexp_tail = u->ux_prev;
    u->ux_next = u->ux_prev = NULL;
}

/* The first unexpected message of c fitting (src, tag), unlinked if `take`. */
static mf_unexpected *mf_match_find_unexpected(mf_match_ctx *c, int src, int tag, bool take)
{
    for (mf_unexpected *u = c->mc_unexp_head; u; u = u->ux_next) {
        if (!mf_match_fits(src, tag, u->ux_hdr.src, u->ux_hdr.tag))
            continue;
        if (take)
            mf_match_unlink_unexpected(c, u);
        return u;
    }
    return NULL;
}

/* Whether a waiting receive of c will take u: u is the first unexpected message it fits. */
static bool mf_match_awaited(mf_match_ctx *c, mf_unexpected *u)
{
    for (mf_match_waiter *w = c->mc_waiters; w; w = w->mw_next)
        if (mf_match_fits(w->mw_src, w->mw_tag, u->ux_hdr.src, u->ux_hdr.tag) &&
            mf_match_find_unexpected(c, w->mw_src, w->mw_tag, false) == u)
            return true;
    return false;
}

mf_unexpected *mf_match_cancel(uint32_t context, int peer, uint64_t sreq)
{
    mf_match_ctx *c = sreq ? mf_match_ctx_find(context, false) : NULL;
    for (mf_unexpected *u = c ? c->mc_unexp_head : NULL; u; u = u->ux_next) {
        if (u->ux_peer != peer || u->ux_hdr.sreq != sreq)
            continue;
        if (!u->ux_arrived)
            return NULL; /* the fabric still writes its payload: too late to take back */
        if (mf_match_awaited(c, u))
            return NULL; /* a blocking receive waits for it: matched */
        mf_match_unlink_unexpected(c, u);
        return u;
    }
    return NULL;
}

mf_unexpected *mf_match_unexpected(uint32_t context, int src, int tag, bool take)
{
    mf_match_ctx *c = mf_match_ctx_find(context, false);
    return c ? mf_match_find_unexpected(c, src, tag, take) : NULL;
}

mf_unexpected *mf_match_take_or_post(mf_request *r, int *rc)
{
    *rc = MPI_SUCCESS;
    mf_match_ctx *c = mf_match_ctx_find(r->pub.r_comm->c_context + r->rq_ctx, true);
    if (!c) {
        *rc = mf_error(MPI_ERR_NO_MEM, "no memory for a matching queue");
        return NULL;
    }
    mf_unexpected *u =
        c->mc_unexp_head ? mf_match_find_unexpected(c, r->rq_rank, r->rq_tag, true) : NULL;
    if (!u)
        mf_match_append(c, r);
    return u;
}

int mf_match_finalize(void)
{
    int leftover = 0;
    mf_match_last = NULL;
    for (int b = 0; b < MF_MATCH_BUCKETS; b++) {
        while (mf_match_table[b]) {
            mf_match_ctx *c = mf_match_table[b];
            mf_match_table[b] = c->mc_next;
            while (c->mc_unexp_head) {
                mf_unexpected *u = c->mc_unexp_head;
                c->mc_unexp_head = u->ux_next;
                /* A payload still streaming in belongs to the fabric until it lands. */
                if (u->ux_arrived || u->ux_hdr.type != MF_MSG_EAGER) {
                    mf_bufcache_put(u->ux_data);
                    free(u);
                }
                leftover++;
            }
            free(c);
        }
    }
    return leftover;
}
