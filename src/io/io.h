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
 *   - collective accesses agree first (an error on one rank is one on all); where the ranks'
 *     accesses interleave in the file they move by two-phase collective buffering, large
 *     contiguous reads and writes by aggregators and an exchange of the data (aggregate.c);
 *     split collectives are nonblocking ones whose request the file keeps until _end;
 *   - nonblocking accesses, independent and collective, are made by an I/O thread while the
 *     program goes on (async.c), in the order they were started;
 *   - atomic mode takes a POSIX record lock over the bytes an access spans;
 *   - data representations: "native" and "internal" (the same bytes), "external32" and
 *     registered ones (datarep.c): a view in a representation that converts is flattened from
 *     its types relaid there, and an access converts the user's data as a whole;
 *
 * All functions are called with the library lock held. Errors are returned as codes made with
 * mf_error; the API layer (src/api/file*.c) dispatches them to the file's error handler.
 */
#ifndef MF_IO_IO_H
#define MF_IO_IO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "comm/comm.h"
#include "core/errhandler.h"
#include "datatype/datatype.h"

struct mf_info;
struct mf_request;
struct mf_win;

/* One byte piece of the flattened filetype: at `disp` from the start of a filetype instance. */
typedef struct mf_io_piece {
    MPI_Offset disp;
    MPI_Offset len;
    MPI_Offset before; /* bytes of the filetype's stream in the pieces before this one */
} mf_io_piece;

/* Where a view puts the bytes of its stream: from disp, one filetype instance every ft_extent
 * bytes, each holding ft_size bytes in the pieces (stream order, increasing, not overlapping). */
typedef struct mf_io_view {
    MPI_Offset disp;
    mf_io_piece *pieces;
    int npieces;
    size_t ft_size;
    MPI_Offset ft_extent;
    /* The instances follow one another in the file without overlapping (each one's pieces lie in
     * ft_extent bytes from its first): the stream's order is the file's. The functions below
     * that map file positions to the stream (mf_io_view_before, _copy) need it. */
    bool tiled;
} mf_io_view;

/* A place in a view's stream, walked piece by piece: filetype instance k, piece i, `in` bytes
 * into it (mf_io_cursor_at finds it once; each run after it is a step, not a search). */
typedef struct mf_io_cursor {
    MPI_Offset k;
    int i;
    MPI_Offset in;
} mf_io_cursor;

/* Collective buffering settings (hints cb_buffer_size, cb_nodes, romio_cb_read/write). */
typedef enum { MF_IO_CB_AUTO, MF_IO_CB_ENABLE, MF_IO_CB_DISABLE } mf_io_cb_mode;
typedef struct mf_io_hints {
    MPI_Offset cb_buffer_size; /* bytes an aggregator moves per round */
    int cb_nodes;              /* aggregators (0: every rank) */
    mf_io_cb_mode cb_read, cb_write;
} mf_io_hints;

typedef struct mf_file {
    int fd;
    bool readable; /* fd was opened for reading (a write-only amode may still be; writes sieve) */
    mf_comm *comm; /* a private duplicate of the communicator given to MPI_File_open */
    /* Another, made by the first nonblocking collective access: the I/O thread's collectives
     * run on it, so they never meet the program's own on `comm` (set_size, sync, ...). */
    mf_comm *async_comm;
    char *name;
    int amode;
    struct mf_info *info; /* hints given (MPI_File_get_info returns a copy), or NULL */
    mf_errhandler *errh;
    bool atomic;

    /* The view. */
    mf_io_view view;
    mf_datatype *etype, *filetype; /* held */
    size_t etype_size;             /* in the file: the view's representation's size */
    char datarep[MPI_MAX_DATAREP_STRING];
    const struct mf_io_datarep *rep; /* the representation that converts, or NULL */

    /* For collective accesses (aggregate.c), shared by every rank when the view is set: each
     * rank's view (NULL when the views may not be aggregated: too many pieces in all, or a
     * filetype whose instances overlap in the file), and rank 0's hints, which all follow. */
    mf_io_view *views;
    mf_io_piece *views_pieces;
    bool views_disjoint; /* no file byte lies in two ranks' views */
    mf_io_hints hints;
    struct mf_io_share *shares; /* c_size of them: each access's places, gathered */
    struct io_scratch *scratch; /* the per-rank arrays of a collective access */

    int async_pending;        /* nonblocking accesses handed to the I/O thread, not yet complete */
    MPI_Offset pos;           /* the individual file pointer, in etypes */
    struct mf_win *shared_fp; /* one MPI_Offset at rank 0: the shared file pointer, in etypes */
    MPI_Offset *shared_mem;   /* rank 0: that MPI_Offset */

    /* A split collective begun and not ended: its request (made by the I/O thread, as a
     * nonblocking collective's) and its buffer. */
    struct mf_request *split_req;
    const void *split_buf;
} mf_file;

