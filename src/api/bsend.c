/*
 * Buffered sends: the buffers of MPI_Bsend and their calls — the process's (MPI_Buffer_attach,
 * _detach, and MPI-4.1's _flush, _iflush), a communicator's and a session's (MPI-4.1:
 * MPI_Comm_attach_buffer and kin, MPI_Session_attach_buffer and kin) — and the staging of the
 * data.
 *
 * A buffered send on a communicator takes the communicator's buffer if one is attached, else
 * that of the session it derives from, else the process's (MPI-4.1 section 3.6). A buffer
 * ("pool") the program attached is managed first-fit: each message takes a slot of
 * MPI_BSEND_OVERHEAD + packed size bytes, released when its internal send completes; a message
 * that does not fit fails with MPI_ERR_BUFFER naming the sizes. MPI_BUFFER_AUTOMATIC attaches a
 * pool that allocates each message's slot instead, so it never runs out while memory lasts.
 *
 * Detaching waits until every message of the pool has left; so does freeing a communicator or
 * finalizing a session that has one. A flush waits, and an iflush's request completes, once
 * every message the pool held at the call has left (the slots are numbered as they are taken).
 * All of it runs under the library lock.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/p2p_args.h"
#include "api/session.h"
#include "core/progress.h"

typedef struct mf_bsend_slot {
    struct mf_bsend_slot *bs_next; /* the pool's slots, in address order (automatic: any) */
    struct mf_bsend_pool *bs_pool;
    size_t bs_off, bs_len; /* in the attached buffer; automatic: bs_len only */
    uint64_t bs_seq;       /* the pool's count of messages when it was taken */
} mf_bsend_slot;

/* An MPI_*_iflush_buffer: its request completes when the messages before bf_mark have left. */
typedef struct mf_bsend_flush {
    struct mf_bsend_flush *bf_next;
    uint64_t bf_mark;
    mf_request *bf_req;
} mf_bsend_flush;

struct mf_bsend_pool { /* typedef in p2p_args.h */
    char *bp_buf;      /* the attached memory; MPI_BUFFER_AUTOMATIC: none */
    size_t bp_size;
    bool bp_automatic;
    mf_bsend_slot *bp_slots;
    uint64_t bp_taken; /* messages ever staged: the next slot's bs_seq */
    mf_bsend_flush *bp_flushes;
};

static mf_bsend_pool *mf_bsend_process; /* MPI_Buffer_attach's, or NULL */

/* ---- pools ----------------------------------------------------------------------------------- */

/* The oldest message still in the pool (UINT64_MAX: none). */
static uint64_t mf_bsend_oldest(const mf_bsend_pool *p)
{
    uint64_t oldest = UINT64_MAX;
    for (const mf_bsend_slot *s = p->bp_slots; s; s = s->bs_next)
        oldest = s->bs_seq < oldest ? s->bs_seq : oldest;
    return oldest;
}

/* Completes the iflush requests whose messages have all left. */
static void mf_bsend_flushes_check(mf_bsend_pool *p)
{
    uint64_t oldest = mf_bsend_oldest(p);
    for (mf_bsend_flush **link = &p->bp_flushes; *link;) {
        mf_bsend_flush *f = *link;
        if (f->bf_mark > oldest) {
            link = &f->bf_next;
            continue;
        }
        *link = f->bf_next;
        mf_request_complete(f->bf_req);
        free(f);
    }
}

/* Attaches a pool at *where (the process's, a communicator's or a session's); `owner` names
 * it in errors. */
static int mf_bsend_attach(mf_bsend_pool **where, void *buffer, MPI_Count size, const char *owner,
                           const char *fn)
{
    if (*where)
        return mf_error(MPI_ERR_BUFFER, "%s: a buffer is already attached to %s", fn, owner);
    bool automatic = buffer == MPI_BUFFER_AUTOMATIC;
    if (!automatic && size < 0)
        return mf_error(MPI_ERR_ARG, "%s: size=%lld is negative", fn, (long long)size);
    if (!automatic && !buffer && size > 0)
        return mf_error(MPI_ERR_BUFFER, "%s: buffer is NULL", fn);
    int rc = automatic ? MPI_SUCCESS : mf_check_not_in_place(buffer, fn, "buffer");
    if (rc)
        return rc;
    mf_bsend_pool *p = calloc(1, sizeof *p);
    if (!p)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a buffer's bookkeeping", fn);
    p->bp_automatic = automatic;
    p->bp_buf = automatic ? NULL : buffer;
    p->bp_size = automatic ? 0 : (size_t)size;
    *where = p;
    return MPI_SUCCESS;
}

