/*
 * bibw — bidirectional bandwidth: ranks 0 and 1 each pre-post a window of receives into distinct
 * slices and send a window to the other at the same time; bandwidth_MBps counts the bytes of
 * both directions (MB = 10^6 bytes). Window as in stream (--window, at most 64 MiB and --budget
 * bytes per window).
 */
#include "bench_mpi.h"

#define SLICES_BYTES (64L << 20)

static void one_window(unsigned char *sbuf, unsigned char *rbuf, size_t size, long w, int peer,
                       MPI_Request *req)
{
    for (long k = 0; k < w; k++)
        MPI_Irecv(rbuf + (size_t)k * size, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[k]);
    for (long k = 0; k < w; k++)
        MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[w + k]);
    MPI_Waitall((int)(2 * w), req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "bibw", 2, &o, 1, 4u << 20, NULL, &rank, &np);
    size_t cap = bench_window_bytes(&o, SLICES_BYTES);
    unsigned char *sbuf = bench_alloc(o.max_size);
    unsigned char *rbuf = bench_alloc(cap);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)(o.window > 0 ? o.window : 1));
    int peer = rank ^ 1;

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long w = bench_window_for(&o, size, SLICES_BYTES);
        long iters = bench_window_iters(&o, size, w);
        double best = 1e30;
        if (rank <= 1) {
            bench_fill(sbuf, size, (unsigned)rank + 3);
            memset(rbuf, 0, (size_t)w * size);
            one_window(sbuf, rbuf, size, w, peer, req);
            for (long k = 0; k < w; k++)
                BENCH_REQUIRE(bench_check(rbuf + (size_t)k * size, size, (unsigned)peer + 3) == 0,
                              "bibw: message %ld of %zu bytes received wrong", k, size);
        }
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? (o.warmup / 8 > 1 ? o.warmup / 8 : 1) : iters;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank <= 1)
                for (long i = 0; i < n; i++)
                    one_window(sbuf, rbuf, size, w, peer, req);
            double t = (MPI_Wtime() - t0) / (double)n;
            if (rep >= 0 && t < best)
                best = t;
        }
        if (rank == 0)
            bench_emit("bibw", size, "bandwidth_MBps", 2.0 * (double)size * (double)w / best / 1e6);
    }
    free(req);
    free(rbuf);
    free(sbuf);
    return bench_finish();
}
