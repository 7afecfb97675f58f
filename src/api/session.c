/*
 * MPI-4 sessions (MPI-4.0 section 11.3) and the constructors that need no parent communicator:
 * MPI_Group_from_session_pset, MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups.
 *
 * A session is a user of the runtime (api/runtime.h): MPI_Session_init brings the runtime up if
 * neither MPI_Init nor another session did; MPI_Session_finalize of the last user quiesces it
 * (a fence over the job) and leaves it idle for later sessions or MPI_Init, closing at exit.
 * Several sessions, and sessions next to the world model, share one runtime.
 *
 * Process sets: "mpi://WORLD" (every process of the job) and "mpi://SELF" (this one), matched
 * without regard to case as URIs' schemes are. Each has the info key "mpi_size".
 *
 * Errors of a session call go to the session's error handler (without a valid session, where
 * errors of no object go: mf_err_no_object); errors of MPI_Session_init go to
 * the handler it was given (MPI_ERRORS_ARE_FATAL if that is not valid either). Session handlers
 * are created with MPI_Session_create_errhandler, which, like the info calls, works at any time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "api/p2p_args.h"
#include "api/memkind.h"
#include "api/session.h"
#include "api/runtime.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "comm/info.h"
#include "comm/memkind.h"
#include "core/handle.h"

typedef struct mf_session {
    MPI_Session s_handle;
    mf_errhandler *s_errhandler;
    int s_thread_level;     /* the level this session asked for (the runtime's may be higher) */
    mf_bsend_pool *s_bsend; /* MPI_Session_attach_buffer's (api/bsend.c), or NULL */
    char *s_memkinds;       /* the memory allocation kinds it supports (comm/memkind.h) */
} mf_session;

static mf_handle_table mf_session_table = MF_HANDLE_TABLE_INIT(MF_CLASS_SESSION);

static const char *const mf_pset_names[] = {"mpi://WORLD", "mpi://SELF"};
#define MF_NPSETS ((int)(sizeof mf_pset_names / sizeof mf_pset_names[0]))

static int mf_api_session(MPI_Session h, mf_session **out, const char *fn)
{
    if (h == MPI_SESSION_NULL)
        return mf_error(MPI_ERR_SESSION, "%s: session is MPI_SESSION_NULL", fn);
    if (!(*out = mf_handle_lookup(&mf_session_table, h)))
        return mf_error(MPI_ERR_SESSION, "%s: session=0x%x is not a valid session", fn,
                        (unsigned)h);
    return MPI_SUCCESS;
}

/* Without a valid session (MPI_SESSION_NULL, a stale handle) the error belongs to no object:
 * it goes where such errors go (mf_err_no_object: MPI_COMM_SELF's handler once the world model is
 * up, else the initial error handler), as MPICH does. */
static int mf_err_session(const mf_session *s, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return code;
    return s ? mf_err_session_dispatch(s->s_errhandler, s->s_handle, code, fn)
             : mf_err_no_object(code, fn);
}

int mf_session_bsend(MPI_Session h, mf_bsend_pool ***where, const char *fn)
{
    mf_session *s = NULL;
    int rc = mf_api_session(h, &s, fn);
    if (!rc)
        *where = &s->s_bsend;
    return rc;
}

mf_bsend_pool *mf_session_bsend_of(MPI_Session h)
{
    mf_session *s = mf_handle_lookup(&mf_session_table, h);
    return s ? s->s_bsend : NULL;
}

int mf_session_raise(MPI_Session h, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return code;
    MF_API_ENTER();
    mf_session *s = h == MPI_SESSION_NULL ? NULL : mf_handle_lookup(&mf_session_table, h);
    mf_session copy = s ? *s : (mf_session){0};
    if (s)
        mf_errhandler_retain(copy.s_errhandler);
    MF_API_EXIT();
    code = mf_err_session(s ? &copy : NULL, code, fn);
    if (s)
        mf_errhandler_release(copy.s_errhandler);
    return code;
}

/* Handlers a session may carry: the predefined ones and those made for sessions. */
static int mf_api_session_errhandler(MPI_Errhandler h, mf_errhandler **out, const char *fn)
{
    mf_errhandler *eh = h == MPI_ERRHANDLER_NULL ? NULL : mf_errhandler_get(h);
    if (!eh)
        return mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x is not a valid error handler", fn,
                        (unsigned)h);
    if (!mf_errhandler_fits(eh, MF_ERRH_SESSION))
        return mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x was not created for sessions", fn,
                        (unsigned)h);
    *out = eh;
    return MPI_SUCCESS;
}

