/*
 * A job that stays alive past MPI_Init for a while, for the shell tests of the shm fabric's
 * start-up and doorbells (shm_nofile.sh, doorbell_foreign.sh): every rank prints "ready <pid>"
 * once MPI_Init has returned, then rank 0 exchanges a checked message with every other rank
 * every 20 ms for argv[1] seconds (default 2), so that with MANIFOLD_SPIN_US=0 every rank
 * sleeps on its doorbell between rounds and is woken by it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define WORDS 64

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    double seconds = argc > 1 ? atof(argv[1]) : 2.0, start = MPI_Wtime();
    int buf[WORDS];
    for (int round = 0;; round++) {
        int go = rank == 0 && MPI_Wtime() - start < seconds;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go)
            break;
        for (int peer = 1; peer < size; peer++) {
            if (rank == 0) {
                for (int i = 0; i < WORDS; i++)
                    buf[i] = round * 1000 + peer * 100 + i;
                MPI_Send(buf, WORDS, MPI_INT, peer, 1, MPI_COMM_WORLD);
                memset(buf, 0, sizeof buf);
                MPI_Recv(buf, WORDS, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < WORDS; i++)
                    MF_CHECK(buf[i] == -(round * 1000 + peer * 100 + i),
                             "round %d: word %d from rank %d is %d", round, i, peer, buf[i]);
            } else if (rank == peer) {
                MPI_Recv(buf, WORDS, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < WORDS; i++)
                    buf[i] = -buf[i];
                MPI_Send(buf, WORDS, MPI_INT, 0, 2, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            usleep(20000); /* the others wait in MPI_Bcast: asleep on their doorbells */
    }
    return mftest_finish();
}
