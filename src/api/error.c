/*
 * The error API (MPI-4.0 section 9.4-9.5): MPI_Error_class, MPI_Error_string, and the classes,
 * codes and strings a program adds with MPI_Add_error_class/code/string.
 *
 * The table of added classes, codes and texts is core's (src/core/error_added.c): core's error
 * strings and handlers read it. These entry points check arguments and fill it.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

int PMPI_Error_class(int errorcode, int *errorclass)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    if (!errorclass)
        rc = mf_error(MPI_ERR_ARG, "MPI_Error_class: errorclass is NULL");
    else if (errorcode >= MF_ERR_DYNAMIC_BASE) {
        if (mf_error_dynamic(errorcode, errorclass, NULL))
            rc = mf_error(MPI_ERR_ARG, "MPI_Error_class: errorcode=%d is not a valid error code",
                          errorcode);
    } else if (errorcode < 0 || !mf_error_class_text(mf_error_class(errorcode)))
        rc = mf_error(MPI_ERR_ARG, "MPI_Error_class: errorcode=%d is not a valid error code",
                      errorcode);
    else
        *errorclass = mf_error_class(errorcode);
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Error_class"));
}
MF_API_ALIAS(Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    const char *text;
    if (!string || !resultlen)
        rc =
            mf_error(MPI_ERR_ARG, "MPI_Error_string: %s is NULL", !string ? "string" : "resultlen");
    else if (mf_error_dynamic(errorcode, NULL, &text) == MPI_SUCCESS) {
        snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
        *resultlen = (int)strlen(string);
    } else if (mf_error_string(errorcode, string, resultlen))
        rc = mf_error(MPI_ERR_ARG, "MPI_Error_string: errorcode=%d is not a valid error code",
                      errorcode);
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Error_string"));
}
MF_API_ALIAS(Error_string);

int PMPI_Add_error_class(int *errorclass)
{
    MF_API_ENTER();
    int rc = mf_check_initialized("MPI_Add_error_class");
    if (!rc && !errorclass)
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_class: errorclass is NULL");
    if (!rc)
        rc = mf_error_add(-1, errorclass);
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Add_error_class"));
}
MF_API_ALIAS(Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    MF_API_ENTER();
    int rc = mf_check_initialized("MPI_Add_error_code");
    if (!rc && !errorcode)
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_code: errorcode is NULL");
    if (!rc && !mf_error_is_class(errorclass))
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_code: errorclass=%d is not an error class",
                      errorclass);
    if (!rc)
        rc = mf_error_add(errorclass, errorcode);
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Add_error_code"));
}
MF_API_ALIAS(Add_error_code);

int PMPI_Add_error_string(int errorcode, const char *string)
{
    MF_API_ENTER();
    int rc = mf_check_initialized("MPI_Add_error_string");
    if (!rc && !string)
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_string: string is NULL");
    if (!rc && strlen(string) >= MPI_MAX_ERROR_STRING)
        rc = mf_error(MPI_ERR_ARG,
                      "MPI_Add_error_string: string is %zu characters "
                      "(MPI_MAX_ERROR_STRING is %d)",
                      strlen(string), MPI_MAX_ERROR_STRING);
    if (!rc && mf_error_dynamic(errorcode, NULL, NULL))
        rc = mf_error(MPI_ERR_ARG,
                      "MPI_Add_error_string: errorcode=%d was not added by "
                      "MPI_Add_error_class/code (predefined texts are fixed)",
                      errorcode);
    if (!rc && mf_error_add_text(errorcode, string))
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Add_error_string: out of memory");
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Add_error_string"));
}
MF_API_ALIAS(Add_error_string);

/* MPI-4.1: what MPI_Add_error_* added can be removed, text first, then codes, then classes. */
static int error_remove(int value, mf_error_removal what, const char *fn)
{
    MF_API_ENTER();
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_error_remove(value, what, fn);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}

int PMPI_Remove_error_class(int errorclass)
{
    return error_remove(errorclass, MF_ERROR_REMOVE_CLASS, "MPI_Remove_error_class");
}
MF_API_ALIAS(Remove_error_class);

int PMPI_Remove_error_code(int errorcode)
{
    return error_remove(errorcode, MF_ERROR_REMOVE_CODE, "MPI_Remove_error_code");
}
MF_API_ALIAS(Remove_error_code);

int PMPI_Remove_error_string(int errorcode)
{
    return error_remove(errorcode, MF_ERROR_REMOVE_TEXT, "MPI_Remove_error_string");
}
MF_API_ALIAS(Remove_error_string);
