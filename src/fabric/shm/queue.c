/*
 * queue.c — the single-producer single-consumer frame ring of the shm fabric (see shm.h).
 *
 * Contract: exactly one thread of one process produces and one consumes per ring. A frame is
 * written whole, the next frame's marker slot zeroed (the producer keeps marker slots zeroed
 * ahead of it, a stretch at a time), and only then its own marker stored (release), so the
 * consumer sees complete frames only (acquire). The consumer releases frames
 * by advancing its private tail and publishes it lazily. Both counters only grow; positions are
 * counters modulo cap. Every access is bounded by cap, so a corrupted length from the other side
 * cannot make us read or write outside the ring (the decoder also bounds it by max_len).
 */
#include <string.h>

#include "core/clock.h"
#include "core/counter.h"
#include "fabric/shm/copy.h"
#include "fabric/shm/shm.h"

/* The consumer publishes tail at least every cap / MF_SHM_TAIL_LAZINESS bytes. */
#define MF_SHM_TAIL_LAZINESS 16
/* The producer zeroes marker slots this many bytes ahead at a time, not one line per frame: a
 * waiting consumer polls the line right after the last frame, and zeroing it there just before
 * writing the next frame into it would move that line between the cores twice per message. */
#define MF_SHM_ZERO_AHEAD 1024

void mf_shm_ring_attach(mf_shm_ring *r, mf_shm_ring_ctl *ctl, unsigned char *data, size_t cap,
                        size_t max_len)
{
    r->ctl = ctl;
    r->data = data;
    r->cap = cap;
    r->max_len = max_len;
    r->tail_cache = r->tail_pub = 0;
    r->peek_addr = 0;
    r->head = 0;
    r->zeroed_to = r->head + cap; /* a new ring is all zeroes */
    r->pick = (mf_shm_copy_pick){.way = MF_SHM_COPY_CACHED, .policy = MF_SHM_COPY_AUTO};
    r->streamed = NULL;
}

/* Copies n bytes into the ring at counter position pos, wrapping at cap, `way` (copy.h). */
static void mf_shm_ring_put(mf_shm_ring *r, uint64_t pos, const void *src, size_t n, int way)
{
    size_t off = (size_t)(pos & (r->cap - 1));
    size_t first = r->cap - off < n ? r->cap - off : n;
    if (way == MF_SHM_COPY_STREAMED) {
        mf_shm_copy_streamed(r->data + off, src, first);
        if (n > first)
            mf_shm_copy_streamed(r->data, (const unsigned char *)src + first, n - first);
        return;
    }
    memcpy(r->data + off, src, first);
    if (n > first)
        memcpy(r->data, (const unsigned char *)src + first, n - first);
}

static void mf_shm_ring_get(const mf_shm_ring *r, uint64_t pos, void *dst, size_t n)
{
    size_t off = (size_t)(pos & (r->cap - 1));
    size_t first = r->cap - off < n ? r->cap - off : n;
    memcpy(dst, r->data + off, first);
    if (n > first)
        memcpy((unsigned char *)dst + first, r->data, n - first);
}

/* Payloads up to this size are copied with fixed-size moves (mf_shm_copy_small). */
#define MF_SHM_SMALL_COPY 64

/* Copies n <= MF_SHM_SMALL_COPY bytes between non-overlapping buffers with a few fixed-size
 * moves (two possibly overlapping ones per size class): cheaper than a call to memcpy for the
 * small payloads that ride in a frame's first line or two. */
