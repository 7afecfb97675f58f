/*
 * mpit_spin.c — the adaptive spin of the progress engine, through its MPI_T counters
 * progress_spins_expired and progress_spin_budget_ns.
 *
 * Rank 1 waits NWAIT times in MPI_Recv for a message rank 0 sends DELAY_MS later, so every
 * wait's spin runs out. With MANIFOLD_SPIN_US unset ("adaptive") the budget halves after each
 * such wait (down to 1/16 of 50 µs), so the budgets summed average well under half of the
 * first; with MANIFOLD_SPIN_US=50 set ("fixed") every wait keeps exactly 50 µs.
 * Usage: mpit_spin adaptive|fixed (2 ranks, not oversubscribed: there the spin is 0).
 */
#include <string.h>
#include <unistd.h>

#include "mftest.h"

enum { DELAY_MS = 5, NWAIT = 12 };

int main(int argc, char **argv)
{
    int provided;
    MF_CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fixed = argc > 1 && !strcmp(argv[1], "fixed");

    const char *names[2] = {"progress_spins_expired", "progress_spin_budget_ns"};
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2];
    unsigned long long before[2], after[2];
    MF_CHECK_MPI(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < 2; i++) {
        int idx, count;
        MF_CHECK_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx, NULL, &h[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(s, h[i]));
    }
    if (size == 2) {
        char b = 0;
        MF_CHECK_MPI(MPI_Sendrecv_replace(&b, 1, MPI_BYTE, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &before[i]));
        for (int k = 0; k < NWAIT; k++) {
            if (rank == 0) {
                usleep(DELAY_MS * 1000);
                MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
            } else {
                MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
        }
        for (int i = 0; i < 2; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &after[i]));
        if (rank == 1) {
            unsigned long long n = after[0] - before[0], ns = after[1] - before[1];
            MF_CHECK(n >= NWAIT, "%llu spins ran out in %d waits of %d ms", n, NWAIT, DELAY_MS);
            if (fixed)
                MF_CHECK(ns == n * 50000ull, "fixed spin: %llu ns of budget in %llu spins", ns, n);
            else
                MF_CHECK(n > 0 && ns < n * 25000ull,
                         "adaptive spin: %llu ns of budget in %llu spins that ran out (no shrink)",
                         ns, n);
        }
    }
    for (int i = 0; i < 2; i++)
        MPI_T_pvar_handle_free(s, &h[i]);
    MPI_T_pvar_session_free(&s);
    int errs = mftest_finish();
    MPI_T_finalize();
    return errs;
}
