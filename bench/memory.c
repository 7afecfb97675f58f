/*
 * memory — resident memory of an MPI job's ranks (issue #17): right after MPI_Init, and after
 * a 1 KiB-per-peer MPI_Alltoall (every pair of ranks has then exchanged data). Rank 0 prints
 *   memory,<ranks>,rss_init_max_kB,<v>      the largest rank's VmRSS after MPI_Init
 *   memory,<ranks>,rss_init_mean_kB,<v>
 *   memory,<ranks>,rss_alltoall_max_kB,<v>  the largest after the alltoall
 * VmRSS counts the shared pages a process has touched (its part of any shared segment) as well
 * as its private memory. Built unchanged by any MPI's compiler wrapper (bench/memory-run, and
 * bench/run's memory64 and memory128, which check the library line against the MPI they meant).
 */
#include "bench_mpi.h" /* first: bench_util.h defines _GNU_SOURCE before any system header */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long init = rss_kb(), init_max, init_sum;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_header("memory", size);
    MPI_Reduce(&init, &init_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init, &init_sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    enum { PER = 1024 };
    char *sb = calloc((size_t)size, PER), *rb = calloc((size_t)size, PER);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Alltoall(sb, PER, MPI_CHAR, rb, PER, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    long used = rss_kb(), used_max;
    MPI_Reduce(&used, &used_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("memory,%d,rss_init_max_kB,%ld\n", size, init_max);
        printf("memory,%d,rss_init_mean_kB,%ld\n", size, init_sum / size);
        printf("memory,%d,rss_alltoall_max_kB,%ld\n", size, used_max);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
