/*
 * Communicator creation at any process count: split (colors, keys, MPI_UNDEFINED), split_type
 * (shared, guided by hardware resource or, MPI-4.1, by process set),
 * dup, create, create_group, compare, names, disconnect, get_parent, and that traffic on a new
 * communicator never matches receives on its parent. Expected ranks and sizes are computed here
 * from the rules of the standard, independently of the library.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

/* Rank 0 sends a on `inner` then b on `outer`; rank 1 receives on `outer` first: if the two
 * communicators shared a context, it would get a. */
static void check_isolation(MPI_Comm inner, MPI_Comm outer, int rank_in_outer)
{
    int a = 111, b = 222, got = 0;
    if (rank_in_outer == 0) {
        MF_CHECK_MPI(MPI_Send(&a, 1, MPI_INT, 1, 5, inner));
        MF_CHECK_MPI(MPI_Send(&b, 1, MPI_INT, 1, 5, outer));
    } else if (rank_in_outer == 1) {
        MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 5, outer, MPI_STATUS_IGNORE));
        MF_CHECK(got == b, "message on the parent got %d, expected %d", got, b);
        MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 5, inner, MPI_STATUS_IGNORE));
        MF_CHECK(got == a, "message on the child got %d, expected %d", got, a);
    }
}

/* A ring exchange of world ranks on c: each member learns its neighbours' world ranks, which
 * must be those of the expected members list. */
