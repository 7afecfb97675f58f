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
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "io/io.h"

#define IO_CHUNK ((size_t)4 << 20)
/* Data sieving: the largest span read (and written back) at once, and how sparse the data in it
 * may be (span at most this many times the data). */
#define IO_SIEVE_MAX ((size_t)16 << 20)
#define IO_SIEVE_SPARSE 8

ssize_t mf_io_pio(int fd, bool write, char *mem, size_t len, MPI_Offset at)
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

int mf_io_record_lock(mf_file *f, short type, MPI_Offset first, MPI_Offset len, const char *fn)
{
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)first, .l_len = (off_t)len};
    while (fcntl(f->fd, type == F_UNLCK ? F_SETLK : F_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return mf_io_errno(errno, type == F_UNLCK ? "unlock" : "lock", f->name, fn);
    return MPI_SUCCESS;
}

/* Data sieving: the view bytes [s, s + len), which lie in the file bytes [first, first + span),
 * moved with one read of the span into a buffer (and for a write, the pieces copied in and the
 * span written back, under the write lock the caller holds) instead of one call per run. */
static int io_sieve(mf_file *f, bool write, char *mem, size_t len, MPI_Offset s, MPI_Offset first,
                    size_t span, size_t *moved, const char *fn)
{
    char *sieve = malloc(span);
    if (!sieve)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a %zu-byte sieve buffer", fn, span);
    ssize_t got = mf_io_pio(f->fd, false, sieve, span, first);
    if (got < 0) {
        free(sieve);
        return mf_io_errno(errno, "read", f->name, fn);
    }
    if (write)
        memset(sieve + got, 0, span - (size_t)got); /* past the end of the file: a hole */
    size_t m = len;
    if (!write) { /* the stream bytes in the file, up to its end */
        MPI_Offset in = mf_io_view_before(&f->view, first + got) - s;
        m = in < (MPI_Offset)len ? (size_t)in : len;
    }
    mf_io_view_copy(&f->view, write, s, m, mem, sieve, first);
    int rc = MPI_SUCCESS;
    if (write && mf_io_pio(f->fd, true, sieve, span, first) < 0)
        rc = mf_io_errno(errno, "write", f->name, fn);
    free(sieve);
    *moved = rc ? 0 : m;
    return rc;
}

/* Moves the view bytes [s, s + len) to or from mem; *moved gets the bytes moved (short at the end
 * of the file). Runs that are many and dense in their span are sieved (io_sieve); the others
 * are read or written one call each. A write holds a record lock over its span, so that the
 * sieve's read-modify-write of another rank never writes back stale bytes over it (atomic mode
 * holds one over the whole access already). */
static int io_view_bytes(mf_file *f, bool write, char *mem, size_t len, MPI_Offset s, size_t *moved,
                         const char *fn)
{
    size_t span;
    MPI_Offset first = mf_io_view_span(&f->view, s, len, &span);
    bool lock = write && !f->atomic;
    int rc = lock ? mf_io_record_lock(f, F_WRLCK, first, (MPI_Offset)span, fn) : MPI_SUCCESS;
    if (rc)
        return rc;
    *moved = 0;
    if (f->view.tiled && span > len && span <= IO_SIEVE_MAX && span <= IO_SIEVE_SPARSE * len &&
        f->readable) {
        rc = io_sieve(f, write, mem, len, s, first, span, moved, fn);
        len = 0; /* done */
    }
    mf_io_cursor c;
    mf_io_cursor_at(&f->view, s, &c);
    while (*moved < len) {
        size_t run;
        MPI_Offset at = mf_io_next_run(&f->view, &c, len - *moved, &run);
        ssize_t n = mf_io_pio(f->fd, write, mem + *moved, run, at);
        if (n < 0) {
            rc = mf_io_errno(errno, write ? "write" : "read", f->name, fn);
            break;
        }
        *moved += (size_t)n;
        if ((size_t)n < run)
            break; /* end of file */
    }
    if (lock) {
        int urc = mf_io_record_lock(f, F_UNLCK, first, (MPI_Offset)span, fn);
        rc = rc ? rc : urc;
    }
    return rc;
}

/* Atomic mode: a record lock over the file bytes of view bytes [s, s + len). */
static int io_lock(mf_file *f, bool write, MPI_Offset s, size_t len, const char *fn)
{
    size_t span;
    MPI_Offset first = mf_io_view_span(&f->view, s, len, &span);
    return mf_io_record_lock(f, write ? F_WRLCK : F_RDLCK, first, (MPI_Offset)span, fn);
}

int mf_io_not_sequential(const mf_file *f, const char *fn)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return mf_error(MPI_ERR_UNSUPPORTED_OPERATION,
                        "%s: %s was opened MPI_MODE_SEQUENTIAL: only the shared file pointer's "
                        "calls may read, write or move in it",
                        fn, f->name);
    return MPI_SUCCESS;
}

int mf_io_rw_check(const mf_file *f, bool write, MPI_Offset offset, size_t bytes, const char *fn)
{
    if (offset < 0)
        return mf_error(MPI_ERR_ARG, "%s: offset=%lld is negative", fn, (long long)offset);
    if (write && (f->amode & MPI_MODE_RDONLY))
        return mf_error(MPI_ERR_READ_ONLY, "%s: %s was opened MPI_MODE_RDONLY", fn, f->name);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return mf_error(MPI_ERR_ACCESS, "%s: %s was opened MPI_MODE_WRONLY", fn, f->name);
    if (bytes % f->etype_size != 0)
        return mf_error(MPI_ERR_TYPE,
                        "%s: %zu bytes of data are not a whole number of etypes (%zu bytes each)",
                        fn, bytes, f->etype_size);
    return MPI_SUCCESS;
}

int mf_io_rw(mf_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count, mf_datatype *dt,
             size_t *done, const char *fn)
{
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    size_t total = (size_t)count * t->dt_size;
    *done = 0;
    int crc = mf_io_rw_check(f, write, offset, total, fn);
    if (crc || total == 0)
        return crc;
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
    if (f->atomic)
        mf_io_record_lock(f, F_UNLCK, 0, 0, fn); /* 0 bytes: to the end of the file, all of it */
    return rc;
}
