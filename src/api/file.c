/*
 * MPI-IO entry points other than data access (file_access.c): open, close, delete, sizes,
 * views, hints, atomicity, file pointers, error handlers, handle conversion. The files
 * themselves are src/io's (io.h).
 *
 * An MPI_File is a pointer to the mf_file (the MPICH ABI makes it a pointer); the ones open are
 * kept in a table, so that a stale or made-up handle is refused with MPI_ERR_FILE, and its index
 * is the Fortran handle. Errors go to the file's handler; those of calls without a file
 * (MPI_File_open, MPI_File_delete) to the handler of MPI_FILE_NULL, which new files inherit
 * and which is MPI_ERRORS_RETURN until the program changes it (MPI-4.0 section 9.7).
 */
#include <stdlib.h>
#include <string.h>

#include "api/file_api.h"
#include "api/memkind.h"
#include "comm/info.h"

static mf_file **open_files;
static int nopen_files;
static mf_errhandler *default_errh; /* MPI_FILE_NULL's */

static mf_errhandler *file_null_errh(void)
{
    if (!default_errh) {
        default_errh = mf_errhandler_get(MPI_ERRORS_RETURN);
        mf_errhandler_retain(default_errh);
    }
    return default_errh;
}

/* The dispatch to handler eh of a code raised on `fh` (named `name` when fatal). */
static int file_dispatch(mf_errhandler *eh, MPI_File fh, const char *name, int code, const char *fn)
{
    switch (eh->eh_kind) {
    case MF_ERRH_RETURN:
        return code;
    case MF_ERRH_FILE:
        ((MPI_File_errhandler_function *)eh->eh_fn)(&fh, &code);
        return code;
    default:
        mf_err_die(code, fn, name);
    }
}

int mf_err_file(mf_file *f, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return code;
    return f ? file_dispatch(f->errh, f, f->name, code, fn)
             : file_dispatch(file_null_errh(), MPI_FILE_NULL, "MPI_FILE_NULL", code, fn);
}

mf_file *mf_file_lookup(MPI_File fh)
{
    for (int i = 0; i < nopen_files; i++)
        if (open_files[i] && open_files[i] == fh)
            return fh;
    return NULL;
}

int mf_check_file(MPI_File fh, mf_file **out, const char *fn)
{
    int rc = mf_check_initialized(fn);
    if (rc)
        return rc;
    if ((*out = mf_file_lookup(fh)))
        return MPI_SUCCESS;
    return mf_error(MPI_ERR_FILE, "%s: fh=%p is not an open file", fn, (void *)fh);
}

static int file_register(mf_file *f, const char *fn)
{
    for (int i = 0; i < nopen_files; i++)
        if (!open_files[i]) {
            open_files[i] = f;
            return MPI_SUCCESS;
        }
    mf_file **t = realloc(open_files, (size_t)(nopen_files + 1) * sizeof *t);
    if (!t)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a file handle", fn);
    open_files = t;
    open_files[nopen_files++] = f;
    return MPI_SUCCESS;
}

static void file_unregister(mf_file *f)
{
    for (int i = 0; i < nopen_files; i++)
        if (open_files[i] == f)
            open_files[i] = NULL;
}

/* The entry points that only look at a file or ask io.h one thing of it: the file checked, the
 * output argument (if any) checked against NULL, then `what`, an expression giving the code. */