static void check_ring(MPI_Comm c, const int *members, int n, int me)
{
    int wr, left = 0, right = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    int to = (me + 1) % n, from = (me - 1 + n) % n;
    MF_CHECK_MPI(
        MPI_Sendrecv(&wr, 1, MPI_INT, to, 9, &left, 1, MPI_INT, from, 9, c, MPI_STATUS_IGNORE));
    MF_CHECK(left == members[from], "left neighbour is world %d, expected %d", left, members[from]);
    MF_CHECK_MPI(
        MPI_Sendrecv(&wr, 1, MPI_INT, from, 10, &right, 1, MPI_INT, to, 10, c, MPI_STATUS_IGNORE));
    MF_CHECK(right == members[to], "right neighbour is world %d, expected %d", right, members[to]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *members = malloc((size_t)size * sizeof *members);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MF_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MF_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
    MF_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    MF_CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self name '%s'", name);

    /* Split: color rank % 3, key -rank, so each color's members in decreasing world rank. */
    for (int round = 0; round < 2; round++) {
        int color = rank % 3, key = round == 0 ? -rank : 0;
        MPI_Comm c;
        MF_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        int n = 0, me = -1;
        if (round == 0) {
            for (int r = size - 1; r >= 0; r--)
                if (r % 3 == color) {
                    if (r == rank)
                        me = n;
                    members[n++] = r;
                }
        } else {
            for (int r = 0; r < size; r++) /* equal keys: parent order */
                if (r % 3 == color) {
                    if (r == rank)
                        me = n;
                    members[n++] = r;
                }
        }
        int crank, csize;
        MPI_Comm_rank(c, &crank);
        MPI_Comm_size(c, &csize);
        MF_CHECK(crank == me && csize == n, "split round %d: rank %d size %d, expected %d %d",
                 round, crank, csize, me, n);
        check_ring(c, members, n, me);
        int result;
        MF_CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, c, &result));
        int expect = n != size                   ? MPI_UNEQUAL
                     : (round == 1 || size == 1) ? MPI_CONGRUENT
                                                 : MPI_SIMILAR;
        MF_CHECK(result == expect, "compare(world, split) = %d, expected %d", result, expect);
        MF_CHECK_MPI(MPI_Comm_free(&c));
        MF_CHECK(c == MPI_COMM_NULL, "Comm_free did not null the handle");
    }

    /* One color, reversed keys: same members in another order. */
    MPI_Comm rev;
    MF_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    int rev_rank, cmp;
    MPI_Comm_rank(rev, &rev_rank);
    MF_CHECK(rev_rank == size - 1 - rank, "reversed split rank %d", rev_rank);
    MF_CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, rev, &cmp));
    MF_CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(world, reversed) = %d", cmp);
    MPI_Comm_free(&rev);

    /* MPI_UNDEFINED: odd ranks stay out. */
    MPI_Comm even;
    MF_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 0, rank, &even));
    MF_CHECK((rank % 2 == 1) == (even == MPI_COMM_NULL), "UNDEFINED color gave %s",
             even == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (even != MPI_COMM_NULL) {
        int s;
        MPI_Comm_size(even, &s);
        MF_CHECK(s == (size + 1) / 2, "even comm size %d, expected %d", s, (size + 1) / 2);
        MPI_Comm_free(&even);
    }

    /* Dup: congruent, isolated from the parent, a fresh name. */
    MPI_Comm dup;
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int result;
    MF_CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    MF_CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
    MF_CHECK_MPI(MPI_Comm_compare(dup, dup, &result));
    MF_CHECK(result == MPI_IDENT, "compare(dup, dup) = %d", result);
    MF_CHECK_MPI(MPI_Comm_set_name(dup, "my dup"));
    MF_CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    MF_CHECK(strcmp(name, "my dup") == 0 && len == 6, "dup name '%s'", name);
    if (size >= 2)
        check_isolation(dup, MPI_COMM_WORLD, rank);

    /* Many creations and frees: ids are recycled, never exhausted, never shared. */
    for (int i = 0; i < 300; i++) {
        MPI_Comm t;
        MF_CHECK_MPI(MPI_Comm_dup(dup, &t));
        MF_CHECK_MPI(MPI_Comm_free(&t));
    }
    MPI_Comm chain[5];
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &chain[0]));
    for (int i = 1; i < 5; i++)
        MF_CHECK_MPI(MPI_Comm_dup(chain[i - 1], &chain[i]));
    if (size >= 2)
        for (int i = 1; i < 5; i++)
            check_isolation(chain[i], chain[i - 1], rank);
    for (int i = 0; i < 5; i++)
        MPI_Comm_free(&chain[i]);

    /* Comm_create with the group of even ranks in reverse order. */
    MPI_Group world_group, g;
    MF_CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int n = 0, me = -1;
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == 0) {
            if (r == rank)
                me = n;
            members[n++] = r;
        }
    MF_CHECK_MPI(MPI_Group_incl(world_group, n, members, &g));
    MPI_Comm created;
    MF_CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, g, &created));
    MF_CHECK((me < 0) == (created == MPI_COMM_NULL), "Comm_create membership wrong");
    if (created != MPI_COMM_NULL) {
        int cr;
        MPI_Comm_rank(created, &cr);
        MF_CHECK(cr == me, "Comm_create rank %d, expected %d", cr, me);
        check_ring(created, members, n, me);
        MPI_Comm_free(&created);
    }
    /* Comm_create_group: only the members call. */
    if (me >= 0) {
        MF_CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, 42, &created));
        int cr, cs;
        MPI_Comm_rank(created, &cr);
        MPI_Comm_size(created, &cs);
        MF_CHECK(cr == me && cs == n, "Comm_create_group rank %d size %d", cr, cs);
        check_ring(created, members, n, me);
        MPI_Comm_free(&created);
    }
    MPI_Group_free(&g);

    /* Comm_group of a split gives the expected world members. */
    MPI_Group cg;
    MF_CHECK_MPI(MPI_Comm_group(dup, &cg));
    MF_CHECK_MPI(MPI_Group_compare(cg, world_group, &result));
    MF_CHECK(result == MPI_IDENT, "group of dup vs world group = %d", result);
    MPI_Group_free(&cg);
    MPI_Group_free(&world_group);

    /* Split_type SHARED: the ranks with our processor name. */
    char host[MPI_MAX_PROCESSOR_NAME] = {0}, other[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &len);
    int same = 0;
    for (int r = 0; r < size; r++) {
        /* Round r: rank r tells everyone its host, point to point. */
        if (rank == r) {
            memcpy(other, host, sizeof other);
            for (int d = 0; d < size; d++)
                if (d != r)
                    MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, d, 77, MPI_COMM_WORLD);
        } else
            MPI_Recv(other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, r, 77, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        same += strcmp(other, host) == 0;
    }
    MPI_Comm node;
    MF_CHECK_MPI(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int ns;
    MPI_Comm_size(node, &ns);
    MF_CHECK(ns == same, "shared comm size %d, expected %d", ns, same);
    MPI_Comm_free(&node);
    MF_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
    MF_CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
    /* Guided splits: by the hardware resource "mpi_shared_memory" (the host, as SHARED), and
     * with MPI-4.1's RESOURCE_GUIDED also by process set (WORLD: everyone, SELF: each alone,
     * names without regard to case); keys they do not know give MPI_COMM_NULL. */
    struct {
        int type;
        const char *key, *value;
        int size; /* 0: MPI_COMM_NULL */
    } guided[] = {
        {MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "mpi_shared_memory", same},
        {MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type", "mpi_shared_memory", same},
        {MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://WORLD", size},
        {MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "MPI://self", 1},
        {MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://nowhere", 0},
        {MPI_COMM_TYPE_HW_GUIDED, "mpi_pset_name", "mpi://WORLD", 0},
        {MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "mpi_l3_cache", 0},
    };
    for (size_t i = 0; i < sizeof guided / sizeof guided[0]; i++) {
        MPI_Info hint;
        MPI_Info_create(&hint);
        MPI_Info_set(hint, guided[i].key, guided[i].value);
        MF_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, guided[i].type, rank, hint, &node));
        MPI_Info_free(&hint);
        ns = 0;
        if (node != MPI_COMM_NULL) {
            MPI_Comm_size(node, &ns);
            MPI_Comm_free(&node);
        }
        MF_CHECK(ns == guided[i].size, "guided split %zu (%s=%s): size %d, expected %d", i,
                 guided[i].key, guided[i].value, ns, guided[i].size);
    }

    /* Info hints travel with dup_with_info and come back from get_info. */
    MPI_Info info, got;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm withinfo;
    MF_CHECK_MPI(MPI_Comm_dup_with_info(dup, info, &withinfo));
    MF_CHECK_MPI(MPI_Comm_get_info(withinfo, &got));
    char value[64];
    int flag;
    MPI_Info_get(got, "mpi_assert_no_any_tag", sizeof value - 1, value, &flag);
    MF_CHECK(flag && strcmp(value, "true") == 0, "hint lost through dup_with_info");
    MPI_Info_free(&got);
    MPI_Info_free(&info);
    MPI_Comm_free(&withinfo);
    MPI_Comm_free(&dup);

    /* MPI_Comm_disconnect: collective, completes the (matched) traffic, frees; refuses
     * MPI_COMM_NULL and the predefined communicators with MPI_ERR_COMM. */
    MPI_Comm gone;
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &gone));
    int token = rank, came = -1;
    MPI_Request sreq;
    MF_CHECK_MPI(MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 3, gone, &sreq));
    MF_CHECK_MPI(MPI_Recv(&came, 1, MPI_INT, (rank + size - 1) % size, 3, gone, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Comm_disconnect(&gone));
    MF_CHECK(gone == MPI_COMM_NULL && came == (rank + size - 1) % size,
             "MPI_Comm_disconnect: handle not MPI_COMM_NULL, or token %d", came);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL;
    int cls = -1;
    MPI_Error_class(MPI_Comm_disconnect(&bad), &cls);
    MF_CHECK(cls == MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_NULL): class %d", cls);
    bad = MPI_COMM_WORLD;
    MPI_Error_class(MPI_Comm_disconnect(&bad), &cls);
    MF_CHECK(cls == MPI_ERR_COMM && bad == MPI_COMM_WORLD,
             "MPI_Comm_disconnect(MPI_COMM_WORLD): class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* mpiexec started every process: none has a parent. */
    MPI_Comm parent = MPI_COMM_WORLD;
    MF_CHECK_MPI(MPI_Comm_get_parent(&parent));
    MF_CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent: 0x%x", (unsigned)parent);

    int inter;
    MF_CHECK_MPI(MPI_Comm_test_inter(MPI_COMM_WORLD, &inter));
    MF_CHECK(!inter, "MPI_COMM_WORLD reported as an intercommunicator");
    free(members);
    return mftest_finish();
}
