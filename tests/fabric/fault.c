/*
 * fault.c — a transfer under an injected fault (MANIFOLD_FAULT, see src/fabric/fault/fault.c),
 * 2 ranks: rank 0 sends 256 KiB messages to rank 1, which checks and echoes each, for about a
 * second.
 *   fault error     the fault must end the exchange with an MPI error on both ranks whose
 *                   message names the peer; the ranks then finalize and exit 0
 *   fault survive   every message must arrive intact (delays, a rail down and up again)
 * Both listen to the MPI_T event "peer_lost" as a tool would: a thread-safe callback must hear
 * of the peer exactly once when the fault ends the exchange, with the peer's rank and the error's
 * class, and never otherwise; a callback registered only for MPI_T_CB_REQUIRE_NONE (which
 * Manifold never calls from inside the library) must never run.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mftest_event.h"

#define LEN (256 << 10)

static int lost_calls, lost_peer = -1, lost_class = -1, unsafe_calls;

static void on_lost(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                    void *ud)
{
    int el[2] = {-1, -1};
    MPI_Count ts = 0;
    lost_calls++;
    if (MPI_T_event_copy(ev, el) == MPI_SUCCESS &&
        MPI_T_event_read(ev, 1, &lost_class) == MPI_SUCCESS &&
        MPI_T_event_get_timestamp(ev, &ts) == MPI_SUCCESS && ts > 0 && el[1] == lost_class)
        lost_peer = el[0];
}

static void on_lost_unsafe(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                           void *ud)
{
    unsafe_calls++;
}

/* Two registrations of "peer_lost": one callable anywhere, one only outside MPI. */
static void listen(MPI_T_event_registration reg[2])
{
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        !(reg[0] = mftest_event_listen("peer_lost", MPI_T_CB_REQUIRE_THREAD_SAFE, on_lost, NULL)) ||
        !(reg[1] = mftest_event_listen("peer_lost", MPI_T_CB_REQUIRE_NONE, on_lost_unsafe, NULL))) {
        printf("cannot listen to the MPI_T event peer_lost\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_T_event_registration reg[2];
    listen(reg);
    bool want_error = argc > 1 && strcmp(argv[1], "error") == 0;
    int peer = 1 - rank, rounds = 0, rc = MPI_SUCCESS, bad = 0;
    unsigned char *buf = malloc(LEN);
    double end = MPI_Wtime() + 1.0;
    /* Rank 0 decides when to stop and says so in the first byte (0: go on, 1: last round). */
    for (bool last = false; !last && rc == MPI_SUCCESS; rounds++) {
        if (rank == 0) {
            last = MPI_Wtime() >= end;
            for (int i = 0; i < LEN; i++)
                buf[i] = (unsigned char)(i + rounds);
            buf[0] = last;
            rc = MPI_Send(buf, LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            if (rc == MPI_SUCCESS)
                rc = MPI_Recv(buf, LEN, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Recv(buf, LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            last = buf[0];
            if (rc == MPI_SUCCESS)
                rc = MPI_Send(buf, LEN, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
        for (int i = 1; rc == MPI_SUCCESS && i < LEN; i++)
            bad += buf[i] != (unsigned char)(i + rounds);
    }
    int ok;
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING], who[32];
        int len;
        MPI_Error_string(rc, msg, &len);
        snprintf(who, sizeof who, "rank %d", peer);
        printf("rank %d: round %d failed: %s\n", rank, rounds, msg);
        ok = want_error && strstr(msg, who) != NULL;
        if (want_error && !ok)
            printf("rank %d: the error does not name %s\n", rank, who);
    } else {
        printf("rank %d: %d rounds, %d bytes differ\n", rank, rounds, bad);
        ok = !want_error && bad == 0;
    }
    free(buf);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    bool events_ok =
        want_error ? lost_calls == 1 && lost_peer == peer && lost_class == cls : lost_calls == 0;
    if (!events_ok || unsafe_calls)
        printf("rank %d: peer_lost heard %d times (peer %d, class %d; the error's class %d), "
               "the unsafe callback ran %d times\n",
               rank, lost_calls, lost_peer, lost_class, cls, unsafe_calls);
    MPI_T_event_handle_free(reg[0], NULL, NULL);
    MPI_T_event_handle_free(reg[1], NULL, NULL);
    MPI_T_finalize();
    MPI_Finalize();
    return ok && events_ok && !unsafe_calls ? 0 : 1;
}
