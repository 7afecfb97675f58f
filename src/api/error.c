/*
 * The error API (MPI-4.0 section 9.4-9.5): MPI_Error_class, MPI_Error_string, and the classes,
 * codes and strings a program adds with MPI_Add_error_class/code/string.
 *
 * Added classes and codes share one counter starting at MF_ERR_DYNAMIC_BASE, above every code
 * core/error.c builds (class | slot << 7), so the two kinds never overlap; each added value
 * records its class (a class is its own class) and an optional text.
 * (MPI_Error_class and MPI_Error_string moved here from env.c.)
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

typedef struct mf_error_added {
    int e_class;
    char *e_text; /* NULL until MPI_Add_error_string */
} mf_error_added;

static mf_error_added *mf_errors_added;
static int mf_errors_count, mf_errors_cap;

int mf_error_last_used(void)
{
    return mf_errors_count ? MF_ERR_DYNAMIC_BASE + mf_errors_count - 1 : MPI_ERR_LASTCODE;
}

int mf_error_dynamic(int code, int *err_class, const char **text)
{
    if (code < MF_ERR_DYNAMIC_BASE || code - MF_ERR_DYNAMIC_BASE >= mf_errors_count)
        return MPI_ERR_ARG;
    mf_error_added *e = &mf_errors_added[code - MF_ERR_DYNAMIC_BASE];
    if (err_class)
        *err_class = e->e_class;
    if (text)
        *text = e->e_text ? e->e_text : "";
    return MPI_SUCCESS;
}

/* A predefined class, or an added class (not an added code). */
static bool mf_error_is_class(int c)
{
    int cls;
    if (c >= MF_ERR_DYNAMIC_BASE)
        return mf_error_dynamic(c, &cls, NULL) == MPI_SUCCESS && cls == c;
    return c >= 0 && c <= MF_ERR_CLASS_MASK && mf_error_class_text(c) != NULL;
}

static int mf_error_add(int err_class, int *out)
{
    if (mf_errors_count == INT_MAX - MF_ERR_DYNAMIC_BASE)
        return mf_error(MPI_ERR_NO_MEM, "no error codes left to add (%d added)", mf_errors_count);
    if (mf_errors_count == mf_errors_cap) {
        int cap = mf_errors_cap ? 2 * mf_errors_cap : 16;
        mf_error_added *n = realloc(mf_errors_added, (size_t)cap * sizeof *n);
        if (!n)
            return mf_error(MPI_ERR_NO_MEM, "out of memory for a new error code");
        mf_errors_added = n;
        mf_errors_cap = cap;
    }
    int code = MF_ERR_DYNAMIC_BASE + mf_errors_count;
    mf_errors_added[mf_errors_count++] = (mf_error_added){err_class < 0 ? code : err_class, NULL};
    *out = code;
    return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
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
    return mf_err_world(rc, "MPI_Error_class");
}
MF_API_ALIAS(Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
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
    return mf_err_world(rc, "MPI_Error_string");
}
MF_API_ALIAS(Error_string);

int PMPI_Add_error_class(int *errorclass)
{
    int rc = mf_check_initialized("MPI_Add_error_class");
    if (!rc && !errorclass)
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_class: errorclass is NULL");
    if (!rc)
        rc = mf_error_add(-1, errorclass);
    return mf_err_world(rc, "MPI_Add_error_class");
}
MF_API_ALIAS(Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    int rc = mf_check_initialized("MPI_Add_error_code");
    if (!rc && !errorcode)
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_code: errorcode is NULL");
    if (!rc && !mf_error_is_class(errorclass))
        rc = mf_error(MPI_ERR_ARG, "MPI_Add_error_code: errorclass=%d is not an error class",
                      errorclass);
    if (!rc)
        rc = mf_error_add(errorclass, errorcode);
    return mf_err_world(rc, "MPI_Add_error_code");
}
MF_API_ALIAS(Add_error_code);

int PMPI_Add_error_string(int errorcode, const char *string)
{
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
    if (!rc) {
        char *t = strdup(string);
        if (!t)
            rc = mf_error(MPI_ERR_NO_MEM, "MPI_Add_error_string: out of memory");
        else {
            mf_error_added *e = &mf_errors_added[errorcode - MF_ERR_DYNAMIC_BASE];
            free(e->e_text);
            e->e_text = t;
        }
    }
    return mf_err_world(rc, "MPI_Add_error_string");
}
MF_API_ALIAS(Add_error_string);