/* Opening and closing (file.c). mf_io_comm_dup makes a file's private communicator (collective
 * over comm): a duplicate whose errors return. */
int mf_io_comm_dup(mf_comm *comm, mf_comm **out);
int mf_io_open(mf_comm *comm, const char *name, int amode, struct mf_info *info, mf_file **out,
               const char *fn);
int mf_io_close(mf_file *f, const char *fn);
int mf_io_delete(const char *name, const char *fn);
/* Collective: MPI_SUCCESS where every rank's rc is, else rc, or (on ranks that did not fail
 * themselves) an error of the class of the lowest failing rank's saying which rank it was. */
int mf_io_agree(mf_comm *comm, int rc, const char *fn);
/* The same, also giving every rank the least of their *value (when value is not NULL). */
int mf_io_agree_min(mf_comm *comm, int rc, MPI_Offset *value, const char *fn);
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
/* Where byte s of the view's stream is. */
void mf_io_cursor_at(const mf_io_view *v, MPI_Offset s, mf_io_cursor *c);
/* The next run from the cursor (at most `left` bytes): its file position, and its length in
 * *run, extended over the pieces that follow it in the file without a gap; the cursor moves
 * past it. */
MPI_Offset mf_io_next_run(const mf_io_view *v, mf_io_cursor *c, size_t left, size_t *run);
/* The file byte of byte s of the view's stream. */
MPI_Offset mf_io_view_pos(const mf_io_view *v, MPI_Offset s);
/* The file bytes the stream bytes [s, s + len) lie in, from the first's to the last's: their
 * start, and the span's length in *span (len > 0; for a view not tiled, the view's start and 0,
 * which a record lock reads as "to the end of the file"). */
MPI_Offset mf_io_view_span(const mf_io_view *v, MPI_Offset s, size_t len, size_t *span);
/* How many bytes of the view's stream lie in the file before position p. */
MPI_Offset mf_io_view_before(const mf_io_view *v, MPI_Offset p);
/* Copies the stream bytes [s, s + len) between mem (packed, in stream order) and win, a buffer
 * of the file's bytes from position `base` (which holds every byte they lie in). */
void mf_io_view_copy(const mf_io_view *v, bool to_win, MPI_Offset s, size_t len, char *mem,
                     char *win, MPI_Offset base);
/* What mf_io_views_share gathers from every rank: a header of MPI_Offset words (its view and
 * its hints), then the view's pieces as bytes. */
enum {
    MF_IO_VH_DISP,
    MF_IO_VH_EXTENT,
    MF_IO_VH_SIZE,
    MF_IO_VH_NPIECES,
    MF_IO_VH_TILED,
    MF_IO_VH_CB_BUF,
    MF_IO_VH_CB_NODES,
    MF_IO_VH_CB_READ,
    MF_IO_VH_CB_WRITE,
    MF_IO_VH_WORDS
};
/* Checks of what another rank sent, before the walks above trust it: NULL when a header holds
 * what mf_io_set_view and the hints could have made (max_pieces: the most pieces one view may
 * have), and a view is tiled with its pieces as mf_io_set_view makes them (in stream order,
 * positive and not overlapping, `before` their running sum, ft_size bytes in all, every one
 * within an extent of the first); otherwise what is wrong. */
