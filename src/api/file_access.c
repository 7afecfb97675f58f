/*
 * MPI-IO data access: MPI_File_{read,write}[_at][_all|_shared|_ordered], their nonblocking
 * (MPI_File_i*) and split collective (*_begin / *_end) forms, each with its large-count _c
 * variant. One function does them all (file_access); the macros at the end stamp out the
 * entry points.
 *
 * Where the data goes: the individual file pointer (advanced by what moved), an explicit offset
 * (_at), the shared file pointer (_shared: a fetch-and-add reserves the place), or for _ordered
 * the shared pointer plus the sizes of the lower ranks' accesses (an exclusive scan), the last
 * rank, whose scan ends where the collective's share does, reserving all of it. Collective
 * forms go through mf_io_rw_all (the ranks agree, and interleaved accesses are aggregated).
 * Nonblocking ones go to the I/O thread (mf_io_start, mf_io_start_all: the individual pointer
 * moves past all they asked for as they start); a blocking collective access first waits for
 * the file's pending ones (they use the same collective buffers); a split collective is a
 * nonblocking one whose request the file keeps: _begin starts it, _end waits for it. In a view
 * whose representation converts (external32, a registered one), every form moves a buffer of
 * the data in the file's bytes (io/datarep.c).
 */
#include "api/file_api.h"
#include "api/p2p_args.h"
#include "datatype/status.h"

enum file_where { AT_POINTER, AT_OFFSET, AT_SHARED, AT_ORDERED };
enum file_form { BLOCKING, NONBLOCKING, BEGIN };

/* The view offset of this access of n etypes (reserving it on the shared pointer). */
static int file_place(mf_file *f, enum file_where where, MPI_Offset offset, MPI_Offset n,
                      MPI_Offset *at, const char *fn)
{
    int rc = MPI_SUCCESS;
    switch (where) {
    case AT_POINTER:
        *at = f->pos;
        break;
    case AT_OFFSET: /* checked by mf_io_rw_check */
        *at = offset;
        break;
    case AT_SHARED:
        rc = mf_io_shared_fetch_add(f, n, at, fn);
        break;
    case AT_ORDERED: {
        /* The last rank's share ends where the whole collective's does: it reserves it all. */
        mf_datatype *off = mf_datatype_get(MPI_OFFSET);
        MPI_Offset before = 0, base = 0;
        int last = f->comm->c_size - 1;
        rc = mf_coll_exscan(&n, &before, 1, off, mf_op_get(MPI_SUM), f->comm);
        if (f->comm->c_rank == 0)
            before = 0; /* exscan leaves rank 0's undefined */
        if (!rc && f->comm->c_rank == last)
            rc = mf_io_shared_fetch_add(f, before + n, &base, fn);
        rc = mf_io_agree(f->comm, rc, fn);
        if (!rc)
            rc = mf_coll_bcast(&base, 1, off, last, f->comm);
        *at = base + before;
        break;
    }
    }
    return rc;
}

