/*
 * bench_util.h — what every benchmark program shares, MPI or not (header only, so each program
 * stays one .c file that any MPI's wrapper compiles: Manifold's mpicc, mpicc.openmpi, mpicc.mpich).
 *
 * Output: one CSV line per measurement, "benchmark,size,metric,value", on stdout of the rank (or
 * process) that measured; lines starting with '#' are comments. The runner (bench/run) adds the
 * implementation, fabric and process count.
 *
 * Measuring: for each size, `warmup` untimed iterations, then `reps` timed batches of `iters`
 * iterations; the best batch is reported (least disturbed by other processes on a small machine).
 * Iteration counts shrink with message size so every size costs about the same byte budget.
 *
 * Options common to all programs:
 *   --quick        fewer sizes (powers of 4) and iterations: each program runs in well under 1 s
 *   --min N        smallest size in bytes (K/M suffixes)      --max N   largest size
 *   --iters N      iterations per batch for the smallest sizes (default 1000, quick 200)
 *   --reps N       timed batches per size (default 5, quick 2)
 *   --budget N     bytes per batch that set the iteration count of large sizes (default 64M,
 *                  quick 16M)
 *   --sizes A,B,.. exactly these sizes (K/M suffixes), in this order
 *   --smoke        smallest configuration: two sizes, a few iterations (for the test suite)
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    int quick;
    int smoke;
    size_t min_size;
    size_t max_size;
    long iters;  /* iterations per batch at small sizes */
    long budget; /* bytes moved per batch at large sizes (sets the iteration count) */
    int reps;
    int warmup;
    const char *only; /* program-specific selection (e.g. collective names), may be NULL */
    long window;      /* messages in flight for bandwidth tests */
    size_t list[64];  /* --sizes: explicit sizes (nlist > 0) */
    int nlist;
} bench_opts;

static inline size_t bench_parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end && (*end == 'k' || *end == 'K'))
        v *= 1024;
    else if (end && (*end == 'm' || *end == 'M'))
        v *= 1024 * 1024;
    else if (end && (*end == 'g' || *end == 'G'))
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v;
}

static inline void bench_usage(const char *prog, const char *extra)
{
    fprintf(stderr,
            "usage: %s [--quick|--smoke] [--min BYTES] [--max BYTES] [--iters N] [--reps N]\n"
            "          [--budget BYTES] [--window N] [--sizes A,B,...]%s\n"
            "prints CSV lines: benchmark,size,metric,value\n",
            prog, extra ? extra : "");
}

/* Fills opts from argv with defaults for a program whose sizes run from def_min to def_max. */
static inline int bench_parse(int argc, char **argv, bench_opts *o, size_t def_min, size_t def_max,
                              const char *extra_usage)
{
    memset(o, 0, sizeof(*o));
    o->min_size = def_min;
    o->max_size = def_max;
    o->iters = 1000;
    o->budget = 64L << 20;
    o->reps = 5;
    o->window = 64;
    long iters = -1, reps = -1, budget = -1;
    size_t mn = (size_t)-1, mx = (size_t)-1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--smoke")) {
            o->smoke = 1;
        } else if (!strcmp(a, "--min") && v) {
            mn = bench_parse_size(v), i++;
        } else if (!strcmp(a, "--max") && v) {
            mx = bench_parse_size(v), i++;
        } else if (!strcmp(a, "--iters") && v) {
            iters = atol(v), i++;
        } else if (!strcmp(a, "--budget") && v) {
            budget = (long)bench_parse_size(v), i++;
        } else if (!strcmp(a, "--reps") && v) {
            reps = atol(v), i++;
        } else if (!strcmp(a, "--window") && v) {
            o->window = atol(v), i++;
        } else if (!strcmp(a, "--sizes") && v) {
            const char *p = v;
            while (p && *p && o->nlist < 64) {
                size_t sz = bench_parse_size(p);
                for (int k = 0; k < o->nlist; k++)
                    if (o->list[k] == sz) { /* sizes are walked by value: each only once */
                        fprintf(stderr, "%s: --sizes lists %zu twice\n", argv[0], sz);
                        return -1;
                    }
                o->list[o->nlist++] = sz;
                p = strchr(p, ',');
                p = p ? p + 1 : NULL;
            }
            i++;
        } else if (!strcmp(a, "--only") && v) {
            o->only = v, i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            bench_usage(argv[0], extra_usage);
            exit(0);
        } else {
            bench_usage(argv[0], extra_usage);
            return -1;
        }
    }
    if (o->quick) {
        o->iters = 200;
        o->budget = 16L << 20;
        o->reps = 2;
    }
    if (o->smoke) {
        o->iters = 5;
        o->budget = 1L << 20;
        o->reps = 1;
        o->max_size = def_min * 1024 > def_min ? def_min * 1024 : 1024;
        if (o->max_size > def_max)
            o->max_size = def_max;
    }
    if (iters > 0)
        o->iters = iters;
    if (reps > 0)
        o->reps = (int)reps;
    if (budget > 0)
        o->budget = budget;
    if (mn != (size_t)-1)
        o->min_size = mn;
    if (mx != (size_t)-1)
        o->max_size = mx;
    if (o->nlist > 0) {
        o->min_size = o->list[0];
        o->max_size = o->list[0];
        for (int k = 1; k < o->nlist; k++)
            if (o->list[k] > o->max_size)
                o->max_size = o->list[k];
    }
    if (o->max_size < o->min_size)
        o->max_size = o->min_size;
    o->warmup = o->smoke ? 2 : (int)(o->iters / 10 > 2 ? o->iters / 10 : 2);
    return 0;
}