#define FILE_QUERY(Name, T, out, what)                                                             \
    int PMPI_File_##Name(MPI_File fh, T *out)                                                      \
    {                                                                                              \
        const char *fn = "MPI_File_" #Name;                                                        \
        MF_API_ENTER();                                                                            \
        mf_file *f = NULL;                                                                         \
        int rc = mf_check_file(fh, &f, fn);                                                        \
        if (!rc && !out)                                                                           \
            rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, #out);                                \
        if (!rc)                                                                                   \
            rc = (what);                                                                           \
        MF_API_EXIT();                                                                             \
        return mf_err_file(f, rc, fn);                                                             \
    }                                                                                              \
    MF_API_ALIAS(File_##Name);
#define FILE_COMMAND(Name, PARAMS, what)                                                           \
    int PMPI_File_##Name PARAMS                                                                    \
    {                                                                                              \
        const char *fn = "MPI_File_" #Name;                                                        \
        MF_API_ENTER();                                                                            \
        mf_file *f = NULL;                                                                         \
        int rc = mf_check_file(fh, &f, fn);                                                        \
        if (!rc)                                                                                   \
            rc = (what);                                                                           \
        MF_API_EXIT();                                                                             \
        return mf_err_file(f, rc, fn);                                                             \
    }                                                                                              \
    MF_API_ALIAS(File_##Name);

/* A copy of the hints the file keeps (an empty info if none) with the collective buffering
 * hints in effect and the kinds of memory it supports (api/memkind.h), as a new user handle. */
static int file_info_copy(const mf_file *f, MPI_Info *out)
{
    mf_info *copy = NULL;
    int rc = f->info ? mf_info_dup(f->info, &copy) : mf_info_new(&copy);
    if (!rc)
        rc = mf_memkind_report(copy, f->comm, f->info);
    if (!rc)
        rc = mf_io_hints_report(f, copy);
    if (!rc)
        rc = mf_info_to_handle(copy, out); /* the user's reference */
    mf_info_release(copy);
    return rc;
}

/* The individual file pointer (which a file opened MPI_MODE_SEQUENTIAL does not have). */
static int file_position(const mf_file *f, MPI_Offset *offset, const char *fn)
{
    int rc = mf_io_not_sequential(f, fn);
    if (!rc)
        *offset = f->pos;
    return rc;
}

FILE_COMMAND(set_size, (MPI_File fh, MPI_Offset size), mf_io_set_size(f, size, false, fn))
FILE_COMMAND(preallocate, (MPI_File fh, MPI_Offset size), mf_io_set_size(f, size, true, fn))
FILE_COMMAND(sync, (MPI_File fh), mf_io_sync(f, fn))
FILE_QUERY(get_size, MPI_Offset, size, mf_io_get_size(f, size, fn))
FILE_QUERY(get_group, MPI_Group, group, mf_group_to_handle(f->comm->c_group, group))
FILE_QUERY(get_amode, int, amode, (*amode = f->amode, MPI_SUCCESS))
FILE_QUERY(get_atomicity, int, flag, (*flag = f->atomic, MPI_SUCCESS))
FILE_QUERY(get_info, MPI_Info, info_used, file_info_copy(f, info_used))
FILE_QUERY(get_position, MPI_Offset, offset, file_position(f, offset, fn))
FILE_QUERY(get_position_shared, MPI_Offset, offset, mf_io_shared_fetch_add(f, 0, offset, fn))

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    const char *fn = "MPI_File_open";
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_info *in = NULL;
    mf_file *f = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && c->c_is_inter)
        rc = mf_error(MPI_ERR_COMM, "%s: comm is an intercommunicator", fn);
    if (!rc && (!filename || !fh))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !filename ? "filename" : "fh");
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    if (!rc)
        rc = mf_io_open(c, filename, amode, in, &f, fn);
    if (!rc) {
        f->errh = file_null_errh();
        mf_errhandler_retain(f->errh);
        if ((rc = file_register(f, fn))) {
            mf_io_close(f, fn);
            f = NULL;
        }
    }
    if (fh)
        *fh = rc ? MPI_FILE_NULL : f;
    MF_API_EXIT();
    return mf_err_file(NULL, rc, fn);
}
MF_API_ALIAS(File_open);

