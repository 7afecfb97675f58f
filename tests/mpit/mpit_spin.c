/*
 * mpit_spin.c — the adaptive spin of the progress engine, through its MPI_T counters
 * progress_spins_expired, progress_spin_budget_ns and progress_spins_preempted.
 *
 * Rank 1 waits NWAIT times in MPI_Recv for a message rank 0 sends DELAY_MS later, so every
 * wait's spin runs out, and reads the counters after each wait: its spin budget (b), and
 * whether its thread had been preempted since the previous wait whose spin ran out (p). The
 * rule checked, wait by wait: the next budget is b / 2 (not below 1/16 of 50 µs) after a
 * preempted wait, b otherwise; and p is checked against the thread's own count of involuntary
 * context switches. A spin that finds work grows the budget back (progress_spins_grown); the
 * messages here come long after the spin, but on a loaded machine a poll may find other work
 * first (part of a frame, say), so a wait that counts a growth starts the chain again.
 *   adaptive   MANIFOLD_SPIN_US unset, nothing else added: the rule only, whatever else runs
 *              on the machine (a quiet one preempts no one, and every budget stays 50 µs).
 *   contended  the same, with a thread spinning on rank 1's core and rank 1 computing 10 ms
 *              between waits, so the scheduler must preempt it: some waits are preempted and
 *              some spin with a budget below 50 µs.
 *   fixed      MANIFOLD_SPIN_US=50 set: every wait keeps exactly 50 µs, preempted or not.
 * Usage: mpit_spin adaptive|contended|fixed (2 ranks, not oversubscribed: there the spin is 0).
 */

#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mftest.h"

enum { DELAY_MS = 5, WORK_MS = 10, NWAIT = 12, SPIN_NS = 50000, FLOOR_NS = SPIN_NS / 16 };
enum { EXPIRED, BUDGET, PREEMPTED, GROWN, NPVAR };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Computes for ms milliseconds of wall time (preemptible, unlike a sleep). */
static void work(double ms)
{
    volatile unsigned long x = 0;
    for (double end = now_ms() + ms; now_ms() < end;)
        x++;
}

/* This thread's involuntary context switches so far. */
static long own_preemptions(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    const char *mode = argc > 1 ? argv[1] : "adaptive";
    int fixed = !strcmp(mode, "fixed"), contended = !strcmp(mode, "contended");

    const char *names[NPVAR] = {"progress_spins_expired", "progress_spin_budget_ns",
                                "progress_spins_preempted", "progress_spins_grown"};
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NPVAR];
    MF_CHECK_MPI(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < NPVAR; i++) {
        int idx, count;
        MF_CHECK_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx, NULL, &h[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(s, h[i]));
    }
    if (size == 2 && rank == 1 && contended) /* this thread and a spinner share one core */
        mftest_share_core();
    if (size == 2) {
        char b = 0;
        MF_CHECK_MPI(MPI_Sendrecv_replace(&b, 1, MPI_BYTE, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
        unsigned long long prev[NPVAR], cur[NPVAR];
        for (int i = 0; i < NPVAR; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &prev[i]));
        unsigned long long budget = 0, last_budget = 0, least_budget = SPIN_NS, preempted = 0;
        int checked = 0;         /* waits whose budget the rule was checked on */
        int last_preempted = -1; /* of the previous wait; -1: none yet */
        /* Our own involuntary context switches: after the previous wait, and before the last
         * wait whose spin ran out (-1: none yet). */
        long ours_prev = own_preemptions(), ours_ref = -1;
        for (int k = 0; k < NWAIT; k++) {
            if (rank == 0) {
                usleep(DELAY_MS * 1000);
                MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
                MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                continue;
            }
            MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < NPVAR; i++)
                MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &cur[i]));
            unsigned long long n = cur[EXPIRED] - prev[EXPIRED];
            budget = cur[BUDGET] - prev[BUDGET];
            int p = (int)(cur[PREEMPTED] - prev[PREEMPTED]);
            unsigned long long grown = cur[GROWN] - prev[GROWN];
            memcpy(prev, cur, sizeof prev);
            MF_CHECK(p <= (int)n, "wait %d: %llu spins ran out, %d preempted", k, n, p);
            /* The engine's view checked against our own: it counts a preemption between this
             * spin and the last that ran out, so between our count before that wait and now. */
            long ours = own_preemptions();
            if (n >= 1) {
                MF_CHECK(!(p && ours_ref >= 0 && ours == ours_ref),
                         "wait %d: counted as preempted, but the thread was not", k);
                ours_ref = ours_prev;
            }
            ours_prev = ours;
            MF_CHECK(!fixed || grown == 0, "wait %d: a fixed spin grew", k);
            if (n != 1 || grown) {
                /* 0: descheduled until the message was there, a hit, which may grow the budget;
                 * more: other work (a connection, say) began a second spin in this wait;
                 * grown: a spin found work, before or after this one ran out */
                last_preempted = -1;
            } else {
                if (fixed) {
                    MF_CHECK(budget == SPIN_NS, "wait %d: fixed spin had %llu ns", k, budget);
                    checked++;
                } else if (last_preempted >= 0) {
                    unsigned long long want = last_budget;
                    if (last_preempted)
                        want = last_budget / 2 < FLOOR_NS ? FLOOR_NS : last_budget / 2;
                    MF_CHECK(budget == want, "wait %d: budget %llu ns after %llu ns, %spreempted",
                             k, budget, last_budget, last_preempted ? "" : "not ");
                    checked++;
                }
                if (budget < least_budget)
                    least_budget = budget;
                preempted += (unsigned long long)p;
                last_budget = budget;
                last_preempted = p;
            }
            if (contended)
                work(WORK_MS);
            /* rank 0 sends the next one only now: no wait's message is there before it starts */
            MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
        }
        if (rank == 1 && contended) {
            mftest_share_core_end();
            MF_CHECK(preempted > 0, "no wait was preempted beside a thread spinning on its core");
            MF_CHECK(least_budget < SPIN_NS, "contended: every spin had the full %d ns", SPIN_NS);
        }
        if (rank == 1) {
            /* Something to check: a rule no wait was held to would pass whatever the engine did */
            MF_CHECK(checked > 0, "no two waits in a row whose spin alone ran out");
            printf("mpit_spin %s: %llu of %d waits preempted, %d checked, least budget %llu ns\n",
                   mode, preempted, NWAIT, checked, least_budget);
        }
    }
    for (int i = 0; i < NPVAR; i++)
        MPI_T_pvar_handle_free(s, &h[i]);
    MPI_T_pvar_session_free(&s);
    return mftest_finish_tools();
}
