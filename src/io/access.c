/*
 * access.c — moving data between a user buffer and the file through the view.
 *
 * The user's count elements of dt form a stream of bytes (the packed order); the view gives the
 * file bytes that stream goes to, from byte offset * etype_size of the view's own stream. The
 * data moves in chunks of at most IO_CHUNK bytes: each chunk is packed into (or unpacked from) a
 * bounce buffer unless dt is contiguous, and its view bytes are cut into runs that are
 * contiguous in the file, each one pread or pwrite (runs that touch are merged).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"
#include "io/io.h"

#define IO_CHUNK ((size_t)4 << 20)

/* Reads or writes len bytes at file position at; returns bytes moved (a read stops at the end of
 * the file), or -1 with errno. */
static ssize_t io_run(int fd, bool write, char *mem, size_t len, MPI_Offset at)
{
    size_t moved = 0;
    while (moved < len) {
        ssize_t n = write ? pwrite(fd, mem + moved, len - moved, (off_t)(at + (MPI_Offset)moved))
                          : pread(fd, mem + moved, len - moved, (off_t)(at + (MPI_Offset)moved));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break; /* end of file (reads only) */
        moved += (size_t)n;
    }
    return (ssize_t)moved;
}

/* Moves the view bytes [s, s + len) to or from mem; *moved gets the bytes moved (short at the end
 * of the file). */
static int io_view_bytes(mf_file *f, bool write, char *mem, size_t len, MPI_Offset s, size_t *moved,
                         const char *fn)
{
    *moved = 0;
    while (*moved < len) {
        /* A run: from view byte v to the end of its piece, extended over the pieces that follow
         * it in the file without a gap. */
        MPI_Offset v = s + (MPI_Offset)*moved, avail;
        MPI_Offset at = mf_io_view_piece(f, v, &avail), next_avail;
        size_t run = (size_t)avail;
        while (run < len - *moved &&
               mf_io_view_piece(f, v + (MPI_Offset)run, &next_avail) == at + (MPI_Offset)run)
            run += (size_t)next_avail;
        if (run > len - *moved)
            run = len - *moved;
        ssize_t n = io_run(f->fd, write, mem + *moved, run, at);
        if (n < 0)
            return mf_io_errno(errno, write ? "write" : "read", f->name, fn);
        *moved += (size_t)n;
        if ((size_t)n < run)
            break; /* end of file */
    }
    return MPI_SUCCESS;
}

/* Atomic mode: a POSIX record lock over the file bytes of view bytes [s, s + len). */
static int io_lock(mf_file *f, bool write, MPI_Offset s, size_t len, const char *fn)
{
    MPI_Offset avail, first = mf_io_view_piece(f, s, &avail),
                      last = mf_io_view_piece(f, s + (MPI_Offset)len - 1, &avail) + 1;
    struct flock fl = {.l_type = write ? F_WRLCK : F_RDLCK,
                       .l_whence = SEEK_SET,
                       .l_start = (off_t)first,
                       .l_len = (off_t)(last - first)};
    while (fcntl(f->fd, F_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return mf_io_errno(errno, write ? "lock for writing" : "lock for reading", f->name, fn);
    return MPI_SUCCESS;
}

int mf_io_rw(mf_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count, mf_datatype *dt,
             size_t *done, const char *fn)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    size_t total = (size_t)count * t->dt_size;
    *done = 0;
    if (offset < 0)
        return mf_error(MPI_ERR_ARG, "%s: offset=%lld is negative", fn, (long long)offset);
    if (write && (f->amode & MPI_MODE_RDONLY))
        return mf_error(MPI_ERR_READ_ONLY, "%s: %s was opened MPI_MODE_RDONLY", fn, f->name);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return mf_error(MPI_ERR_ACCESS, "%s: %s was opened MPI_MODE_WRONLY", fn, f->name);
    if (total == 0)
        return MPI_SUCCESS;
    if (total % f->etype_size != 0)
        return mf_error(MPI_ERR_TYPE,
                        "%s: %zu bytes of data are not a whole number of etypes (%zu bytes each)",
                        fn, total, f->etype_size);
    MPI_Offset s = offset * (MPI_Offset)f->etype_size;
    int rc = f->atomic ? io_lock(f, write, s, total, fn) : MPI_SUCCESS;
    if (rc)
        return rc;
    char *contig = t->dt_contig ? (char *)buf + t->dt_true_lb : NULL;
    char *bounce = contig ? NULL : malloc(total < IO_CHUNK ? total : IO_CHUNK);
    if (!contig && !bounce)
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a %zu-byte bounce buffer", fn,
                      total < IO_CHUNK ? total : IO_CHUNK);
    for (size_t u = 0; !rc && u < total;) {
        size_t len = total - u < IO_CHUNK ? total - u : IO_CHUNK, moved = 0;
        char *mem = contig ? contig + u : bounce;
        if (write && !contig)
            mf_datatype_pack(dt, buf, (size_t)count, u, bounce, len);
        rc = io_view_bytes(f, write, mem, len, s + (MPI_Offset)u, &moved, fn);
        if (!write && !contig && moved)
            mf_datatype_unpack(dt, buf, (size_t)count, u, bounce, moved);
        u += moved;
        *done = u;
        if (moved < len)
            break; /* end of file */
    }
    free(bounce);
    if (f->atomic) {
        struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET};
        fcntl(f->fd, F_SETLK, &fl);
    }
    return rc;
}