int PMPI_File_close(MPI_File *fh)
{
    const char *fn = "MPI_File_close";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = fh ? mf_check_file(*fh, &f, fn) : mf_error(MPI_ERR_ARG, "%s: fh is NULL", fn);
    mf_errhandler *eh = NULL;
    if (!rc) {
        file_unregister(f);
        eh = f->errh;
        mf_errhandler_retain(eh); /* errors of the close go to the closed file's handler */
        rc = mf_io_close(f, fn);
        *fh = MPI_FILE_NULL;
    }
    if (eh && !rc) {
        mf_errhandler_release(eh);
        eh = NULL;
    }
    MF_API_EXIT();
    if (!eh)
        return mf_err_file(NULL, rc, fn);
    /* the file is gone: its handler, given MPI_FILE_NULL */
    rc = file_dispatch(eh, MPI_FILE_NULL, "a closed file", rc, fn);
    MF_API_ENTER(); /* handlers are counted under the lock */
    mf_errhandler_release(eh);
    MF_API_EXIT();
    return rc;
}
MF_API_ALIAS(File_close);

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    const char *fn = "MPI_File_delete";
    MF_API_ENTER();
    mf_info *in = NULL;
    int rc = mf_check_initialized(fn);
    if (!rc && !filename)
        rc = mf_error(MPI_ERR_ARG, "%s: filename is NULL", fn);
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    if (!rc)
        rc = mf_io_delete(filename, fn);
    MF_API_EXIT();
    return mf_err_file(NULL, rc, fn);
}
MF_API_ALIAS(File_delete);

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *fn = "MPI_File_set_info";
    MF_API_ENTER();
    mf_file *f = NULL;
    mf_info *in = NULL, *copy = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    if (!rc && in)
        rc = mf_info_dup(in, &copy);
    if (!rc) /* the I/O thread reads the hints and the views */
        rc = mf_io_quiesce(f);
    if (f) /* collective: the collective buffering hints change on every rank or on none */
        rc = mf_io_agree(f->comm, rc, fn);
    if (!rc && in) { /* kept to be read back */
        mf_info_release(f->info);
        f->info = copy;
        copy = NULL;
    }
    if (!rc) { /* the collective buffering ones take effect (rank 0's, on every rank) */
        mf_io_hints_read(f, in);
        rc = mf_io_views_share(f, fn);
    }
    mf_info_release(copy);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_set_info);

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    const char *fn = "MPI_File_set_view";
    MF_API_ENTER();
    mf_file *f = NULL;
    mf_datatype *et = NULL, *ft = NULL;
    mf_info *in = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc && (rc = mf_check_datatype(etype, &et, fn)))
        rc = mf_error(MPI_ERR_TYPE, "%s: etype is not a valid committed datatype", fn);
    if (!rc && (rc = mf_check_datatype(filetype, &ft, fn)))
        rc = mf_error(MPI_ERR_TYPE, "%s: filetype is not a valid committed datatype", fn);
    if (!rc && !datarep)
        rc = mf_error(MPI_ERR_ARG, "%s: datarep is NULL", fn);
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    if (!rc && disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        rc = mf_error(MPI_ERR_ARG,
                      "%s: disp=MPI_DISPLACEMENT_CURRENT is only for files opened with "
                      "MPI_MODE_SEQUENTIAL",
                      fn);
    if (!rc && disp == MPI_DISPLACEMENT_CURRENT) {
        /* Where the shared pointer is, in bytes: no shared access runs during this collective,
         * so every rank reads the same place without another message. */
        MPI_Offset shared = 0;
        if (!(rc = mf_io_shared_fetch_add(f, 0, &shared, fn)))
            disp = mf_io_byte_offset(f, shared);
    }
    if (!rc && f->split_req)
        rc = mf_error(MPI_ERR_OTHER, "%s: a split collective access is still under way", fn);
    if (!rc) /* the I/O thread reads the view */
        rc = mf_io_quiesce(f);
    if (!rc)
        rc = mf_io_set_view(f, disp, et, ft, datarep, fn);
    if (f) /* collective: the shared file pointer goes to 0 too, where every rank succeeded */
        rc = mf_io_agree(f->comm, rc, fn);
    if (!rc)
        rc = mf_io_shared_set(f, 0, fn);
    if (!rc) { /* the views, and hints given here, for collective accesses */
        mf_io_hints_read(f, in);
        rc = mf_io_views_share(f, fn);
    }
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_set_view);

/* A type handed out by MPI_File_get_view: predefined as is, derived as a new duplicate (the
 * standard lets the caller free it). */
