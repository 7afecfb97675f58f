/*
 * datarep.c — data representations: "native" and "internal" (the bytes as memory holds them),
 * and those the program registers (MPI_Register_datarep).
 *
 * A registered representation whose conversion functions are both MPI_CONVERSION_FN_NULL keeps
 * the data as it is in memory (MPI-4.0 section 14.5.3), so a view may use it wherever its extent
 * function gives the etype and filetype their native extents; one with conversion functions,
 * and "external32", are refused by MPI_File_set_view with MPI_ERR_UNSUPPORTED_DATAREP: Manifold
 * does not convert file data.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"

typedef struct io_datarep {
    struct io_datarep *next;
    char name[MPI_MAX_DATAREP_STRING];
    bool converts; /* a read or write conversion function was given */
    MPI_Datarep_extent_function *extent;
    void *state;
} io_datarep;

static io_datarep *datareps;

static bool io_datarep_builtin(const char *name)
{
    return strcmp(name, "native") == 0 || strcmp(name, "internal") == 0 ||
           strcmp(name, "external32") == 0;
}

static io_datarep *io_datarep_find(const char *name)
{
    for (io_datarep *d = datareps; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

int mf_io_datarep_register(const char *name, bool converts, MPI_Datarep_extent_function *extent,
                           void *state, const char *fn)
{
    if (strlen(name) >= MPI_MAX_DATAREP_STRING)
        return mf_error(MPI_ERR_ARG, "%s: datarep is longer than MPI_MAX_DATAREP_STRING - 1 (%d)",
                        fn, MPI_MAX_DATAREP_STRING - 1);
    if (io_datarep_builtin(name) || io_datarep_find(name))
        return mf_error(MPI_ERR_DUP_DATAREP, "%s: datarep \"%s\" is already defined", fn, name);
    io_datarep *d = calloc(1, sizeof *d);
    if (!d)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a datarep", fn);
    memcpy(d->name, name, strlen(name) + 1);
    d->converts = converts;
    d->extent = extent;
    d->state = state;
    d->next = datareps;
    datareps = d;
    return MPI_SUCCESS;
}

/* Whether the representation's extent of dt is its native one. */
static int io_datarep_extent_ok(const io_datarep *d, const mf_datatype *dt, const char *fn)
{
    MPI_Aint ext = 0;
    int rc = d->extent(mf_datatype_info(dt)->dt_handle, &ext, d->state);
    if (rc)
        return rc;
    if (ext != mf_datatype_info(dt)->dt_extent)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP,
                        "%s: datarep \"%s\" gives a type an extent of %ld bytes in the file "
                        "against %ld in memory; Manifold does not convert file data",
                        fn, d->name, (long)ext, (long)mf_datatype_info(dt)->dt_extent);
    return MPI_SUCCESS;
}

int mf_io_datarep_check(const char *name, const mf_datatype *etype, const mf_datatype *filetype,
                        const char *fn)
{
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0)
        return MPI_SUCCESS;
    const io_datarep *d = io_datarep_find(name);
    if (!d || d->converts)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP,
                        "%s: datarep=\"%s\": Manifold reads and writes files as memory holds the "
                        "data (\"native\", \"internal\", or a registered datarep without "
                        "conversion functions)%s",
                        fn, name, d ? "" : "; this one is not registered");
    int rc = io_datarep_extent_ok(d, etype, fn);
    return rc ? rc : io_datarep_extent_ok(d, filetype, fn);
}
