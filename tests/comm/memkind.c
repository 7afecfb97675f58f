/*
 * Memory allocation kinds (MPI-4.1 12.4.3): what sessions, communicators, windows and files
 * report as mpi_memory_alloc_kinds, how mpi_assert_memory_alloc_kinds narrows it, and that a
 * value the program sets for the reported key never comes back.
 *
 * Arguments, what must be reported: argv[1] by MPI_COMM_WORLD (the supported part of the
 * start-up request), argv[2] by objects promising "system", argv[3] by a window promising
 * "mpi:alloc_mem,cuda" ("-" for the empty value). The CMake file runs it without a request and with
 * MANIFOLD_MEMORY_ALLOC_KINDS.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define KEY "mpi_memory_alloc_kinds"
#define ASSERT_KEY "mpi_assert_memory_alloc_kinds"

/* The value of `key` in `info` (freed here), or "(unset)". */
static const char *value_of(MPI_Info info, const char *key)
{
    static char v[MPI_MAX_INFO_VAL + 1];
    int len = sizeof v, flag = 0;
    MPI_Info_get_string(info, key, &len, v, &flag);
    MPI_Info_free(&info);
    return flag ? v : "(unset)";
}

static const char *comm_kinds(MPI_Comm c)
{
    MPI_Info i;
    MF_CHECK_MPI(MPI_Comm_get_info(c, &i));
    return value_of(i, KEY);
}

static MPI_Info one(const char *key, const char *value)
{
    MPI_Info i;
    MPI_Info_create(&i);
    MPI_Info_set(i, key, value);
    return i;
}

#define EXPECT(got, want, what)                                                                    \
    do {                                                                                           \
        const char *g_ = (got);                                                                    \
        MF_CHECK(!strcmp(g_, (want)), "%s: %s=\"%s\", want \"%s\"", (what), KEY, g_, (want));      \
    } while (0)

static void world_model(const char *started, const char *want_sys, const char *want_mpi)
{
    EXPECT(comm_kinds(MPI_COMM_WORLD), started, "MPI_COMM_WORLD");
    EXPECT(comm_kinds(MPI_COMM_SELF), started, "MPI_COMM_SELF");
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &split);
    EXPECT(comm_kinds(split), started, "a split of MPI_COMM_WORLD");

    /* A promise narrows; a duplicate keeps the hints, so the promise too. */
    MPI_Info sys = one(ASSERT_KEY, "system"), mpi_only = one(ASSERT_KEY, "mpi:alloc_mem,cuda");
    MPI_Comm d, dd;
    MF_CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, sys, &d));
    EXPECT(comm_kinds(d), want_sys, "dup_with_info asserting system");
    MPI_Info got;
    MPI_Comm_get_info(d, &got);
    EXPECT(value_of(got, ASSERT_KEY), "system", "the promise read back");
    MF_CHECK_MPI(MPI_Comm_dup(d, &dd));
    EXPECT(comm_kinds(dd), want_sys, "a dup of it");
    /* The program cannot set what the library answers. */
    MPI_Info forged = one(KEY, "cuda:device");
    MF_CHECK_MPI(MPI_Comm_set_info(dd, forged));
    EXPECT(comm_kinds(dd), started, "set_info with the answer's key (and no promise)");
    MPI_Info_free(&forged);

    /* Windows: their communicator's kinds, narrowed by their own promise. */
    char *mem;
    MPI_Win w;
    MF_CHECK_MPI(MPI_Win_allocate(64, 1, mpi_only, MPI_COMM_WORLD, &mem, &w));
    MPI_Win_get_info(w, &got);
    EXPECT(value_of(got, KEY), want_mpi, "a window asserting mpi:alloc_mem,cuda");
    MPI_Win_free(&w);
    MF_CHECK_MPI(MPI_Win_allocate(64, 1, MPI_INFO_NULL, d, &mem, &w));
    MPI_Win_get_info(w, &got);
    EXPECT(value_of(got, KEY), want_sys, "a window over the communicator asserting system");
    MPI_Win_free(&w);

    /* Files: the same, at open. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/mf_memkind_%d", (int)getpid());
    MPI_File f;
    MF_CHECK_MPI(MPI_File_open(
        MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, sys, &f));
    MPI_File_get_info(f, &got);
    EXPECT(value_of(got, KEY), want_sys, "a file opened asserting system");
    /* Asked twice: each info handle is the caller's alone, freed above without a trace. */
    MPI_File_get_info(f, &got);
    MPI_Info again = got;
    MPI_Info_free(&got);
    int nkeys = -1, rc;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* where info errors go */
    rc = MPI_Info_get_nkeys(again, &nkeys);
    MF_CHECK(rc != MPI_SUCCESS, "a freed file info handle still answers (%d keys)", nkeys);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_File_close(&f);

    MPI_Info_free(&sys);
    MPI_Info_free(&mpi_only);
    MPI_Comm_free(&dd);
    MPI_Comm_free(&d);
    MPI_Comm_free(&split);
}

/* A session asks for its own kinds, which override start-up's; its communicators inherit. */
static void sessions(const char *started)
{
    MPI_Session s;
    MPI_Info ask = one(KEY, " system , rocm:device,mpi:win_allocate_shared,system,mpi:nope");
    MF_CHECK_MPI(MPI_Session_init(ask, MPI_ERRORS_RETURN, &s));
    MPI_Info got;
    MF_CHECK_MPI(MPI_Session_get_info(s, &got));
    EXPECT(value_of(got, KEY), "system,mpi:win_allocate_shared", "a session's answer");
    MPI_Group g;
    MPI_Comm c;
    MF_CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MF_CHECK_MPI(MPI_Comm_create_from_group(g, "memkind", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    EXPECT(comm_kinds(c), "system,mpi:win_allocate_shared", "a communicator of the session");
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    MPI_Info_free(&ask);

    /* Without its own request, start-up's; asked for nothing, nothing. */
    MF_CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Session_get_info(s, &got);
    EXPECT(value_of(got, KEY), started, "a session that asked nothing");
    MPI_Session_finalize(&s);
    ask = one(KEY, "");
    MF_CHECK_MPI(MPI_Session_init(ask, MPI_ERRORS_RETURN, &s));
    MPI_Session_get_info(s, &got);
    EXPECT(value_of(got, KEY), "", "a session that asked for no kind");
    MPI_Session_finalize(&s);
    MPI_Info_free(&ask);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: memkind WORLD_KINDS SYSTEM_ASSERTED MPI_ASSERTED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *started = argv[1];
    int v, sv;
    MPI_Get_version(&v, &sv);
    MF_CHECK(v == 4 && sv == 1, "MPI_Get_version: %d.%d", v, sv);
    world_model(started, argv[2], strcmp(argv[3], "-") ? argv[3] : "");
    sessions(started);
    return mftest_finish();
}