static MPI_Datatype file_view_type(const mf_datatype *dt)
{
    MPI_Datatype h = mf_datatype_info(dt)->dt_handle, dup = MPI_DATATYPE_NULL;
    if (mf_datatype_info(dt)->dt_builtin)
        return h;
    return PMPI_Type_dup(h, &dup) == MPI_SUCCESS ? dup : MPI_DATATYPE_NULL;
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    const char *fn = "MPI_File_get_view";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc && (!disp || !etype || !filetype || !datarep))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn,
                      !disp       ? "disp"
                      : !etype    ? "etype"
                      : !filetype ? "filetype"
                                  : "datarep");
    if (!rc) {
        *disp = f->view.disp;
        *etype = file_view_type(f->etype);
        *filetype = file_view_type(f->filetype);
        memcpy(datarep, f->datarep, strlen(f->datarep) + 1);
    }
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_get_view);

static int file_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent, const char *fn)
{
    MF_API_ENTER();
    mf_file *f = NULL;
    mf_datatype *dt = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc)
        rc = mf_check_datatype(datatype, &dt, fn);
    if (!rc && !extent)
        rc = mf_error(MPI_ERR_ARG, "%s: extent is NULL", fn);
    if (!rc) /* in the view's representation (memory's for "native") */
        rc = mf_io_datarep_extent(f->rep, dt, extent);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Count e = 0;
    int rc = file_type_extent(fh, datatype, extent ? &e : NULL, "MPI_File_get_type_extent");
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return rc;
}
MF_API_ALIAS(File_get_type_extent);

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    return file_type_extent(fh, datatype, extent, "MPI_File_get_type_extent_c");
}
MF_API_ALIAS(File_get_type_extent_c);

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *fn = "MPI_File_set_atomicity";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc) {
        int mine[2] = {flag != 0, flag == 0}, all[2];
        rc = mf_coll_allreduce(mine, all, 2, mf_datatype_get(MPI_INT), mf_op_get(MPI_MAX), f->comm);
        if (!rc && all[0] && all[1])
            rc = mf_error(MPI_ERR_NOT_SAME, "%s: the ranks gave different flags", fn);
    }
    if (!rc && (rc = mf_io_quiesce(f)) == MPI_SUCCESS) /* the I/O thread reads it */
        f->atomic = flag != 0;
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_set_atomicity);

/* The view offset `offset` from `whence` (MPI_SEEK_*), given the pointer's current value. */
static int file_seek_target(mf_file *f, MPI_Offset offset, int whence, MPI_Offset current,
                            MPI_Offset *out, const char *fn)
{
    MPI_Offset base = 0, size;
    int rc = MPI_SUCCESS;
    if (whence == MPI_SEEK_CUR)
        base = current;
    else if (whence == MPI_SEEK_END && !(rc = mf_io_get_size(f, &size, fn)))
        base = mf_io_view_end(f, size);
    else if (whence != MPI_SEEK_SET && whence != MPI_SEEK_END)
        rc =
            mf_error(MPI_ERR_ARG, "%s: whence=%d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END",
                     fn, whence);
    if (!rc && base + offset < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: offset=%lld lands before the start of the view", fn,
                      (long long)offset);
    if (!rc)
        *out = base + offset;
    return rc;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc)
        rc = mf_io_not_sequential(f, fn);
    if (!rc)
        rc = file_seek_target(f, offset, whence, f->pos, &f->pos, fn);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_seek);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *fn = "MPI_File_get_byte_offset";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc && !disp)
        rc = mf_error(MPI_ERR_ARG, "%s: disp is NULL", fn);
    if (!rc && offset < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: offset=%lld is negative", fn, (long long)offset);
    if (!rc)
        *disp = mf_io_byte_offset(f, offset);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_get_byte_offset);

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek_shared";
    MF_API_ENTER();
    mf_file *f = NULL;
    MPI_Offset current = 0, target = 0;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc) /* collective: every rank reads the same value */
        rc = mf_coll_barrier(f->comm);
    if (!rc && whence == MPI_SEEK_CUR)
        rc = mf_io_shared_fetch_add(f, 0, &current, fn);
    if (!rc)
        rc = file_seek_target(f, offset, whence, current, &target, fn);
    if (!rc) {
        MPI_Offset both[2] = {target, -target}, all[2];
        rc = mf_coll_allreduce(both, all, 2, mf_datatype_get(MPI_OFFSET), mf_op_get(MPI_MAX),
                               f->comm);
        if (!rc && all[0] != -all[1])
            rc = mf_error(MPI_ERR_NOT_SAME, "%s: the ranks asked for different positions", fn);
    }
    if (!rc)
        rc = mf_io_shared_set(f, target, fn);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_seek_shared);

