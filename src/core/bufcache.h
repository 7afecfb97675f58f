/*
 * bufcache.h — buffers for data in flight that are allocated and freed in bursts: one-sided
 * operations' messages, payloads, fetched data and replies (src/rma), payloads of messages
 * that arrived before their receive (src/p2p). Freed buffers are kept by size class and handed
 * out again, so that a burst freed at once does not make glibc shrink the heap, only for the
 * next burst to fault every page back in (bufcache.c has the measurements).
 *
 * All functions are called with the library lock held.
 */
#ifndef MF_CORE_BUFCACHE_H
#define MF_CORE_BUFCACHE_H

#include <stddef.h>

/* A buffer of at least n bytes (n may be 0), aligned as malloc's; NULL without memory. */
void *mf_bufcache_get(size_t n);
/* Takes back a buffer of mf_bufcache_get (kept or freed); NULL is ignored. */
void mf_bufcache_put(void *p);
/* Frees every kept buffer (at finalize). */
void mf_bufcache_trim(void);
/* Bytes kept now (tests). */
size_t mf_bufcache_kept(void);

#endif
