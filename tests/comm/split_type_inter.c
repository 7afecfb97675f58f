/*
 * MPI_Comm_split_type on an intercommunicator (allowed since MPI-4.0): each side splits its own
 * group, so every process gets an intracommunicator over the members of its side that share its
 * host (all of them here: one host), ordered by key; MPI_UNDEFINED gives MPI_COMM_NULL. The new
 * communicators carry traffic.
 */
#include <mpi.h>
#include <stdio.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        return mftest_finish();
    }
    /* Two sides: even and odd world ranks; leaders are world ranks 0 and 1. */
    MPI_Comm half, inter;
    int side = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 42, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int lrank, lsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);

    /* Reverse order by key: the new rank counts down. */
    MPI_Comm shared = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, -lrank, MPI_INFO_NULL, &shared);
    MF_CHECK(rc == MPI_SUCCESS && shared != MPI_COMM_NULL,
             "split_type SHARED on an intercomm: rc %d", rc);
    if (shared != MPI_COMM_NULL) {
        int is_inter = 1, srank, ssize;
        MPI_Comm_test_inter(shared, &is_inter);
        MPI_Comm_rank(shared, &srank);
        MPI_Comm_size(shared, &ssize);
        MF_CHECK(!is_inter, "the result is an intracommunicator");
        MF_CHECK(ssize == lsize && srank == lsize - 1 - lrank, "rank %d of %d, want %d of %d",
                 srank, ssize, lsize - 1 - lrank, lsize);
        /* Members are this side's processes: the sum of their world ranks. */
        int sum = 0, want = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shared);
        for (int r = side; r < size; r += 2)
            want += r;
        MF_CHECK(sum == want, "allreduce over the side: %d, want %d", sum, want);
        /* Point to point around the ring of the new communicator. */
        int got = -1, right = (srank + 1) % ssize, left = (srank + ssize - 1) % ssize;
        MPI_Sendrecv(&srank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, shared,
                     MPI_STATUS_IGNORE);
        MF_CHECK(got == left, "ring: got %d from %d", got, left);
        MPI_Comm_free(&shared);
    }

    /* MPI_UNDEFINED on one side only (the odd one): those get MPI_COMM_NULL, the other side
     * still gets its communicator. */
    MPI_Comm c2 = MPI_COMM_WORLD;
    rc = MPI_Comm_split_type(inter, side ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                             &c2);
    MF_CHECK(rc == MPI_SUCCESS, "split_type with MPI_UNDEFINED: rc %d", rc);
    if (side)
        MF_CHECK(c2 == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
    else
        MF_CHECK(c2 != MPI_COMM_NULL && c2 != MPI_COMM_WORLD, "the even side gets a communicator");
    if (c2 != MPI_COMM_NULL && c2 != MPI_COMM_WORLD)
        MPI_Comm_free(&c2);

    /* The intercommunicator still works: leaders exchange. */
    if (lrank == 0) {
        int peer = -1;
        MPI_Sendrecv(&rank, 1, MPI_INT, 0, 9, &peer, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
        MF_CHECK(peer == 1 - side, "leader exchange got %d", peer);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);

    return mftest_finish();
}
