/*
 * Sessions beside the world model, in each order (argv[1] picks the scenario). The runtime is
 * brought up once by whichever comes first and torn down by whichever ends last; meanwhile
 * communicators of both models carry traffic.
 *   session-first: MPI_Session_init, then MPI_Init; MPI_Finalize while the session is open (its
 *                  communicator keeps working), then MPI_Session_finalize; a new session after
 *                  that reuses the idle runtime.
 *   session-then-world: a session opened and finalized, then MPI_Init .. MPI_Finalize.
 *   world-first:   MPI_Init_thread, then a session, finalized (calls on MPI_SESSION_NULL and on
 *                  the finalized handle then report MPI_ERR_SESSION to MPI_COMM_WORLD's handler),
 *                  then another session (the runtime
 *                  stays up for the world), then MPI_Finalize, after which a new session is a
 *                  clear error (MPI has ended), not a crash; an info object made before MPI_Init
 *                  is still usable after MPI_Finalize.
 *   world-ends-first: MPI_Init, a session, MPI_Finalize, traffic on the session's
 *                  communicator, MPI_Session_finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static MPI_Session open_session(MPI_Comm *comm, const char *tag)
{
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Group g;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MF_CHECK(rc == MPI_SUCCESS, "MPI_Session_init: %d", rc);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    rc = MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, comm);
    MF_CHECK(rc == MPI_SUCCESS, "MPI_Comm_create_from_group: %d", rc);
    MPI_Group_free(&g);
    return s;
}

/* Allreduce and a ring on c; returns the sum of the failure counts over c. */
static int traffic(MPI_Comm c, const char *what)
{
    int rank, size, sum = 0, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    MF_CHECK(sum == size * (size - 1) / 2, "%s: allreduce %d", what, sum);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 3, c, MPI_STATUS_IGNORE);
    MF_CHECK(got == (rank + size - 1) % size, "%s: ring got %d", what, got);
    int all = 0;
    MPI_Allreduce(&mftest_errors, &all, 1, MPI_INT, MPI_SUM, c);
    return all;
}

static void flags(int init, int fini, const char *when)
{
    int i = -1, f = -1;
    MPI_Initialized(&i);
    MPI_Finalized(&f);
    MF_CHECK(i == init && f == fini, "%s: Initialized %d Finalized %d, want %d %d", when, i, f,
             init, fini);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    MPI_Comm sc = MPI_COMM_NULL;
    MPI_Session s;
    int all = 0, rank = 0;
    if (!strcmp(mode, "session-first")) {
        s = open_session(&sc, "first");
        flags(0, 0, "session only");
        MPI_Init(&argc, &argv);
        flags(1, 0, "session and world");
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        traffic(MPI_COMM_WORLD, "world");
        traffic(sc, "session before MPI_Finalize");
        MPI_Finalize();
        flags(1, 1, "after MPI_Finalize, session open");
        all = traffic(sc, "session after MPI_Finalize");
        MPI_Comm_free(&sc);
        MF_CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
        /* A session was the last user: the runtime is idle, and a new session reuses it. */
        s = open_session(&sc, "after the end");
        all += traffic(sc, "session after every user ended");
        MPI_Comm_free(&sc);
        MF_CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
    } else if (!strcmp(mode, "session-then-world")) {
        /* A library probes with a session and ends it; the program then starts the world. */
        s = open_session(&sc, "probe");
        traffic(sc, "probing session");
        MPI_Comm_free(&sc);
        MPI_Session_finalize(&s);
        flags(0, 0, "after the probing session");
        MF_CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS, "MPI_Init after a finished session");
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        all = traffic(MPI_COMM_WORLD, "world after a finished session");
        MPI_Finalize();
        flags(1, 1, "after MPI_Finalize");
    } else if (!strcmp(mode, "world-first")) {
        /* Info objects before MPI_Init, kept across it, used after MPI_Finalize. */
        MPI_Info early;
        char v[8] = "";
        int got = 0;
        MF_CHECK(MPI_Info_create(&early) == MPI_SUCCESS, "MPI_Info_create before MPI_Init");
        MF_CHECK(MPI_Info_set(early, "k", "v1") == MPI_SUCCESS, "MPI_Info_set before MPI_Init");
        int provided = -1;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        s = open_session(&sc, "one");
        flags(1, 0, "world and session");
        traffic(sc, "first session");
        MPI_Info info;
        char level[64] = "";
        int flag = 0;
        MPI_Session_get_info(s, &info);
        MPI_Info_get(info, "thread_level", sizeof level - 1, level, &flag);
        MF_CHECK(flag && !strcmp(level, "MPI_THREAD_FUNNELED"), "session thread_level '%s'", level);
        MPI_Info_free(&info);
        MPI_Comm_free(&sc);
        MPI_Session_finalize(&s);
        /* Without a session, an error belongs to no object: MPI_COMM_WORLD's handler takes
         * it (here MPI_ERRORS_RETURN), as with MPICH; it does not end the job. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int npsets = -1, ecls = -1;
        MPI_Error_class(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &npsets), &ecls);
        MF_CHECK(ecls == MPI_ERR_SESSION, "MPI_Session_get_num_psets(MPI_SESSION_NULL): class %d",
                 ecls);
        MPI_Group g = MPI_GROUP_NULL;
        MPI_Error_class(MPI_Group_from_session_pset(s, "mpi://WORLD", &g), &ecls);
        MF_CHECK(ecls == MPI_ERR_SESSION, "a finalized session: class %d", ecls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        traffic(MPI_COMM_WORLD, "world after a session ended");
        s = open_session(&sc, "two");
        traffic(sc, "second session");
        MPI_Comm_free(&sc);
        MPI_Session_finalize(&s);
        all = traffic(MPI_COMM_WORLD, "world at the end");
        MPI_Finalize();
        flags(1, 1, "after MPI_Finalize");
        /* MPI_Finalize was the last user: MPI has ended here, and a new session says so. */
        MPI_Session again = MPI_SESSION_NULL;
        int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &again), cls = -1;
        MPI_Error_class(rc, &cls);
        MF_CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OTHER && again == MPI_SESSION_NULL,
                 "a session after the end: rc %d class %d", rc, cls);
        MPI_Info_get(early, "k", sizeof v - 1, v, &got);
        MF_CHECK(got && !strcmp(v, "v1"), "MPI_Info_get after MPI_Finalize: '%s'", v);
        MPI_Info dup;
        MF_CHECK(MPI_Info_dup(early, &dup) == MPI_SUCCESS && MPI_Info_free(&dup) == MPI_SUCCESS &&
                     MPI_Info_free(&early) == MPI_SUCCESS,
                 "MPI_Info_dup/free after MPI_Finalize");
    } else if (!strcmp(mode, "world-ends-first")) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        s = open_session(&sc, "late");
        MPI_Finalize();
        all = traffic(sc, "session outliving the world");
        MPI_Comm_free(&sc);
        MF_CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "MPI_Session_finalize");
    } else {
        fprintf(stderr, "usage: session_world session-first|session-then-world|world-first|"
                        "world-ends-first\n");
        return 2;
    }
    if (rank == 0 && all == 0 && mftest_errors == 0)
        printf("No Errors\n");
    return all != 0 || mftest_errors != 0;
}
