/*
 * Intercommunicators (needs at least 2 processes): world split into a low half (even ranks) and
 * a high half (odd ranks), joined with MPI_Intercomm_create over MPI_COMM_WORLD; remote sizes
 * and groups, messages across, MPI_Comm_dup of the intercommunicator, MPI_Intercomm_merge with
 * both orders of "high", and MPI_Comm_disconnect of the intercommunicator. Expected values are
 * computed from the world ranks.
 */
#include <stdlib.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return mftest_finish();
    int side = rank % 2; /* 0: evens, 1: odds */
    int nlocal = side ? size / 2 : (size + 1) / 2, nremote = size - nlocal;
    MPI_Comm half, inter;
    MF_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    /* Leaders: world 0 for the evens, world 1 for the odds. */
    MF_CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : 1, 17, &inter));
    int flag, rsize, lsize, lrank;
    MF_CHECK_MPI(MPI_Comm_test_inter(inter, &flag));
    MF_CHECK(flag, "Comm_test_inter false on an intercommunicator");
    MF_CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_rank(inter, &lrank);
    MF_CHECK(rsize == nremote && lsize == nlocal && lrank == rank / 2,
             "sizes local %d remote %d rank %d", lsize, rsize, lrank);
    /* Remote group: the other parity, ascending. */
    MPI_Group rg, wg;
    MPI_Comm_remote_group(inter, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc((size_t)size * sizeof *idx), *w = malloc((size_t)size * sizeof *w);
    for (int i = 0; i < nremote; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(rg, nremote, idx, wg, w);
    for (int i = 0; i < nremote; i++)
        MF_CHECK(w[i] == 2 * i + !side, "remote member %d is world %d", i, w[i]);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    /* Messages across: local rank i talks to remote rank i where it exists. */
    for (int round = 0; round < 2; round++) {
        MPI_Comm c = inter, dup = MPI_COMM_NULL;
        if (round == 1) {
            MF_CHECK_MPI(MPI_Comm_dup(inter, &dup));
            c = dup;
        }
        if (lrank < nremote) {
            int got = -1;
            MF_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, lrank, 4, &got, 1, MPI_INT, lrank, 4, c,
                                      MPI_STATUS_IGNORE));
            MF_CHECK(got == 2 * lrank + !side, "round %d: got %d from remote rank %d", round, got,
                     lrank);
        }
        if (dup != MPI_COMM_NULL) {
            MF_CHECK_MPI(MPI_Comm_test_inter(dup, &flag));
            MF_CHECK(flag, "dup of an intercommunicator is not one");
            MPI_Comm_free(&dup);
        }
    }

    /* Merge: with the odds "high", evens come first; then the other way round. */
    for (int evens_high = 0; evens_high < 2; evens_high++) {
        MPI_Comm merged;
        int high = side ? !evens_high : evens_high;
        MF_CHECK_MPI(MPI_Intercomm_merge(inter, high, &merged));
        int mr, ms;
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        int nevens = (size + 1) / 2, nodds = size / 2;
        int expect = !evens_high ? (side ? nevens + rank / 2 : rank / 2)
                                 : (side ? rank / 2 : nodds + rank / 2);
        MF_CHECK(ms == size && mr == expect, "merge(evens_high=%d): rank %d size %d, expected %d",
                 evens_high, mr, ms, expect);
        /* The merged communicator works: a ring. */
        int got = -1, to = (mr + 1) % ms, from = (mr - 1 + ms) % ms;
        MF_CHECK_MPI(MPI_Sendrecv(&mr, 1, MPI_INT, to, 8, &got, 1, MPI_INT, from, 8, merged,
                                  MPI_STATUS_IGNORE));
        MF_CHECK(got == from, "merged ring got %d, expected %d", got, from);
        MPI_Comm_free(&merged);
    }
    /* Split the intercommunicator by color (world rank / 2) % 2, key -rank: each new
     * intercommunicator joins the evens and odds of one color, in decreasing world rank. */
    int color = (rank / 2) % 2, nl = 0, nr = 0, me = -1;
    for (int r = size - 1; r >= 0; r--)
        if ((r / 2) % 2 == color) {
            if (r % 2 == side) {
                if (r == rank)
                    me = nl;
                nl++;
            } else
                nr++;
        }
    MPI_Comm sub;
    MF_CHECK_MPI(MPI_Comm_split(inter, color, -rank, &sub));
    MF_CHECK((nl > 0 && nr > 0) == (sub != MPI_COMM_NULL), "intercomm split membership");
    if (sub != MPI_COMM_NULL) {
        int sr, ss, srs;
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &ss);
        MPI_Comm_remote_size(sub, &srs);
        MF_CHECK(sr == me && ss == nl && srs == nr,
                 "intercomm split: rank %d size %d remote %d, "
                 "expected %d %d %d",
                 sr, ss, srs, me, nl, nr);
        /* Remote rank 0 is the highest world rank of the other parity with this color. */
        int top = -1;
        for (int r = size - 1; r >= 0 && top < 0; r--)
            if ((r / 2) % 2 == color && r % 2 != side)
                top = r;
        int got = -1;
        if (sr == 0)
            MF_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 6, sub,
                                      MPI_STATUS_IGNORE));
        MF_CHECK(sr != 0 || got == top, "intercomm split leader got %d, expected %d", got, top);
        MPI_Comm_free(&sub);
    }
    MF_CHECK_MPI(MPI_Comm_split(inter, MPI_UNDEFINED, 0, &sub));
    MF_CHECK(sub == MPI_COMM_NULL, "MPI_UNDEFINED split of an intercomm gave a communicator");

    /* Comm_create on the intercommunicator: each side keeps its first (n+1)/2 local ranks, in
     * reverse order; the remote group is what the other side kept. */
    {
        MPI_Group lg, kept;
        MPI_Comm_group(inter, &lg);
        int keep = (nlocal + 1) / 2, keep_remote = (nremote + 1) / 2, list[64];
        for (int i = 0; i < keep && i < 64; i++)
            list[i] = keep - 1 - i;
        MF_CHECK_MPI(MPI_Group_incl(lg, keep, list, &kept));
        MPI_Comm ic;
        MF_CHECK_MPI(MPI_Comm_create(inter, kept, &ic));
        int in = lrank < keep;
        MF_CHECK(in == (ic != MPI_COMM_NULL), "intercomm Comm_create membership");
        if (ic != MPI_COMM_NULL) {
            int r, s2, rs;
            MPI_Comm_rank(ic, &r);
            MPI_Comm_size(ic, &s2);
            MPI_Comm_remote_size(ic, &rs);
            MF_CHECK(r == keep - 1 - lrank && s2 == keep && rs == keep_remote,
                     "intercomm Comm_create: rank %d size %d remote %d", r, s2, rs);
            /* Remote rank 0 is the other side's local rank keep_remote-1: world rank
             * 2 * (keep_remote - 1) + !side. */
            int got = -1;
            if (r == 0)
                MF_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 7, &got, 1, MPI_INT, 0, 7, ic,
                                          MPI_STATUS_IGNORE));
            MF_CHECK(r != 0 || got == 2 * (keep_remote - 1) + !side, "create leader got %d", got);
            MPI_Comm_free(&ic);
        }
        MPI_Group_free(&kept);
        MPI_Group_free(&lg);
    }

    MF_CHECK_MPI(MPI_Comm_disconnect(&inter)); /* collective over both groups */
    MF_CHECK(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the intercommunicator's handle");
    MPI_Comm_free(&half);
    free(idx);
    free(w);
    return mftest_finish();
}
