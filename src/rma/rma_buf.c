/*
 * rma_buf.c — the buffers of one-sided operations in flight: an origin's operation messages and
 * fetched data, a target's queued payloads and replies (rma.h: mf_rma_buf_get).
 *
 * Why not malloc and free alone: a window of operations allocates its buffers in a burst (64
 * puts of 16 KiB between two flushes is 1 MiB) and frees them all at its flush. glibc then finds
 * more than its trim threshold (128 KiB) free at the top of the heap and gives it back to the
 * kernel, so the next burst faults every page in again, zeroed. Windowed puts of 8-16 KiB over
 * shm ran at 1.2 GB/s instead of 7 GB/s that way (97,000 page faults at the origin in one run
 * against 3,600 with trimming off).
 *
 * So freed buffers are kept, by size class, and handed out again: classes grow by a quarter
 * (64, 128, 192, 256, 320, ... bytes: at most a quarter of a buffer is slack), up to
 * MF_RMA_BUF_MAX; at most MF_RMA_BUF_KEEP bytes are kept in all (what a burst of that size
 * leaves behind is what the next one needs); larger buffers go straight to malloc and free.
 * Called with the library lock held, as all of src/rma.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rma/rma.h"

#define MF_RMA_BUF_MAX (1u << 20)
#define MF_RMA_BUF_KEEP (4u << 20)
#define MF_RMA_BUF_CLASSES 48

/* In front of every buffer: its class (-1: not cached), and the free list's link. 16 bytes,
 * so the buffer keeps malloc's alignment. */
typedef struct mf_rma_buf {
    struct mf_rma_buf *b_next;
    int64_t b_class;
} mf_rma_buf;

static size_t rma_buf_sizes[MF_RMA_BUF_CLASSES];
static int rma_buf_nclasses;
static mf_rma_buf *rma_buf_free[MF_RMA_BUF_CLASSES];
static size_t rma_buf_kept; /* bytes in the free lists */

static void rma_buf_init(void)
{
    size_t s = 64;
    int n = 0;
    while (n < MF_RMA_BUF_CLASSES && s <= MF_RMA_BUF_MAX) {
        rma_buf_sizes[n++] = s;
        s += (s / 4 + 63) & ~(size_t)63;
    }
    rma_buf_nclasses = n;
}

/* The smallest class that holds n bytes, or -1 above the largest. */
static int rma_buf_class(size_t n)
{
    if (!rma_buf_nclasses)
        rma_buf_init();
    int lo = 0, hi = rma_buf_nclasses - 1;
    if (n > rma_buf_sizes[hi])
        return -1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (rma_buf_sizes[mid] >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void *mf_rma_buf_get(size_t n)
{
    int c = rma_buf_class(n);
    mf_rma_buf *b = c >= 0 ? rma_buf_free[c] : NULL;
    if (b) {
        rma_buf_free[c] = b->b_next;
        rma_buf_kept -= rma_buf_sizes[c];
    } else {
        size_t size = c >= 0 ? rma_buf_sizes[c] : n;
        if (size > SIZE_MAX - sizeof *b || !(b = malloc(sizeof *b + (size ? size : 1))))
            return NULL;
        b->b_class = c;
    }
    return b + 1;
}

void mf_rma_buf_put(void *p)
{
    if (!p)
        return;
    mf_rma_buf *b = (mf_rma_buf *)p - 1;
    int c = (int)b->b_class;
    if (c < 0 || rma_buf_kept + rma_buf_sizes[c] > MF_RMA_BUF_KEEP) {
        free(b);
        return;
    }
    b->b_next = rma_buf_free[c];
    rma_buf_free[c] = b;
    rma_buf_kept += rma_buf_sizes[c];
}

void mf_rma_buf_trim(void)
{
    for (int c = 0; c < rma_buf_nclasses; c++)
        while (rma_buf_free[c]) {
            mf_rma_buf *b = rma_buf_free[c];
            rma_buf_free[c] = b->b_next;
            free(b);
        }
    rma_buf_kept = 0;
}

size_t mf_rma_buf_kept(void)
{
    return rma_buf_kept;
}