/* Index of a process set name, or -1. */
static int mf_pset_index(const char *name)
{
    for (int i = 0; name && i < MF_NPSETS; i++)
        if (strcasecmp(name, mf_pset_names[i]) == 0)
            return i;
    return -1;
}

int mf_pset_split_color(const char *name)
{
    switch (mf_pset_index(name)) {
    case 0: /* mpi://WORLD: one set of every process */
        return 0;
    case 1: /* mpi://SELF: a set of each process alone */
        return mf_g.rank;
    default:
        return MPI_UNDEFINED;
    }
}

/* The index of a process set name into *index, or an MPI_ERR_ARG naming it. */
static int mf_pset_find(const char *name, int *index, const char *fn)
{
    if ((*index = mf_pset_index(name)) >= 0)
        return MPI_SUCCESS;
    if (!name)
        return mf_error(MPI_ERR_ARG, "%s: pset_name is NULL", fn);
    return mf_error(MPI_ERR_ARG,
                    "%s: pset_name=\"%.*s\" is not a process set of this job (known: "
                    "\"mpi://WORLD\", \"mpi://SELF\")",
                    fn, MPI_MAX_PSET_NAME_LEN, name);
}

/* The arguments of the calls that name a process set: session, name, and an output. */
static int mf_api_pset_args(MPI_Session h, const char *pset_name, const void *out,
                            const char *out_name, mf_session **s, int *index, const char *fn)
{
    int rc = mf_api_session(h, s, fn);
    if (!rc)
        rc = mf_pset_find(pset_name, index, fn);
    if (!rc && !out)
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, out_name);
    return rc;
}

static int mf_pset_size(int index)
{
    return index == 0 ? mf_g.size : 1;
}

/* A new info object with one key, handed to the user. */
/* A new info handle with key=value, and key2=value2 unless key2 is NULL. */
static int mf_info_make(MPI_Info *out, const char *key, const char *value, const char *key2,
                        const char *value2)
{
    mf_info *i;
    int rc = mf_info_new(&i);
    if (rc)
        return rc;
    if (!(rc = mf_info_set(i, key, value)) && key2)
        rc = mf_info_set(i, key2, value2);
    if (!rc)
        rc = mf_info_to_handle(i, out);
    mf_info_release(i);
    return rc;
}

const char *mf_session_memkinds(MPI_Session h)
{
    mf_session *s = mf_handle_lookup(&mf_session_table, h);
    return s ? s->s_memkinds : NULL;
}

/* ---- MPI_Session_init / finalize ------------------------------------------------------------ */

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *fn = "MPI_Session_init";
    mf_errhandler *eh = NULL;
    mf_info *hints = NULL;
    mf_session *s = NULL;
    int level = MPI_THREAD_SINGLE;
    int rc = mf_api_session_errhandler(errhandler, &eh, fn);
    if (!rc && !session)
        rc = mf_error(MPI_ERR_ARG, "%s: session is NULL", fn);
    if (!rc)
        rc = mf_check_info_opt(info, &hints, fn);
    const char *asked = hints ? mf_info_lookup(hints, "thread_level") : NULL;
    if (!rc && asked && (level = mf_info_thread_level_parse(asked)) < 0)
        rc = mf_error(MPI_ERR_ARG,
                      "%s: info key \"thread_level\"=\"%.64s\" is not one of MPI_THREAD_SINGLE, "
                      "MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE",
                      fn, asked);
    /* The kinds asked for here take precedence over those asked for at start-up (MPI-4.1
     * 12.4.3). */
    char *kinds = NULL;
    const char *kinds_asked = hints ? mf_info_lookup(hints, MF_MEMKIND_KEY) : NULL;
    if (!rc && !(kinds = kinds_asked ? mf_memkind_supported(kinds_asked) : mf_memkind_started()))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for the memory allocation kinds", fn);
    /* The object first, the runtime after: the runtime may set up the library lock, so no
     * MF_API_ENTER..EXIT pair may span mf_runtime_acquire. */
    if (!rc) {
        MF_API_ENTER();
        if (!(s = calloc(1, sizeof *s)))
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a session", fn);
        else if (!(s->s_handle = mf_handle_alloc(&mf_session_table, s)))
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a session handle", fn);
        MF_API_EXIT();
    }
    if (!rc && (rc = mf_runtime_acquire(level, NULL, fn))) {
        MF_API_ENTER();
        mf_handle_free(&mf_session_table, s->s_handle);
        MF_API_EXIT();
    }
    if (rc) {
        free(s);
        free(kinds);
        return mf_err_session_dispatch(eh, MPI_SESSION_NULL, rc, fn);
    }
    s->s_memkinds = kinds;
    s->s_thread_level = level;
    s->s_errhandler = eh;
    mf_errhandler_retain(eh);
    *session = s->s_handle;
    return MPI_SUCCESS;
}
MF_API_ALIAS(Session_init);

