/*
 * ofi_direct.c — the direct receive of the ofi fabric's message path (fabric.h rx_peek/rx_take;
 * ofi.h: "Direct receive").
 *
 * Contract: rx_peek finds `peer`'s next frame in sequence order (o_rx_seq) among the early
 * frames held aside (o_held) and the completions staged earlier; when there is none it reads up
 * to MF_OFI_STAGE_READ completions from the CQ into the stage (o_stage, in CQ order) and looks
 * again. Every staged completion is handled by the next progress pass in the order it was read
 * (mf_ofi_stage_drain), except a frame rx_take consumed, whose entry it marks (op_context NULL).
 * A frame that fails validation, a CQ error entry, a full stage: -1, progress deals with them.
 * rx_take copies the payload to the caller's iovecs, advances the peer's sequence, leaves the
 * receive buffer to be posted again at the next rx_peek or progress pass (o_rx_later: off the
 * path from this message to the caller's answer) or frees the held copy, and lets progress
 * deliver early frames whose turn came. Both refuse (-1) inside progress and under a wrapper
 * (f->upcalls set).
 */
#include <stdlib.h>
#include <string.h>

#include "core/iov.h"
#include "core/state.h"
#include "fabric/ofi/ofi.h"

_Static_assert((MF_OFI_STAGE & (MF_OFI_STAGE - 1)) == 0, "the stage is a power-of-two ring");

static struct fi_cq_tagged_entry *mf_ofi_stage_at(mf_ofi *o, int i)
{
    return &o->o_stage[(unsigned)(o->o_stage_head + i) & (MF_OFI_STAGE - 1)];
}

/* Drops consumed entries at the head of the stage. */
static void mf_ofi_stage_trim(mf_ofi *o)
{
    while (o->o_stage_n && !mf_ofi_stage_at(o, 0)->op_context) {
        o->o_stage_head = (o->o_stage_head + 1) & (MF_OFI_STAGE - 1);
        o->o_stage_n--;
    }
}

int mf_ofi_stage_drain(mf_ofi *o)
{
    int n = 0;
    /* one at a time off the head: what a completion calls may run progress again */
    while (o->o_stage_n) {
        struct fi_cq_tagged_entry e = *mf_ofi_stage_at(o, 0);
        o->o_stage_head = (o->o_stage_head + 1) & (MF_OFI_STAGE - 1);
        o->o_stage_n--;
        if (e.op_context) {
            mf_ofi_complete(o, &e);
            n++;
        }
    }
    return n;
}

/* Whether the staged entry e is peer's frame number seq. */
static bool mf_ofi_staged_is(const struct fi_cq_tagged_entry *e, int peer, uint32_t seq)
{
    const mf_ofi_op *op = e->op_context;
    return op && op->o_kind == MF_OFI_RECV &&
           ((uint32_t)e->data & ~MF_OFI_CQ_SHORT) == (uint32_t)peer &&
           (uint32_t)(e->data >> 32) == seq;
}

/* Whether peer's next frame is staged at index `from` or later (*slot: where). */
static bool mf_ofi_staged_find(mf_ofi *o, int peer, int from, int *slot)
{
    uint32_t seq = o->o_rx_seq[peer];
    for (int i = from; i < o->o_stage_n; i++)
        if (mf_ofi_staged_is(mf_ofi_stage_at(o, i), peer, seq)) {
            *slot = i;
            return true;
        }
    return false;
}

/* Whether the staged frame rx_peek decoded last (o_peeked, at o_peeked_slot) is still there
 * and is peer's next one. */
static inline __attribute__((always_inline)) bool mf_ofi_peeked_is_next(mf_ofi *o, int peer)
{
    if (!o->o_peeked || o->o_peeked_slot >= o->o_stage_n)
        return false;
    struct fi_cq_tagged_entry *e = mf_ofi_stage_at(o, o->o_peeked_slot);
    return e->op_context == o->o_peeked && mf_ofi_staged_is(e, peer, o->o_rx_seq[peer]);
}

/* Where peer's next frame is: a held copy (*held) or a staged receive (its index); false when
 * neither has it. The frame rx_peek decoded last is looked at first (rx_take's case). */
static bool mf_ofi_direct_find(mf_ofi *o, int peer, mf_ofi_held **held, int *slot)
{
    uint32_t seq = o->o_rx_seq[peer];
    if (mf_ofi_peeked_is_next(o, peer)) {
        *held = NULL;
        *slot = o->o_peeked_slot;
        return true;
    }
    for (mf_ofi_held *e = o->o_held; e; e = e->h_next)
        if (e->h_peer == peer && e->h_seq == seq) {
            *held = e;
            return true;
        }
    *held = NULL;
    return mf_ofi_staged_find(o, peer, 0, slot);
}

/* Reads a few completions from the CQ into the stage, straight into the ring (up to its end:
 * no copy on the way from the provider to the frame): 1 when some came, 0 when none did, -1
 * when the stage is full or an error entry waits (progress makes room, or reports it). */
