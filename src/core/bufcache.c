/*
 * bufcache.c — buffers for data in flight that come and go in bursts (bufcache.h has the
 * contract).
 *
 * Why not malloc and free alone: a window of one-sided operations allocates its buffers in a
 * burst (64 puts of 16 KiB between two flushes is 1 MiB) and frees them all at its flush; a
 * window of messages that arrive before their receives is held the same way. glibc then finds
 * more than its trim threshold (128 KiB) free at the top of the heap and gives it back to the
 * kernel, so the next burst faults every page in again, zeroed. Windowed puts of 8-16 KiB over
 * shm ran at 1.2 GB/s instead of 7 GB/s that way (97,000 page faults at the origin in one run
 * against 3,600 with trimming off).
 *
 * So freed buffers are kept, by size class, and handed out again: classes grow by a quarter
 * (64, 128, 192, 256, 320, ... bytes: at most a quarter of a buffer is slack), up to
 * MF_BUFCACHE_MAX; at most MF_BUFCACHE_KEEP bytes are kept in all (what a burst of that size
 * leaves behind is what the next one needs); larger buffers go straight to malloc and free.
 * Called with the library lock held.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/bufcache.h"

/* Under AddressSanitizer a kept buffer is poisoned, so that a use after mf_bufcache_put is
 * still reported as one (the memory is not freed, so ASan would not know otherwise). */
#if defined(__SANITIZE_ADDRESS__) /* GCC */
#define MF_BUFCACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define MF_BUFCACHE_ASAN 1
#endif
#endif
#ifdef MF_BUFCACHE_ASAN
#include <sanitizer/asan_interface.h>
#define MF_BUFCACHE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define MF_BUFCACHE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define MF_BUFCACHE_POISON(p, n) ((void)0)
#define MF_BUFCACHE_UNPOISON(p, n) ((void)0)
#endif

#define MF_BUFCACHE_MAX (1u << 20)
#define MF_BUFCACHE_KEEP (4u << 20)
#define MF_BUFCACHE_CLASSES 48

/* In front of every buffer: its class (-1: not cached), and the free list's link. 16 bytes,
 * so the buffer keeps malloc's alignment. */
typedef struct mf_bufcache_hdr {
    struct mf_bufcache_hdr *b_next;
    int64_t b_class;
} mf_bufcache_hdr;

static size_t bufcache_sizes[MF_BUFCACHE_CLASSES];
static int bufcache_nclasses;
static mf_bufcache_hdr *bufcache_free[MF_BUFCACHE_CLASSES];
static size_t bufcache_kept; /* bytes in the free lists */

static void bufcache_init(void)
{
    size_t s = 64;
    int n = 0;
    while (n < MF_BUFCACHE_CLASSES && s <= MF_BUFCACHE_MAX) {
        bufcache_sizes[n++] = s;
        s += (s / 4 + 63) & ~(size_t)63;
    }
    bufcache_nclasses = n;
}

/* The smallest class that holds n bytes, or -1 above the largest. */
static int bufcache_class(size_t n)
{
    if (!bufcache_nclasses)
        bufcache_init();
    int lo = 0, hi = bufcache_nclasses - 1;
    if (n > bufcache_sizes[hi])
        return -1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (bufcache_sizes[mid] >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void *mf_bufcache_get(size_t n)
{
    int c = bufcache_class(n);
    mf_bufcache_hdr *b = c >= 0 ? bufcache_free[c] : NULL;
    if (b) {
        bufcache_free[c] = b->b_next;
        bufcache_kept -= bufcache_sizes[c];
        MF_BUFCACHE_UNPOISON(b + 1, bufcache_sizes[c]);
    } else {
        size_t size = c >= 0 ? bufcache_sizes[c] : n;
        if (size > SIZE_MAX - sizeof *b || !(b = malloc(sizeof *b + (size ? size : 1))))
            return NULL;
        b->b_class = c;
    }
    return b + 1;
}

void mf_bufcache_put(void *p)
{
    if (!p)
        return;
    mf_bufcache_hdr *b = (mf_bufcache_hdr *)p - 1;
    int c = (int)b->b_class;
    if (c < 0 || bufcache_kept + bufcache_sizes[c] > MF_BUFCACHE_KEEP) {
        free(b);
        return;
    }
    MF_BUFCACHE_POISON(b + 1, bufcache_sizes[c]);
    b->b_next = bufcache_free[c];
    bufcache_free[c] = b;
    bufcache_kept += bufcache_sizes[c];
}

void mf_bufcache_trim(void)
{
    for (int c = 0; c < bufcache_nclasses; c++)
        while (bufcache_free[c]) {
            mf_bufcache_hdr *b = bufcache_free[c];
            bufcache_free[c] = b->b_next;
            MF_BUFCACHE_UNPOISON(b + 1, bufcache_sizes[c]);
            free(b);
        }
    bufcache_kept = 0;
}

size_t mf_bufcache_kept(void)
{
    return bufcache_kept;
}
