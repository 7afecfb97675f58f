/*
 * lock.h — the library lock: one lock around the engine, taken by API entry points only when
 * the thread level is MPI_THREAD_MULTIPLE or the progress thread runs
 * (MANIFOLD_ASYNC_PROGRESS=1); coarse, correct first, fine-grained later.
 *
 * Contract:
 * - Recursive: a thread that holds it may take it again (callbacks that call MPI); it is
 *   released when every mf_lock has had its mf_unlock.
 * - mf_lock_enable() switches it on for good, before the user or the library can start
 *   threads; until then lock, unlock and trylock do nothing (trylock says yes), and entry
 *   points pay one predictable branch.
 * - mf_lock_enable_while(needed) switches it on (when off) for a layer whose own thread calls
 *   into the library only while needed() holds (the I/O thread's collective accesses), in a
 *   program whose thread level is below MPI_THREAD_MULTIPLE: at a thread's outermost release,
 *   if needed() no longer holds, the lock goes off again, and entry points stop paying for it.
 *   The caller switches it on before its thread may need it (and takes it once for the exit of
 *   the entry point it is in); needed() must stay true until that thread can no longer be
 *   inside or waiting for the lock. mf_lock_enable overrides it: on for good.
 * - A thread that has to wait for it sleeps in slices of at most MF_LOCK_SLICE_US and looks
 *   again after each, rather than until a release wakes it (lock.c says why).
 */
#ifndef MF_CORE_LOCK_H
#define MF_CORE_LOCK_H

#include <stdbool.h>

#define MF_LOCK_SLICE_US 50

extern bool mf_lock_used; /* set by mf_lock_enable; read inline by every entry point */

void mf_lock_take(void);
void mf_lock_release(void);

static inline void mf_lock(void)
{
    if (__builtin_expect(mf_lock_used, 0))
        mf_lock_take();
}

static inline void mf_unlock(void)
{
    if (__builtin_expect(mf_lock_used, 0))
        mf_lock_release();
}

/* Takes the lock if it is free or this thread holds it already (always true when the lock is
 * not in use). */
bool mf_trylock(void);
void mf_lock_enable(void);
void mf_lock_enable_while(bool (*needed)(void));
bool mf_lock_enabled(void);

#endif
