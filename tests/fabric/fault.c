/*
 * fault.c — a transfer under an injected fault (MANIFOLD_FAULT, see src/fabric/fault/fault.c),
 * 2 ranks: rank 0 sends 256 KiB messages to rank 1, which checks and echoes each, for about a
 * second.
 *   fault error     the fault must end the exchange with an MPI error on both ranks whose
 *                   message names the peer; the ranks then finalize and exit 0
 *   fault survive   every message must arrive intact (delays, a rail down and up again)
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN (256 << 10)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
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
    MPI_Finalize();
    return ok ? 0 : 1;
}