static int file_access(MPI_File fh, bool write, bool coll, enum file_where where,
                       enum file_form form, MPI_Offset offset, const void *buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status *status, MPI_Request *request,
                       const char *fn)
{
    MF_API_ENTER();
    mf_file *f = NULL;
    mf_datatype *dt = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc)
        rc = mf_check_data(buf, count, datatype, &dt, fn, "buf", "count");
    if (!rc && form == NONBLOCKING && !request)
        rc = mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
    if (!rc && form == BEGIN && f->split_req)
        rc = mf_error(MPI_ERR_OTHER, "%s: a split collective access is already under way", fn);
    size_t bytes = rc ? 0 : (size_t)count * mf_datatype_info(dt)->dt_size, done = 0;
    /* Before any place is taken: a failing access must not move the shared pointer. */
    if (!rc && (where == AT_POINTER || where == AT_OFFSET))
        rc = mf_io_not_sequential(f, fn);
    /* A view in a representation that converts: the access moves the data in the file's bytes,
     * converted here (a write) or when it completes (a read). */
    mf_io_conv *cv = NULL;
    void *data = (void *)buf;
    MPI_Count n_data = count;
    if (!rc && f->rep && !(rc = mf_io_conv_begin(f->rep, write, data, count, dt, &cv, fn))) {
        data = mf_io_conv_buf(cv);
        bytes = mf_io_conv_bytes(cv);
        n_data = (MPI_Count)bytes;
        dt = mf_datatype_get(MPI_BYTE);
    }
    if (!rc)
        rc = mf_io_rw_check(f, write, where == AT_OFFSET ? offset : 0, bytes, fn);
    MPI_Offset n = rc ? 0 : (MPI_Offset)(bytes / f->etype_size), at = 0;
    /* Collective forms agree first: an ordered access must not leave ranks in its scan. */
    if (f && where == AT_ORDERED)
        rc = mf_io_agree(f->comm, rc, fn);
    bool placed = !rc && !(rc = file_place(f, where, offset, n, &at, fn));
    /* Nonblocking and split: to the I/O thread; a collective one also when it failed here, so
     * that every rank's thread takes part in it. The conversion goes with it when it starts. A
     * split collective's request is the file's, which _end waits for. */
    if (form != BLOCKING && (placed || (f && coll))) {
        mf_request *r = NULL;
        rc = coll ? mf_io_start_all(f, write, at, data, n_data, dt, cv, rc, &r, fn)
                  : mf_io_start(f, write, at, data, n_data, dt, cv, &r, fn);
        if (rc)
            mf_io_conv_end(cv, rc, NULL);
        if (!rc && where == AT_POINTER) /* past all it asked for, as the access starts */
            f->pos = at + n;
        if (!rc && form == BEGIN) {
            f->split_req = r;
            f->split_buf = buf;
        } else if (!rc) {
            rc = mf_request_give(r, request);
        }
        MF_API_EXIT();
        return mf_err_file(f, rc, fn);
    }
    if (f && coll) { /* the collective buffers are the I/O thread's while any access is pending */
        int qrc = mf_io_quiesce(f);
        rc = rc ? rc : qrc;
    }
    if (f && coll) /* every rank, to agree on any rank's error */
        rc = mf_io_rw_all(f, f->comm, write, at, data, n_data, dt, rc, &done, fn);
    else if (!rc)
        rc = mf_io_rw(f, write, at, data, n_data, dt, &done, fn);
    if (placed && where == AT_POINTER) /* by what moved, also when an error stopped it */
        f->pos = at + (MPI_Offset)(done / f->etype_size);
    rc = mf_io_conv_end(cv, rc, &done); /* done: now in memory's bytes */
    MPI_Status st = {0};
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    st.MPI_ERROR = rc;
    mf_status_set_bytes(&st, (MPI_Count)done);
    mf_status_out(status, &st);
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}

/* *_end of a split collective: waits for the access its _begin started. */
static int file_access_end(MPI_File fh, const void *buf, MPI_Status *status, const char *fn)
{
    MF_API_ENTER();
    mf_file *f = NULL;
    int rc = mf_check_file(fh, &f, fn);
    if (!rc && !f->split_req)
        rc = mf_error(MPI_ERR_OTHER, "%s: no split collective access was begun", fn);
    if (!rc && buf != f->split_buf)
        rc = mf_error(MPI_ERR_BUFFER, "%s: buf is not the buffer given to the _begin call", fn);
    if (!rc) {
        mf_request *r = f->split_req;
        f->split_req = NULL;
        rc = mf_request_wait(r, status);
        mf_request_free(r);
    }
    MF_API_EXIT();
    return mf_err_file(f, rc, fn);
}

/* The entry points, a function and its _c form per macro. Q qualifies the buffer (const for
 * writes, NOQ for reads); OFFP/OFFV are the explicit offset's parameter and value (AT_OFF and
 * offset, or NO_OFF and 0); LAST is the last parameter, given to file_access as ST or RQ. */
#define NOQ
/* Function-like, so that they pass through the macros below unexpanded (the comma). */
#define NO_OFF()
#define AT_OFF() MPI_Offset offset,
#define STATUS_LAST MPI_Status *status
#define REQUEST_LAST MPI_Request *request

