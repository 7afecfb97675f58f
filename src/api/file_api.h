/*
 * file_api.h — what the MPI-IO entry points (file.c, file_access.c) share: the check of a file
 * handle and the dispatch of an error to a file's handler.
 */
#ifndef MF_API_FILE_API_H
#define MF_API_FILE_API_H

#include "api/api.h"
#include "coll/coll.h"
#include "coll/op.h"
#include "io/io.h"

/* Resolves an open file; MPI_ERR_FILE naming the handle otherwise. */
int mf_check_file(MPI_File fh, mf_file **out, const char *fn);
/* The open file fh is, or NULL (no error is recorded). */
mf_file *mf_file_lookup(MPI_File fh);
/* Dispatches a non-success code to f's handler (NULL: MPI_FILE_NULL's, which is
 * MPI_ERRORS_RETURN unless the program set another). Call unlocked: a user handler may run. */
int mf_err_file(mf_file *f, int code, const char *fn);

#endif
