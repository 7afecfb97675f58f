/*
 * file.c — opening, closing, deleting and sizing files, and the shared file pointer.
 *
 * MPI_File_open: rank 0 opens first (it alone creates, so that MPI_MODE_EXCL means what it
 * says), then the others; every rank learns whether all succeeded, and all fail with the first
 * failing rank's error class if any did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/comm_build.h"
#include "coll/op.h"
#include "comm/info.h"
#include "core/error.h"
#include "io/io.h"
#include "p2p/p2p.h"
#include "rma/rma.h"

int mf_io_errno(int err, const char *what, const char *name, const char *fn)
{
    int cls = err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG ? MPI_ERR_NO_SUCH_FILE
              : err == EEXIST                                        ? MPI_ERR_FILE_EXISTS
              : err == EACCES || err == EPERM                        ? MPI_ERR_ACCESS
              : err == ENOSPC                                        ? MPI_ERR_NO_SPACE
              : err == EDQUOT                                        ? MPI_ERR_QUOTA
              : err == EROFS                                         ? MPI_ERR_READ_ONLY
              : err == EISDIR || err == EINVAL                       ? MPI_ERR_BAD_FILE
              : err == ETXTBSY || err == EBUSY                       ? MPI_ERR_FILE_IN_USE
                                                                     : MPI_ERR_IO;
    return mf_error(cls, "%s: cannot %s %s: %s", fn, what, name, strerror(err));
}

static int io_amode_check(int amode, const char *fn)
{
    int rw = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) +
             (amode & MPI_MODE_WRONLY ? 1 : 0);
    int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND |
                MPI_MODE_SEQUENTIAL;
    if (rw != 1)
        return mf_error(MPI_ERR_AMODE,
                        "%s: amode=%d must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR "
                        "and MPI_MODE_WRONLY",
                        fn, amode);
    if (amode & ~known)
        return mf_error(MPI_ERR_AMODE, "%s: amode=%d holds unknown bits", fn, amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return mf_error(MPI_ERR_AMODE,
                        "%s: amode=%d: MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL", fn,
                        amode);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return mf_error(MPI_ERR_AMODE, "%s: amode=%d: MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL", fn,
                        amode);
    return MPI_SUCCESS;
}

int mf_io_agree(mf_comm *comm, int rc, const char *fn)
{
    return mf_io_agree_min(comm, rc, NULL, fn);
}

int mf_io_agree_min(mf_comm *comm, int rc, MPI_Offset *value, const char *fn)
{
    MPI_Offset mine[2] = {rc ? comm->c_rank : comm->c_size, value ? *value : 0}, least[2];
    int arc = mf_coll_allreduce(mine, least, value ? 2 : 1, mf_datatype_get(MPI_OFFSET),
                                mf_op_get(MPI_MIN), comm);
    if (arc)
        return arc;
    if (value)
        *value = least[1];
    int first = (int)least[0];
    if (first == comm->c_size)
        return MPI_SUCCESS;
    int cls = rc ? mf_error_class(rc) : 0;
    int crc = mf_coll_bcast(&cls, 1, mf_datatype_get(MPI_INT), first, comm);
    if (crc)
        return crc;
    return rc ? rc : mf_error(cls, "%s: failed on rank %d of the communicator", fn, first);
}

int mf_io_comm_dup(mf_comm *comm, mf_comm **out)
{
    int rc = mf_comm_dup_internal(comm, out);
    if (rc)
        return rc;
    /* Its handler is the one MPI_Wait and MPI_Test fall back on for the file's requests when
     * the file is gone: it returns, as a file's own handler does by default, instead of the
     * given communicator's (perhaps MPI_ERRORS_ARE_FATAL). */
    mf_errhandler_release((*out)->c_errhandler);
    (*out)->c_errhandler = mf_errhandler_get(MPI_ERRORS_RETURN);
    mf_errhandler_retain((*out)->c_errhandler);
    return MPI_SUCCESS;
}

static void io_file_free(mf_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->comm)
        mf_comm_release(f->comm);
    if (f->async_comm)
        mf_comm_release(f->async_comm);
    mf_datatype_release(f->etype);
    mf_datatype_release(f->filetype);
    mf_info_release(f->info);
    if (f->errh)
        mf_errhandler_release(f->errh);
    free(f->view.pieces);
    mf_io_views_free(f);
    mf_io_scratch_free(f);
    free(f->shared_mem);
    free(f->name);
    free(f);
}

