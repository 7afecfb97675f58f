/* Error-handler objects and dispatch: see errhandler.h. */
#include "core/errhandler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/log.h"
#include "core/state.h"

static mf_errhandler mf_errh_fatal = {MPI_ERRORS_ARE_FATAL, 1, MF_ERRH_FATAL, NULL};
static mf_errhandler mf_errh_return = {MPI_ERRORS_RETURN, 1, MF_ERRH_RETURN, NULL};
static mf_errhandler mf_errh_abort = {MPI_ERRORS_ABORT, 1, MF_ERRH_ABORT, NULL};

mf_handle_table mf_errhandler_table = MF_HANDLE_TABLE_INIT(MF_CLASS_ERRHANDLER);

mf_errhandler *mf_errhandler_get(MPI_Errhandler handle)
{
    switch (handle) {
    case MPI_ERRORS_ARE_FATAL:
        return &mf_errh_fatal;
    case MPI_ERRORS_RETURN:
        return &mf_errh_return;
    case MPI_ERRORS_ABORT:
        return &mf_errh_abort;
    default:
        return mf_handle_lookup(&mf_errhandler_table, handle);
    }
}

mf_errhandler *mf_errhandler_initial(void)
{
    const char *name = mf_config_str("MANIFOLD_INITIAL_ERRHANDLER");
    if (!strcmp(name, "mpi_errors_return"))
        return &mf_errh_return;
    return !strcmp(name, "mpi_errors_abort") ? &mf_errh_abort : &mf_errh_fatal;
}

int mf_errhandler_new(mf_errhandler_kind kind, void (*fn)(void), mf_errhandler **out)
{
    mf_errhandler *eh = calloc(1, sizeof *eh);
    if (!eh)
        return mf_error(MPI_ERR_NO_MEM, "no memory for an error handler");
    eh->eh_handle = mf_handle_alloc(&mf_errhandler_table, eh);
    if (!eh->eh_handle) {
        free(eh);
        return mf_error(MPI_ERR_NO_MEM, "no memory for an error handler handle");
    }
    eh->eh_refs = 1;
    eh->eh_kind = kind;
    eh->eh_fn = fn;
    *out = eh;
    return MPI_SUCCESS;
}

void mf_errhandler_retain(mf_errhandler *eh)
{
    if (eh)
        eh->eh_refs++;
}

void mf_errhandler_release(mf_errhandler *eh)
{
    if (!eh || MF_HANDLE_KIND(eh->eh_handle) != MF_HANDLE_USER)
        return; /* predefined handlers are never freed */
    if (--eh->eh_refs == 0) {
        mf_handle_free(&mf_errhandler_table, eh->eh_handle);
        free(eh);
    }
}

void mf_err_die(int code, const char *function, const char *object)
{
    char text[MPI_MAX_ERROR_STRING];
    int len;
    const char *added;
    int added_class;
    if (mf_error_dynamic(code, &added_class, &added) == MPI_SUCCESS) /* MPI_Add_error_code */
        snprintf(text, sizeof text, "%s (error code %d, class %d)", added, code, added_class);
    else if (mf_error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error code %d", code);
    /* The process manager shows the message exactly once (itself or through the launcher). */
    char msg[MPI_MAX_ERROR_STRING + 2 * MPI_MAX_OBJECT_NAME];
    snprintf(msg, sizeof msg, "rank %d: %s failed on %s: %s", mf_g.rank, function, object, text);
    int exit_code = mf_error_class(code);
    mf_job_abort(exit_code > 0 && exit_code < 256 ? exit_code : 1, msg);
}

int mf_err_session_dispatch(mf_errhandler *eh, MPI_Session session, int code, const char *function)
{
    if (code == MPI_SUCCESS)
        return code;
    switch (eh ? eh->eh_kind : MF_ERRH_FATAL) {
    case MF_ERRH_RETURN:
        return code;
    case MF_ERRH_SESSION:
        ((MPI_Session_errhandler_function *)eh->eh_fn)(&session, &code);
        return code;
    default:
        mf_err_die(code, function, session == MPI_SESSION_NULL ? "no session" : "a session");
    }
}
