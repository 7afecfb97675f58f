/*
 * multipair — aggregate bandwidth of several pairs streaming at once: ranks 2k send windows of
 * nonblocking messages to ranks 2k+1 (so with ranks pinned round-robin to cores, every pair
 * spans two cores). Needs an even number of processes (an odd last rank waits).
 * bandwidth_MBps is the sum over pairs, from the slowest pair's time; msgrate_Mps the aggregate
 * message rate (millions of messages per second).
 */
#include "bench_mpi.h"

#define SLICES_BYTES (32L << 20)

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "multipair", 2, &o, 1, 4u << 20, NULL, &rank, &np);
    int pairs = np / 2;
    int active = rank < 2 * pairs;
    int sender = (rank % 2) == 0;
    int peer = rank ^ 1;
    size_t cap = bench_window_bytes(&o, SLICES_BYTES);
    unsigned char *buf = bench_alloc(sender ? o.max_size : cap);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(o.window > 0 ? o.window : 1));
    int ack = 0;

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long w = bench_window_for(&o, size, SLICES_BYTES);
        long iters = bench_window_iters(&o, size, w);
        int sz = (int)size;
        double best = 1e30;
        for (int rep = -2; rep < o.reps; rep++) {
            long n = rep == -2 ? 1 : rep == -1 ? (o.warmup / 8 > 1 ? o.warmup / 8 : 1) : iters;
            if (rep == -2 && active) {
                if (sender)
                    bench_fill(buf, size, (unsigned)rank);
                else
                    memset(buf, 0, (size_t)w * size);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; active && i < n; i++) {
                if (sender) {
                    for (long k = 0; k < w; k++)
                        MPI_Isend(buf, sz, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[k]);
                    MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
                    MPI_Recv(&ack, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    for (long k = 0; k < w; k++)
                        MPI_Irecv(buf + (size_t)k * size, sz, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                                  &req[k]);
                    MPI_Waitall((int)w, req, MPI_STATUSES_IGNORE);
                    MPI_Send(&ack, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
                }
            }
            double t = (MPI_Wtime() - t0) / (double)n, tmax = 0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rep == -2 && active && !sender)
                for (long k = 0; k < w; k++)
                    BENCH_REQUIRE(bench_check(buf + (size_t)k * size, size, (unsigned)peer) == 0,
                                  "multipair: message %ld of %zu bytes received wrong", k, size);
            if (rep >= 0 && tmax < best)
                best = tmax;
        }
        if (rank == 0) {
            double msgs = (double)pairs * (double)w;
            bench_emit("multipair", size, "bandwidth_MBps", msgs * (double)size / best / 1e6);
            bench_emit("multipair", size, "msgrate_Mps", msgs / best / 1e6);
        }
    }
    free(req);
    free(buf);
    return bench_finish();
}
