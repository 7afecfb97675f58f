/*
 * line — how far apart two cores are: a cache line bounced between two processes (fork), pinned
 * to cores A and B, through a shared anonymous mapping, no MPI. Prints
 *   line,64,rtt_ns,VALUE
 * the best of 5 sets of 20000 round trips (each: one store on each side, each waiting for the
 * other's). bench/run runs it before every 2-rank job and puts it beside that job's results:
 * on a VM whose hypervisor moves the virtual CPUs about, a round trip of 70-320 ns or of
 * 420-600 ns told a fast run of the shm rings from a slow one (docs/PERFORMANCE.md).
 * Usage: line [--cpus A,B] (default 0,1).
 */
#include "bench_raw.h"

#include <stdatomic.h>
#include <stdbool.h>

enum { ROUNDS = 20000, SETS = 5 };

int main(int argc, char **argv)
{
    int cpus[2];
    bench_take_cpus(&argc, argv, cpus);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--cpus A,B]\n", argv[0]);
        return 2;
    }
    _Atomic uint64_t *word = bench_shared("line", 4096);
    pid_t pid = bench_fork_pinned("line", cpus);
    bool lead = pid != 0;
    /* The lead writes odd values, the other even ones: each waits for the other's. */
    uint64_t v = 0;
    double best = 1e30;
    for (int set = 0; set < SETS; set++) {
        double t0 = bench_now();
        for (int i = 0; i < ROUNDS; i++) {
            if (lead) {
                atomic_store_explicit(word, ++v, memory_order_release);
                while (atomic_load_explicit(word, memory_order_acquire) != v + 1)
                    ;
                v++;
            } else {
                while (atomic_load_explicit(word, memory_order_acquire) != v + 1)
                    ;
                v += 2;
                atomic_store_explicit(word, v, memory_order_release);
            }
        }
        double dt = (bench_now() - t0) / ROUNDS;
        if (dt < best)
            best = dt;
    }
    if (bench_join(pid) != 0)
        return 1;
    printf("# line cpus=%d,%d\n", cpus[0], cpus[1]);
    bench_emit("line", 64, "rtt_ns", best * 1e9);
    return 0;
}
