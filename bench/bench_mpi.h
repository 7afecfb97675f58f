/*
 * bench_mpi.h — helpers for the MPI benchmark programs (after bench_util.h).
 */
#ifndef BENCH_MPI_H
#define BENCH_MPI_H

/* bench_util.h first: it defines _GNU_SOURCE before any system header (some mpi.h include
 * stdio.h). */
#include "bench_util.h"

#include <mpi.h>

/* Ends the job when a program's own check fails: a benchmark that moves wrong bytes must not
 * print a number. */
#define BENCH_REQUIRE(cond, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            int r_;                                                                                \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                    \
            fprintf(stderr, "[%d] bench check failed: ", r_);                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            MPI_Abort(MPI_COMM_WORLD, 3);                                                          \
        }                                                                                          \
    } while (0)

/* Every process parses the same argv; a bad option ends the job quietly with status 2. */
static inline void bench_mpi_parse(int argc, char **argv, bench_opts *o, size_t def_min,
                                   size_t def_max, const char *extra)
{
    if (bench_parse(argc, argv, o, def_min, def_max, extra) != 0) {
        MPI_Finalize();
        exit(2);
    }
}

static inline void bench_header(const char *prog, int np)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(ver, &len);
        for (int i = 0; i < len; i++)
            if (ver[i] == '\n' || ver[i] == ',')
                ver[i] = ' ';
        printf("# %s np=%d library=%.120s\n", prog, np, ver);
        fflush(stdout);
    }
}

/* The end of every program: all ranks meet, rank 0 prints "# done" (the runner then knows the
 * results are complete even if the MPI hangs in MPI_Finalize, as Debian's MPICH over UCX tcp
 * sometimes does), then MPI_Finalize. */
static inline int bench_finish(void)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("# done\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

#endif