int PMPI_Session_finalize(MPI_Session *session)
{
    const char *fn = "MPI_Session_finalize";
    mf_session *s = NULL;
    MF_API_ENTER();
    int rc = session ? mf_api_session(*session, &s, fn)
                     : mf_error(MPI_ERR_ARG, "%s: session is NULL", fn);
    mf_session copy = {MPI_SESSION_NULL, NULL, 0, NULL};
    if (!rc)
        rc = mf_bsend_release_pool(&s->s_bsend, fn); /* its buffered messages leave first */
    if (!rc) {
        /* A teardown failure goes to the session's handler, kept alive until then. */
        copy = *s;
        mf_handle_free(&mf_session_table, s->s_handle);
        free(s);
        *session = MPI_SESSION_NULL;
    }
    MF_API_EXIT();
    if (rc)
        return mf_err_session(s, rc, fn);
    rc = mf_runtime_release(false, fn);
    rc = mf_err_session(&copy, rc, fn);
    mf_errhandler_release(copy.s_errhandler);
    free(copy.s_memkinds);
    return rc;
}
MF_API_ALIAS(Session_finalize);

/* ---- Queries --------------------------------------------------------------------------------- */

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    const char *fn = "MPI_Session_get_info";
    mf_session *s = NULL;
    MF_API_ENTER();
    int rc = mf_api_session(session, &s, fn);
    if (!rc && !info_used)
        rc = mf_error(MPI_ERR_ARG, "%s: info_used is NULL", fn);
    if (!rc) /* the level in force for this process, which is at least the one asked for */
        rc = mf_info_make(info_used, "thread_level", mf_info_thread_level_name(mf_g.thread_level),
                          MF_MEMKIND_KEY, s->s_memkinds);
    MF_API_EXIT();
    return mf_err_session(s, rc, fn);
}
MF_API_ALIAS(Session_get_info);

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    MF_API_ENTER();
    const char *fn = "MPI_Session_get_num_psets";
    mf_session *s = NULL;
    int rc = mf_api_session(session, &s, fn);
    if (!rc && !npset_names)
        rc = mf_error(MPI_ERR_ARG, "%s: npset_names is NULL", fn);
    if (!rc)
        *npset_names = MF_NPSETS;
    (void)info; /* no hints select process sets */
    MF_API_RETURN(mf_err_session(s, rc, fn));
}
MF_API_ALIAS(Session_get_num_psets);

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    MF_API_ENTER();
    const char *fn = "MPI_Session_get_nth_pset";
    mf_session *s = NULL;
    int rc = mf_api_session(session, &s, fn);
    if (!rc && (n < 0 || n >= MF_NPSETS))
        rc = mf_error(MPI_ERR_ARG, "%s: n=%d is not in [0, %d)", fn, n, MF_NPSETS);
    if (!rc && !pset_len)
        rc = mf_error(MPI_ERR_ARG, "%s: pset_len is NULL", fn);
    if (!rc && *pset_len < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: *pset_len=%d is negative", fn, *pset_len);
    if (!rc && *pset_len > 0 && !pset_name)
        rc = mf_error(MPI_ERR_ARG, "%s: pset_name is NULL", fn);
    if (!rc) {
        /* *pset_len 0 asks for the length (with the terminator); otherwise at most
         * *pset_len - 1 characters and the terminator are written. */
        const char *name = mf_pset_names[n];
        int need = (int)strlen(name) + 1;
        if (*pset_len == 0)
            *pset_len = need;
        else
            snprintf(pset_name, (size_t)*pset_len, "%s", name);
    }
    (void)info;
    MF_API_RETURN(mf_err_session(s, rc, fn));
}
MF_API_ALIAS(Session_get_nth_pset);

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *fn = "MPI_Session_get_pset_info";
    mf_session *s = NULL;
    int index = 0;
    MF_API_ENTER();
    int rc = mf_api_pset_args(session, pset_name, info, "info", &s, &index, fn);
    if (!rc) {
        char size[16];
        snprintf(size, sizeof size, "%d", mf_pset_size(index));
        rc = mf_info_make(info, "mpi_size", size, NULL, NULL);
    }
    MF_API_EXIT();
    return mf_err_session(s, rc, fn);
}
MF_API_ALIAS(Session_get_pset_info);

