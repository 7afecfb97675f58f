/*
 * Several nonblocking collectives in flight at once on one communicator, interleaved with
 * point-to-point traffic and a blocking collective, completed out of order (Testsome, Waitall
 * over a shuffled array); then a persistent allreduce started many times alongside a
 * persistent bcast on a duplicate communicator.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define M 64
#define BIG 20000 /* ints: above the eager limits, so rendezvous */
#define ROUNDS 20
#define NREQ 9

static int rank, size;
static int bc[3][M], ar[M], arin[M], a2a_s[16 * M], a2a_r[16 * M], g[16], p2p_s[M], p2p_r[M],
    big[BIG];

static void check_round(int round)
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < M; i++)
            MF_CHECK(bc[j][i] == round * 100 + j * 10 + i, "round %d bcast %d [%d] = %d", round, j,
                     i, bc[j][i]);
    for (int i = 0; i < M; i++) {
        int want = size * (size - 1) / 2 + size * (i + round);
        MF_CHECK(ar[i] == want, "round %d allreduce [%d] = %d, expected %d", round, i, ar[i], want);
        MF_CHECK(p2p_r[i] == ((rank - 1 + size) % size) * 7 + i + round, "round %d p2p [%d]", round,
                 i);
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < M; i++)
            MF_CHECK(a2a_r[r * M + i] == r * 100000 + rank * M + i + round,
                     "round %d alltoall from %d [%d]", round, r, i);
    for (int i = 0; i < BIG; i++)
        if (big[i] != i * 3 + round) {
            MF_CHECK(0, "round %d big bcast [%d] = %d", round, i, big[i]);
            break;
        }
    if (rank == 0)
        for (int r = 0; r < size; r++)
            MF_CHECK(g[r] == r + round, "round %d gather [%d] = %d", round, r, g[r]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    for (int round = 0; round < ROUNDS; round++) {
        MPI_Request rq[NREQ];
        int k = 0, mine = rank + round;
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < M; i++)
                bc[j][i] = rank == j % size ? round * 100 + j * 10 + i : -1;
        for (int i = 0; i < M; i++) {
            arin[i] = rank + i + round;
            p2p_s[i] = rank * 7 + i + round;
        }
        for (int i = 0; i < size * M; i++)
            a2a_s[i] = rank * 100000 + i + round;
        for (int i = 0; i < BIG; i++)
            big[i] = rank == 0 ? i * 3 + round : 0;
        MF_CHECK_MPI(MPI_Irecv(p2p_r, M, MPI_INT, left, 0, c, &rq[k++]));
        for (int j = 0; j < 3; j++)
            MF_CHECK_MPI(MPI_Ibcast(bc[j], M, MPI_INT, j % size, c, &rq[k++]));
        MF_CHECK_MPI(MPI_Iallreduce(arin, ar, M, MPI_INT, MPI_SUM, c, &rq[k++]));
        MF_CHECK_MPI(MPI_Ialltoall(a2a_s, M, MPI_INT, a2a_r, M, MPI_INT, c, &rq[k++]));
        MF_CHECK_MPI(MPI_Isend(p2p_s, M, MPI_INT, right, 0, c, &rq[k++]));
        MF_CHECK_MPI(MPI_Ibcast(big, BIG, MPI_INT, 0, c, &rq[k++]));
        /* a blocking collective while those run */
        int one = 1, n = 0;
        MF_CHECK_MPI(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c));
        MF_CHECK(n == size, "blocking allreduce amid nonblocking: %d", n);
        MF_CHECK_MPI(MPI_Igather(&mine, 1, MPI_INT, g, 1, MPI_INT, 0, c, &rq[k++]));
        if (round % 2 == 0) {
            /* Testsome until all are done */
            int left_ = NREQ;
            while (left_ > 0) {
                int out, idx[NREQ];
                MF_CHECK_MPI(MPI_Testsome(NREQ, rq, &out, idx, MPI_STATUSES_IGNORE));
                if (out == MPI_UNDEFINED)
                    break;
                left_ -= out;
            }
        } else {
            /* Waitall over the requests in reverse order */
            MPI_Request rev[NREQ];
            for (int i = 0; i < NREQ; i++)
                rev[i] = rq[NREQ - 1 - i];
            MF_CHECK_MPI(MPI_Waitall(NREQ, rev, MPI_STATUSES_IGNORE));
        }
        check_round(round);
    }

    /* persistent: allreduce on c, bcast on a dup, started together many times */
    MPI_Comm d;
    MPI_Comm_dup(c, &d);
    int x, sum, b[4];
    MPI_Request p[2];
    MF_CHECK_MPI(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &p[0]));
    MF_CHECK_MPI(MPI_Bcast_init(b, 4, MPI_INT, size - 1, d, MPI_INFO_NULL, &p[1]));
    for (int it = 0; it < 200; it++) {
        x = rank * it;
        for (int i = 0; i < 4; i++)
            b[i] = rank == size - 1 ? it + i : -1;
        MF_CHECK_MPI(MPI_Startall(2, p));
        MF_CHECK_MPI(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
        MF_CHECK(sum == it * size * (size - 1) / 2, "persistent allreduce it=%d: %d", it, sum);
        for (int i = 0; i < 4; i++)
            MF_CHECK(b[i] == it + i, "persistent bcast it=%d [%d] = %d", it, i, b[i]);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    /* a nonblocking collective whose request is freed before it completes still finishes */
    MPI_Request f;
    MF_CHECK_MPI(MPI_Ibarrier(d, &f));
    MF_CHECK_MPI(MPI_Request_free(&f));
    MF_CHECK_MPI(MPI_Barrier(d));
    MPI_Comm_free(&d);
    MPI_Comm_free(&c);
    return mftest_finish();
}