/* ---- Error handlers ------------------------------------------------------------------------ */

int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_File_create_errhandler";
    MF_API_ENTER();
    mf_errhandler *eh;
    int rc = mf_check_initialized(fn);
    if (!rc && (!file_errhandler_fn || !errhandler))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn,
                      !file_errhandler_fn ? "file_errhandler_fn" : "errhandler");
    if (!rc && !(rc = mf_errhandler_new(MF_ERRH_FILE, (void (*)(void))file_errhandler_fn, &eh)))
        *errhandler = eh->eh_handle;
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(File_create_errhandler);

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_File_set_errhandler";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = file == MPI_FILE_NULL ? mf_check_initialized(fn) : mf_check_file(file, &f, fn);
    mf_errhandler *eh = rc ? NULL : mf_errhandler_get(errhandler);
    if (!rc && !mf_errhandler_fits(eh, MF_ERRH_FILE))
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x is not an error handler for files", fn,
                      (unsigned)errhandler);
    if (!rc) {
        mf_errhandler **slot = f ? &f->errh : &default_errh;
        file_null_errh();
        mf_errhandler_retain(eh);
        mf_errhandler_release(*slot);
        *slot = eh;
    }
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_File_get_errhandler";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = file == MPI_FILE_NULL ? mf_check_initialized(fn) : mf_check_file(file, &f, fn);
    if (!rc && !errhandler)
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    if (!rc) {
        mf_errhandler *eh = f ? f->errh : file_null_errh();
        mf_errhandler_retain(eh);
        *errhandler = eh->eh_handle;
    }
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}
MF_API_ALIAS(File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *fn = "MPI_File_call_errhandler";
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = fh == MPI_FILE_NULL ? mf_check_initialized(fn) : mf_check_file(fh, &f, fn);
    MF_API_EXIT(); /* the user's handler runs unlocked */
    if (rc)
        return mf_err_file(NULL, rc, fn);
    mf_err_file(f, errorcode, fn);
    return MPI_SUCCESS;
}
MF_API_ALIAS(File_call_errhandler);

/* ---- Fortran handles: the index in the table of open files, plus one (0 is MPI_FILE_NULL) --- */

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    if (file == MPI_FILE_NULL)
        return 0;
    for (int i = 0; i < nopen_files; i++)
        if (open_files[i] == file)
            return (MPI_Fint)(i + 1);
    return -1;
}
MF_API_ALIAS(File_c2f);

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return file >= 1 && file <= nopen_files ? open_files[file - 1] : MPI_FILE_NULL;
}
MF_API_ALIAS(File_f2c);

/* ---- Data representations ------------------------------------------------------------------ */

/* One of the two forms of conversion functions is given (the other's are NULL). */
static int file_register_datarep(const char *datarep, MPI_Datarep_conversion_function *read,
                                 MPI_Datarep_conversion_function *write,
                                 MPI_Datarep_conversion_function_c *read_c,
                                 MPI_Datarep_conversion_function_c *write_c,
                                 MPI_Datarep_extent_function *extent_fn, void *extra_state,
                                 const char *fn)
{
    MF_API_ENTER();
    int rc = mf_check_initialized(fn);
    if (!rc && (!datarep || !extent_fn))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn,
                      !datarep ? "datarep" : "dtype_file_extent_fn");
    if (!rc)
        rc = mf_io_datarep_register(datarep, read, write, read_c, write_c, extent_fn, extra_state,
                                    fn);
    MF_API_EXIT();
    return mf_err_file(NULL, rc, fn);
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return file_register_datarep(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL,
                                 dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}
MF_API_ALIAS(Register_datarep);

int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return file_register_datarep(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn,
                                 dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}
MF_API_ALIAS(Register_datarep_c);