const char *mf_io_view_header_invalid(const MPI_Offset *h, MPI_Offset max_pieces);
const char *mf_io_view_invalid(const mf_io_view *v);

/* The absolute byte position of view offset `offset` (etypes). */
MPI_Offset mf_io_byte_offset(const mf_file *f, MPI_Offset offset);
/* The view offset (etypes) of the end of the file: the first etype at or after its size. */
MPI_Offset mf_io_view_end(const mf_file *f, MPI_Offset file_size);

/* Data representations (datarep.c). mf_io_datarep_register: MPI_Register_datarep (either form
 * of the conversion functions, or none). mf_io_datarep_view: for a view in representation
 * `name`, the representation that converts (*rep, NULL for data kept as memory holds it) and
 * the etype and filetype relaid in it (*fetype, *ffiletype: etype and filetype themselves when
 * *rep is NULL, else types to free with mf_datatype_relayout_free once flattened);
 * MPI_ERR_UNSUPPORTED_DATAREP for a name not known, or one without conversion functions whose
 * extents are not memory's. mf_io_datarep_extent: a type's extent in a view's file
 * (MPI_File_get_type_extent). */
typedef struct mf_io_datarep mf_io_datarep;
int mf_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read,
                           MPI_Datarep_conversion_function *write,
                           MPI_Datarep_conversion_function_c *read_c,
                           MPI_Datarep_conversion_function_c *write_c,
                           MPI_Datarep_extent_function *extent, void *state, const char *fn);
int mf_io_datarep_view(const char *name, mf_datatype *etype, mf_datatype *filetype,
                       const mf_io_datarep **rep, mf_datatype **fetype, mf_datatype **ffiletype,
                       const char *fn);
int mf_io_datarep_extent(const mf_io_datarep *rep, const mf_datatype *dt, MPI_Count *extent);
/* An access's data converted to or from a representation: mf_io_conv_begin makes a buffer of
 * the data in the file's bytes (for a write, converted from buf), which the access moves as
 * mf_io_conv_bytes bytes of MPI_BYTE; mf_io_conv_end (NULL c: nothing) converts a read's data
 * back into buf, turns *done (the file's bytes moved; NULL: none counted) into memory's bytes
 * of the whole basic elements moved, frees the conversion and returns rc or the conversion's
 * error. */
typedef struct mf_io_conv mf_io_conv;
int mf_io_conv_begin(const mf_io_datarep *rep, bool write, void *buf, MPI_Count count,
                     mf_datatype *dt, mf_io_conv **out, const char *fn);
void *mf_io_conv_buf(const mf_io_conv *c);
size_t mf_io_conv_bytes(const mf_io_conv *c);
int mf_io_conv_end(mf_io_conv *c, int rc, size_t *done);

/* Data access (access.c): reads or writes count elements of dt at buf from view offset `offset`
 * (etypes); *done gets the bytes moved (a read stops at the end of the file). */
int mf_io_rw(mf_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count, mf_datatype *dt,
             size_t *done, const char *fn);
/* MPI_SUCCESS, or MPI_ERR_UNSUPPORTED_OPERATION when f was opened MPI_MODE_SEQUENTIAL: the
 * individual file pointer and explicit offsets are not for such files, only the shared pointer
 * (MPI-4.0 sections 14.4.2 and 14.4.3). */
int mf_io_not_sequential(const mf_file *f, const char *fn);
/* Whether an access of `bytes` at `offset` may be made (amode, etypes, offset); MPI_SUCCESS or
 * the error. */
