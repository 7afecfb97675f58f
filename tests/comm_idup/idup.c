/* MPI_Comm_idup: pending agreements never deadlock or share a context id. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mftest.h"

#define NDUP 4

static int copies;

static int copy_fn(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)key, (void)extra;
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Every rank sends its comm's index to every rank on each comm at once (receives posted on
 * all comms first, with wildcards); each must receive only its own comm's index. */
static void check_separate(MPI_Comm *comms, int n)
{
    int size, rank;
    MPI_Comm_size(comms[0], &size);
    MPI_Comm_rank(comms[0], &rank);
    int got[NDUP + 2][8], mine[NDUP + 2];
    MPI_Request rq[2 * (NDUP + 2) * 8];
    int k = 0;
    for (int c = 0; c < n; c++)
        for (int p = 0; p < size; p++)
            MPI_Irecv(&got[c][p], 1, MPI_INT, MPI_ANY_SOURCE, 0, comms[c], &rq[k++]);
    for (int c = n - 1; c >= 0; c--) {
        mine[c] = c;
        for (int p = 0; p < size; p++)
            MPI_Isend(&mine[c], 1, MPI_INT, p, 0, comms[c], &rq[k++]);
    }
    MF_CHECK_MPI(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
    for (int c = 0; c < n; c++)
        for (int p = 0; p < size; p++)
            MF_CHECK(got[c][p] == c, "comm %d received %d", c, got[c][p]);
}

static void test_pending(void)
{
    int rank, size, key;
    MPI_Comm parent, other, dups[NDUP], odup;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(parent, key, (void *)100);
    copies = 0;

    MPI_Request req[NDUP + 2];
    int in = rank + 1, sum = 0;
    MF_CHECK_MPI(MPI_Comm_idup(parent, &dups[0], &req[0]));
    MF_CHECK_MPI(MPI_Ibarrier(parent, &req[NDUP]));
    MF_CHECK_MPI(MPI_Comm_idup(parent, &dups[1], &req[1]));
    MF_CHECK_MPI(MPI_Iallreduce(&in, &sum, 1, MPI_INT, MPI_SUM, parent, &req[NDUP + 1]));
    MF_CHECK_MPI(MPI_Comm_idup(parent, &dups[2], &req[2]));
    /* a blocking creation on another communicator while the agreements are pending */
    MF_CHECK_MPI(MPI_Comm_dup(other, &odup));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mf_test_hint", "yes");
    MF_CHECK_MPI(MPI_Comm_idup_with_info(parent, info, &dups[3], &req[3]));
    MPI_Info_free(&info);
    for (int i = NDUP - 1; i >= 0; i--)
        MF_CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Waitall(2, &req[NDUP], MPI_STATUSES_IGNORE));
    MF_CHECK(sum == size * (size + 1) / 2, "iallreduce %d", sum);
    MF_CHECK(copies == NDUP, "copy callback ran %d times", copies);
    for (int i = 0; i < NDUP; i++) {
        void *v;
        int flag, res;
        MPI_Comm_get_attr(dups[i], key, &v, &flag);
        MF_CHECK(flag && v == (void *)101, "dup %d attribute %p", i, v);
        MPI_Comm_compare(dups[i], parent, &res);
        MF_CHECK(res == MPI_CONGRUENT, "dup %d compare %d", i, res);
    }
    MPI_Info got;
    char val[8] = "";
    int flag = 0;
    MPI_Comm_get_info(dups[3], &got);
    MPI_Info_get(got, "mf_test_hint", sizeof val - 1, val, &flag);
    MPI_Info_free(&got);
    MF_CHECK(flag && !strcmp(val, "yes"), "idup_with_info hint %d '%s'", flag, val);

    MPI_Comm all[NDUP + 2] = {dups[0], dups[1], dups[2], dups[3], odup, parent};
    check_separate(all, NDUP + 2);

    /* idup of an idup'd communicator, and collectives on the new ones */
    MPI_Comm dd;
    MPI_Request r;
    MF_CHECK_MPI(MPI_Comm_idup(dups[2], &dd, &r));
    MF_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int s2 = 0;
    MF_CHECK_MPI(MPI_Allreduce(&in, &s2, 1, MPI_INT, MPI_SUM, dd));
    MF_CHECK(s2 == size * (size + 1) / 2, "allreduce on idup of idup %d", s2);

    /* many rounds: ids are released and reused without collisions */
    for (int round = 0; round < 20; round++) {
        MPI_Comm t[3];
        MPI_Request tr[3];
        for (int i = 0; i < 3; i++)
            MF_CHECK_MPI(MPI_Comm_idup(i == 1 ? other : parent, &t[i], &tr[i]));
        if (round % 2) {
            MPI_Comm b;
            MPI_Comm_split(other, rank % 2, rank, &b);
            MPI_Comm_free(&b);
        }
        MF_CHECK_MPI(MPI_Waitall(3, tr, MPI_STATUSES_IGNORE));
        check_separate(t, 3);
        for (int i = 0; i < 3; i++)
            MPI_Comm_free(&t[i]);
    }

    MPI_Comm_free(&dd);
    for (int i = 0; i < NDUP; i++)
        MPI_Comm_free(&dups[i]);
    MPI_Comm_free(&odup);
    MPI_Comm_free(&other);
    MPI_Comm_free(&parent);
    MPI_Comm_free_keyval(&key);
}

static void test_inter(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    MPI_Comm half, inter, d[2];
    int color = rank < size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? size / 2 : 0, 7, &inter);
    MPI_Request r[3];
    MF_CHECK_MPI(MPI_Comm_idup(inter, &d[0], &r[0]));
    MF_CHECK_MPI(MPI_Ibarrier(inter, &r[1]));
    MF_CHECK_MPI(MPI_Comm_idup(inter, &d[1], &r[2]));
    MF_CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2; i++) {
        int flag, rsize, in = rank, out = -1, remote_sum = 0;
        MPI_Comm_test_inter(d[i], &flag);
        MPI_Comm_remote_size(d[i], &rsize);
        MF_CHECK(flag && rsize == (color ? size - size / 2 : size / 2), "inter dup %d", i);
        MF_CHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, d[i]));
        for (int p = 0; p < size; p++)
            if ((p < size / 2) != color)
                remote_sum += p;
        MF_CHECK(out == remote_sum, "inter dup %d allreduce %d != %d", i, out, remote_sum);
    }
    for (int i = 0; i < 2; i++)
        MPI_Comm_free(&d[i]);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_pending();
    test_inter();
    return mftest_finish();
}
