/*
 * Error handlers on communicators (MPI-4.0 section 9.3), with the MPI-1 names MPICH still
 * exports (MPI_Errhandler_create/set/get), and the dispatch of an entry point's error to its
 * communicator's handler (mf_err_comm, api.h). The handler objects, the fatal path and session
 * dispatch are core's (core/errhandler.c), which knows nothing of communicators.
 *
 * MPI_ERRORS_ABORT is meant to abort only the processes of the communicator; Manifold's
 * process managers can only end a whole job, so it ends the job like MPI_ERRORS_ARE_FATAL
 * (the message names the communicator).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "api/api.h"

/* Whether the program has set MPI_COMM_SELF's handler. MPI-4.0 attaches the errors of calls
 * with no object to MPI_COMM_SELF; programs written for MPI-3.1 set MPI_COMM_WORLD's handler to
 * get them back. As MPICH 5.0.2 does (tried with a user handler on each), such errors go to
 * MPI_COMM_SELF's handler once the program has set one, else to MPI_COMM_WORLD's. Set under the
 * library lock, read at any error. */
static _Atomic bool mf_self_handler_set;

int mf_err_comm_dispatch(mf_comm *comm, int code, const char *function)
{
    if (code == MPI_SUCCESS)
        return code;
    mf_errhandler *eh = NULL;
    if (!comm && mf_g.initialized && !mf_g.finalized) /* no object: see mf_self_handler_set */
        comm = atomic_load_explicit(&mf_self_handler_set, memory_order_relaxed) ? mf_comm_self()
                                                                                : mf_comm_world();
    if (comm)
        eh = comm->c_errhandler;
    if (!eh)
        eh = mf_errhandler_initial();
    switch (eh->eh_kind) {
    case MF_ERRH_RETURN:
        return code;
    case MF_ERRH_COMM: {
        MPI_Comm h = comm ? comm->c_handle : MPI_COMM_SELF;
        ((MPI_Comm_errhandler_function *)eh->eh_fn)(&h, &code);
        return code;
    }
    default: {
        char object[MPI_MAX_OBJECT_NAME + 32];
        if (comm && comm->c_name[0])
            snprintf(object, sizeof object, "%s", comm->c_name);
        else
            snprintf(object, sizeof object, "%s",
                     comm ? "a communicator" : "no object (initial error handler)");
        mf_err_die(code, function, object);
    }
    }
}

int mf_err_no_object(int code, const char *function)
{
    return mf_err_comm(NULL, code, function);
}

static int mf_api_errhandler(MPI_Errhandler h, mf_errhandler **out, const char *fn)
{
    if (h == MPI_ERRHANDLER_NULL || !(*out = mf_errhandler_get(h)))
        return mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x is not a valid error handler", fn,
                        (unsigned)h);
    return MPI_SUCCESS;
}

static int mf_comm_create_errhandler(MPI_Comm_errhandler_function *f, MPI_Errhandler *out,
                                     const char *fn)
{
    int rc = mf_check_initialized(fn);
    mf_errhandler *eh;
    if (!rc && (!f || !out))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !f ? "function" : "errhandler");
    if (!rc && !(rc = mf_errhandler_new(MF_ERRH_COMM, (void (*)(void))f, &eh)))
        *out = eh->eh_handle;
    return mf_err_no_object(rc, fn);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    MF_API_LOCKED(
        mf_comm_create_errhandler(comm_errhandler_fn, errhandler, "MPI_Comm_create_errhandler"));
}
MF_API_ALIAS(Comm_create_errhandler);

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    MF_API_LOCKED(mf_comm_create_errhandler((MPI_Comm_errhandler_function *)function, errhandler,
                                            "MPI_Errhandler_create"));
}
MF_API_ALIAS(Errhandler_create);

static int mf_comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler, const char *fn)
{
    mf_comm *c = NULL;
    mf_errhandler *eh;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_api_errhandler(errhandler, &eh, fn);
    if (!rc && !mf_errhandler_fits(eh, MF_ERRH_COMM))
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x was not created for communicators", fn,
                      (unsigned)errhandler);
    if (!rc) {
        mf_errhandler_retain(eh);
        mf_errhandler_release(c->c_errhandler);
        c->c_errhandler = eh;
        if (c == mf_comm_self())
            atomic_store_explicit(&mf_self_handler_set, true, memory_order_relaxed);
    }
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    MF_API_LOCKED(mf_comm_set_errhandler(comm, errhandler, "MPI_Comm_set_errhandler"));
}
MF_API_ALIAS(Comm_set_errhandler);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    MF_API_LOCKED(mf_comm_set_errhandler(comm, errhandler, "MPI_Errhandler_set"));
}
MF_API_ALIAS(Errhandler_set);

static int mf_comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler, const char *fn)
{
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && !errhandler)
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    if (!rc) {
        /* The caller gets a reference of its own, dropped by MPI_Errhandler_free. */
        mf_errhandler_retain(c->c_errhandler);
        *errhandler = c->c_errhandler->eh_handle;
    }
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    MF_API_LOCKED(mf_comm_get_errhandler(comm, errhandler, "MPI_Comm_get_errhandler"));
}
MF_API_ALIAS(Comm_get_errhandler);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    MF_API_LOCKED(mf_comm_get_errhandler(comm, errhandler, "MPI_Errhandler_get"));
}
MF_API_ALIAS(Errhandler_get);

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    MF_API_ENTER();
    mf_errhandler *eh;
    int rc = errhandler ? mf_api_errhandler(*errhandler, &eh, "MPI_Errhandler_free")
                        : mf_error(MPI_ERR_ARG, "MPI_Errhandler_free: errhandler is NULL");
    if (!rc) {
        mf_errhandler_release(eh); /* objects still using it keep their own references */
        *errhandler = MPI_ERRHANDLER_NULL;
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Errhandler_free"));
}
MF_API_ALIAS(Errhandler_free);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_call_errhandler");
    MF_API_EXIT(); /* the user's handler runs unlocked */
    if (rc)
        return mf_err_comm(c, rc, "MPI_Comm_call_errhandler");
    /* The handler runs (and may end the job); if it returns, the call succeeded. */
    mf_err_comm(c, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}
MF_API_ALIAS(Comm_call_errhandler);
