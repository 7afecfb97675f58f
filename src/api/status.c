/*
 * status.c — the MPI-4.1 accessors of a status's public fields (MPI_SOURCE, MPI_TAG,
 * MPI_ERROR): a program or a layered library (a generalized request's query function) may read
 * and set them through calls, as bindings that cannot reach the struct's members need. Like
 * MPI_Status_set_cancelled they need no initialized library; errors (a NULL status or
 * MPI_STATUS_IGNORE, a NULL output) go where errors of no object go (mf_err_no_object).
 */
#include "api/api.h"

/* MPI_ERR_ARG naming `what` unless p is a usable pointer (`ignore`: MPI_STATUS_IGNORE
 * is not one either). */
static int status_arg(const void *p, const void *ignore, const char *what, const char *fn)
{
    if (p && p != ignore)
        return MPI_SUCCESS;
    return mf_err_no_object(
        mf_error(MPI_ERR_ARG, "%s: %s is %s", fn, what, p ? "MPI_STATUS_IGNORE" : "NULL"), fn);
}

/* Reads field `field` of status into *out. */
#define STATUS_GET(name, field, what)                                                              \
    int PMPI_Status_get_##name(const MPI_Status *status, int *what)                                \
    {                                                                                              \
        const char *fn = "MPI_Status_get_" #name;                                                  \
        int rc = status_arg(status, MPI_STATUS_IGNORE, "status", fn);                              \
        if (!rc)                                                                                   \
            rc = status_arg(what, NULL, #what, fn);                                                \
        if (!rc)                                                                                   \
            *what = status->field;                                                                 \
        return rc;                                                                                 \
    }                                                                                              \
    MF_API_ALIAS(Status_get_##name)

#define STATUS_SET(name, field, what)                                                              \
    int PMPI_Status_set_##name(MPI_Status *status, int what)                                       \
    {                                                                                              \
        int rc = status_arg(status, MPI_STATUS_IGNORE, "status", "MPI_Status_set_" #name);         \
        if (!rc)                                                                                   \
            status->field = what;                                                                  \
        return rc;                                                                                 \
    }                                                                                              \
    MF_API_ALIAS(Status_set_##name)

STATUS_GET(source, MPI_SOURCE, source);
STATUS_GET(tag, MPI_TAG, tag);
STATUS_GET(error, MPI_ERROR, error);
STATUS_SET(source, MPI_SOURCE, source);
STATUS_SET(tag, MPI_TAG, tag);
STATUS_SET(error, MPI_ERROR, error);
