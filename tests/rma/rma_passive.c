/*
 * rma_passive.c — passive target progress.
 *
 * "blocked" (default): rank 0 sits in MPI_Recv for a message that every other rank sends only
 * after its lock/put/get/unlock on rank 0 completed; the target serves the window from inside
 * that unrelated blocking call, so this finishes instead of deadlocking.
 *
 * "compute": rank 0 computes for 2 s without calling MPI while the others lock/put/unlock it;
 * each epoch must finish before that computation ends (the ranks share the host's monotonic
 * clock; rank 0 tells when it ended). This needs progress independent of the target's MPI
 * calls; how fast that progress is (slow under TSan on a crowded machine) is not the question. A second argument picks the window: "allocate" (default; on one host the direct
 * load/store back end, which has it) or "create" (the emulated back end, which needs the
 * asynchronous progress thread of the fabric layer, MANIFOLD_ASYNC_PROGRESS=1; registered
 * disabled until that lands).
 *
 * "spin": rank 0 waits for the others' puts by reading its own part in a loop of
 * lock(0)/get/unlock(0) — direct epochs on its own memory, its only MPI calls. Origins on
 * another host reach it through the emulated back end, so those epochs must still serve them:
 * a flush with nothing in flight does no engine pass, except one in 64 (run on two "hosts").
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mftest.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int compute = argc > 1 && !strcmp(argv[1], "compute");
    int spin = argc > 1 && !strcmp(argv[1], "spin");
    int create = argc > 2 && !strcmp(argv[2], "create");
    int *mem, buf[64];
    double compute_end = 0, epoch_end = 0, epoch_time = 0; /* "compute" */
    MPI_Win win;
    if (create) {
        mem = buf;
        MF_CHECK_MPI(
            MPI_Win_create(mem, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        MF_CHECK_MPI(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                      &mem, &win));
    }
    for (int i = 0; i < 64; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (spin) {
            /* until every other rank's put is in (each writes its rank at its index) */
            double end = now() + 20.0;
            int seen = 0;
            while (seen < size - 1 && now() < end) {
                int got[64];
                MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                MF_CHECK_MPI(MPI_Get(got, size, MPI_INT, 0, 0, size, MPI_INT, win));
                MF_CHECK_MPI(MPI_Win_unlock(0, win));
                seen = 0;
                for (int i = 1; i < size; i++)
                    seen += got[i] == i;
            }
            MF_CHECK(seen == size - 1, "rank 0 saw %d of %d puts in 20 s of direct epochs", seen,
                     size - 1);
        } else if (compute) {
            double end = now() + 2.0;
            volatile double x = 0;
            while (now() < end)
                x += 1.0;
            compute_end = now();
        } else {
            for (int i = 1; i < size; i++)
                MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        double t0 = now();
        int v = rank, back = 0;
        /* shared under "spin": rank 0 holds the lock most of the time */
        MF_CHECK_MPI(MPI_Win_lock(spin ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MF_CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
        MPI_Win_flush(0, win);
        MF_CHECK_MPI(MPI_Get(&back, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
        MF_CHECK_MPI(MPI_Win_unlock(0, win));
        epoch_end = now();
        MF_CHECK(back == rank, "read back %d, want %d", back, rank);
        if (!compute && !spin)
            MPI_Send(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD);
        else if (compute)
            epoch_time = epoch_end - t0;
    }
    if (compute) {
        MF_CHECK_MPI(MPI_Bcast(&compute_end, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        MF_CHECK(rank == 0 || epoch_end < compute_end,
                 "lock/put/get/unlock took %.2f s and ended %.2f s after the target's "
                 "computation did",
                 epoch_time, epoch_end - compute_end);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 1; i < size; i++)
            MF_CHECK(mem[i] == i, "mem[%d] = %d after the epochs", i, mem[i]);
    MF_CHECK_MPI(MPI_Win_free(&win));
    return mftest_finish();
}