/* ---- Error handlers --------------------------------------------------------------------------- */

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    MF_API_ENTER();
    const char *fn = "MPI_Session_create_errhandler";
    mf_errhandler *eh;
    int rc = MPI_SUCCESS;
    if (!session_errhandler_fn || !errhandler)
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn,
                      !session_errhandler_fn ? "session_errhandler_fn" : "errhandler");
    if (!rc &&
        !(rc = mf_errhandler_new(MF_ERRH_SESSION, (void (*)(void))session_errhandler_fn, &eh)))
        *errhandler = eh->eh_handle;
    MF_API_RETURN(mf_err_session(NULL, rc, fn));
}
MF_API_ALIAS(Session_create_errhandler);

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_Session_set_errhandler";
    mf_session *s = NULL;
    mf_errhandler *eh;
    int rc = mf_api_session(session, &s, fn);
    if (!rc)
        rc = mf_api_session_errhandler(errhandler, &eh, fn);
    if (!rc) {
        MF_API_ENTER();
        mf_errhandler_retain(eh);
        mf_errhandler_release(s->s_errhandler);
        s->s_errhandler = eh;
        MF_API_EXIT();
    }
    return mf_err_session(s, rc, fn);
}
MF_API_ALIAS(Session_set_errhandler);

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    MF_API_ENTER();
    const char *fn = "MPI_Session_get_errhandler";
    mf_session *s = NULL;
    int rc = mf_api_session(session, &s, fn);
    if (!rc && !errhandler)
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    if (!rc) {
        /* The caller gets a reference of its own, dropped by MPI_Errhandler_free. */
        mf_errhandler_retain(s->s_errhandler);
        *errhandler = s->s_errhandler->eh_handle;
    }
    MF_API_RETURN(mf_err_session(s, rc, fn));
}
MF_API_ALIAS(Session_get_errhandler);

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    MF_API_ENTER();
    const char *fn = "MPI_Session_call_errhandler";
    mf_session *s = NULL;
    int rc = mf_api_session(session, &s, fn);
    MF_API_EXIT(); /* the user's handler runs unlocked */
    if (rc)
        return mf_err_session(s, rc, fn);
    /* The handler's outcome is not this call's: it succeeds once the handler returns. */
    (void)mf_err_session(s, errorcode, fn);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Session_call_errhandler);

/* ---- Groups and communicators from process sets ---------------------------------------------- */

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    const char *fn = "MPI_Group_from_session_pset";
    mf_session *s = NULL;
    mf_group *g = NULL;
    int index = 0;
    MF_API_ENTER();
    int rc = mf_api_pset_args(session, pset_name, newgroup, "newgroup", &s, &index, fn);
    if (!rc && index == 0) {
        mf_comm *world = mf_comm_world();
        rc = mf_group_new(world->c_group->g_size, world->c_group->g_world_ranks, &g);
    } else if (!rc) {
        rc = mf_group_new(1, &mf_g.rank, &g);
    }
    if (!rc) {
        g->g_session = s->s_handle;
        rc = mf_group_to_handle(g, newgroup);
    }
    mf_group_release(g);
    MF_API_EXIT();
    return mf_err_session(s, rc, fn);
}
MF_API_ALIAS(Group_from_session_pset);

/* Checks shared by the two constructors: a group this process belongs to (member) or any valid
 * group, a string tag, and an error handler for the new communicator. */
