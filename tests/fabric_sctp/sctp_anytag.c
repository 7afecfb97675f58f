/*
 * sctp_anytag.c — MPI order with MPI_ANY_TAG when the fabric spreads tags over streams: every
 * rank sends 3000 messages of varied tags and sizes (eager and rendezvous) to every other, and
 * the receivers take them with MPI_ANY_TAG, checking that they come in the order sent (each
 * carries its index) — on sctp, messages with different tags travel on different SCTP streams,
 * which may overtake each other. Also a second communicator interleaved: its order is its own.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3000

static int size_of(int i)
{
    return i % 100 == 0 ? 200000 : 4 + (i * 37) % 900; /* a few rendezvous among eager ones */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    int *buf = malloc(200000);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)np * 2);
    for (int k = 1; k < np; k++) {
        int to = (rank + k) % np, from = (rank - k + np) % np;
        for (int i = 0; i < N; i++) {
            int n = size_of(i) / (int)sizeof(int);
            for (int j = 0; j < n; j++)
                buf[j] = i * 7 + j;
            MPI_Comm comm = i % 5 == 0 ? other : MPI_COMM_WORLD;
            MPI_Isend(buf, n, MPI_INT, to, i % 97, comm, &reqs[0]);
            /* Receive in order from `from`, whatever the tag. */
            static int got_world = 0, got_other = 0;
            if (i == 0)
                got_world = got_other = 0;
            int *rb = malloc(200000);
            MPI_Status st;
            MPI_Recv(rb, 200000 / (int)sizeof(int), MPI_INT, from, MPI_ANY_TAG, comm, &st);
            int idx = rb[0] / 7;
            int want = comm == other ? got_other : got_world;
            /* the i-th message on comm is the i-th sent on it */
            if (idx != i || st.MPI_TAG != i % 97) {
                if (bad++ < 5)
                    fprintf(stderr, "rank %d: from %d got index %d tag %d, expected %d (seq %d)\n",
                            rank, from, idx, st.MPI_TAG, i, want);
            }
            if (comm == other)
                got_other++;
            else
                got_world++;
            free(rb);
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        }
    }
    /* Bursts: all sends first (many in flight on many streams), then ANY_TAG receives. */
    int burst = 500;
    MPI_Request *br = malloc(sizeof *br * (size_t)burst);
    int *bb = malloc(sizeof *bb * (size_t)burst);
    int to = (rank + 1) % np, from = (rank - 1 + np) % np;
    if (np > 1) {
        for (int i = 0; i < burst; i++) {
            bb[i] = i;
            MPI_Isend(&bb[i], 1, MPI_INT, to, (i * 31) % 1000, MPI_COMM_WORLD, &br[i]);
        }
        for (int i = 0; i < burst; i++) {
            int v;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (v != i || st.MPI_TAG != (i * 31) % 1000) {
                if (bad++ < 10)
                    fprintf(stderr, "rank %d: burst got %d tag %d, expected %d\n", rank, v,
                            st.MPI_TAG, i);
            }
        }
        MPI_Waitall(burst, br, MPI_STATUSES_IGNORE);
    }
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED\n" : " No Errors\n");
    free(br);
    free(bb);
    free(buf);
    free(reqs);
    MPI_Comm_free(&other);
    MPI_Finalize();
    return all != 0;
}
