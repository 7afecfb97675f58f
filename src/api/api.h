/*
 * api.h — conventions shared by the MPI entry points in src/api.
 *
 * Each entry point is written as PMPI_X and exported under MPI_X through MF_API_ALIAS(X), a weak
 * alias: a profiling tool that defines MPI_X wins and reaches Manifold through PMPI_X.
 *
 * Shape of an entry point:
 *     int PMPI_Send(...)
 *     {
 *         MF_API_ENTER();                      // lock if MPI_THREAD_MULTIPLE
 *         mf_comm *comm = NULL;
 *         int rc = mf_check_comm(c, &comm, "MPI_Send");
 *         if (!rc) rc = ...checks..., then the work;
 *         MF_API_EXIT();
 *         return mf_err_comm(comm, rc, "MPI_Send");   // error handler of the object involved
 *     }
 * Argument checks return codes from mf_error() whose message names the function and argument.
 */
#ifndef MF_API_API_H
#define MF_API_API_H

#include <mpi.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/errhandler.h"
#include "core/state.h"
#include "datatype/datatype.h"

#define MF_API_ALIAS(name)                                                                         \
    extern __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)))

/* Checks a constructor's output handle argument: MPI_ERR_ARG naming `arg` when it is NULL;
 * otherwise stores `null` (MPI_COMM_NULL ...) there, so that a constructor that fails afterwards
 * leaves the null handle rather than whatever the variable held (MPICH does the same, and its
 * tests check it). */
#define MF_API_OUT_HANDLE(p, null, fn, arg)                                                        \
    ((p) ? (*(p) = (null), MPI_SUCCESS) : mf_error(MPI_ERR_ARG, "%s: %s is NULL", (fn), (arg)))

#define MF_API_ENTER() mf_lock()
#define MF_API_EXIT() mf_unlock()
/* The body of an entry point that hands everything (checks, work, error dispatch) to one helper:
 * returns `call`, evaluated under the lock. */
#define MF_API_LOCKED(call)                                                                        \
    do {                                                                                           \
        MF_API_ENTER();                                                                            \
        int mf_api_rc_ = (call);                                                                   \
        MF_API_EXIT();                                                                             \
        return mf_api_rc_;                                                                         \
    } while (0)
/* Leaves an entry point that entered with MF_API_ENTER: the lock is dropped before `code` is
 * evaluated, so an error handler it dispatches to (mf_err_comm and kin) runs unlocked, as in
 * the shape above. For entry points with several exits. */
#define MF_API_RETURN(code)                                                                        \
    do {                                                                                           \
        MF_API_EXIT();                                                                             \
        return (code);                                                                             \
    } while (0)

/* Dispatches a non-success code to comm's handler (comm may be NULL: an error of no object, see
 * mf_err_no_object). Returns the code when the handler returns. `function` names the MPI
 * function for the fatal message. (api/errhandler.c; core/errhandler.h has the handler objects
 * and the fatal path.) */
int mf_err_comm_dispatch(mf_comm *comm, int code, const char *function);
/* Inline for the common MPI_SUCCESS: every entry point returns through here. */
static inline int mf_err_comm(mf_comm *comm, int code, const char *function)
{
    return code == MPI_SUCCESS ? MPI_SUCCESS : mf_err_comm_dispatch(comm, code, function);
}
/* For calls that involve no object (MPI_Init, MPI_Type_*, ...): while the World Model is up,
 * MPI_COMM_SELF's handler once the program has set one, else MPI_COMM_WORLD's; otherwise the
 * initial error handler (core/errhandler.h). */
int mf_err_no_object(int code, const char *function);

/* MPI_ERR_OTHER unless MPI is initialized and not finalized. */
int mf_check_initialized(const char *function);
/* The checks below run on every call: each is an inline test of the valid case, with the
 * error (and its message) built out of line by the _slow form. */
int mf_check_comm_slow(MPI_Comm handle, mf_comm **out, const char *function);
int mf_check_count_slow(MPI_Count count, const char *function);
int mf_check_datatype_slow(MPI_Datatype handle, mf_datatype **out, const char *function);

/* Resolves a communicator handle; MPI_ERR_COMM (naming the handle) if invalid or null. */
static inline int mf_check_comm(MPI_Comm handle, mf_comm **out, const char *function)
{
    mf_comm *c;
    if (mf_g.initialized && (c = mf_comm_get(handle)) != NULL) {
        *out = c;
        return MPI_SUCCESS;
    }
    return mf_check_comm_slow(handle, out, function);
}

/* MPI_ERR_COUNT if count < 0. */
static inline int mf_check_count(MPI_Count count, const char *function)
{
    return count >= 0 ? MPI_SUCCESS : mf_check_count_slow(count, function);
}

/* Resolves a datatype handle; MPI_ERR_TYPE if invalid, null, or not committed. */
static inline int mf_check_datatype(MPI_Datatype handle, mf_datatype **out, const char *function)
{
    mf_datatype *dt = mf_datatype_get(handle);
    if (dt && mf_datatype_info(dt)->dt_committed) {
        *out = dt;
        return MPI_SUCCESS;
    }
    return mf_check_datatype_slow(handle, out, function);
}
/* MPI_ERR_BUFFER, naming the argument, if buf is MPI_IN_PLACE (callers check this only where
 * the standard does not allow it), or NULL while count > 0 and the type has data. */
int mf_check_buffer(const void *buf, MPI_Count count, const mf_datatype *dt, const char *function,
                    const char *bufname, const char *countname);
/* count, datatype (resolved into *dt) and buffer together, in that order: the data arguments of
 * a call that moves count elements of a type. */
int mf_check_data(const void *buf, MPI_Count count, MPI_Datatype type, mf_datatype **dt,
                  const char *function, const char *bufname, const char *countname);
/* An info argument that may be MPI_INFO_NULL (*out NULL: no hints); MPI_ERR_INFO naming the
 * handle if it is neither that nor a valid object. */
struct mf_info;
int mf_check_info_opt(MPI_Info handle, struct mf_info **out, const char *function);
/* Just the first part: MPI_ERR_BUFFER naming `bufname` if buf is MPI_IN_PLACE. */
int mf_check_not_in_place(const void *buf, const char *function, const char *bufname);
/* MPI_Comm/Type/Win_get_name of the null handle (MPI-4.1): the handle's name, e.g.
 * "MPI_COMM_NULL", after checking the output arguments. */
int mf_api_null_name(const char *null_name, char *name, int *resultlen, const char *function);

#endif
