/*
 * rma — one-sided communication, OSU-style: rank 0 is the origin, rank 1 the target (ranks
 * beyond 1 wait at the final barrier). Every test prints benchmark,size,metric,value lines:
 *
 *   put_lock, get_lock   latency of one operation and its MPI_Win_flush, inside one
 *                        MPI_Win_lock(shared) epoch (latency_us)
 *   put_fence, get_fence one operation by rank 0 and an MPI_Win_fence of both (latency_us)
 *   put_bw, get_bw       --window operations, then one flush, repeated (bandwidth_MBps)
 *   acc_lock             MPI_Accumulate of size/4 MPI_INT with MPI_SUM, and a flush (latency_us)
 *   fop                  MPI_Fetch_and_op of one MPI_INT64_T (MPI_SUM), and a flush (latency_us,
 *                        size 8)
 *   mixed                point-to-point and one-sided in flight together: rank 0 starts puts of
 *                        256 KiB to rank 1 and, while they move, ping-pongs 8 bytes with it;
 *                        mixed.pingpong is that ping-pong's latency (latency_us; mixed.idle:
 *                        the same without the puts) and mixed.put the puts' bandwidth. Run on
 *                        one fabric, then with MANIFOLD_RMA_FABRIC naming a second instance
 *                        (hybrid), the ping-pong no longer queues behind the puts.
 *
 * --only put_lock,fop,... selects tests (default: all but mixed); --win create|allocate the
 * window (default allocate: a same-host MPI may map it; create: its one-sided operations go
 * through its messaging, as between hosts). Each value is the best of --reps timed batches.
 * Every size is checked once: what was put is got back and compared, the fetch-and-op counter
 * must equal the number of additions.
 */
#include "bench_mpi.h"

#include <stdbool.h>
#include <stdint.h>

enum { MIX_PUT = 256 * 1024, MIX_PUTS = 16, MIX_PINGS = 200 };

typedef struct {
    bench_opts o;
    int rank, np;
    bool create;
    MPI_Win win;
    unsigned char *base; /* this rank's window memory */
    size_t win_size;
    unsigned char *buf, *back;
} rma_ctx;