#define FILE_RW(Name, OFFP, OFFV, Q, W, C, WHERE, FORM, LAST, ST, RQ)                              \
    int PMPI_File_##Name(MPI_File fh, OFFP() Q void *buf, int count, MPI_Datatype datatype, LAST)  \
    {                                                                                              \
        return file_access(fh, W, C, WHERE, FORM, OFFV, buf, count, datatype, ST, RQ,              \
                           "MPI_File_" #Name);                                                     \
    }                                                                                              \
    MF_API_ALIAS(File_##Name);                                                                     \
    int PMPI_File_##Name##_c(MPI_File fh, OFFP() Q void *buf, MPI_Count count,                     \
                             MPI_Datatype datatype, LAST)                                          \
    {                                                                                              \
        return file_access(fh, W, C, WHERE, FORM, OFFV, buf, count, datatype, ST, RQ,              \
                           "MPI_File_" #Name "_c");                                                \
    }                                                                                              \
    MF_API_ALIAS(File_##Name##_c);

/* A split collective: Name_begin (and its _c form) and Name_end. */
#define FILE_SPLIT(Name, OFFP, OFFV, Q, W, WHERE)                                                  \
    int PMPI_File_##Name##_begin(MPI_File fh, OFFP() Q void *buf, int count,                       \
                                 MPI_Datatype datatype)                                            \
    {                                                                                              \
        return file_access(fh, W, true, WHERE, BEGIN, OFFV, buf, count, datatype, NULL, NULL,      \
                           "MPI_File_" #Name "_begin");                                            \
    }                                                                                              \
    MF_API_ALIAS(File_##Name##_begin);                                                             \
    int PMPI_File_##Name##_begin_c(MPI_File fh, OFFP() Q void *buf, MPI_Count count,               \
                                   MPI_Datatype datatype)                                          \
    {                                                                                              \
        return file_access(fh, W, true, WHERE, BEGIN, OFFV, buf, count, datatype, NULL, NULL,      \
                           "MPI_File_" #Name "_begin_c");                                          \
    }                                                                                              \
    MF_API_ALIAS(File_##Name##_begin_c);                                                           \
    int PMPI_File_##Name##_end(MPI_File fh, Q void *buf, MPI_Status *status)                       \
    {                                                                                              \
        return file_access_end(fh, buf, status, "MPI_File_" #Name "_end");                         \
    }                                                                                              \
    MF_API_ALIAS(File_##Name##_end);

#define BLOCKING_RW(Name, OFFP, OFFV, Q, W, C, WHERE)                                              \
    FILE_RW(Name, OFFP, OFFV, Q, W, C, WHERE, BLOCKING, STATUS_LAST, status, NULL)
#define NONBLOCKING_RW(Name, OFFP, OFFV, Q, W, C, WHERE)                                           \
    FILE_RW(Name, OFFP, OFFV, Q, W, C, WHERE, NONBLOCKING, REQUEST_LAST, NULL, request)

BLOCKING_RW(read, NO_OFF, 0, NOQ, false, false, AT_POINTER)
BLOCKING_RW(read_all, NO_OFF, 0, NOQ, false, true, AT_POINTER)
BLOCKING_RW(read_shared, NO_OFF, 0, NOQ, false, false, AT_SHARED)
BLOCKING_RW(read_ordered, NO_OFF, 0, NOQ, false, true, AT_ORDERED)
BLOCKING_RW(read_at, AT_OFF, offset, NOQ, false, false, AT_OFFSET)
BLOCKING_RW(read_at_all, AT_OFF, offset, NOQ, false, true, AT_OFFSET)
BLOCKING_RW(write, NO_OFF, 0, const, true, false, AT_POINTER)
BLOCKING_RW(write_all, NO_OFF, 0, const, true, true, AT_POINTER)
BLOCKING_RW(write_shared, NO_OFF, 0, const, true, false, AT_SHARED)
BLOCKING_RW(write_ordered, NO_OFF, 0, const, true, true, AT_ORDERED)
BLOCKING_RW(write_at, AT_OFF, offset, const, true, false, AT_OFFSET)
BLOCKING_RW(write_at_all, AT_OFF, offset, const, true, true, AT_OFFSET)

NONBLOCKING_RW(iread, NO_OFF, 0, NOQ, false, false, AT_POINTER)
NONBLOCKING_RW(iread_all, NO_OFF, 0, NOQ, false, true, AT_POINTER)
NONBLOCKING_RW(iread_shared, NO_OFF, 0, NOQ, false, false, AT_SHARED)
NONBLOCKING_RW(iread_at, AT_OFF, offset, NOQ, false, false, AT_OFFSET)
NONBLOCKING_RW(iread_at_all, AT_OFF, offset, NOQ, false, true, AT_OFFSET)
NONBLOCKING_RW(iwrite, NO_OFF, 0, const, true, false, AT_POINTER)
NONBLOCKING_RW(iwrite_all, NO_OFF, 0, const, true, true, AT_POINTER)
NONBLOCKING_RW(iwrite_shared, NO_OFF, 0, const, true, false, AT_SHARED)
NONBLOCKING_RW(iwrite_at, AT_OFF, offset, const, true, false, AT_OFFSET)
NONBLOCKING_RW(iwrite_at_all, AT_OFF, offset, const, true, true, AT_OFFSET)

FILE_SPLIT(read_all, NO_OFF, 0, NOQ, false, AT_POINTER)
FILE_SPLIT(read_ordered, NO_OFF, 0, NOQ, false, AT_ORDERED)
FILE_SPLIT(read_at_all, AT_OFF, offset, NOQ, false, AT_OFFSET)
FILE_SPLIT(write_all, NO_OFF, 0, const, true, AT_POINTER)
FILE_SPLIT(write_ordered, NO_OFF, 0, const, true, AT_ORDERED)
FILE_SPLIT(write_at_all, AT_OFF, offset, const, true, AT_OFFSET)
