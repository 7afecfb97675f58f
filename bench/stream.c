/*
 * stream — unidirectional streaming bandwidth: rank 0 keeps a window of nonblocking sends in
 * flight to rank 1 (which pre-posts as many receives into distinct slices), then waits for a
 * 4-byte acknowledgement; bandwidth_MBps = bytes moved / time (MB = 10^6 bytes).
 * The window is --window messages (default 64), fewer for large messages so that one window
 * holds at most 64 MiB and at most --budget bytes.
 */
#include "bench_mpi.h"

#define SLICES_BYTES (64L << 20)

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "stream", 2, &o, 1, 4u << 20, NULL, &rank, &np);
    size_t cap = bench_window_bytes(&o, SLICES_BYTES);
    unsigned char *buf = bench_alloc(rank == 1 ? cap : o.max_size);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(o.window > 0 ? o.window : 1));
    int ack = 0;

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long w = bench_window_for(&o, size, SLICES_BYTES);
        long iters = bench_window_iters(&o, size, w);
        int sz = (int)size;
        double best = 1e30;
        /* Checked window. */
        if (rank == 0) {
            bench_fill(buf, size, 7);
            for (long k = 0; k < w; k++)
                MPI_Isend(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req[k]);
            MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            memset(buf, 0, (size_t)w * size);
            for (long k = 0; k < w; k++)
                MPI_Irecv(buf + (size_t)k * size, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req[k]);
            MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
            for (long k = 0; k < w; k++)
                BENCH_REQUIRE(bench_check(buf + (size_t)k * size, size, 7) == 0,
                              "stream: message %ld of %zu bytes received wrong", k, size);
            MPI_Send(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        }
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? (o.warmup / 8 > 1 ? o.warmup / 8 : 1) : iters;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < n; i++) {
                if (rank == 0) {
                    for (long k = 0; k < w; k++)
                        MPI_Isend(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req[k]);
                    MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
                    MPI_Recv(&ack, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    for (long k = 0; k < w; k++)
                        MPI_Irecv(buf + (size_t)k * size, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                  &req[k]);
                    MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
                    MPI_Send(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - t0;
            if (rep >= 0 && t / (double)n < best)
                best = t / (double)n;
        }
        if (rank == 0)
            bench_emit("stream", size, "bandwidth_MBps", (double)size * (double)w / best / 1e6);
    }
    free(req);
    free(buf);
    return bench_finish();
}
