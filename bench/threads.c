/*
 * threads — point-to-point from several threads of each rank at once (MPI_THREAD_MULTIPLE):
 * thread t of rank 0 ping-pongs `size` bytes with thread t of rank 1, every pair on a
 * communicator of its own (MPI_Comm_dup, the way threaded codes keep their traffic apart), all
 * pairs at the same time. Reported per size:
 *   latency_us    the time all pairs took together / 2 / round trips per pair: a pair's
 *                 one-way latency while the others run;
 *   msgrate_Mps   messages per second of all pairs together, in millions (two per round trip).
 * --threads N (default 2): threads per rank; ranks beyond 1 only meet the barriers. What it
 * shows is the cost of a library's thread safety under contention (its locks, how a thread
 * waiting for its message lets the others' progress through): with N = 1 it is pingpong
 * --thread-multiple. With more threads than cores per rank the threads take turns on them.
 */
#include "bench_mpi.h"

#include <pthread.h>

enum { MAX_THREADS = 64 };

typedef struct worker {
    int t;              /* thread index: the pair it belongs to */
    int rank;           /* 0 or 1 (others run no worker) */
    MPI_Comm comm;      /* the pair's own communicator */
    unsigned char *buf; /* o.max_size bytes */
    size_t size;        /* this measurement's message size */
    long n;             /* round trips this measurement */
    double secs;        /* what they took */
} worker;

static pthread_barrier_t start_bar, end_bar;
static int stop;

/* One measurement: n round trips of w->size bytes with the peer thread. */
static void round_trips(worker *w)
{
    int peer = 1 - w->rank, sz = (int)w->size;
    for (long i = 0; i < w->n; i++) {
        if (w->rank == 0) {
            MPI_Send(w->buf, sz, MPI_BYTE, peer, 0, w->comm);
            MPI_Recv(w->buf, sz, MPI_BYTE, peer, 0, w->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(w->buf, sz, MPI_BYTE, peer, 0, w->comm, MPI_STATUS_IGNORE);
            MPI_Send(w->buf, sz, MPI_BYTE, peer, 0, w->comm);
        }
    }
}

/* One checked round trip per size, before it is timed: each thread's bytes carry its index. */
static void checked_trip(worker *w)
{
    int peer = 1 - w->rank, sz = (int)w->size;
    unsigned seed = (unsigned)w->size + 31u * (unsigned)w->t;
    if (w->rank == 0) {
        bench_fill(w->buf, w->size, seed);
        MPI_Send(w->buf, sz, MPI_BYTE, peer, 1, w->comm);
        memset(w->buf, 0, w->size);
        MPI_Recv(w->buf, sz, MPI_BYTE, peer, 1, w->comm, MPI_STATUS_IGNORE);
    } else {
        memset(w->buf, 0, w->size);
        MPI_Recv(w->buf, sz, MPI_BYTE, peer, 1, w->comm, MPI_STATUS_IGNORE);
        MPI_Send(w->buf, sz, MPI_BYTE, peer, 1, w->comm);
    }
    BENCH_REQUIRE(bench_check(w->buf, w->size, seed) == 0,
                  "threads: thread %d's %zu bytes came back wrong", w->t, w->size);
}

/* A worker thread: each phase starts at start_bar (the main thread set size, n, stop) and ends
 * at end_bar. n == 0 means the checked round trip. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        pthread_barrier_wait(&start_bar);
        if (stop)
            break;
        if (w->n == 0)
            checked_trip(w);
        else
            round_trips(w);
        pthread_barrier_wait(&end_bar);
    }
    return NULL;
}

/* Runs one phase on every worker; returns its wall time, from the release of the workers to
 * the end of the last (a worker's own clock would miss the time it waited for a core while
 * the others ran). */
static double phase(worker *ws, int nt, size_t size, long n)
{
    for (int t = 0; t < nt; t++) {
        ws[t].size = size;
        ws[t].n = n;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pthread_barrier_wait(&start_bar);
    pthread_barrier_wait(&end_bar);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    /* --threads is ours: taken out before the common parser sees the rest; --thread-multiple
     * is always asked for. */
    int nt = 2, keep = 1;
    char *args[256];
    args[0] = argv[0];
    for (int i = 1; i < argc && keep < 254; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            nt = atoi(argv[++i]);
            continue;
        }
        args[keep++] = argv[i];
    }
    args[keep++] = "--thread-multiple";
    args[keep] = NULL;
    int nargs = keep, rank, np;
    char **av = args;
    bench_opts o;
    int provided =
        bench_mpi_start(&nargs, &av, "threads", 2, &o, 1, 1u << 20, " [--threads N]", &rank, &np);
    if (provided < MPI_THREAD_MULTIPLE || nt < 1 || nt > MAX_THREADS) {
        if (rank == 0)
            fprintf(stderr,
                    "threads needs MPI_THREAD_MULTIPLE (granted: %s) and 1 to %d threads "
                    "(asked: %d)\n",
                    provided < MPI_THREAD_MULTIPLE ? "no" : "yes", MAX_THREADS, nt);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("# threads per rank %d\n", nt);

    worker ws[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int active = rank <= 1; /* ranks beyond 1 dup the communicators and meet the barriers */
    pthread_barrier_init(&start_bar, NULL, (unsigned)nt + 1);
    pthread_barrier_init(&end_bar, NULL, (unsigned)nt + 1);
    for (int t = 0; t < nt; t++) {
        ws[t] = (worker){.t = t, .rank = rank};
        MPI_Comm_dup(MPI_COMM_WORLD, &ws[t].comm); /* collective: every rank, same order */
        if (active) {
            ws[t].buf = bench_alloc(o.max_size);
            BENCH_REQUIRE(pthread_create(&tid[t], NULL, worker_main, &ws[t]) == 0,
                          "threads: cannot start thread %d", t);
        }
    }

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long iters = bench_iters(&o, size);
        double best = 1e30;
        if (active)
            phase(ws, nt, size, 0);
        else
            MPI_Barrier(MPI_COMM_WORLD);
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? o.warmup : iters;
            double secs = 0;
            if (active)
                secs = phase(ws, nt, size, n);
            else
                MPI_Barrier(MPI_COMM_WORLD);
            if (rep >= 0 && secs < best)
                best = secs;
        }
        if (rank == 0) {
            bench_emit("threads", size, "latency_us", best / (2.0 * (double)iters) * 1e6);
            bench_emit("threads", size, "msgrate_Mps", 2.0 * (double)iters * nt / best / 1e6);
        }
    }
    if (active) {
        stop = 1;
        pthread_barrier_wait(&start_bar);
        for (int t = 0; t < nt; t++) {
            pthread_join(tid[t], NULL);
            free(ws[t].buf);
        }
    }
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&ws[t].comm);
    pthread_barrier_destroy(&start_bar);
    pthread_barrier_destroy(&end_bar);
    return bench_finish();
}
