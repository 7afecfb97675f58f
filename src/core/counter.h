/*
 * counter.h — statistics counters (frames, bytes, connections, sleeps) that the library writes
 * under its lock and MPI_T reads from any thread without it.
 *
 * Writers are serialized (they hold the library lock, or the thread level lets one thread at a
 * time into MPI), so an increment needs no locked read-modify-write: a relaxed atomic load and
 * store do, which are plain moves on the 64-bit hosts we run on. Being atomic, they make the
 * reader's relaxed load race-free in C11's terms (and for ThreadSanitizer), and it never sees a
 * torn value. A plain `++` would be a data race with that reader.
 */
#ifndef MF_CORE_COUNTER_H
#define MF_CORE_COUNTER_H

#include <stdint.h>

/* Adds n to *c. The caller is the only writer at this moment (see above). */
static inline void mf_counter_add(uint64_t *c, uint64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* *c as last written, from any thread. */
static inline uint64_t mf_counter_read(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif
