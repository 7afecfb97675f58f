/*
 * MPI-4 sessions without the world model (MPI_Init is never called):
 *  - MPI_Info_* and MPI_Session_create_errhandler before anything is initialized;
 *  - two sessions open at once; process sets "mpi://WORLD" and "mpi://SELF" with their
 *    "mpi_size"; an unknown process set is an MPI_ERR_ARG error returned to the session's
 *    handler; MPI_Session_get_info; session error handlers (set, get, call);
 *  - MPI_Comm_create_from_group over the world, over disjoint halves created concurrently with
 *    different string tags, and from the second session, and MPI_Intercomm_create_from_groups
 *    between the halves: each carries point-to-point traffic and collectives;
 *  - MPI_Initialized stays false throughout, MPI_Finalized too.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Ring exchange, allreduce and bcast on an intracommunicator; returns its size. */
static int exercise_intra(MPI_Comm c, const char *what, int world_rank)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 11, &got, 1, MPI_INT, left, 11, c, MPI_STATUS_IGNORE);
    MF_CHECK(got == left, "%s: ring got %d, want %d", what, got, left);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    MF_CHECK(sum == size * (size - 1) / 2, "%s: allreduce %d", what, sum);
    int root_world = world_rank;
    MPI_Bcast(&root_world, 1, MPI_INT, 0, c);
    double big[4096];
    for (int i = 0; i < 4096; i++)
        big[i] = rank == 0 ? i * 0.5 : -1;
    MPI_Bcast(big, 4096, MPI_DOUBLE, 0, c); /* beyond eager sizes on every fabric */
    MF_CHECK(big[4095] == 4095 * 0.5, "%s: bcast of 32 KiB", what);
    MPI_Barrier(c);
    return size;
}

