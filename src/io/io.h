/*
 * io.h — MPI-IO: files opened collectively over a communicator, read and written through a
 * view, with individual, shared and explicit-offset positions.
 *
 * What a file is here:
 *   - each process opens the file itself (POSIX open, pread, pwrite), so the ranks of a job that
 *     spans hosts need the file on a file system all of them mount (as with ROMIO's ufs driver);
 *   - the view (disp, etype, filetype) is flattened once, at MPI_File_set_view, into the byte
 *     pieces of one filetype; an access maps its place in the view's stream of bytes onto those
 *     pieces, repeated every filetype extent from disp, and moves the data between them and the
 *     user's buffer (packed or unpacked through a bounce buffer for non-contiguous types);
 *   - many small pieces dense in their span are sieved: the span is read at once, and for a
 *     write filled in and written back under a POSIX record lock; every write holds that lock
 *     over its span, so that no rank's read-modify-write undoes another's bytes;
 *   - offsets and file pointers count etypes of the view, as the standard says;
 *   - the shared file pointer is one MPI_Offset in memory of the communicator's rank 0, reached
 *     by one-sided fetch-and-add (an internal window), so it works across hosts without
 *     locks in the file system; ordered accesses take their places with an exclusive scan;
 *   - collective accesses are the independent ones done by every rank (no two-phase
 *     aggregation); nonblocking ones are done at once and return a completed request; split
 *     collectives do the work in _begin and report it in _end;
 *   - atomic mode takes a POSIX record lock over the bytes an access spans;
 *   - data representations: "native" and "internal" (the same bytes), and registered ones
 *     without conversion functions (datarep.c); "external32" and those with conversion
 *     functions are refused with MPI_ERR_UNSUPPORTED_DATAREP.
 *
 * All functions are called with the library lock held. Errors are returned as codes made with
 * mf_error; the API layer (src/api/file*.c) dispatches them to the file's error handler.
 */
#ifndef MF_IO_IO_H
#define MF_IO_IO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "comm/comm.h"
#include "core/errhandler.h"
#include "datatype/datatype.h"

struct mf_info;
struct mf_win;

/* One byte piece of the flattened filetype: at `disp` from the start of a filetype instance. */
typedef struct mf_io_piece {
    MPI_Offset disp;
    MPI_Offset len;
    MPI_Offset before; /* bytes of the filetype's stream in the pieces before this one */
} mf_io_piece;

typedef struct mf_file {
    int fd;
    bool readable; /* fd was opened for reading (a write-only amode may still be; writes sieve) */
    mf_comm *comm; /* a private duplicate of the communicator given to MPI_File_open */
    char *name;
    int amode;
    struct mf_info *info; /* hints given (MPI_File_get_info returns a copy), or NULL */
    mf_errhandler *errh;
    bool atomic;

    /* The view. */
    MPI_Offset disp;
    mf_datatype *etype, *filetype; /* held */
    size_t etype_size;
    mf_io_piece *pieces; /* of one filetype instance, in stream order */
    int npieces;
    size_t ft_size;       /* data bytes of one filetype instance */
    MPI_Offset ft_extent; /* its extent: where the next instance starts */
    char datarep[MPI_MAX_DATAREP_STRING];

    MPI_Offset pos;           /* the individual file pointer, in etypes */
    struct mf_win *shared_fp; /* one MPI_Offset at rank 0: the shared file pointer, in etypes */
    MPI_Offset *shared_mem;   /* rank 0: that MPI_Offset */

    /* A split collective begun and not ended: its buffer and what it did (an error is returned
     * by the _begin call). */
    bool split_active;
    const void *split_buf;
    MPI_Status split_status;
} mf_file;

/* Opening and closing (file.c). */
int mf_io_open(mf_comm *comm, const char *name, int amode, struct mf_info *info, mf_file **out,
               const char *fn);
int mf_io_close(mf_file *f, const char *fn);
int mf_io_delete(const char *name, const char *fn);
/* Collective: MPI_SUCCESS where every rank's rc is, else rc, or (on ranks that did not fail
 * themselves) an error of the class of the lowest failing rank's saying which rank it was. */
int mf_io_agree(mf_comm *comm, int rc, const char *fn);
/* The MPI error class of a failed system call on `name`, with a message naming it. */
int mf_io_errno(int err, const char *what, const char *name, const char *fn);
int mf_io_set_size(mf_file *f, MPI_Offset size, bool grow_only, const char *fn);
int mf_io_get_size(mf_file *f, MPI_Offset *size, const char *fn);
int mf_io_sync(mf_file *f, const char *fn);
/* The shared file pointer: adds `delta` etypes and returns the value before (fetch-and-add). */
int mf_io_shared_fetch_add(mf_file *f, MPI_Offset delta, MPI_Offset *before, const char *fn);
/* Sets it (collective: every rank calls with the same value). */
int mf_io_shared_set(mf_file *f, MPI_Offset value, const char *fn);

/* The view (view.c). */
int mf_io_set_view(mf_file *f, MPI_Offset disp, mf_datatype *etype, mf_datatype *filetype,
                   const char *datarep, const char *fn);
/* Where byte s of the view's stream is: filetype instance *k, piece *i, *in bytes into it. */
void mf_io_view_locate(const mf_file *f, MPI_Offset s, MPI_Offset *k, int *i, MPI_Offset *in);
/* The file byte of byte s of the view's stream; *avail gets the bytes of the view that follow it
 * contiguously in the file within its piece (at least 1). */
MPI_Offset mf_io_view_piece(const mf_file *f, MPI_Offset s, MPI_Offset *avail);
/* The absolute byte position of view offset `offset` (etypes). */
MPI_Offset mf_io_byte_offset(const mf_file *f, MPI_Offset offset);
/* The view offset (etypes) of the end of the file: the first etype at or after its size. */
MPI_Offset mf_io_view_end(const mf_file *f, MPI_Offset file_size);

/* Data representations (datarep.c): MPI_Register_datarep, and whether a view may use `name`
 * with these types (MPI_ERR_UNSUPPORTED_DATAREP if its data would need converting). */
int mf_io_datarep_register(const char *name, bool converts, MPI_Datarep_extent_function *extent,
                           void *state, const char *fn);
int mf_io_datarep_check(const char *name, const mf_datatype *etype, const mf_datatype *filetype,
                        const char *fn);

/* Data access (access.c): reads or writes count elements of dt at buf from view offset `offset`
 * (etypes); *done gets the bytes moved (a read stops at the end of the file). */
int mf_io_rw(mf_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count, mf_datatype *dt,
             size_t *done, const char *fn);

#endif
