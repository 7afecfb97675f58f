/* Argument checks shared by entry points: see api.h. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "comm/info.h"

int mf_check_initialized(const char *function)
{
    if (!mf_g.initialized)
        return mf_error(MPI_ERR_OTHER, "%s: MPI is %s", function,
                        mf_g.finalized ? "already finalized" : "not initialized");
    return MPI_SUCCESS;
}

int mf_check_comm_slow(MPI_Comm handle, mf_comm **out, const char *function)
{
    int rc = mf_check_initialized(function);
    if (rc)
        return rc;
    if (handle == MPI_COMM_NULL)
        return mf_error(MPI_ERR_COMM, "%s: comm is MPI_COMM_NULL", function);
    mf_comm *c = mf_comm_get(handle);
    if (!c)
        return mf_error(MPI_ERR_COMM, "%s: comm=0x%x is not a valid communicator", function,
                        (unsigned)handle);
    *out = c;
    return MPI_SUCCESS;
}

int mf_check_count_slow(MPI_Count count, const char *function)
{
    if (count < 0)
        return mf_error(MPI_ERR_COUNT, "%s: count=%ld is negative", function, (long)count);
    return MPI_SUCCESS;
}

int mf_check_datatype_slow(MPI_Datatype handle, mf_datatype **out, const char *function)
{
    if (handle == MPI_DATATYPE_NULL)
        return mf_error(MPI_ERR_TYPE, "%s: datatype is MPI_DATATYPE_NULL", function);
    mf_datatype *dt = mf_datatype_get(handle);
    if (!dt)
        return mf_error(MPI_ERR_TYPE, "%s: datatype=0x%x is not a valid datatype", function,
                        (unsigned)handle);
    if (!mf_datatype_info(dt)->dt_committed)
        return mf_error(MPI_ERR_TYPE, "%s: datatype=0x%x is not committed", function,
                        (unsigned)handle);
    *out = dt;
    return MPI_SUCCESS;
}

int mf_check_not_in_place(const void *buf, const char *function, const char *bufname)
{
    if (buf == MPI_IN_PLACE)
        return mf_error(MPI_ERR_BUFFER, "%s: %s is MPI_IN_PLACE, which is not allowed here",
                        function, bufname);
    return MPI_SUCCESS;
}

int mf_api_null_name(const char *null_name, char *name, int *resultlen, const char *function)
{
    if (!name || !resultlen)
        return mf_error(MPI_ERR_ARG, "%s: %s is NULL", function, !name ? "name" : "resultlen");
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", null_name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int mf_check_data(const void *buf, MPI_Count count, MPI_Datatype type, mf_datatype **dt,
                  const char *function, const char *bufname, const char *countname)
{
    int rc = mf_check_count(count, function);
    if (!rc)
        rc = mf_check_datatype(type, dt, function);
    if (!rc)
        rc = mf_check_buffer(buf, count, *dt, function, bufname, countname);
    return rc;
}

int mf_check_info_opt(MPI_Info handle, struct mf_info **out, const char *function)
{
    *out = NULL;
    if (handle != MPI_INFO_NULL && !(*out = mf_info_get(handle)))
        return mf_error(MPI_ERR_INFO, "%s: info=0x%x is not a valid info object", function,
                        (unsigned)handle);
    return MPI_SUCCESS;
}

int mf_check_buffer(const void *buf, MPI_Count count, const mf_datatype *dt, const char *function,
                    const char *bufname, const char *countname)
{
    int rc = mf_check_not_in_place(buf, function, bufname);
    if (rc)
        return rc;
    /* MPI_BOTTOM is NULL: legal with datatypes of absolute addresses, hence the lb test. */
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    if (!buf && count > 0 && t->dt_size > 0 && t->dt_contig && t->dt_true_lb == 0)
        return mf_error(MPI_ERR_BUFFER, "%s: %s is NULL but %s=%lld", function, bufname, countname,
                        (long long)count);
    return MPI_SUCCESS;
}