int main(void)
{
    int flag = -1;
    /* Info calls before any initialization. */
    MPI_Info hints;
    MF_CHECK(MPI_Info_create(&hints) == MPI_SUCCESS, "MPI_Info_create before init");
    MPI_Info_set(hints, "thread_level", "MPI_THREAD_FUNNELED");
    MPI_Info_set(hints, "org.example.unused", "yes");
    char value[64] = "";
    MPI_Info_get(hints, "thread_level", sizeof value - 1, value, &flag);
    MF_CHECK(flag && !strcmp(value, "MPI_THREAD_FUNNELED"), "MPI_Info_get before init: '%s'",
             value);
    int nkeys = 0;
    MPI_Info_get_nkeys(hints, &nkeys);
    MF_CHECK(nkeys == 2, "nkeys %d", nkeys);
    MPI_Errhandler eh;
    MF_CHECK(MPI_Session_create_errhandler(session_handler, &eh) == MPI_SUCCESS,
             "MPI_Session_create_errhandler before init");
    MPI_Initialized(&flag);
    MF_CHECK(!flag, "MPI_Initialized before anything");

    MPI_Session s1 = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    int rc = MPI_Session_init(hints, MPI_ERRORS_RETURN, &s1);
    MF_CHECK(rc == MPI_SUCCESS && s1 != MPI_SESSION_NULL, "MPI_Session_init: %d", rc);
    MPI_Info_free(&hints);
    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2);
    MF_CHECK(rc == MPI_SUCCESS && s2 != MPI_SESSION_NULL && s2 != s1, "second MPI_Session_init: %d",
             rc);
    MPI_Initialized(&flag);
    MF_CHECK(!flag, "MPI_Initialized with sessions only");

    /* Process sets. */
    int npsets = 0, seen_world = 0, seen_self = 0;
    MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &npsets);
    MF_CHECK(npsets >= 2, "num_psets %d", npsets);
    for (int n = 0; n < npsets; n++) {
        int len = 0;
        char name[MPI_MAX_PSET_NAME_LEN];
        MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, n, &len, NULL);
        MF_CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d length %d", n, len);
        MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, n, &len, name);
        MF_CHECK((int)strlen(name) == len - 1, "pset %d name '%s' length %d", n, name, len);
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
    }
    MF_CHECK(seen_world == 1 && seen_self == 1, "psets listed: world %d self %d", seen_world,
             seen_self);
    int len = 6;
    char shortname[6];
    MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, 0, &len, shortname);
    MF_CHECK(strlen(shortname) == 5, "truncated pset name '%s'", shortname);

    MPI_Group world_group, self_group;
    MF_CHECK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &world_group) == MPI_SUCCESS,
             "group of mpi://WORLD");
    MF_CHECK(MPI_Group_from_session_pset(s1, "mpi://SELF", &self_group) == MPI_SUCCESS,
             "group of mpi://SELF");
    int wsize, wrank, ssize;
    MPI_Group_size(world_group, &wsize);
    MPI_Group_rank(world_group, &wrank);
    MPI_Group_size(self_group, &ssize);
    MF_CHECK(ssize == 1 && wsize >= 1 && wrank >= 0 && wrank < wsize, "group sizes %d %d rank %d",
             wsize, ssize, wrank);
    MPI_Info pinfo;
    char sz[16] = "";
    MPI_Session_get_pset_info(s1, "mpi://WORLD", &pinfo);
    MPI_Info_get(pinfo, "mpi_size", sizeof sz - 1, sz, &flag);
    MF_CHECK(flag && atoi(sz) == wsize, "mpi://WORLD mpi_size '%s'", sz);
    MPI_Info_free(&pinfo);
    MPI_Session_get_pset_info(s1, "mpi://SELF", &pinfo);
    MPI_Info_get(pinfo, "mpi_size", sizeof sz - 1, sz, &flag);
    MF_CHECK(flag && !strcmp(sz, "1"), "mpi://SELF mpi_size '%s'", sz);
    MPI_Info_free(&pinfo);

    /* Unknown process set: MPI_ERR_ARG through the session's handler (errors return here). */
    MPI_Group bad = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s1, "mpi://NO_SUCH_SET", &bad);
    MF_CHECK(error_class(rc) == MPI_ERR_ARG && bad == MPI_GROUP_NULL, "unknown pset: class %d",
             error_class(rc));
    rc = MPI_Session_get_pset_info(s1, "mpi://NO_SUCH_SET", &pinfo);
    MF_CHECK(error_class(rc) == MPI_ERR_ARG, "unknown pset info: class %d", error_class(rc));

    /* Session info: the thread level in force, at least what was asked. */
    MPI_Info used;
    MF_CHECK(MPI_Session_get_info(s1, &used) == MPI_SUCCESS, "MPI_Session_get_info");
    MPI_Info_get(used, "thread_level", sizeof value - 1, value, &flag);
    MF_CHECK(flag &&
                 (!strcmp(value, "MPI_THREAD_FUNNELED") ||
                  !strcmp(value, "MPI_THREAD_SERIALIZED") || !strcmp(value, "MPI_THREAD_MULTIPLE")),
             "session thread_level '%s'", value);
    MPI_Info_free(&used);

    /* Session error handlers. */
    MPI_Errhandler got_eh;
    MF_CHECK(MPI_Session_set_errhandler(s2, eh) == MPI_SUCCESS, "set session errhandler");
    MPI_Session_get_errhandler(s2, &got_eh);
    MF_CHECK(got_eh == eh, "get session errhandler");
    MPI_Errhandler_free(&got_eh);
    MPI_Session_call_errhandler(s2, MPI_ERR_OTHER);
    MF_CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_session == s2,
             "user session handler: %d calls, code %d", handler_calls, handler_code);
    rc = MPI_Group_from_session_pset(s2, "bogus", &bad);
    MF_CHECK(handler_calls == 2 && error_class(handler_code) == MPI_ERR_ARG,
             "session handler on an error: %d calls", handler_calls);
    MPI_Errhandler_free(&eh);

    /* A communicator over the whole world from the first session. */
    MPI_Comm world = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(world_group, "org.manifold.test.world", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &world);
    MF_CHECK(rc == MPI_SUCCESS && world != MPI_COMM_NULL, "create_from_group(world): %d", rc);
    int crank, csize;
    MPI_Comm_rank(world, &crank);
    MPI_Comm_size(world, &csize);
    MF_CHECK(crank == wrank && csize == wsize, "world comm rank %d size %d", crank, csize);
    MPI_Errhandler ceh;
    MPI_Comm_get_errhandler(world, &ceh);
    MF_CHECK(ceh == MPI_ERRORS_RETURN, "the new communicator has the handler given");
    MPI_Errhandler_free(&ceh);
    exercise_intra(world, "world from session", wrank);

    /* Halves, created concurrently with different tags. */
    int color = wrank % 2, nhalf = (wsize + 1 - color) / 2, ranks[64], n = 0;
    for (int r = color; r < wsize; r += 2)
        ranks[n++] = r;
    MPI_Group half_group, other_group;
    MPI_Group_incl(world_group, n, ranks, &half_group);
    MPI_Comm half = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(half_group, color ? "odd" : "even", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &half);
    MF_CHECK(rc == MPI_SUCCESS && half != MPI_COMM_NULL, "create_from_group(half): %d", rc);
    MF_CHECK(exercise_intra(half, "half", wrank) == nhalf, "half size");

    if (wsize > 1) {
        n = 0;
        for (int r = 1 - color; r < wsize; r += 2)
            ranks[n++] = r;
        MPI_Group_incl(world_group, n, ranks, &other_group);
        MPI_Comm inter = MPI_COMM_NULL;
        /* Leaders: the last member of each side, to check that any leader works. */
        rc = MPI_Intercomm_create_from_groups(half_group, nhalf - 1, other_group, n - 1,
                                              "org.manifold.test.inter", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &inter);
        MF_CHECK(rc == MPI_SUCCESS && inter != MPI_COMM_NULL, "intercomm_create_from_groups: %d",
                 rc);
        int is_inter = 0, rsize = -1, lrank;
        MPI_Comm_test_inter(inter, &is_inter);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_rank(inter, &lrank);
        MF_CHECK(is_inter && rsize == n, "intercomm: inter %d remote size %d", is_inter, rsize);
        /* Rank i of each side swaps with rank i of the other where both exist. */
        if (lrank < rsize) {
            int mine = wrank, theirs = -1;
            MPI_Sendrecv(&mine, 1, MPI_INT, lrank, 21, &theirs, 1, MPI_INT, lrank, 21, inter,
                         MPI_STATUS_IGNORE);
            MF_CHECK(theirs == ranks[lrank], "intercomm swap got %d, want %d", theirs,
                     ranks[lrank]);
        }
        int total = 0;
        MPI_Allreduce(&wrank, &total, 1, MPI_INT, MPI_SUM, inter); /* sum of the other side */
        int want = 0;
        for (int i = 0; i < n; i++)
            want += ranks[i];
        MF_CHECK(total == want, "intercomm allreduce %d, want %d", total, want);
        MPI_Comm_free(&inter);
        MPI_Group_free(&other_group);
    }

    /* A communicator from the second session, over the world again. */
    MPI_Group g2;
    MPI_Comm w2 = MPI_COMM_NULL;
    MPI_Group_from_session_pset(s2, "mpi://world", &g2); /* names match without regard to case */
    rc = MPI_Comm_create_from_group(g2, "org.manifold.test.second", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &w2);
    MF_CHECK(rc == MPI_SUCCESS, "create_from_group from the second session: %d", rc);
    exercise_intra(w2, "world from the second session", wrank);
    /* A communicator of one from mpi://SELF. */
    MPI_Comm self = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(self_group, "org.manifold.test.self", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &self);
    MF_CHECK(rc == MPI_SUCCESS && exercise_intra(self, "self", wrank) == 1, "self comm");

    /* Errors: a group without this process. */
    MPI_Group others;
    MPI_Group_excl(world_group, 1, &wrank, &others);
    MPI_Comm none = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(others, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &none);
    MF_CHECK(error_class(rc) == MPI_ERR_GROUP, "non-member: class %d", error_class(rc));
    MPI_Group_free(&others);

    int all = 0;
    MPI_Allreduce(&mftest_errors, &all, 1, MPI_INT, MPI_SUM, world);
    MPI_Comm_free(&self);
    MPI_Comm_free(&w2);
    MPI_Comm_free(&half);
    MPI_Comm_free(&world);
    MPI_Group_free(&g2);
    MPI_Group_free(&half_group);
    MPI_Group_free(&world_group);
    MPI_Group_free(&self_group);
    MF_CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS && s2 == MPI_SESSION_NULL, "finalize s2");
    MF_CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS && s1 == MPI_SESSION_NULL, "finalize s1");
    MPI_Finalized(&flag);
    MF_CHECK(!flag, "MPI_Finalized after sessions only");
    /* Sessions come and go: a third one after the others ended reuses the idle runtime. */
    MPI_Session s3 = MPI_SESSION_NULL;
    MPI_Group g3;
    MPI_Comm w3 = MPI_COMM_NULL;
    MF_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3) == MPI_SUCCESS,
             "a session after the last one ended");
    MPI_Group_from_session_pset(s3, "mpi://WORLD", &g3);
    rc = MPI_Comm_create_from_group(g3, "org.manifold.test.third", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &w3);
    MF_CHECK(rc == MPI_SUCCESS, "create_from_group from the third session: %d", rc);
    exercise_intra(w3, "world from the third session", wrank);
    int all3 = 0;
    MPI_Allreduce(&mftest_errors, &all3, 1, MPI_INT, MPI_SUM, w3);
    all += all3;
    MPI_Comm_free(&w3);
    MPI_Group_free(&g3);
    MF_CHECK(MPI_Session_finalize(&s3) == MPI_SUCCESS, "finalize s3");
    /* Info still works after everything ended. */
    MPI_Info after;
    MF_CHECK(MPI_Info_create(&after) == MPI_SUCCESS && MPI_Info_free(&after) == MPI_SUCCESS,
             "info after the last session");
    if (wrank == 0 && all == 0 && mftest_errors == 0)
        printf("No Errors\n");
    return all != 0 || mftest_errors != 0;
}