/* Next size: the next of --sizes, or powers of 2 (powers of 4 in quick mode, x1024 in smoke
 * mode) up to max_size, which is always the last. Returns 0 past the end. */
static inline size_t bench_next_size(const bench_opts *o, size_t s)
{
    if (o->nlist > 0) {
        for (int k = 0; k + 1 < o->nlist; k++)
            if (o->list[k] == s)
                return o->list[k + 1];
        return 0;
    }
    size_t f = o->smoke ? 1024 : o->quick ? 4 : 2;
    if (s >= o->max_size)
        return 0;
    size_t n = s ? s * f : 1;
    return n > o->max_size ? o->max_size : n;
}

/* Messages per window of the streaming benchmarks (stream, bibw, multipair and the raw
 * programs alike, so that they line up): o->window, fewer when a window of size-byte messages
 * would exceed `cap` bytes (or o->budget), at least 1. */
static inline long bench_window_for(const bench_opts *o, size_t size, long cap)
{
    if (o->budget < cap)
        cap = o->budget;
    long w = o->window;
    if ((long)size * w > cap)
        w = cap / (long)size;
    return w < 1 ? 1 : w;
}

/* Bytes a receiver needs to give every message of a window its own place, at every size. */
static inline size_t bench_window_bytes(const bench_opts *o, long cap)
{
    size_t most = o->max_size;
    for (size_t s = o->min_size; s; s = bench_next_size(o, s))
        if ((size_t)bench_window_for(o, s, cap) * s > most)
            most = (size_t)bench_window_for(o, s, cap) * s;
    return most;
}

/* Iterations per batch for a message of `size` bytes: o->iters for small messages, fewer for
 * large ones (about o->budget bytes per batch), at least 2 (1 in smoke mode). */
static inline long bench_iters(const bench_opts *o, size_t size)
{
    long n = o->iters;
    if (size > 0 && (long)(o->budget / (long)size) < n)
        n = (long)(o->budget / (long)size);
    long lo = o->smoke ? 1 : 3;
    return n < lo ? lo : n;
}

/* Iterations per batch of windows of w messages of `size` bytes: bench_iters of a window's
 * bytes, but at most an eighth of o->iters (at least 3), since a window is many messages. */
static inline long bench_window_iters(const bench_opts *o, size_t size, long w)
{
    long n = bench_iters(o, size * (size_t)w);
    long most = o->iters / 8 > 3 ? o->iters / 8 : 3;
    return n > most && !o->smoke ? most : n;
}

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_emit(const char *bench, size_t size, const char *metric, double value)
{
    printf("%s,%zu,%s,%.4f\n", bench, size, metric, value);
    fflush(stdout);
}

/* Page-aligned buffer, touched so no page fault lands inside a timed loop. */
static inline void *bench_alloc(size_t n)
{
    void *p = NULL;
    if (n == 0)
        n = 1;
    if (posix_memalign(&p, 4096, n) != 0) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    memset(p, 0, n);
    return p;
}

/* A byte pattern that depends on position and a seed, so a misplaced byte is noticed. */
static inline void bench_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131u + seed * 7u + 1u);
}

static inline int bench_check(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 131u + seed * 7u + 1u))
            return -1;
    return 0;
}

static inline int bench_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

#endif
