/*
 * queue.c — the single-producer single-consumer frame ring of the shm fabric (see shm.h).
 *
 * Contract: exactly one thread of one process produces and one consumes per ring. A frame is
 * written whole before it is published (head, seq_cst), so the consumer sees complete frames
 * only; the consumer releases a frame (tail, seq_cst) once it copied the payload out. Both
 * counters only grow; positions are counters modulo cap. Every access is bounded by cap, so a
 * corrupted length from the other side cannot make us read or write outside the ring (the
 * caller validates lengths against the published bytes before copying).
 *
 * Why seq_cst stores on head/tail rather than release: each side follows its store with a load
 * of the other side's "sleeping"/"blocked" flag, and that store->load order is exactly what
 * release/acquire does not give (x86 store buffer). On x86 a seq_cst store is one xchg.
 */
#include <string.h>

#include "fabric/shm/shm.h"

void mf_shm_ring_attach(mf_shm_ring *r, mf_shm_ring_ctl *ctl, unsigned char *data, size_t cap)
{
    r->ctl = ctl;
    r->data = data;
    r->cap = cap;
    r->head_cache = atomic_load_explicit(&ctl->head, memory_order_acquire);
    r->tail_cache = atomic_load_explicit(&ctl->tail, memory_order_acquire);
}

/* Copies n bytes into the ring at counter position pos, wrapping at cap. */
static void mf_shm_ring_put(mf_shm_ring *r, uint64_t pos, const void *src, size_t n)
{
    size_t off = (size_t)(pos & (r->cap - 1));
    size_t first = r->cap - off < n ? r->cap - off : n;
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

bool mf_shm_ring_fits(mf_shm_ring *r, size_t len)
{
    size_t need = mf_shm_frame_bytes(len);
    if (need > r->cap)
        return false;
    if (r->head_cache + need - r->tail_cache > r->cap) {
        r->tail_cache = atomic_load_explicit(&r->ctl->tail, memory_order_seq_cst);
        if (r->head_cache + need - r->tail_cache > r->cap)
            return false;
    }
    return true;
}

bool mf_shm_ring_push(mf_shm_ring *r, const unsigned char hdr[MF_WIRE_HDR_SIZE],
                      const struct iovec *iov, int niov, size_t len)
{
    size_t need = mf_shm_frame_bytes(len);
    /* Only the producer writes head, so our cached copy is exact. */
    if (r->head_cache + need - r->tail_cache > r->cap) {
        /* Acquire: the consumer's copies out of the space we are about to reuse are done. */
        r->tail_cache = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
        if (need > r->cap || r->head_cache + need - r->tail_cache > r->cap)
            return false;
    }
    uint64_t pos = r->head_cache;
    mf_shm_ring_put(r, pos, hdr, MF_WIRE_HDR_SIZE);
    pos += MF_WIRE_HDR_SIZE;
    size_t left = len;
    for (int i = 0; i < niov && left > 0; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        mf_shm_ring_put(r, pos, iov[i].iov_base, n);
        pos += n;
        left -= n;
    }
    /* Padding bytes are left as they are: the consumer never reads them. */
    r->head_cache += need;
    atomic_store_explicit(&r->ctl->head, r->head_cache, memory_order_seq_cst);
    return true;
}

const unsigned char *mf_shm_ring_peek(mf_shm_ring *r, size_t *avail)
{
    if (r->head_cache == r->tail_cache) {
        /* Acquire pairs with the producer's publication: the frame bytes are visible. */
        r->head_cache = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
        if (r->head_cache == r->tail_cache)
            return NULL;
    }
    *avail = (size_t)(r->head_cache - r->tail_cache);
    return r->data + (r->tail_cache & (r->cap - 1));
}

size_t mf_shm_ring_copy_out(mf_shm_ring *r, size_t len, const struct iovec *iov, int niov)
{
    uint64_t pos = r->tail_cache + MF_WIRE_HDR_SIZE;
    size_t left = len, copied = 0;
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

bool mf_shm_ring_pop(mf_shm_ring *r, size_t len)
{
    r->tail_cache += mf_shm_frame_bytes(len);
    atomic_store_explicit(&r->ctl->tail, r->tail_cache, memory_order_seq_cst);
    /* Plain load first (a mov on x86): the flag is almost always clear and its line rarely
     * written, so the locked exchange is paid only when a producer really waits. */
    if (atomic_load_explicit(&r->ctl->blocked, memory_order_seq_cst) == 0)
        return false;
    return atomic_exchange_explicit(&r->ctl->blocked, 0, memory_order_seq_cst) != 0;
}

bool mf_shm_ring_nonempty_sc(mf_shm_ring *r)
{
    return atomic_load_explicit(&r->ctl->head, memory_order_seq_cst) != r->tail_cache;
}

void mf_shm_ring_set_blocked(mf_shm_ring *r)
{
    atomic_store_explicit(&r->ctl->blocked, 1, memory_order_seq_cst);
}
