/*
 * error_added.c — the table of error classes, codes and texts a program adds with
 * MPI_Add_error_class/code/string (the entry points are in src/api/error.c; the table lives here
 * because core's error strings and error handlers read it, and core must not reach up into api).
 *
 * Added classes and codes share one counter starting at MF_ERR_DYNAMIC_BASE, above every code
 * error.c builds (class | slot << 7), so the two kinds never overlap; each added value records
 * its class (a class is its own class) and an optional text. Callers hold the library lock.
 *
 * MPI-4.1 lets a program remove them again (MPI_Remove_error_string/code/class, in that order:
 * a value's text before the value, a class's codes before the class). A removed value is no
 * longer a class or code; its slot is reused by the next MPI_Add_error_*, so that a library
 * that adds and removes its errors in every session does not grow the table.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct mf_error_added {
    int e_class;  /* 0: removed (no added code has class MPI_SUCCESS) */
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
    if (!e->e_class)
        return MPI_ERR_ARG;
    if (err_class)
        *err_class = e->e_class;
    if (text)
        *text = e->e_text ? e->e_text : "";
    return MPI_SUCCESS;
}

bool mf_error_is_class(int c)
{
    int cls;
    if (c >= MF_ERR_DYNAMIC_BASE)
        return mf_error_dynamic(c, &cls, NULL) == MPI_SUCCESS && cls == c;
    return c >= 0 && c <= MF_ERR_CLASS_MASK && mf_error_class_text(c) != NULL;
}

int mf_error_add(int err_class, int *out)
{
    for (int i = 0; i < mf_errors_count; i++) {
        if (!mf_errors_added[i].e_class) { /* a removed one's slot */
            int code = MF_ERR_DYNAMIC_BASE + i;
            mf_errors_added[i] = (mf_error_added){err_class < 0 ? code : err_class, NULL};
            *out = code;
            return MPI_SUCCESS;
        }
    }
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

int mf_error_add_text(int code, const char *text)
{
    if (mf_error_dynamic(code, NULL, NULL))
        return MPI_ERR_ARG;
    char *t = strdup(text);
    if (!t)
        return MPI_ERR_NO_MEM;
    mf_error_added *e = &mf_errors_added[code - MF_ERR_DYNAMIC_BASE];
    free(e->e_text);
    e->e_text = t;
    return MPI_SUCCESS;
}

/* The text of an added value. */
static int mf_error_remove_text(int code, const char *fn)
{
    const char *text;
    if (mf_error_dynamic(code, NULL, &text) || !*text)
        return mf_error(MPI_ERR_ARG,
                        "%s: errorcode=%d has no string added by "
                        "MPI_Add_error_string",
                        fn, code);
    mf_error_added *e = &mf_errors_added[code - MF_ERR_DYNAMIC_BASE];
    free(e->e_text);
    e->e_text = NULL;
    return MPI_SUCCESS;
}

int mf_error_remove(int code, mf_error_removal removal, const char *fn)
{
    if (removal == MF_ERROR_REMOVE_TEXT)
        return mf_error_remove_text(code, fn);
    int cls;
    bool is_class = removal == MF_ERROR_REMOVE_CLASS;
    const char *what = is_class ? "errorclass" : "errorcode";
    if (mf_error_dynamic(code, &cls, NULL) || (cls == code) != is_class)
        return mf_error(MPI_ERR_ARG, "%s: %s=%d was not added by MPI_Add_error_%s (or was removed)",
                        fn, what, code, is_class ? "class" : "code");
    mf_error_added *e = &mf_errors_added[code - MF_ERR_DYNAMIC_BASE];
    if (e->e_text)
        return mf_error(MPI_ERR_ARG,
                        "%s: %s=%d still has its string (remove it first with "
                        "MPI_Remove_error_string)",
                        fn, what, code);
    for (int i = 0; is_class && i < mf_errors_count; i++)
        if (mf_errors_added[i].e_class == code && MF_ERR_DYNAMIC_BASE + i != code)
            return mf_error(MPI_ERR_ARG,
                            "%s: errorclass=%d still has error code %d (remove its "
                            "codes first with MPI_Remove_error_code)",
                            fn, code, MF_ERR_DYNAMIC_BASE + i);
    *e = (mf_error_added){0};
    while (mf_errors_count && !mf_errors_added[mf_errors_count - 1].e_class)
        mf_errors_count--; /* MPI_LASTUSEDCODE comes down with the last value in use */
    return MPI_SUCCESS;
}
