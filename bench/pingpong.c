/*
 * pingpong — point-to-point latency: rank 0 sends `size` bytes to rank 1, which sends them back;
 * reported as half the round trip (latency_us). Also reported: bandwidth_MBps = size / latency.
 * Ranks beyond 1 wait at the final barrier. --thread-multiple: initialised with
 * MPI_THREAD_MULTIPLE, still one thread per rank.
 */
#include "bench_mpi.h"

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "pingpong", 2, &o, 1, 4u << 20, NULL, &rank, &np);
    unsigned char *buf = bench_alloc(o.max_size);

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long iters = bench_iters(&o, size);
        double best = 1e30;
        int sz = (int)size;
        if (rank <= 1) {
            /* One checked round trip: rank 1 verifies and echoes, rank 0 verifies the echo. */
            if (rank == 0) {
                bench_fill(buf, size, (unsigned)size);
                MPI_Send(buf, sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                memset(buf, 0, size);
                MPI_Recv(buf, sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                BENCH_REQUIRE(bench_check(buf, size, (unsigned)size) == 0,
                              "pingpong: echo of %zu bytes differs", size);
            } else {
                memset(buf, 0, size);
                MPI_Recv(buf, sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                BENCH_REQUIRE(bench_check(buf, size, (unsigned)size) == 0,
                              "pingpong: %zu bytes received wrong", size);
                MPI_Send(buf, sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        for (int rep = -1; rep < o.reps; rep++) {
            long n = rep < 0 ? o.warmup : iters;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                for (long i = 0; i < n; i++) {
                    MPI_Send(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            } else if (rank == 1) {
                for (long i = 0; i < n; i++) {
                    MPI_Recv(buf, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            double t = (MPI_Wtime() - t0) / (2.0 * (double)n);
            if (rep >= 0 && t < best)
                best = t;
        }
        if (rank == 0) {
            bench_emit("pingpong", size, "latency_us", best * 1e6);
            bench_emit("pingpong", size, "bandwidth_MBps", (double)size / best / 1e6);
        }
    }
    free(buf);
    return bench_finish();
}