/* open(2) of f with `flags`; for a write-only amode, O_RDWR falls back to O_WRONLY where
 * reading is not permitted (f->readable says which). Returns 0 or errno. */
static int io_open(mf_file *f, const char *name, int flags, int amode)
{
    f->fd = open(name, flags | O_CLOEXEC, 0666);
    if (f->fd < 0 && (amode & MPI_MODE_WRONLY) && (errno == EACCES || errno == EPERM))
        f->fd = open(name, (flags & ~O_ACCMODE) | O_WRONLY | O_CLOEXEC, 0666);
    else
        f->readable = f->fd >= 0;
    return f->fd < 0 ? errno : 0;
}

int mf_io_open(mf_comm *comm, const char *name, int amode, struct mf_info *info, mf_file **out,
               const char *fn)
{
    int rc = io_amode_check(amode, fn);
    int amodes[2] = {amode, -amode}, agreed[2];
    if (!rc)
        rc = mf_coll_allreduce(amodes, agreed, 2, mf_datatype_get(MPI_INT), mf_op_get(MPI_MAX),
                               comm);
    if (!rc && agreed[0] != -agreed[1])
        rc = mf_error(MPI_ERR_NOT_SAME, "%s: the ranks gave different amodes", fn);
    if (rc)
        return rc;
    mf_file *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(name))) {
        free(f);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a file", fn);
    }
    f->fd = -1;
    f->amode = amode;
    if ((rc = mf_io_comm_dup(comm, &f->comm))) {
        f->comm = NULL;
        io_file_free(f);
        return rc;
    }
    /* A write-only file is opened for reading too where the permissions allow, so that writes
     * can be sieved (access.c); amode still refuses the program's reads. */
    int flags = (amode & MPI_MODE_RDONLY) ? O_RDONLY : O_RDWR;
    /* Rank 0 creates (and alone honours EXCL); the others open what it made. */
    int err = 0;
    if (f->comm->c_rank == 0) {
        int cflags = flags | ((amode & MPI_MODE_CREATE) ? O_CREAT : 0) |
                     ((amode & MPI_MODE_EXCL) ? O_EXCL : 0);
        err = io_open(f, name, cflags, amode);
        rc = err ? mf_io_errno(err, "open", name, fn) : MPI_SUCCESS;
    }
    int rc0 = mf_coll_bcast(&err, 1, mf_datatype_get(MPI_INT), 0, f->comm);
    if (rc0) {
        io_file_free(f);
        return rc0;
    }
    if (f->comm->c_rank != 0 && !err) {
        int e = io_open(f, name, flags, amode);
        rc = e ? mf_io_errno(e, "open", name, fn) : MPI_SUCCESS;
    } else if (f->comm->c_rank != 0) {
        rc = mf_io_errno(err, "open", name, fn);
    }
    rc = mf_io_agree(f->comm, rc, fn);
    /* The view every file starts with: bytes, from byte 0; shared with the hints given. */
    mf_io_hints_read(f, info);
    if (!rc)
        rc = mf_io_set_view(f, 0, mf_datatype_get(MPI_BYTE), mf_datatype_get(MPI_BYTE), "native",
                            fn);
    rc = mf_io_agree(f->comm, rc, fn);
    if (!rc)
        rc = mf_io_views_share(f, fn);
    MPI_Offset size = 0;
    if (!rc && (amode & MPI_MODE_APPEND))
        rc = mf_io_get_size(f, &size, fn);
    if (!rc && f->comm->c_rank == 0 && !(f->shared_mem = calloc(1, sizeof *f->shared_mem)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for the shared file pointer", fn);
    if (!rc && f->shared_mem)
        *f->shared_mem = size; /* the view is bytes: etypes are bytes */
    rc = mf_io_agree(f->comm, rc, fn);
    if (!rc)
        rc = mf_win_create(MPI_WIN_FLAVOR_CREATE, f->shared_mem,
                           f->shared_mem ? (MPI_Aint)sizeof *f->shared_mem : 0,
                           (MPI_Aint)sizeof(MPI_Offset), NULL, f->comm, NULL, &f->shared_fp, fn);
    if (rc) {
        io_file_free(f);
        return rc;
    }
    f->pos = size;
    if (info && (rc = mf_info_dup(info, &f->info))) {
        mf_io_close(f, fn);
        return rc;
    }
    *out = f;
    return MPI_SUCCESS;
}

int mf_io_close(mf_file *f, const char *fn)
{
    int rc = mf_io_quiesce(f); /* a program that closes with accesses pending (erroneous) */
    if (f->split_req)          /* a split collective never ended (erroneous): done now, forgotten */
        mf_request_free(f->split_req);
    f->split_req = NULL;
    int wrc = f->shared_fp ? mf_win_free(f->shared_fp, fn) : MPI_SUCCESS;
    rc = rc ? rc : wrc;
    f->shared_fp = NULL;
    if (f->fd >= 0 && close(f->fd) != 0 && !rc)
        rc = mf_io_errno(errno, "close", f->name, fn);
    f->fd = -1;
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
        int brc = mf_coll_barrier(f->comm); /* every rank closed it */
        if (!brc && f->comm->c_rank == 0 && unlink(f->name) != 0 && !rc)
            rc = mf_io_errno(errno, "delete", f->name, fn);
        if (!rc)
            rc = brc;
    }
    io_file_free(f);
    return rc;
}