static int mf_ofi_stage_fill(mf_ofi *o)
{
    unsigned tail = (unsigned)(o->o_stage_head + o->o_stage_n) & (MF_OFI_STAGE - 1);
    size_t room = (size_t)(MF_OFI_STAGE - o->o_stage_n);
    if (room > MF_OFI_STAGE - tail)
        room = MF_OFI_STAGE - tail;
    if (room > MF_OFI_STAGE_READ)
        room = MF_OFI_STAGE_READ;
    if (room == 0)
        return -1;
    ssize_t k = fi_cq_read(o->o_cq, &o->o_stage[tail], room);
    if (k > 0) {
        o->o_stage_n += (int)k;
        return 1;
    }
    return k == 0 || k == -FI_EAGAIN ? 0 : -1;
}

/* Decodes the staged receive at `slot` into *h; its payload into *payload. The result is
 * remembered (o_peeked) for the rx_take that follows a successful rx_peek; reposting the buffer
 * (mf_ofi_rx_post) forgets it, so the same buffer means the same frame. */
static bool mf_ofi_direct_parse(mf_ofi *o, int slot, mf_wire_hdr *h, const unsigned char **payload)
{
    struct fi_cq_tagged_entry *e = mf_ofi_stage_at(o, slot);
    const mf_ofi_buf *b = e->op_context;
    if (b == o->o_peeked) {
        *h = o->o_peeked_hdr;
        *payload = o->o_peeked_payload;
        return true;
    }
    if (mf_ofi_parse(b->b_data, e->len, (uint32_t)e->data & MF_OFI_CQ_SHORT, h, payload))
        return false;
    o->o_peeked = b;
    o->o_peeked_slot = slot;
    o->o_peeked_hdr = *h;
    o->o_peeked_payload = *payload;
    return true;
}

int mf_ofi_rx_peek(mf_fabric *f, int peer, mf_wire_hdr *hdr)
{
    mf_ofi *o = mf_ofi_of(f);
    if (peer < 0 || peer >= o->o_npeers || peer == mf_g.rank || o->o_in_progress || f->upcalls ||
        o->o_fails.code[peer] || o->o_closing)
        return -1;
    mf_ofi_stage_trim(o);
    if (o->o_rx_later)
        mf_ofi_rx_post_later(o);
    mf_ofi_held *held = NULL;
    int slot = 0;
    /* Nothing staged or held (a blocking receive's every idle poll): only the CQ can have it. */
    bool empty = !o->o_stage_n && !o->o_held;
    if (empty || !mf_ofi_direct_find(o, peer, &held, &slot)) {
        int before = o->o_stage_n;
        int got = mf_ofi_stage_fill(o);
        if (got <= 0)
            return got; /* nothing yet (0), or work for progress (-1) */
        if (!mf_ofi_staged_find(o, peer, before, &slot)) /* only what just came can be it */
            return 0;
    }
    const unsigned char *payload;
    if (held)
        *hdr = held->h_hdr;
    else if (!mf_ofi_direct_parse(o, slot, hdr, &payload))
        return -1; /* progress drops it with its warning */
    return hdr->type == MF_MSG_EAGER ? 1 : -1;
}

void mf_ofi_rx_take(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                    int niov)
{
    mf_ofi *o = mf_ofi_of(f);
    mf_ofi_held *held = NULL;
    int slot = o->o_peeked_slot;
    /* The staged frame rx_peek decoded last (its usual case: no search, no second decode),
     * else wherever it is. */
    bool peeked = mf_ofi_peeked_is_next(o, peer);
    if (!peeked && !mf_ofi_direct_find(o, peer, &held, &slot))
        return; /* not after a successful rx_peek: nothing to take */
    mf_fabric_count_rx(f, hdr);
    o->o_rx_seq[peer]++;
    o->o_direct++;
    if (held) {
        mf_iov_scatter(iov, niov, held->h_data, (size_t)held->h_hdr.len);
        for (mf_ofi_held **pp = &o->o_held; *pp; pp = &(*pp)->h_next)
            if (*pp == held) {
                *pp = held->h_next;
                break;
            }
        free(held);
    } else {
        struct fi_cq_tagged_entry *e = mf_ofi_stage_at(o, slot);
        mf_ofi_buf *b = e->op_context;
        if (peeked) {
            mf_iov_scatter(iov, niov, o->o_peeked_payload, (size_t)o->o_peeked_hdr.len);
        } else {
            mf_wire_hdr h;
            const unsigned char *payload = NULL;
            if (mf_ofi_direct_parse(o, slot, &h, &payload))
                mf_iov_scatter(iov, niov, payload, (size_t)h.len);
        }
        e->op_context = NULL; /* consumed: progress skips it */
        /* posted again at the next look (rx_peek, progress): the caller's answer goes first */
        b->b_posted = false;
        mf_ofi_rx_defer(o, b);
        mf_ofi_stage_trim(o);
    }
    /* the peer's next frames may wait among the held ones: progress delivers them unless a
     * direct receive takes them first */
    if (o->o_held)
        o->o_held_ready = true;
}
