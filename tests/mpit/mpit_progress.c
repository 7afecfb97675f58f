/*
 * mpit_progress.c — the progress engine's counters as MPI_T performance variables (issue #17):
 * progress_sleeps, progress_sleep_ns, progress_late_wakeups and progress_missed_wakeups, in
 * category "progress".
 *
 * Rank 1 waits in MPI_Recv for a message rank 0 sends DELAY_MS later: past its spin it must
 * sleep (at least once per 100 ms cap), and the doorbell (shm) or socket (tcp) wakes it
 * promptly, so no late wake-up is counted, not even by the exchange after it, whose pass would
 * find work right after the sleeps that ran out idle. Rank 0 is not measured.
 */
#include <string.h>
#include <unistd.h>

#include "mftest.h"

/* Not a multiple of the engine's 100 ms sleep cap: a message arriving as a capped sleep runs out
 * looks like a late wake-up (within the 1 ms the engine cannot tell apart), and a sanitizer build
 * once delayed 300 ms to just that. */
enum { DELAY_MS = 250, NV = 4 };

static const char *const names[NV] = {"progress_sleeps", "progress_sleep_ns",
                                      "progress_late_wakeups", "progress_missed_wakeups"};

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);

    /* Each is a counter of category "progress". */
    int cat, ncvars, npvars, nsub, idx[NV];
    MF_CHECK_MPI(MPI_T_category_get_index("progress", &cat));
    MF_CHECK_MPI(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &ncvars, &npvars, &nsub));
    int in_cat[16];
    int ncat = npvars < 16 ? npvars : 16;
    MF_CHECK_MPI(MPI_T_category_get_pvars(cat, ncat, in_cat));
    for (int i = 0; i < NV; i++) {
        MF_CHECK_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx[i]));
        int found = 0;
        for (int j = 0; j < ncat; j++)
            found |= in_cat[j] == idx[i];
        MF_CHECK(found, "%s is not in category progress", names[i]);
    }

    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NV];
    unsigned long long before[NV], after[NV];
    MF_CHECK_MPI(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < NV; i++) {
        int count;
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx[i], NULL, &h[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(s, h[i]));
    }
    if (size >= 2 && rank < 2) {
        char b = 0;
        /* Both up and connected before the measured wait. */
        MF_CHECK_MPI(MPI_Sendrecv_replace(&b, 1, MPI_BYTE, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
        for (int i = 0; i < NV; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &before[i]));
        if (rank == 0) {
            usleep(DELAY_MS * 1000);
            MF_CHECK_MPI(MPI_Send(&b, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        } else {
            MF_CHECK_MPI(MPI_Recv(&b, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MF_CHECK_MPI(MPI_Sendrecv_replace(&b, 1, MPI_BYTE, 1 - rank, 3, 1 - rank, 3, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
        for (int i = 0; i < NV; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(s, h[i], &after[i]));
        if (rank == 1) {
            unsigned long long sleeps = after[0] - before[0], ns = after[1] - before[1],
                               late = after[2] - before[2], missed = after[3] - before[3];
            MF_CHECK(sleeps >= DELAY_MS / 100 - 1, "%llu sleeps in a %d ms wait", sleeps, DELAY_MS);
            MF_CHECK(ns > 0 && ns <= sleeps * 100000000ull, "%llu ns asked in %llu sleeps", ns,
                     sleeps);
            MF_CHECK(late == 0, "%llu late wake-ups for a prompt one", late);
            MF_CHECK(missed == 0, "%llu missed wake-ups for a prompt one", missed);
        }
    }
    for (int i = 0; i < NV; i++)
        MPI_T_pvar_handle_free(s, &h[i]);
    MPI_T_pvar_session_free(&s);
    return mftest_finish_tools();
}
