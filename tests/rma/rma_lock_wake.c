/*
 * rma_lock_wake.c — a same-host origin's unlock wakes the target when a remote origin's lock
 * request waits in the target's queue, instead of leaving the target asleep until its sleep's
 * safety-net bound (100 ms) while the lock is free.
 *
 * Run on two "hosts" (MANIFOLD_HOSTNAME per MPMD part): ranks 0 and 1 on one, rank 2 on the
 * other. An MPI_Win_allocate window: rank 1 locks rank 0's part directly (the lock word in the
 * host's mapping), rank 2 through a lock request that rank 0's lock manager queues while rank 1
 * holds the word for HOLD_MS. Rank 0 meanwhile waits in MPI_Recv for rank 2's "done" and
 * sleeps there. Rank 1's release of the word sends no frame: without the wake-up rank 0 grants
 * the request only when its sleep runs out, counted as a late wake-up (MPI_T
 * progress_late_wakeups), and rank 2 waits about 100 ms instead of HOLD_MS.
 *
 * Checks: rank 0 counts no late wake-ups; it did sleep (progress_sleeps, at least once: on a
 * loaded host a wait may end within its spin or yield), so the check cannot pass by never
 * sleeping; rank 2's lock waited at least half of HOLD_MS, so the request was
 * queued (the path under test ran). No upper bound on time is asserted: the count decides.
 */
#include <time.h>
#include <unistd.h>

#include "mftest.h"

enum { HOLD_MS = 30, ROUNDS = 4 };

static void sleep_ms(int ms)
{
    struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    MF_CHECK(size >= 3, "needs 3 ranks (0 and 1 on one host, 2 on another), got %d", size);
    int *base;
    MPI_Win win;
    MF_CHECK_MPI(
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    *base = 0;
    mftest_counter late, sleeps;
    mftest_counter_open(&late, "progress_late_wakeups");
    mftest_counter_open(&sleeps, "progress_sleeps");
    unsigned long long late0 = mftest_counter_read(&late), sleeps0 = mftest_counter_read(&sleeps);
    int token = 0;
    for (int r = 0; r < ROUNDS && size >= 3; r++) {
        MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            MF_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (rank == 1) {
            MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            MF_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD));
            sleep_ms(HOLD_MS);
            MF_CHECK_MPI(MPI_Win_unlock(0, win));
        } else if (rank == 2) {
            MF_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            double t0 = MPI_Wtime();
            MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            double waited = MPI_Wtime() - t0;
            int one = 1;
            MF_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
            MF_CHECK_MPI(MPI_Win_unlock(0, win));
            MF_CHECK(waited >= HOLD_MS * 0.5e-3,
                     "round %d: the lock came after %.1f ms, while rank 1 held it for %d ms: "
                     "the request was not queued",
                     r, waited * 1e3, HOLD_MS);
            MF_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        }
    }
    if (rank == 0) {
        unsigned long long nlate = mftest_counter_read(&late) - late0;
        unsigned long long nsleeps = mftest_counter_read(&sleeps) - sleeps0;
        MF_CHECK(nlate == 0, "%llu late wake-ups in %d rounds: the unlock did not wake us", nlate,
                 ROUNDS);
        MF_CHECK(nsleeps >= 1, "no sleep in %d rounds of %d ms waits", ROUNDS, HOLD_MS);
    }
    mftest_counter_close(&late);
    mftest_counter_close(&sleeps);
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0 && size >= 3) {
        MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MF_CHECK(*base == ROUNDS, "window holds %d after %d accumulates", *base, ROUNDS);
        MF_CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MF_CHECK_MPI(MPI_Win_free(&win));
    return mftest_finish_tools();
}