static int mf_api_from_group_args(MPI_Group h, bool member, const char *stringtag,
                                  MPI_Errhandler errhandler, mf_group **g, mf_errhandler **eh,
                                  const char *fn)
{
    *eh = errhandler == MPI_ERRHANDLER_NULL ? NULL : mf_errhandler_get(errhandler);
    if (errhandler != MPI_ERRHANDLER_NULL &&
        (!*eh || (*eh)->eh_kind == MF_ERRH_SESSION || (*eh)->eh_kind == MF_ERRH_WIN ||
         (*eh)->eh_kind == MF_ERRH_FILE))
        return mf_error(MPI_ERR_ARG,
                        "%s: errhandler=0x%x is not an error handler for "
                        "communicators",
                        fn, (unsigned)errhandler);
    int rc = mf_check_initialized(fn);
    if (rc)
        return rc;
    if (h == MPI_GROUP_NULL || !(*g = mf_group_get(h)))
        return mf_error(MPI_ERR_GROUP, "%s: group=0x%x is not a valid group", fn, (unsigned)h);
    if (member && (*g)->g_rank == MPI_UNDEFINED)
        return mf_error(MPI_ERR_GROUP, "%s: this process is not a member of the group", fn);
    if (!stringtag)
        return mf_error(MPI_ERR_ARG, "%s: stringtag is NULL", fn);
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return mf_error(MPI_ERR_ARG,
                        "%s: stringtag is %zu characters (MPI_MAX_STRINGTAG_LEN is %d)", fn,
                        strlen(stringtag), MPI_MAX_STRINGTAG_LEN);
    return MPI_SUCCESS;
}

/* Errors of the two constructors: with MPI_ERRORS_RETURN as the new communicator's handler they
 * are returned (a program of sessions only has no other way to ask for that); otherwise
 * the handler of errors of no object applies (mf_err_no_object). */
static int mf_err_from_group(const mf_errhandler *eh, int rc, const char *fn)
{
    if (rc && eh && eh->eh_kind == MF_ERRH_RETURN)
        return rc;
    return mf_err_no_object(rc, fn);
}

/* Gives a new communicator its handler, hints and the session of group g (what it derives from)
 * and hands it to the user. */
static int mf_from_group_finish(mf_comm *c, const mf_group *g, mf_errhandler *eh, MPI_Info info,
                                MPI_Comm *out)
{
    c->c_session = g->g_session;
    mf_info *hints = info == MPI_INFO_NULL ? NULL : mf_info_get(info);
    if (hints) {
        int rc = mf_info_dup(hints, &c->c_info);
        if (rc) {
            mf_comm_release(c);
            return rc;
        }
    }
    if (eh) {
        mf_errhandler_retain(eh);
        mf_errhandler_release(c->c_errhandler);
        c->c_errhandler = eh;
    }
    *out = c->c_handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_from_group";
    mf_group *g = NULL;
    mf_errhandler *eh = NULL;
    mf_comm *c = NULL;
    MF_API_ENTER();
    int rc = mf_api_from_group_args(group, true, stringtag, errhandler, &g, &eh, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    mf_info *hints = NULL;
    if (!rc)
        rc = mf_check_info_opt(info, &hints, fn);
    if (!rc && !(rc = mf_comm_from_group(g, stringtag, &c)))
        rc = mf_from_group_finish(c, g, eh, info, newcomm);
    MF_API_EXIT();
    return mf_err_from_group(eh, rc, fn);
}
MF_API_ALIAS(Comm_create_from_group);

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create_from_groups";
    mf_group *lg = NULL, *rg = NULL;
    mf_errhandler *eh = NULL;
    mf_comm *c = NULL;
    MF_API_ENTER();
    int rc = mf_api_from_group_args(local_group, true, stringtag, errhandler, &lg, &eh, fn);
    if (!rc)
        rc = mf_api_from_group_args(remote_group, false, stringtag, errhandler, &rg, &eh, fn);
    if (!rc && rg->g_rank != MPI_UNDEFINED)
        rc = mf_error(MPI_ERR_GROUP, "%s: this process is in both groups", fn);
    if (!rc && (local_leader < 0 || local_leader >= lg->g_size))
        rc = mf_error(MPI_ERR_RANK, "%s: local_leader=%d is not a rank of local_group (size %d)",
                      fn, local_leader, lg->g_size);
    if (!rc && (remote_leader < 0 || remote_leader >= rg->g_size))
        rc = mf_error(MPI_ERR_RANK, "%s: remote_leader=%d is not a rank of remote_group (size %d)",
                      fn, remote_leader, rg->g_size);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newintercomm, MPI_COMM_NULL, fn, "newintercomm");
    mf_info *hints = NULL;
    if (!rc)
        rc = mf_check_info_opt(info, &hints, fn);
    if (!rc && !(rc = mf_intercomm_from_groups(lg, local_leader, rg, remote_leader, stringtag, &c)))
        rc = mf_from_group_finish(c, lg, eh, info, newintercomm);
    MF_API_EXIT();
    return mf_err_from_group(eh, rc, fn);
}
MF_API_ALIAS(Intercomm_create_from_groups);
