/*
 * shm_wake.h — waking a local rank that sleeps in the progress engine, for layers above the
 * fabrics that share memory with it outside the shm fabric's rings (the collectives' segment).
 */
#ifndef MF_FABRIC_SHM_WAKE_H
#define MF_FABRIC_SHM_WAKE_H

/* Rings world rank `rank`'s doorbell if it sleeps (its `sleeping` flag in the host's segment is
 * set), after the caller stored something it waits for in memory both map. Contract: the
 * caller's store is a release (or stronger) store made before this call; the sleeper, after
 * raising its flag in the shm fabric's sleep_prepare, looks at that memory again before it
 * sleeps (a progress source's sleep_ns does: progress.h), so either it sees the store or this
 * sees its flag (the same Dekker pair as a published frame, shm.h "Wake-ups"). Cheap when the
 * rank is awake: a fence (none where sleepers issue membarrier) and one load. A no-op for
 * ourselves, a rank on another host, or when no shm fabric is open. Library lock held. */
void mf_shm_wake_rank(int rank);

/* Sleeps of this process that ended with its sleeping flag still up: nobody rang its doorbell
 * (the sleep ran to its bound, or another descriptor or a signal ended it). A waiter that finds
 * what it waited for right after such a sleep was not woken for it. */
unsigned long long mf_shm_unrung_sleeps(void);

#endif