static inline void mf_shm_copy_small(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n >= 32) {
        memcpy(d, s, 32);
        memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* Whether `need` more bytes fit, keeping one line free for the next marker slot. */
static bool mf_shm_ring_room(mf_shm_ring *r, size_t need)
{
    if (need > r->cap - MF_SHM_CACHELINE)
        return false;
    if (r->head + need + MF_SHM_CACHELINE - r->tail_cache > r->cap) {
        /* Acquire: the consumer's copies out of the space we are about to reuse are done. */
        r->tail_cache = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
        if (r->head + need + MF_SHM_CACHELINE - r->tail_cache > r->cap)
            return false;
    }
    return true;
}

static void mf_shm_ring_commit(mf_shm_ring *r, uint64_t pos, size_t need);

bool mf_shm_ring_fits(mf_shm_ring *r, uint8_t type, size_t len)
{
    return mf_shm_ring_room(r, mf_shm_frame_size(type, len));
}

void mf_shm_ring_set_copy_policy(mf_shm_ring *r, int policy)
{
    r->pick.policy = (uint8_t)policy;
    r->pick.way = policy == MF_SHM_COPY_ALWAYS && mf_shm_copy_can_stream() ? MF_SHM_COPY_STREAMED
                                                                           : MF_SHM_COPY_CACHED;
}

/* mf_shm_ring_push's general case: `left` bytes from the pieces of iov to ring position `at`,
 * wrapping as needed; a large payload the way the ring's producer chose (copy.h), some of them
 * timed for that choice. Out of line so that the small copy needs no stack frame. */
static __attribute__((noinline)) void mf_shm_ring_put_iov(mf_shm_ring *r, uint64_t at, size_t left,
                                                          const struct iovec *iov, int niov)
{
    bool timed = false;
    int way = left >= MF_SHM_COPY_PICK_MIN ? mf_shm_copy_pick_next(&r->pick, left, &timed)
                                           : MF_SHM_COPY_CACHED;
    size_t total = left;
    long long t0 = timed ? mf_clock_ns() : 0;
    for (int i = 0; i < niov && left > 0; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        mf_shm_ring_put(r, at, iov[i].iov_base, n, way);
        at += n;
        left -= n;
    }
    if (way == MF_SHM_COPY_STREAMED) {
        mf_shm_copy_fence(); /* the streamed lines are visible before the marker that says so */
        if (r->streamed)
            mf_counter_add(r->streamed, 1);
    }
    if (timed)
        mf_shm_copy_pick_note(&r->pick, way, total, mf_clock_ns() - t0);
}

bool mf_shm_ring_push(mf_shm_ring *r, const mf_wire_hdr *h, const struct iovec *iov, int niov)
{
    size_t len = (size_t)h->len, need = mf_shm_frame_size(h->type, len);
    if (!mf_shm_ring_room(r, need))
        return false;
    uint64_t pos = r->head;
    /* The first line never wraps: positions are multiples of 64 and so is cap. */
    mf_shm_frame_encode(h, r->data + (size_t)(pos & (r->cap - 1)));
    uint64_t at = pos + mf_shm_frame_hdr(h->type);
    size_t at_off = (size_t)(at & (r->cap - 1));
    if (len <= MF_SHM_SMALL_COPY && niov == 1 && iov[0].iov_len >= len && at_off + len <= r->cap)
        mf_shm_copy_small(r->data + at_off, iov[0].iov_base, len); /* small, does not wrap */
    else if (len > 0)
        mf_shm_ring_put_iov(r, at, len, iov, niov);
    /* Padding bytes are left as they are: the consumer never reads them. */
    mf_shm_ring_commit(r, pos, need);
    return true;
}

/* Hands the n bytes at ring position pos to fn, as one piece or, where they wrap, two. */
static void mf_shm_ring_pieces(const mf_shm_ring *r, uint64_t pos, size_t n, mf_shm_piece_fn *fn,
                               void *arg)
{
    size_t off = (size_t)(pos & (r->cap - 1));
    size_t first = r->cap - off < n ? r->cap - off : n;
    if (first > 0)
        fn(arg, 0, r->data + off, first);
    if (n > first)
        fn(arg, first, r->data, n - first);
}

bool mf_shm_ring_push_with(mf_shm_ring *r, const mf_wire_hdr *h, mf_shm_piece_fn *fn, void *arg)
{
    size_t need = mf_shm_frame_size(h->type, (size_t)h->len);
    if (!mf_shm_ring_room(r, need))
        return false;
    uint64_t pos = r->head;
    mf_shm_frame_encode(h, r->data + (size_t)(pos & (r->cap - 1)));
    mf_shm_ring_pieces(r, pos + mf_shm_frame_hdr(h->type), (size_t)h->len, fn, arg);
    mf_shm_ring_commit(r, pos, need);
    return true;
}

bool mf_shm_ring_push_indirect(mf_shm_ring *r, const mf_wire_hdr *h, uint64_t addr, uint64_t *end)
{
    if (!mf_shm_ring_room(r, MF_SHM_CACHELINE))
        return false;
    uint64_t pos = r->head;
    unsigned char *line = r->data + (size_t)(pos & (r->cap - 1));
    mf_shm_frame_encode(h, line);
    mf_shm_frame_set_indirect(line, addr);
    mf_shm_ring_commit(r, pos, MF_SHM_CACHELINE);
    *end = pos + MF_SHM_CACHELINE;
    return true;
}

uint64_t mf_shm_ring_tail(mf_shm_ring *r)
{
    r->tail_cache = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
    return r->tail_cache;
}

/* Producer: the frame written at pos (need bytes) is complete: advance head, zero the marker
 * slots ahead, then publish it with its marker. */
static void mf_shm_ring_commit(mf_shm_ring *r, uint64_t pos, size_t need)
{
    r->head = pos + need;
    if (r->zeroed_to <= r->head) {
        /* The next frame's marker slot, and a stretch beyond it; never into bytes the consumer
         * has not released (the room check left at least the next line free). */
        uint64_t upto = r->head + MF_SHM_ZERO_AHEAD, limit = r->tail_cache + r->cap;
        if (upto > limit)
            upto = limit & ~(uint64_t)(MF_SHM_CACHELINE - 1);
        for (uint64_t at0 = r->head; at0 < upto; at0 += MF_SHM_CACHELINE)
            atomic_store_explicit(mf_shm_marker_at(r, at0), 0, memory_order_relaxed);
        r->zeroed_to = upto;
    }
    atomic_store_explicit(mf_shm_marker_at(r, pos), mf_shm_marker(pos), memory_order_release);
}

int mf_shm_ring_peek(mf_shm_ring *r, mf_wire_hdr *h, const char **why)
{
    uint64_t pos = r->tail_cache;
    /* Acquire pairs with the producer's publication: the frame's bytes are visible. */
    if (atomic_load_explicit(mf_shm_marker_at(r, pos), memory_order_acquire) == 0)
        return 0;
    const unsigned char *line = r->data + (size_t)(pos & (r->cap - 1));
    if (mf_shm_frame_decode(line, mf_shm_marker(pos), r->max_len, h, why) != 0)
        return -1;
    r->peek_addr = mf_shm_frame_indirect(line);
    return 1;
}

/* mf_shm_ring_copy_out's general case: any length, any number of pieces, wrapping. Out of line
 * so that the small copy needs no stack frame. */
static __attribute__((noinline)) size_t mf_shm_ring_copy_out_iov(mf_shm_ring *r, uint64_t pos,
                                                                 size_t left,
                                                                 const struct iovec *iov, int niov)
{
    size_t copied = 0;
    for (int i = 0; i < niov && left > 0; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        if (n == 0)
            continue;
        mf_shm_ring_get(r, pos, iov[i].iov_base, n);
        pos += n;
        left -= n;
        copied += n;
    }
    return copied;
}

size_t mf_shm_ring_copy_out(mf_shm_ring *r, const mf_wire_hdr *h, const struct iovec *iov, int niov)
{
    uint64_t pos = r->tail_cache + mf_shm_frame_hdr(h->type);
    size_t left = (size_t)h->len;
    size_t pos_off = (size_t)(pos & (r->cap - 1));
    if (left <= MF_SHM_SMALL_COPY && niov >= 1 && iov[0].iov_len >= left &&
        pos_off + left <= r->cap) {
        mf_shm_copy_small(iov[0].iov_base, r->data + pos_off, left);
        return left;
    }
    return mf_shm_ring_copy_out_iov(r, pos, left, iov, niov);
}

void mf_shm_ring_read_with(const mf_shm_ring *r, const mf_wire_hdr *h, size_t len,
                           mf_shm_piece_fn *fn, void *arg)
{
    mf_shm_ring_pieces(r, r->tail_cache + mf_shm_frame_hdr(h->type), len, fn, arg);
}

/* Tells a blocked producer about the space: true if it was flagged (now cleared). Call after
 * publishing tail (seq_cst), so that a producer raising the flag later sees the new tail. */
static bool mf_shm_ring_unblock(mf_shm_ring *r)
{
    /* Plain load first: the flag's line is rarely written, so this is a cache hit. */
    if (atomic_load_explicit(&r->ctl->blocked, memory_order_seq_cst) == 0)
        return false;
    return atomic_exchange_explicit(&r->ctl->blocked, 0, memory_order_seq_cst) != 0;
}

bool mf_shm_ring_publish(mf_shm_ring *r)
{
    r->tail_pub = r->tail_cache;
    atomic_store_explicit(&r->ctl->tail, r->tail_cache, memory_order_seq_cst);
    return mf_shm_ring_unblock(r);
}

bool mf_shm_ring_serve_blocked(mf_shm_ring *r)
{
    if (atomic_load_explicit(&r->ctl->blocked, memory_order_relaxed) == 0)
        return false;
    return mf_shm_ring_publish(r);
}

bool mf_shm_ring_pop(mf_shm_ring *r, const mf_wire_hdr *h)
{
    r->tail_cache += mf_shm_frame_span(h->type, (size_t)h->len, r->peek_addr != 0);
    if (r->peek_addr != 0) {
        /* Its producer completes the send when it sees tail, so publish it now; but a blocked
         * producer waits for all of its indirect frames, not for this one: it is woken when the
         * ring is found empty (serve_blocked), once per burst instead of once per frame. */
        r->tail_pub = r->tail_cache;
        atomic_store_explicit(&r->ctl->tail, r->tail_cache, memory_order_seq_cst);
        return false;
    }
    if (r->tail_cache - r->tail_pub >= r->cap / MF_SHM_TAIL_LAZINESS)
        return mf_shm_ring_publish(r);
    return mf_shm_ring_serve_blocked(r);
}

bool mf_shm_ring_nonempty_sc(mf_shm_ring *r)
{
    return atomic_load_explicit(mf_shm_marker_at(r, r->tail_cache), memory_order_seq_cst) != 0;
}

void mf_shm_ring_set_blocked(mf_shm_ring *r)
{
    atomic_store_explicit(&r->ctl->blocked, 1, memory_order_seq_cst);
}