/* Flush's and detach's condition: every message staged before the mark has left. */
typedef struct {
    const mf_bsend_pool *pool;
    uint64_t mark;
} mf_bsend_wait;

static bool mf_bsend_left(void *arg)
{
    const mf_bsend_wait *w = arg;
    return mf_bsend_oldest(w->pool) >= w->mark;
}

static int mf_bsend_flush_wait(mf_bsend_pool *p)
{
    mf_bsend_wait w = {p, p->bp_taken};
    return mf_progress_wait(mf_bsend_left, &w);
}

/* Detaches the pool at *where once its messages have left: the buffer and its size (or
 * MPI_BUFFER_AUTOMATIC and 0) go to the outputs when they are not NULL. */
static int mf_bsend_detach(mf_bsend_pool **where, void *buffer_addr, MPI_Count *size,
                           const char *owner, const char *fn)
{
    mf_bsend_pool *p = *where;
    if (!p)
        return mf_error(MPI_ERR_BUFFER, "%s: no buffer is attached to %s", fn, owner);
    int rc = mf_bsend_flush_wait(p);
    if (rc)
        return rc;
    if (buffer_addr)
        *(void **)buffer_addr = p->bp_automatic ? MPI_BUFFER_AUTOMATIC : p->bp_buf;
    if (size)
        *size = (MPI_Count)p->bp_size;
    *where = NULL;
    free(p); /* no flush is left: the last message's release completed them */
    return MPI_SUCCESS;
}

static int mf_bsend_iflush(mf_bsend_pool *p, mf_comm *comm, MPI_Request *request, const char *fn)
{
    mf_request *r = mf_request_new(MF_REQ_SEND, comm);
    mf_bsend_flush *f = r ? malloc(sizeof *f) : NULL;
    if (!f) {
        if (r)
            mf_request_free(r);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a request", fn);
    }
    r->pub.r_active = true;
    int rc = mf_request_give(r, request); /* (frees r if it fails) */
    if (rc) {
        free(f);
        return rc;
    }
    /* Linked only once the handle exists: a pool never holds a request that was freed. */
    *f = (mf_bsend_flush){p ? p->bp_flushes : NULL, p ? p->bp_taken : 0, r};
    if (p && mf_bsend_oldest(p) < f->bf_mark) {
        p->bp_flushes = f;
    } else {
        mf_request_complete(r); /* nothing to wait for */
        free(f);
    }
    return MPI_SUCCESS;
}

/* ---- one call on one owner's buffer ---------------------------------------------------------- */

enum mf_bsend_op { MF_BSEND_ATTACH, MF_BSEND_DETACH, MF_BSEND_FLUSH, MF_BSEND_IFLUSH };

/* Checks the arguments of `op` and does it on the buffer kept at *where (the process's, a
 * communicator's or a session's: `owner` names it in errors; `comm`, if a communicator's, goes
 * with an iflush's request). Attach reads *size; detach writes the buffer and *size. */
static int mf_bsend_call(mf_bsend_pool **where, enum mf_bsend_op op, void *buffer, MPI_Count *size,
                         MPI_Request *request, mf_comm *comm, const char *owner, const char *fn)
{
    switch (op) {
    case MF_BSEND_ATTACH:
        return mf_bsend_attach(where, buffer, *size, owner, fn);
    case MF_BSEND_DETACH:
        if (!buffer || !size)
            return mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !buffer ? "buffer_addr" : "size");
        return mf_bsend_detach(where, buffer, size, owner, fn);
    case MF_BSEND_FLUSH:
        return *where ? mf_bsend_flush_wait(*where) : MPI_SUCCESS;
    case MF_BSEND_IFLUSH:
        if (!request)
            return mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
        return mf_bsend_iflush(*where, comm, request, fn);
    }
    return MPI_ERR_INTERN;
}

static int mf_bsend_process_call(enum mf_bsend_op op, void *buffer, MPI_Count *size,
                                 MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    int rc = mf_bsend_call(&mf_bsend_process, op, buffer, size, request, NULL, "the process", fn);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}

