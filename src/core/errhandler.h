/*
 * errhandler.h — error handlers and their dispatch.
 *
 * Every API entry point ends with `return mf_err_comm(comm, rc, "MPI_Xxx")` (api/api.h; or the
 * win/file/session variant) so that a failure reaches the handler attached to the object involved:
 *   MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT: print "MPI_Xxx: <message>" naming the rank, and end
 *                         the job through the process manager;
 *   MPI_ERRORS_RETURN:    return the code to the caller;
 *   user handlers:        called with the handle and code, then the code is returned.
 * Calls with no object raise their errors on MPI_COMM_SELF (MPI-4.0 9.3) while the World Model
 * is up, or on MPI_COMM_WORLD as MPI-3.1 did while the program has not set MPI_COMM_SELF's
 * handler (api/errhandler.c: mf_self_handler_set); before MPI_Init, after MPI_Finalize and with sessions alone, the initial error handler
 * applies (mf_errhandler_initial), which MPI_COMM_WORLD and MPI_COMM_SELF also start with.
 */
#ifndef MF_CORE_ERRHANDLER_H
#define MF_CORE_ERRHANDLER_H

#include <mpi.h>
#include <stdbool.h>

typedef enum mf_errhandler_kind {
    MF_ERRH_FATAL,
    MF_ERRH_RETURN,
    MF_ERRH_ABORT,
    MF_ERRH_COMM, /* user function for communicators */
    MF_ERRH_WIN,
    MF_ERRH_FILE,
    MF_ERRH_SESSION,
} mf_errhandler_kind;

typedef struct mf_errhandler {
    MPI_Errhandler eh_handle;
    int eh_refs;
    mf_errhandler_kind eh_kind;
    void (*eh_fn)(void); /* the user's function, cast back by kind */
} mf_errhandler;

mf_errhandler *mf_errhandler_get(MPI_Errhandler handle);
/* Whether eh may be attached to an object whose user handlers are of `kind` (MF_ERRH_COMM, _WIN,
 * _FILE, _SESSION): one created for that kind, or a predefined one. */
static inline bool mf_errhandler_fits(const mf_errhandler *eh, mf_errhandler_kind kind)
{
    return eh && (eh->eh_kind == kind || eh->eh_kind == MF_ERRH_FATAL ||
                  eh->eh_kind == MF_ERRH_RETURN || eh->eh_kind == MF_ERRH_ABORT);
}
/* The initial error handler (MPI-4.0 9.3; the start-up argument and info key
 * mpi_initial_errhandler): the predefined handler MANIFOLD_INITIAL_ERRHANDLER names (mpiexec
 * --initial-errhandler), by default MPI_ERRORS_ARE_FATAL. Not counted: predefined handlers live
 * for good. */
mf_errhandler *mf_errhandler_initial(void);
void mf_errhandler_retain(mf_errhandler *eh);
void mf_errhandler_release(mf_errhandler *eh);

/* Prints "rank R: <function> failed on <object>: <text of code>" and ends the job through the
 * process manager: what MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT do. The dispatch to a
 * communicator's handler is the API's (mf_err_comm in api/api.h): core knows no communicators. */
void mf_err_die(int code, const char *function, const char *object) __attribute__((noreturn));
/* A session's handler `eh` (NULL: MPI_ERRORS_ARE_FATAL), for MPI_Session_* calls and for errors
 * of MPI_Session_init, which go to the handler it was given. */
int mf_err_session_dispatch(mf_errhandler *eh, MPI_Session session, int code, const char *function);

/* Added by the error-handler API (src/api/errhandler.c): a new user handler of `kind` with one
 * reference and a user handle. */
int mf_errhandler_new(mf_errhandler_kind kind, void (*fn)(void), mf_errhandler **out);

#endif
