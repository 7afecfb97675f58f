/*
 * mpit_spin.c — the adaptive spin of the progress engine, through its MPI_T counters
 * progress_spins_expired and progress_spin_budget_ns.
 *
 * Rank 1 waits NWAIT times in MPI_Recv for a message rank 0 sends DELAY_MS later, so every
 * wait's spin runs out. With MANIFOLD_SPIN_US unset ("adaptive") the budget halves after each
 * such wait, which outlasts 16 times 50 µs (down to 1/16 of 50 µs), so the budgets of the last
 * NLAST waits average well under half of 50 µs; with MANIFOLD_SPIN_US=50 set ("fixed") every wait keeps exactly 50 µs.
 * "grow": rank 1 waits NGROW times for a message rank 0 sends GROW_US (more than the 50 µs
 * budget, well within 16 times it) after the previous one arrived: the budget grows until such
 * waits are spun through, so few of the last half of them run out (all did when any wait whose
 * spin ran out halved the budget, and each then paid a sleep and a wake-up).
 * Usage: mpit_spin adaptive|fixed|grow (2 ranks, not oversubscribed: there the spin is 0).
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mftest.h"

enum { DELAY_MS = 5, NWAIT = 12, NLAST = 4, GROW_US = 150, NGROW = 60 };

/* Busy for `us` microseconds: the peer must see a delay, not a sleeping rank. */
static void busy_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* The "grow" case: spins that ran out in the last half of NGROW waits of GROW_US, and their
 * budgets. */
static void grow_case(int rank, MPI_T_pvar_session s, MPI_T_pvar_handle h[2])
{
    unsigned long long before[2] = {0, 0}, after[2] = {0, 0};
    char b = 0;
    for (int k = 0; k < NGROW; k++) {
        if (k == NGROW / 2)
            for (int i = 0; i < 2; i++)
                MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &before[i]));
        if (rank == 0) {
            MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            busy_us(GROW_US);
            MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        } else {
            MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    for (int i = 0; i < 2; i++)
        MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &after[i]));
    /* A budget that never grows past 50 us lets every one of these waits run out. Quiet, few
     * do; on a loaded machine some delays stretch past 16 times the budget (each halves it
     * again), but the spins that still run out had grown budgets, above 50 us on average. */
    unsigned long long n = after[0] - before[0], ns = after[1] - before[1];
    if (rank == 1)
        MF_CHECK(n < NGROW / 4 || ns > n * 50000ull,
                 "%llu of %d waits of %d us ran out of spin, with %llu ns of budget: no growth", n,
                 NGROW / 2, GROW_US, ns);
}

int main(int argc, char **argv)
{
    int provided;
    MF_CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fixed = argc > 1 && !strcmp(argv[1], "fixed");
    int grow = argc > 1 && !strcmp(argv[1], "grow");

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
    if (size == 2 && grow) {
        grow_case(rank, s, h);
    } else if (size == 2) {
        char b = 0;
        MF_CHECK_MPI(MPI_Sendrecv_replace(&b, 1, MPI_BYTE, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
        for (int k = 0; k < NWAIT; k++) {
            /* Only the last NLAST waits count: the budget may start anywhere up to 16 times
             * 50 us (the waits of MPI_Init grow it on a loaded machine), and the halvings
             * before them bring it down to its floor from there. */
            if (k == NWAIT - NLAST)
                for (int i = 0; i < 2; i++)
                    MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &before[i]));
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
            MF_CHECK(n > 0, "no spin ran out in %d waits of %d ms", NLAST, DELAY_MS);
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