static int mf_bsend_comm_call(MPI_Comm comm, enum mf_bsend_op op, void *buffer, MPI_Count *size,
                              MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_bsend_call(&c->c_bsend, op, buffer, size, request, c, "the communicator", fn);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

static int mf_bsend_session_call(MPI_Session session, enum mf_bsend_op op, void *buffer,
                                 MPI_Count *size, MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_bsend_pool **where = NULL;
    int rc = mf_session_bsend(session, &where, fn);
    if (!rc)
        rc = mf_bsend_call(where, op, buffer, size, request, NULL, "the session", fn);
    MF_API_EXIT();
    return mf_session_raise(session, rc, fn);
}

/* The int forms of detach: a size int cannot hold comes back as INT_MAX (only an _c attach
 * makes one). */
static int mf_bsend_int_size(int rc, const MPI_Count *n, int *size)
{
    if (rc == MPI_SUCCESS) /* (*n read here, after the call that set it) */
        *size = *n > INT_MAX ? INT_MAX : (int)*n;
    return rc;
}

int mf_bsend_release_pool(mf_bsend_pool **where, const char *fn)
{
    return *where ? mf_bsend_detach(where, NULL, NULL, "its owner", fn) : MPI_SUCCESS;
}

/* ---- entry points ---------------------------------------------------------------------------- */

int PMPI_Buffer_attach(void *buffer, int size)
{
    MPI_Count n = size;
    return mf_bsend_process_call(MF_BSEND_ATTACH, buffer, &n, NULL, "MPI_Buffer_attach");
}
MF_API_ALIAS(Buffer_attach);

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return mf_bsend_process_call(MF_BSEND_ATTACH, buffer, &size, NULL, "MPI_Buffer_attach_c");
}
MF_API_ALIAS(Buffer_attach_c);

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    return mf_bsend_int_size(mf_bsend_process_call(MF_BSEND_DETACH, buffer_addr, size ? &n : NULL,
                                                   NULL, "MPI_Buffer_detach"),
                             &n, size);
}
MF_API_ALIAS(Buffer_detach);

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return mf_bsend_process_call(MF_BSEND_DETACH, buffer_addr, size, NULL, "MPI_Buffer_detach_c");
}
MF_API_ALIAS(Buffer_detach_c);

int PMPI_Buffer_flush(void)
{
    return mf_bsend_process_call(MF_BSEND_FLUSH, NULL, NULL, NULL, "MPI_Buffer_flush");
}
MF_API_ALIAS(Buffer_flush);

int PMPI_Buffer_iflush(MPI_Request *request)
{
    return mf_bsend_process_call(MF_BSEND_IFLUSH, NULL, NULL, request, "MPI_Buffer_iflush");
}
MF_API_ALIAS(Buffer_iflush);

int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    MPI_Count n = size;
    return mf_bsend_comm_call(comm, MF_BSEND_ATTACH, buffer, &n, NULL, "MPI_Comm_attach_buffer");
}
MF_API_ALIAS(Comm_attach_buffer);

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return mf_bsend_comm_call(comm, MF_BSEND_ATTACH, buffer, &size, NULL,
                              "MPI_Comm_attach_buffer_c");
}
MF_API_ALIAS(Comm_attach_buffer_c);

int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    return mf_bsend_int_size(mf_bsend_comm_call(comm, MF_BSEND_DETACH, buffer_addr,
                                                size ? &n : NULL, NULL, "MPI_Comm_detach_buffer"),
                             &n, size);
}
MF_API_ALIAS(Comm_detach_buffer);

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return mf_bsend_comm_call(comm, MF_BSEND_DETACH, buffer_addr, size, NULL,
                              "MPI_Comm_detach_buffer_c");
}
MF_API_ALIAS(Comm_detach_buffer_c);

int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    return mf_bsend_comm_call(comm, MF_BSEND_FLUSH, NULL, NULL, NULL, "MPI_Comm_flush_buffer");
}
MF_API_ALIAS(Comm_flush_buffer);

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    return mf_bsend_comm_call(comm, MF_BSEND_IFLUSH, NULL, NULL, request, "MPI_Comm_iflush_buffer");
}
MF_API_ALIAS(Comm_iflush_buffer);

int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    MPI_Count n = size;
    return mf_bsend_session_call(session, MF_BSEND_ATTACH, buffer, &n, NULL,
                                 "MPI_Session_attach_buffer");
}
MF_API_ALIAS(Session_attach_buffer);

int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    return mf_bsend_session_call(session, MF_BSEND_ATTACH, buffer, &size, NULL,
                                 "MPI_Session_attach_buffer_c");
}
MF_API_ALIAS(Session_attach_buffer_c);

