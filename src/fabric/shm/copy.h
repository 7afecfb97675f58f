/*
 * copy.h — how a producer copies a large frame into a ring: with ordinary stores, which leave
 * the lines in its own cache for the consumer to fetch from there, or with non-temporal
 * (streaming) stores, which write them to memory and drop them from every cache. Ordinary ones,
 * unless this ring's producer measures the signature of two cores far apart (mf_shm_copy_pick).
 *
 * Why: how fast a line written by one core reaches another depends on where the two cores are.
 * On the development VM the hypervisor moves the two virtual CPUs about: a cache line's round
 * trip between them measured 70-320 ns most of the time and 420-600 ns in spells, and 64 KiB
 * frames through a 1 MiB ring (one thread writing, one reading, no MPI) then moved 12-26 GB/s
 * with ordinary stores but 2-4 GB/s in the spells, and 9-15 GB/s with streaming stores in
 * either (docs/PERFORMANCE.md). In a spell, each line the producer writes must first be taken
 * from the consumer's cache, which read it on the ring's previous lap (a read for ownership
 * across the far link), and each line the consumer reads must be fetched dirty from the
 * producer's; a streamed line needs neither, and is read from memory.
 *
 * The signature: the producer's ordinary copies run at a fraction of its streamed ones (in the
 * spells, 1.9-2.5 GB/s against 20-30: over 10x; otherwise at most 2-4x). It is the producer's
 * own measure, and only a coarse one: a streamed copy is cheap for its producer (the stores
 * fill write-combining buffers) and costs the consumer a read from memory, so comparing the two
 * copy-in speeds as they are would stream on close cores too, halving bibw 64 KiB there; a
 * cost model that added the consumer's timed copy-outs (tried: published through the ring's
 * control line) did no better, its timings too noisy to call a 1.6x difference. So the rule
 * only streams past MF_SHM_COPY_PICK_STREAM_AT and goes back under MF_SHM_COPY_PICK_CACHE_AT.
 * The chosen way's copies are timed now and then, and a short burst goes the other way once in
 * a while, so that a change of placement is noticed (timed but for its first copy: a lone copy
 * the other way meets lines in the state the chosen way leaves them).
 *
 * The choice is pure logic on caller-supplied timings (mf_shm_copy_pick_*), so tests drive it.
 */
#ifndef MF_FABRIC_SHM_COPY_H
#define MF_FABRIC_SHM_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Payloads from this size are copied the chosen way; smaller ones always with ordinary stores
 * (the consumer of a small message wants it in a cache, and its copy is too short to time).
 * 8 KiB: in the far placement, bibw of 8-24 KiB through rings of ordinary stores moved 2.8-3.4
 * GB/s (MPICH 2.7-8.6) and 11-15 streamed; at 4 KiB both libraries fell alike (3.3 against
 * MPICH's 2.6), and a copy of a few lines is the consumer's to keep in its cache. */
#define MF_SHM_COPY_PICK_MIN (8u << 10)
/* Speeds kept per way; a way's speed is the median of them (a copy preempted midway, or one
 * into a buffer touched for the first time, reads slow once, and does not decide alone: single
 * timings in a bibw ranged 1-35 GB/s where the means were 16-35). */
#define MF_SHM_COPY_PICK_HISTORY 8
/* In the chosen way, a copy is timed once this many payload bytes went since the last timed one:
 * one in 4 at 64 KiB, one in 32 at 8 KiB, every one from 256 KiB. A timing costs about 100 ns
 * (two clock reads and the medians); paced by copies, one in 4 cost 4-5% of bibw at 8 KiB. */
#define MF_SHM_COPY_PICK_TIME_BYTES (256u << 10)
/* A burst of MF_SHM_COPY_PICK_BURST large copies goes the other way once at least
 * MF_SHM_COPY_PICK_PROBE_EVERY copies and MF_SHM_COPY_PICK_PROBE_BYTES bytes went since the last
 * one, so that a change of placement is noticed; until the other way has a full history, once
 * in MF_SHM_COPY_PICK_LEARN_EVERY copies and MF_SHM_COPY_PICK_LEARN_BYTES. The copy count bounds
 * the bursts' share of large copies (8 in 512), the bytes their share of small ones: paced by
 * copies alone, bursts cost 4-6% of bibw at 8 KiB. */
#define MF_SHM_COPY_PICK_PROBE_EVERY 512
#define MF_SHM_COPY_PICK_PROBE_BYTES (32u << 20)
#define MF_SHM_COPY_PICK_LEARN_EVERY 32
#define MF_SHM_COPY_PICK_LEARN_BYTES (2u << 20)
#define MF_SHM_COPY_PICK_BURST 8
/* Streaming is chosen once streamed copies run this many times faster than ordinary ones, and
 * left once they run less than MF_SHM_COPY_PICK_CACHE_AT times faster. */
#define MF_SHM_COPY_PICK_STREAM_AT 5.0f
#define MF_SHM_COPY_PICK_CACHE_AT 3.0f

enum mf_shm_copy_way { MF_SHM_COPY_CACHED = 0, MF_SHM_COPY_STREAMED = 1 };
enum mf_shm_copy_policy {
    MF_SHM_COPY_AUTO = 0,  /* measure and choose (the default) */
    MF_SHM_COPY_NEVER = 1, /* ordinary stores only */
    MF_SHM_COPY_ALWAYS = 2 /* streaming stores for every large payload (tests) */
};

typedef struct mf_shm_copy_pick {
    float speed[2][MF_SHM_COPY_PICK_HISTORY]; /* bytes per ns of the last timed copies, per way */
    uint32_t timed[2];                        /* copies timed per way (index: timed % HISTORY) */
    uint32_t probe_copies; /* large copies since the last burst the other way began */
    size_t probe_bytes;    /* and their bytes */
    size_t untimed_bytes;  /* bytes of large copies since the last timed one */
    uint8_t way;           /* the chosen way (enum mf_shm_copy_way) */
    uint8_t policy;        /* enum mf_shm_copy_policy */
    uint8_t burst;         /* copies of the current burst the other way still to go */
    bool settle;           /* the next copy the chosen way follows a burst: not timed */
} mf_shm_copy_pick;

/* Whether this build can stream (x86-64: SSE2 non-temporal stores); else every way is CACHED. */
bool mf_shm_copy_can_stream(void);

/* The way to copy the next large payload, of `bytes` bytes, and whether to time it (*timed). */
int mf_shm_copy_pick_next(mf_shm_copy_pick *p, size_t bytes, bool *timed);
/* A timed copy of `bytes` in `ns` went `way`: kept, and the choice made again. */
void mf_shm_copy_pick_note(mf_shm_copy_pick *p, int way, size_t bytes, long long ns);
/* A way's speed (bytes per ns): the median of its last timings; 0 with none. */
float mf_shm_copy_pick_speed(const mf_shm_copy_pick *p, int way);

/* Copies n bytes with streaming stores to the whole 64-byte lines of the destination, ordinary
 * ones to the partial lines at its ends. The streaming stores are weakly ordered: call
 * mf_shm_copy_fence before publishing what they wrote. */
void mf_shm_copy_streamed(void *dst, const void *src, size_t n);
void mf_shm_copy_fence(void);

#endif
