/*
 * raw_shm — the physical limit under MPI over shared memory: two processes (fork), pinned to
 * cores 0 and 1, sharing an anonymous mapping, no MPI and no library.
 *   pingpong  the sender copies size bytes into a shared buffer and raises a flag (release store);
 *             the receiver spins on the flag (acquire load), copies the bytes out and answers the
 *             same way. latency_us = half the round trip: the floor for a copy-in/copy-out
 *             protocol.
 *   stream    messages of size bytes pushed through a ring of 8 slots of up to 64 KiB (copy in,
 *             flag, copy out), a window of messages per acknowledgement: the two-copy bandwidth
 *             limit. bandwidth_MBps at the receiver.
 *   memcpy    one process copying size bytes between two private buffers: the single-copy limit
 *             (what a CMA or XPMEM transfer can reach at best).
 * Options as bench_util.h plus --cpus A,B.
 */
#include "bench_raw.h"

#include <stdatomic.h>
#include <unistd.h>

#define SLOTS 8
#define SLOT_MAX (64u << 10)
#define LINE 64

typedef struct {
    _Alignas(LINE) _Atomic uint64_t seq; /* written by the producer */
} flag_t;

typedef struct {
    flag_t ping;             /* 0 -> 1 */
    flag_t pong;             /* 1 -> 0 */
    flag_t slot_full[SLOTS]; /* stream: sequence number of the chunk in each slot */
    flag_t slot_free[SLOTS]; /* stream: sequence number consumed */
    flag_t ack;              /* stream: windows received */
    flag_t go;               /* stream: batch start */
} ctl_t;

static inline void spin_until(_Atomic uint64_t *f, uint64_t v)
{
    while (atomic_load_explicit(f, memory_order_acquire) < v)
        __builtin_ia32_pause();
}

#define WINDOW_BYTES (64L << 20)

int main(int argc, char **argv)
{
    int cpus[2];
    bench_take_cpus(&argc, argv, cpus);
    bench_opts o;
    if (bench_parse(argc, argv, &o, 1, 4u << 20, " [--cpus A,B]") != 0)
        return 2;
    printf("# raw_shm cpus=%d,%d\n", cpus[0], cpus[1]);
    fflush(stdout);

    size_t data = 2 * o.max_size + SLOTS * SLOT_MAX;
    unsigned char *shm = bench_shared("raw_shm", sizeof(ctl_t) + data + 4096);
    ctl_t *c = (ctl_t *)shm;
    unsigned char *ab = shm + ((sizeof(ctl_t) + 4095) & ~(size_t)4095); /* 0 -> 1 */
    unsigned char *ba = ab + o.max_size;                                /* 1 -> 0 */
    unsigned char *ring = ba + o.max_size;
    memset(ab, 0, data);

    pid_t pid = bench_fork_pinned("raw_shm", cpus);
    int lead = pid != 0;
    unsigned char *buf = bench_alloc(o.max_size);
    unsigned char *buf2 = bench_alloc(o.max_size);
    uint64_t seq = 0, chunk_seq = 0, windows = 0, go = 0;

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long iters = bench_iters(&o, size);
        double best = 1e30;
        if (lead)
            bench_fill(buf, size, 9);
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? o.warmup : iters;
            double t0 = bench_now();
            for (long i = 0; i < n; i++) {
                seq++;
                if (lead) {
                    memcpy(ab, buf, size);
                    atomic_store_explicit(&c->ping.seq, seq, memory_order_release);
                    spin_until(&c->pong.seq, seq);
                    memcpy(buf, ba, size);
                } else {
                    spin_until(&c->ping.seq, seq);
                    memcpy(buf, ab, size);
                    memcpy(ba, buf, size);
                    atomic_store_explicit(&c->pong.seq, seq, memory_order_release);
                }
            }
            double t = (bench_now() - t0) / (2.0 * (double)n);
            if (rep >= 0 && t < best)
                best = t;
        }
        if (lead) {
            if (bench_check(buf, size, 9) != 0) {
                fprintf(stderr, "raw_shm: echo of %zu bytes differs\n", size);
                return 3;
            }
            bench_emit("pingpong", size, "latency_us", best * 1e6);
            bench_emit("pingpong", size, "bandwidth_MBps", (double)size / best / 1e6);
        }

        /* Stream through the ring: the child produces, the lead consumes and times. */
        long w = bench_window_for(&o, size, WINDOW_BYTES);
        long witers = bench_window_iters(&o, size, w);
        size_t slot = size < SLOT_MAX ? size : SLOT_MAX;
        best = 1e30;
        if (!lead)
            bench_fill(buf, size, 13);
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? 1 : witers;
            go++;
            if (lead) {
                atomic_store_explicit(&c->go.seq, go, memory_order_release);
                double t0 = bench_now();
                for (long i = 0; i < n; i++) {
                    for (long k = 0; k < w; k++)
                        for (size_t off = 0; off < size; off += slot) {
                            size_t len = size - off < slot ? size - off : slot;
                            uint64_t s = ++chunk_seq;
                            int j = (int)(s % SLOTS);
                            spin_until(&c->slot_full[j].seq, s);
                            memcpy(buf2 + off, ring + (size_t)j * SLOT_MAX, len);
                            atomic_store_explicit(&c->slot_free[j].seq, s, memory_order_release);
                        }
                    atomic_store_explicit(&c->ack.seq, ++windows, memory_order_release);
                }
                double t = (bench_now() - t0) / (double)n;
                if (rep >= 0 && t < best)
                    best = t;
                if (rep < 0 && bench_check(buf2, size, 13) != 0) {
                    fprintf(stderr, "raw_shm: streamed %zu bytes differ\n", size);
                    return 3;
                }
            } else {
                spin_until(&c->go.seq, go);
                for (long i = 0; i < n; i++) {
                    for (long k = 0; k < w; k++)
                        for (size_t off = 0; off < size; off += slot) {
                            size_t len = size - off < slot ? size - off : slot;
                            uint64_t s = ++chunk_seq;
                            int j = (int)(s % SLOTS);
                            if (s > SLOTS)
                                spin_until(&c->slot_free[j].seq, s - SLOTS);
                            memcpy(ring + (size_t)j * SLOT_MAX, buf + off, len);
                            atomic_store_explicit(&c->slot_full[j].seq, s, memory_order_release);
                        }
                    spin_until(&c->ack.seq, ++windows);
                }
            }
        }
        if (lead) {
            bench_emit("stream", size, "bandwidth_MBps", (double)size * (double)w / best / 1e6);
            /* Single copy in one process. */
            long m = bench_iters(&o, size) * 4;
            double bm = 1e30;
            for (int rep = -1; rep < o.reps; rep++) {
                double t0 = bench_now();
                for (long i = 0; i < m; i++) {
                    memcpy(buf2, buf, size);
                    __asm__ volatile("" ::: "memory");
                }
                double t = (bench_now() - t0) / (double)m;
                if (rep >= 0 && t < bm)
                    bm = t;
            }
            bench_emit("memcpy", size, "bandwidth_MBps", (double)size / bm / 1e6);
        }
    }
    free(buf2);
    free(buf);
    return bench_join(pid);
}