int mf_io_rw_check(const mf_file *f, bool write, MPI_Offset offset, size_t bytes, const char *fn);
/* A POSIX record lock (F_WRLCK, F_RDLCK) or its release (F_UNLCK) over [first, first + len). */
int mf_io_record_lock(mf_file *f, short type, MPI_Offset first, MPI_Offset len, const char *fn);
/* pread or pwrite of len bytes at `at`, all of them; bytes moved (a read stops at the end of the
 * file), or -1 with errno. */
ssize_t mf_io_pio(int fd, bool write, char *mem, size_t len, MPI_Offset at);

/* Collective accesses (aggregate.c). Every rank of c (f->comm, or f->async_comm on the I/O
 * thread) calls mf_io_rw_all with its own access and rc, its error so far: the ranks agree on
 * the outcome (an error of one is an error of all, naming the rank), then move the data either
 * each on its own (mf_io_rw) or, when the ranks' accesses interleave in the file, by two-phase
 * collective buffering: aggregators each own a contiguous domain of the file, move it with one
 * large pread or pwrite per round, and exchange the data with the ranks it belongs to. */
int mf_io_rw_all(mf_file *f, mf_comm *c, bool write, MPI_Offset offset, void *buf, MPI_Count count,
                 mf_datatype *dt, int rc, size_t *done, const char *fn);
/* Nonblocking accesses (async.c), made by the I/O thread (started at the first) while the
 * program goes on; a request completes, in the progress engine, once the thread has made the
 * access (its status counts the bytes moved, its error is the access's).
 * - mf_io_start, independent: checks the access, hands it over, gives the request.
 * - mf_io_start_all, collective (MPI_File_iread_all and kin), in the order the program started
 *   them, which is every rank's: the thread makes mf_io_rw_all on f->async_comm (made here at
 *   the first), under the library lock, which this switches on while any is pending. rc is
 *   the caller's error so far: the thread still takes part, so that the other ranks learn it
 *   (their requests fail naming this rank); then no request is made and rc is returned.
 * Both take conv (NULL: none), the access's data conversion (buf is then its buffer), when they
 * return MPI_SUCCESS: it ends with the request.
 * mf_io_quiesce waits until none of f's is pending: before anything the thread reads changes
 * (the view, atomic mode, the hints, the collective buffers of a blocking collective access) and
 * before the file closes. mf_io_async_drain waits until no collective access is queued or being
 * made (MPI_Finalize, before its closing barrier: they need the other ranks);
 * mf_io_async_stop ends the thread after the accesses queued (MPI_Finalize). */
struct mf_request;
int mf_io_start(mf_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count, mf_datatype *dt,
                mf_io_conv *conv, struct mf_request **out, const char *fn);
int mf_io_start_all(mf_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count,
                    mf_datatype *dt, mf_io_conv *conv, int rc, struct mf_request **out,
                    const char *fn);
int mf_io_quiesce(mf_file *f);
void mf_io_async_drain(void);
void mf_io_async_stop(void);
/* The request of a nonblocking access to f, held once: an error it completes with goes to f's
 * handler (when f is still open then). NULL when out of memory. */
struct mf_request *mf_io_request_new(mf_file *f);

/* Registers MPI-IO's MPI_T counters defs[0..n) in the category "io" (made at the first call). */
struct mf_t_counter_def;
void mf_io_publish(const struct mf_t_counter_def *defs, size_t n);

/* Collective, when the view or the hints change: every rank's view and rank 0's hints shared. */
int mf_io_views_share(mf_file *f, const char *fn);
/* Reads the collective buffering hints of `info` (NULL: none) into f->hints. */
void mf_io_hints_read(mf_file *f, const struct mf_info *info);
/* Sets in `info` the collective buffering hints in effect (for MPI_File_get_info). */
int mf_io_hints_report(const mf_file *f, struct mf_info *info);
void mf_io_views_free(mf_file *f);
/* Frees f->shares and f->scratch (and not the views). */
void mf_io_scratch_free(mf_file *f);

#endif