int mf_io_delete(const char *name, const char *fn)
{
    return unlink(name) == 0 ? MPI_SUCCESS : mf_io_errno(errno, "delete", name, fn);
}

int mf_io_get_size(mf_file *f, MPI_Offset *size, const char *fn)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return mf_io_errno(errno, "stat", f->name, fn);
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

int mf_io_set_size(mf_file *f, MPI_Offset size, bool grow_only, const char *fn)
{
    int rc = MPI_SUCCESS;
    if (size < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: size=%lld is negative", fn, (long long)size);
    else if (f->amode & MPI_MODE_RDONLY)
        rc = mf_error(MPI_ERR_READ_ONLY, "%s: %s was opened MPI_MODE_RDONLY", fn, f->name);
    /* Every rank is here, done with what it did to the file before (MPI_File_get_size after a
     * collective resize must not see the next one). */
    int brc = mf_coll_barrier(f->comm);
    if (brc)
        return brc;
    MPI_Offset now = 0;
    if (!rc && f->comm->c_rank == 0 && !(rc = mf_io_get_size(f, &now, fn))) {
        if (grow_only && size > now) {
            int e = posix_fallocate(f->fd, 0, (off_t)size);
            if (e)
                rc = mf_io_errno(e, "preallocate", f->name, fn);
        } else if (!grow_only && ftruncate(f->fd, (off_t)size) != 0) {
            rc = mf_io_errno(errno, "resize", f->name, fn);
        }
    }
    return mf_io_agree(f->comm, rc, fn);
}

int mf_io_sync(mf_file *f, const char *fn)
{
    int rc = fsync(f->fd) == 0 || errno == EINVAL ? MPI_SUCCESS
                                                  : mf_io_errno(errno, "sync", f->name, fn);
    return mf_io_agree(f->comm, rc, fn);
}

/* The shared file pointer's old value into *before, and its new one `op` (MPI_SUM, MPI_REPLACE)
 * of it and `value`: one fetch-and-op under an exclusive lock at rank 0. */
static int io_shared_op(mf_file *f, MPI_Offset value, MPI_Op op, MPI_Offset *before, const char *fn)
{
    MPI_Offset delta = value;
    mf_datatype *off = mf_datatype_get(MPI_OFFSET);
    mf_rma_args a = {.kind = MF_RMA_GACC,
                     .origin = &delta,
                     .origin_count = 1,
                     .origin_dt = off,
                     .result = before,
                     .result_count = 1,
                     .result_dt = off,
                     .target = 0,
                     .target_disp = 0,
                     .target_count = 1,
                     .target_dt = off,
                     .op = mf_op_get(op)};
    int rc = mf_rma_lock(f->shared_fp, MPI_LOCK_EXCLUSIVE, 0, fn);
    if (rc)
        return rc;
    rc = mf_rma_op(f->shared_fp, &a, NULL, fn);
    int urc = mf_rma_unlock(f->shared_fp, 0, fn);
    return rc ? rc : urc;
}

int mf_io_shared_fetch_add(mf_file *f, MPI_Offset delta, MPI_Offset *before, const char *fn)
{
    return io_shared_op(f, delta, MPI_SUM, before, fn);
}

int mf_io_shared_set(mf_file *f, MPI_Offset value, const char *fn)
{
    int rc = mf_coll_barrier(f->comm); /* every earlier access has taken its place */
    if (!rc && f->comm->c_rank == 0) {
        MPI_Offset before;
        rc = io_shared_op(f, value, MPI_REPLACE, &before, fn);
    }
    int brc = mf_coll_barrier(f->comm);
    return rc ? rc : brc;
}