static bool selected(const bench_opts *o, const char *name)
{
    if (!o->only)
        return strcmp(name, "mixed") != 0;
    size_t n = strlen(name);
    for (const char *p = o->only; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void win_open(rma_ctx *c, size_t size)
{
    c->win_size = size;
    if (c->create) {
        c->base = bench_alloc(size);
        MPI_Win_create(c->base, (MPI_Aint)size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
    } else {
        MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->base, &c->win);
        memset(c->base, 0, size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void win_close(rma_ctx *c)
{
    MPI_Win_free(&c->win);
    if (c->create)
        free(c->base);
}

/* Rank 0 puts `size` bytes of a pattern to rank 1, gets them back and compares (its own epoch). */
static void check_put_get(rma_ctx *c, size_t size)
{
    if (c->rank == 0) {
        int n = (int)size;
        bench_fill(c->buf, size, (unsigned)size + 7);
        memset(c->back, 0, size);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
        MPI_Put(c->buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, c->win);
        MPI_Win_flush(1, c->win);
        MPI_Get(c->back, n, MPI_BYTE, 1, 0, n, MPI_BYTE, c->win);
        MPI_Win_unlock(1, c->win);
        BENCH_REQUIRE(bench_check(c->back, size, (unsigned)size + 7) == 0,
                      "rma: %zu bytes put and got back differ", size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

enum rma_kind { K_PUT, K_GET, K_ACC };

static void one_op(rma_ctx *c, enum rma_kind k, size_t size)
{
    int n = (int)size;
    if (k == K_PUT)
        MPI_Put(c->buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, c->win);
    else if (k == K_GET)
        MPI_Get(c->back, n, MPI_BYTE, 1, 0, n, MPI_BYTE, c->win);
    else
        MPI_Accumulate(c->buf, n / 4, MPI_INT, 1, 0, n / 4, MPI_INT, MPI_SUM, c->win);
}

/* Best time per step over the reps, a step being `per` operations then a flush (lock mode) or
 * one operation and a fence (fence mode). */
static double time_ops(rma_ctx *c, enum rma_kind k, size_t size, bool fence, long per)
{
    long iters = bench_iters(&c->o, size * (size_t)per);
    double best = 1e30;
    if (!fence && c->rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
    if (fence)
        MPI_Win_fence(0, c->win);
    for (int rep = -1; rep < c->o.reps; rep++) {
        long n = rep < 0 ? c->o.warmup : iters;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            if (fence) {
                if (c->rank == 0)
                    one_op(c, k, size);
                MPI_Win_fence(0, c->win);
            } else if (c->rank == 0) {
                for (long j = 0; j < per; j++)
                    one_op(c, k, size);
                MPI_Win_flush(1, c->win);
            }
        }
        double t = (MPI_Wtime() - t0) / (double)n;
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rep >= 0 && t < best)
            best = t;
    }
    if (fence)
        MPI_Win_fence(0, c->win);
    if (!fence && c->rank == 0)
        MPI_Win_unlock(1, c->win);
    return best;
}

static void latency(rma_ctx *c, const char *name, enum rma_kind k, bool fence, size_t min)
{
    if (!selected(&c->o, name))
        return;
    for (size_t size = c->o.min_size; size; size = bench_next_size(&c->o, size)) {
        if (size < min)
            continue;
        check_put_get(c, size);
        double t = time_ops(c, k, size, fence, 1);
        if (c->rank == 0)
            bench_emit(name, size, "latency_us", t * 1e6);
    }
}

static void bandwidth(rma_ctx *c, const char *name, enum rma_kind k)
{
    if (!selected(&c->o, name))
        return;
    long w = c->o.window > 0 ? c->o.window : 1;
    for (size_t size = c->o.min_size; size; size = bench_next_size(&c->o, size)) {
        check_put_get(c, size);
        double t = time_ops(c, k, size, false, w);
        if (c->rank == 0)
            bench_emit(name, size, "bandwidth_MBps", (double)size * (double)w / t / 1e6);
    }
}

static void fetch_and_op(rma_ctx *c)
{
    if (!selected(&c->o, "fop"))
        return;
    int64_t one = 1, old = 0, *counter = (int64_t *)(void *)c->base;
    long iters = c->o.iters, total = 0;
    double best = 1e30;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win);
    *counter = 0;
    MPI_Win_unlock(c->rank, c->win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
    for (int rep = -1; rep < c->o.reps; rep++) {
        long n = rep < 0 ? c->o.warmup : iters;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < n && c->rank == 0; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, c->win);
            MPI_Win_flush(1, c->win);
        }
        total += n;
        double t = (MPI_Wtime() - t0) / (double)n;
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rep >= 0 && t < best)
            best = t;
    }
    if (c->rank == 0) {
        MPI_Win_unlock(1, c->win);
        BENCH_REQUIRE(old == total - 1, "rma: fetch-and-op fetched %lld, expected %ld",
                      (long long)old, total - 1);
        bench_emit("fop", 8, "latency_us", best * 1e6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Ping-pongs of 8 bytes between ranks 0 and 1; with `load`, rank 0 first starts MIX_PUTS puts
 * of MIX_PUT bytes to rank 1 (inside a lock epoch it flushes after the ping-pongs). Returns the
 * ping-pong latency; *put_s the time from the first put to the flush. */
static double mixed_round(rma_ctx *c, bool load, long pings, double *put_s)
{
    char b[8] = {0};
    double t0 = MPI_Wtime(), t1 = t0;
    if (c->rank == 0) {
        if (load) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
            for (int i = 0; i < MIX_PUTS; i++)
                MPI_Put(c->buf, MIX_PUT, MPI_BYTE, 1, (MPI_Aint)i * MIX_PUT, MIX_PUT, MPI_BYTE,
                        c->win);
        }
        t1 = MPI_Wtime();
        for (long i = 0; i < pings; i++) {
            MPI_Send(b, 8, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_BYTE, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == 1) {
        for (long i = 0; i < pings; i++) {
            MPI_Recv(b, 8, MPI_BYTE, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_BYTE, 0, 11, MPI_COMM_WORLD);
        }
    }
    double lat = (MPI_Wtime() - t1) / (2.0 * (double)pings);
    if (c->rank == 0 && load) {
        MPI_Win_unlock(1, c->win);
        *put_s = MPI_Wtime() - t0;
    }
    MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return lat;
}

static void mixed(rma_ctx *c)
{
    if (!selected(&c->o, "mixed"))
        return;
    long pings = c->o.smoke ? 5 : c->o.quick ? MIX_PINGS / 2 : MIX_PINGS;
    double idle = 1e30, busy = 1e30, put = 1e30;
    for (int rep = -1; rep < c->o.reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = mixed_round(c, false, pings, NULL), p = 1e30;
        if (rep >= 0 && t < idle)
            idle = t;
        MPI_Barrier(MPI_COMM_WORLD);
        t = mixed_round(c, true, pings, &p);
        if (rep >= 0 && t < busy)
            busy = t;
        if (rep >= 0 && p < put)
            put = p;
    }
    check_put_get(c, MIX_PUT);
    if (c->rank == 0) {
        bench_emit("mixed.idle", 8, "latency_us", idle * 1e6);
        bench_emit("mixed.pingpong", 8, "latency_us", busy * 1e6);
        bench_emit("mixed.put", MIX_PUT, "bandwidth_MBps", (double)MIX_PUT * MIX_PUTS / put / 1e6);
    }
}

int main(int argc, char **argv)
{
    rma_ctx c = {0};
    /* --win is ours: taken out before the common parser sees the rest */
    int keep = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--win") == 0 && i + 1 < argc) {
            c.create = strcmp(argv[++i], "create") == 0;
            continue;
        }
        argv[keep++] = argv[i];
    }
    argc = keep;
    bench_mpi_start(&argc, &argv, "rma", 2, &c.o, 8, 1u << 20,
                    " [--win create|allocate] [--only put_lock,get_lock,put_fence,get_fence,"
                    "put_bw,get_bw,acc_lock,fop,mixed]",
                    &c.rank, &c.np);
    size_t need =
        c.o.max_size > (size_t)MIX_PUT * MIX_PUTS ? c.o.max_size : (size_t)MIX_PUT * MIX_PUTS;
    c.buf = bench_alloc(need);
    c.back = bench_alloc(need);
    win_open(&c, need);
    latency(&c, "put_lock", K_PUT, false, 0);
    latency(&c, "get_lock", K_GET, false, 0);
    latency(&c, "put_fence", K_PUT, true, 0);
    latency(&c, "get_fence", K_GET, true, 0);
    bandwidth(&c, "put_bw", K_PUT);
    bandwidth(&c, "get_bw", K_GET);
    latency(&c, "acc_lock", K_ACC, false, 4);
    fetch_and_op(&c);
    mixed(&c);
    win_close(&c);
    free(c.buf);
    free(c.back);
    return bench_finish();
}
