/*
 * fault_rma.c — one-sided traffic under an injected fault that breaks the connection
 * (MANIFOLD_FAULT break_after_*), 2 ranks. Each rank puts 64 KiB blocks into the other's window
 * with MPI_Rput under MPI_Win_lock_all and reads them back with MPI_Rget, waiting on each
 * request, until the fault ends the exchange (or 5 s passed: then the test fails).
 *
 * The error must reach the window's error handler (MPI-4.0 §9.3: a request of an RMA operation
 * reports to its window), not the communicator's: MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL,
 * which would end the job, while the window has a handler of its own that counts its calls and
 * keeps the code. MPI_Wait must return the code the handler was given, and its message must
 * name the peer. Then MPI_Win_free, whose closing barrier fails with the peer gone, must return
 * an error too, through the same handler, which is given MPI_WIN_NULL (the window is freed all
 * the same, as a failed MPI_File_close reports to the closed file's handler); the rank then
 * finalizes and exits 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN (64 << 10)

static int win_calls, win_code = MPI_SUCCESS;
static MPI_Win handled_win = MPI_WIN_NULL;

static void on_win_error(MPI_Win *win, int *code, ...)
{
    win_calls++;
    if (win_code == MPI_SUCCESS)
        win_code = *code;
    handled_win = *win;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    unsigned char *mem = malloc(LEN), *out = malloc(LEN), *back = malloc(LEN);
    MPI_Win win;
    /* Created, not allocated: an allocated window of one host is a shared mapping that the
     * origin writes itself, where no connection can break. */
    MPI_Win_create(mem, LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(on_win_error, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);

    int rc = MPI_SUCCESS, rounds = 0, bad = 0;
    double end = MPI_Wtime() + 5.0;
    MPI_Win_lock_all(0, win);
    while (rc == MPI_SUCCESS && MPI_Wtime() < end) {
        MPI_Request rq;
        for (int i = 0; i < LEN; i++)
            out[i] = (unsigned char)(i + rounds + rank);
        rc = MPI_Rput(out, LEN, MPI_BYTE, peer, 0, LEN, MPI_BYTE, win, &rq);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Rget(back, LEN, MPI_BYTE, peer, 0, LEN, MPI_BYTE, win, &rq);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        /* The peer writes its own block into this rank's window meanwhile: only this rank's
         * own data, read back right after its put completed at the target, is checked. */
        if (rc == MPI_SUCCESS)
            bad += memcmp(out, back, LEN) != 0;
        rounds++;
    }
    int ok = 1;
    if (rc == MPI_SUCCESS) {
        printf("rank %d: no error after %d rounds in 5 s\n", rank, rounds);
        ok = 0;
    } else {
        char msg[MPI_MAX_ERROR_STRING], who[32];
        int len;
        MPI_Error_string(rc, msg, &len);
        snprintf(who, sizeof who, "rank %d", peer);
        printf("rank %d: round %d failed: %s\n", rank, rounds, msg);
        if (win_calls < 1 || win_code != rc || handled_win != win) {
            printf("rank %d: the window's handler ran %d times (first code %d, MPI_Wait gave "
                   "%d; on the window: %d)\n",
                   rank, win_calls, win_code, rc, handled_win == win);
            ok = 0;
        }
        if (!strstr(msg, who)) {
            printf("rank %d: the error does not name %s\n", rank, who);
            ok = 0;
        }
    }
    if (bad) {
        printf("rank %d: %d rounds read back other bytes than were put\n", rank, bad);
        ok = 0;
    }
    /* The peer is gone: unlocking may fail, freeing must (both through the window's handler,
     * which returns), and both must come back. */
    MPI_Win_unlock_all(win);
    int calls = win_calls;
    rc = MPI_Win_free(&win);
    if (rc == MPI_SUCCESS || win_calls != calls + 1 || win_code == MPI_SUCCESS ||
        handled_win != MPI_WIN_NULL || win != MPI_WIN_NULL) {
        printf("rank %d: MPI_Win_free returned %d, its handler ran %d times (given "
               "MPI_WIN_NULL: %d), the window is %sfreed\n",
               rank, rc, win_calls - calls, handled_win == MPI_WIN_NULL,
               win == MPI_WIN_NULL ? "" : "not ");
        ok = 0;
    }
    free(mem);
    free(out);
    free(back);
    MPI_Finalize();
    return ok ? 0 : 1;
}
