/*
 * coll — collective latency over message sizes: barrier, bcast (root 0, MPI_BYTE), allreduce
 * (MPI_DOUBLE sum, size/8 elements) and alltoall (size bytes to every rank, MPI_BYTE).
 * latency_us is the time per operation averaged over the ranks (as OSU's osu_* do), from the
 * best of the timed batches. `--only allreduce,bcast` picks operations. Sizes 8 B .. 1 MiB.
 * Nonblocking forms, only when named in --only: ibcast, iallreduce, ialltoall, each timed as
 * the post (MPI_Ibcast, ...) followed at once by MPI_Wait, so that they compare with the
 * blocking ones and between MPIs on the cost of their schedules (no overlap is measured).
 * Each operation's result is checked once per size before it is timed.
 * Where the MPI publishes them as MPI_T performance variables (Manifold: progress_sleeps and
 * progress_late_wakeups, docs/TOOLS.md), a comment line per size tells how often the ranks slept
 * in the progress engine while waiting: "# sleeps,<op>,<size>,<per op and rank>,<late wake-ups>"
 * (counted over the warm-up and timed batches of all ranks). Other MPIs print none.
 */
#include "bench_mpi.h"

enum { BARRIER, BCAST, ALLREDUCE, ALLTOALL, IBCAST, IALLREDUCE, IALLTOALL, NOPS };
static const char *const op_name[NOPS] = {"barrier", "bcast",      "allreduce", "alltoall",
                                          "ibcast",  "iallreduce", "ialltoall"};
#define NONBLOCKING(op) ((op) >= IBCAST)

static int selected(const char *only, const char *name, int op)
{
    if (!only)
        return !NONBLOCKING(op);
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The engine's sleep counters: 0 sleeps, 1 late wake-ups. */
static MPI_T_pvar_session pv_session;
static MPI_T_pvar_handle pv_handle[2];
static int pv_ok;

static void pvar_init(void)
{
    static const char *const names[2] = {"progress_sleeps", "progress_late_wakeups"};
    int provided, idx, count;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    if (MPI_T_pvar_session_create(&pv_session) != MPI_SUCCESS)
        return;
    for (int i = 0; i < 2; i++)
        if (MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(pv_session, idx, NULL, &pv_handle[i], &count) != MPI_SUCCESS ||
            MPI_T_pvar_start(pv_session, pv_handle[i]) != MPI_SUCCESS)
            return;
    pv_ok = 1;
}

static unsigned long long pvar_read(int i)
{
    unsigned long long v = 0;
    if (pv_ok)
        MPI_T_pvar_read(pv_session, pv_handle[i], &v);
    return v;
}

static void run_op(int op, unsigned char *sbuf, unsigned char *rbuf, size_t size)
{
    MPI_Request q = MPI_REQUEST_NULL;
    switch (op) {
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(sbuf, rbuf, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case IBCAST:
        MPI_Ibcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD, &q);
        break;
    case IALLREDUCE:
        MPI_Iallreduce(sbuf, rbuf, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                       MPI_COMM_WORLD, &q);
        break;
    default:
        MPI_Ialltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD, &q);
        break;
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
}

/* Runs op once on known data and checks the result. */
static void check_op(int op, unsigned char *sbuf, unsigned char *rbuf, size_t size, int rank,
                     int np)
{
    int kind = NONBLOCKING(op) ? op - IBCAST + BCAST : op;
    switch (kind) {
    case BARRIER:
        run_op(op, sbuf, rbuf, size);
        break;
    case BCAST:
        if (rank == 0)
            bench_fill(sbuf, size, 11);
        else
            memset(sbuf, 0, size);
        run_op(op, sbuf, rbuf, size);
        BENCH_REQUIRE(bench_check(sbuf, size, 11) == 0, "bcast: %zu bytes received wrong", size);
        break;
    case ALLREDUCE: {
        int n = (int)(size / sizeof(double));
        double *s = (double *)sbuf, *r = (double *)rbuf;
        for (int i = 0; i < n; i++)
            s[i] = (double)(rank + 1) + (double)i;
        run_op(op, sbuf, rbuf, size);
        for (int i = 0; i < n; i++)
            BENCH_REQUIRE(r[i] == (double)np * (np + 1) / 2 + (double)np * i,
                          "allreduce: element %d of %d wrong", i, n);
        break;
    }
    default:
        for (int j = 0; j < np; j++)
            bench_fill(sbuf + (size_t)j * size, size, (unsigned)(rank * np + j));
        memset(rbuf, 0, size * (size_t)np);
        run_op(op, sbuf, rbuf, size);
        for (int i = 0; i < np; i++)
            BENCH_REQUIRE(bench_check(rbuf + (size_t)i * size, size, (unsigned)(i * np + rank)) ==
                              0,
                          "alltoall: block from %d (%zu bytes) wrong", i, size);
        break;
    }
}

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "coll", 1, &o, 8, 1u << 20,
                    " [--only barrier,bcast,allreduce,alltoall,ibcast,iallreduce,ialltoall]", &rank,
                    &np);
    pvar_init();
    size_t cap = o.max_size * (size_t)np;
    unsigned char *sbuf = bench_alloc(cap);
    unsigned char *rbuf = bench_alloc(cap);

    for (int op = 0; op < NOPS; op++) {
        if (!selected(o.only, op_name[op], op))
            continue;
        for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
            size_t sz = op == BARRIER ? 0 : size;
            if ((op == ALLREDUCE || op == IALLREDUCE) && sz < sizeof(double))
                continue;
            long iters = bench_iters(&o, sz * (op == ALLTOALL || op == IALLTOALL ? (size_t)np : 1));
            check_op(op, sbuf, rbuf, sz, rank, np);
            unsigned long long pv0[2] = {pvar_read(0), pvar_read(1)};
            double best = 1e30;
            for (int rep = -1; rep < o.reps; rep++) {
                long n = rep < 0 ? o.warmup : iters;
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (long i = 0; i < n; i++)
                    run_op(op, sbuf, rbuf, sz);
                double t = (MPI_Wtime() - t0) / (double)n, sum = 0;
                MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                if (rep >= 0 && sum / np < best)
                    best = sum / np;
            }
            if (rank == 0)
                bench_emit(op_name[op], sz, "latency_us", best * 1e6);
            if (pv_ok) {
                unsigned long long d[2] = {pvar_read(0) - pv0[0], pvar_read(1) - pv0[1]}, t[2];
                MPI_Reduce(d, t, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                double ops = (double)o.warmup + (double)iters * o.reps;
                if (rank == 0)
                    printf("# sleeps,%s,%zu,%.4f,%llu\n", op_name[op], sz, (double)t[0] / ops / np,
                           t[1]);
            }
            if (op == BARRIER)
                break;
        }
    }
    free(rbuf);
    free(sbuf);
    return bench_finish();
}
