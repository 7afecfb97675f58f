/*
 * coll_shm_wake.c — a flag store in the shared-memory collectives' segment wakes a rank that
 * sleeps waiting for it (its doorbell), instead of leaving it to sleep out the safety-net bound.
 *
 * Run with MANIFOLD_COLL_BARRIER=shm and MANIFOLD_COLL_SHM_SLEEP_US=100000: every rank but 0
 * enters each barrier DELAY_MS before rank 0, so it spins, then sleeps (100 ms at most each
 * time). Rank 0's flag store must ring it: MPI_T coll_shm_late_wakeups (waits that found their
 * flags reached right after a sleep no doorbell ended) stays 0 on every rank. Without the ring
 * each waiter's last sleep runs out at 200 ms and is counted. progress_sleeps shows that the
 * waiters did sleep, so the check cannot pass by never sleeping.
 */
#include <time.h>

#include "mftest.h"

enum { DELAY_MS = 150, ROUNDS = 3 };

static int pvar_index(const char *name)
{
    int idx = -1;
    MF_CHECK_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    return idx;
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    /* The segment is mapped at the second collective (and publishes the counter). */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (size >= 2) {
        int idx[2] = {pvar_index("coll_shm_late_wakeups"), pvar_index("progress_sleeps")};
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h[2];
        unsigned long long before[2], after[2];
        MF_CHECK_MPI(MPI_T_pvar_session_create(&s));
        for (int i = 0; i < 2; i++) {
            int count;
            MF_CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx[i], NULL, &h[i], &count));
            MF_CHECK_MPI(MPI_T_pvar_start(s, h[i]));
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &before[i]));
        }
        for (int r = 0; r < ROUNDS; r++) {
            if (rank == 0) {
                struct timespec d = {0, DELAY_MS * 1000000L};
                nanosleep(&d, NULL);
            }
            MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        for (int i = 0; i < 2; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &after[i]));
        unsigned long long late = after[0] - before[0], sleeps = after[1] - before[1];
        MF_CHECK(late == 0, "rank %d: %llu segment waits woke late (no doorbell) in %d barriers",
                 rank, late, ROUNDS);
        if (rank != 0)
            MF_CHECK(sleeps >= ROUNDS, "rank %d: %llu sleeps in %d waits of %d ms", rank, sleeps,
                     ROUNDS, DELAY_MS);
        for (int i = 0; i < 2; i++)
            MPI_T_pvar_handle_free(s, &h[i]);
        MPI_T_pvar_session_free(&s);
    }
    return mftest_finish_tools();
}
