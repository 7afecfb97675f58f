/*
 * shm_many.c — many local ranks (issue #17): the shared segment is not mapped whole into every
 * rank. Before, every rank mapped (and held resident) all nlocal^2 rings at MPI_Init: 272 MB of
 * shared memory per rank at 64 ranks, 1.08 GB at 128, whose start-up took longer than the attach
 * timeout. Now a ring's pages come when its sender first writes them and a receiver looks only
 * at the rings of peers that sent to it.
 *
 * Checks, on every rank: shared memory resident after MPI_Init (RssShmem: the segment's pages
 * this rank touched, whatever the sanitizers add to private memory) at most a small constant;
 * an alltoall among all ranks delivers every byte (every ring of the host in use, each rank
 * discovering all its senders); and after it, the shared memory grown O(nlocal), not with the
 * whole segment: beyond 32 ranks by the pages written, from 5 to 32 by the rings in use, each
 * mapped whole when first used (so that their first lap takes no page faults).
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

/* kB of a "Name:   value kB" line of /proc/self/status, or -1. */
static long status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long shmem_init = status_kb("RssShmem");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Header, rank records and sender bitmaps: a few pages, whatever the rank count. */
    MF_CHECK(shmem_init < 1024, "%ld kB of shared memory resident after MPI_Init", shmem_init);

    enum { PER = 256 };
    unsigned char *sb = malloc((size_t)size * PER), *rb = malloc((size_t)size * PER);
    MF_CHECK(sb && rb, "no memory");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < PER; i++)
            sb[(size_t)r * PER + (size_t)i] = (unsigned char)(rank * 7 + r * 3 + i);
    MF_CHECK_MPI(MPI_Alltoall(sb, PER, MPI_BYTE, rb, PER, MPI_BYTE, MPI_COMM_WORLD));
    int bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < PER; i++)
            bad += rb[(size_t)r * PER + (size_t)i] != (unsigned char)(r * 7 + rank * 3 + i);
    MF_CHECK(bad == 0, "%d bytes wrong after the alltoall", bad);
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long shmem_used = status_kb("RssShmem");
    if (size > 32) {
        /* Each of our 2 (size - 1) rings in use: its control page and the data pages written. */
        MF_CHECK(shmem_used < 1024 + 64L * size, "%ld kB of shared memory resident at %d ranks",
                 shmem_used, size);
    } else if (size > 4) {
        /* From 5 to 32 ranks each ring in use is mapped whole when first used (segment.c):
         * 2 (size - 1) rings of 64 KiB to 1 MiB and a control page each, not just the pages
         * the alltoall wrote (a page or two per ring). */
        long rings = 2L * (size - 1);
        MF_CHECK(shmem_used >= rings * 64 && shmem_used < 1024 + rings * (1024 + 4),
                 "%ld kB of shared memory resident at %d ranks: not %ld rings mapped whole",
                 shmem_used, size, rings);
    }
    if (rank == 0)
        printf("shm_many: %d ranks, shared memory resident %ld kB after MPI_Init, %ld kB after "
               "an alltoall\n",
               size, shmem_init, shmem_used);
    free(sb);
    free(rb);
    return mftest_finish();
}
