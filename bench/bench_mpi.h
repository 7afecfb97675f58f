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

/* MPI_Init, or with --thread-multiple (taken out of argv) MPI_Init_thread asking for
 * MPI_THREAD_MULTIPLE: what a program that may call MPI from several threads pays when it uses
 * one (a lock on every call, in most MPIs). Returns the level granted; says it on stdout. */
static inline int bench_mpi_init(int *argc, char ***argv)
{
    int multiple = 0, provided = MPI_THREAD_SINGLE;
    for (int i = 1; i < *argc; i++) {
        if (strcmp((*argv)[i], "--thread-multiple") != 0)
            continue;
        multiple = 1;
        for (int k = i; k + 1 < *argc; k++)
            (*argv)[k] = (*argv)[k + 1];
        (*argc)--;
        break;
    }
    if (!multiple) {
        MPI_Init(argc, argv);
        return MPI_THREAD_SINGLE;
    }
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("# thread level %s\n",
               provided == MPI_THREAD_MULTIPLE ? "multiple" : "below multiple");
    return provided;
}

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

/* The start of every program that measures sizes: MPI_Init (bench_mpi_init, so every one takes
 * --thread-multiple), rank and size, the common options (bench_mpi_parse; `extra` is the
 * program's own part of the usage line), at least min_np processes (else a message and status
 * 2), then the header line. Returns the thread level granted. */
static inline int bench_mpi_start(int *argc, char ***argv, const char *prog, int min_np,
                                  bench_opts *o, size_t def_min, size_t def_max, const char *extra,
                                  int *rank, int *np)
{
    int provided = bench_mpi_init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, np);
    char usage[512];
    snprintf(usage, sizeof usage, " [--thread-multiple]%s", extra ? extra : "");
    bench_mpi_parse(*argc, *argv, o, def_min, def_max, usage);
    if (*np < min_np) {
        if (*rank == 0)
            fprintf(stderr, "%s needs at least %d processes\n", prog, min_np);
        MPI_Finalize();
        exit(2);
    }
    bench_header(prog, *np);
    return provided;
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