int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    return mf_bsend_int_size(mf_bsend_session_call(session, MF_BSEND_DETACH, buffer_addr,
                                                   size ? &n : NULL, NULL,
                                                   "MPI_Session_detach_buffer"),
                             &n, size);
}
MF_API_ALIAS(Session_detach_buffer);

int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return mf_bsend_session_call(session, MF_BSEND_DETACH, buffer_addr, size, NULL,
                                 "MPI_Session_detach_buffer_c");
}
MF_API_ALIAS(Session_detach_buffer_c);

int PMPI_Session_flush_buffer(MPI_Session session)
{
    return mf_bsend_session_call(session, MF_BSEND_FLUSH, NULL, NULL, NULL,
                                 "MPI_Session_flush_buffer");
}
MF_API_ALIAS(Session_flush_buffer);

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    return mf_bsend_session_call(session, MF_BSEND_IFLUSH, NULL, NULL, request,
                                 "MPI_Session_iflush_buffer");
}
MF_API_ALIAS(Session_iflush_buffer);

/* ---- staging --------------------------------------------------------------------------------- */

/* First fit in address order (automatic: a slot of its own memory, after the header); returns
 * the slot or NULL. */
static mf_bsend_slot *mf_bsend_alloc(mf_bsend_pool *p, size_t len)
{
    if (p->bp_automatic) {
        mf_bsend_slot *s = malloc(sizeof *s + len);
        if (s)
            *s = (mf_bsend_slot){p->bp_slots, p, 0, len, p->bp_taken++};
        return s ? (p->bp_slots = s) : NULL;
    }
    size_t off = 0;
    mf_bsend_slot **link = &p->bp_slots;
    for (; *link; link = &(*link)->bs_next) {
        if ((*link)->bs_off - off >= len)
            break;
        off = (*link)->bs_off + (*link)->bs_len;
    }
    if (!*link && p->bp_size - off < len)
        return NULL;
    mf_bsend_slot *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    *s = (mf_bsend_slot){*link, p, off, len, p->bp_taken++};
    *link = s;
    return s;
}

static char *mf_bsend_data(mf_bsend_slot *s)
{
    mf_bsend_pool *p = s->bs_pool;
    return (p->bp_automatic ? (char *)(s + 1) : p->bp_buf + s->bs_off) + MPI_BSEND_OVERHEAD;
}

static void mf_bsend_release(mf_request *r, void *arg)
{
    mf_bsend_slot *s = arg;
    mf_bsend_pool *p = s->bs_pool;
    for (mf_bsend_slot **link = &p->bp_slots; *link; link = &(*link)->bs_next) {
        if (*link == s) {
            *link = s->bs_next;
            break;
        }
    }
    free(s);
    if (p->bp_flushes)
        mf_bsend_flushes_check(p);
}

int mf_bsend_start(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                   mf_comm *comm, mf_request **out)
{
    mf_bsend_pool *p = comm->c_bsend;
    if (!p && comm->c_session)
        p = mf_session_bsend_of(comm->c_session);
    if (!p)
        p = mf_bsend_process;
    if (!p)
        return mf_error(MPI_ERR_BUFFER, "MPI_Bsend: no buffer is attached (to the communicator, "
                                        "its session or the process)");
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    size_t need = MPI_BSEND_OVERHEAD + bytes;
    mf_bsend_slot *s = mf_bsend_alloc(p, need);
    if (!s && p->bp_automatic)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Bsend: no memory for %zu bytes of buffered data",
                        need);
    if (!s)
        return mf_error(MPI_ERR_BUFFER,
                        "MPI_Bsend: %zu bytes (message + MPI_BSEND_OVERHEAD) do "
                        "not fit in the attached buffer of %zu bytes",
                        need, p->bp_size);
    char *data = mf_bsend_data(s);
    mf_datatype_pack(dt, buf, (size_t)count, 0, data, bytes);
    mf_request *inner;
    int rc = mf_isend(data, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), dest, tag, comm,
                      MF_CTX_P2P, MF_SEND_STANDARD, &inner);
    if (rc) {
        mf_bsend_release(NULL, s);
        return rc;
    }
    mf_request_when_done(inner, mf_bsend_release, s);
    mf_request_free(inner); /* it finishes in the background */
    /* The user's request is complete at once: the data is safely in the attached buffer. */
    mf_request *r = mf_request_new(MF_REQ_SEND, comm);
    if (!r)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Bsend: no memory for a request");
    r->pub.r_active = true;
    mf_request_complete(r);
    *out = r;
    return MPI_SUCCESS;
}
