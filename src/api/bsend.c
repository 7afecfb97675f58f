/*
 * Buffered sends: MPI_Buffer_attach / MPI_Buffer_detach and the staging of MPI_Bsend data.
 *
 * The attached buffer is managed first-fit: each buffered message takes a slot of
 * MPI_BSEND_OVERHEAD + packed size bytes, released when its internal send completes. A message
 * that does not fit fails with MPI_ERR_BUFFER naming the sizes. Detach waits until every
 * buffered message has left.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/p2p_args.h"
#include "core/progress.h"

typedef struct mf_bsend_slot {
    struct mf_bsend_slot *bs_next; /* slots in address order */
    size_t bs_off, bs_len;
} mf_bsend_slot;

static char *mf_bsend_buf;
static size_t mf_bsend_size;
static mf_bsend_slot *mf_bsend_slots;
static int mf_bsend_pending;

static int mf_bsend_attach(void *buffer, MPI_Count size, const char *fn)
{
    int rc = MPI_SUCCESS;
    MF_API_ENTER();
    if (mf_bsend_buf)
        rc = mf_error(MPI_ERR_BUFFER, "%s: a buffer is already attached", fn);
    else if (size < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: size=%ld is negative", fn, (long)size);
    else if (!buffer && size > 0)
        rc = mf_error(MPI_ERR_BUFFER, "%s: buffer is NULL", fn);
    else
        rc = mf_check_not_in_place(buffer, fn, "buffer");
    if (!rc) {
        mf_bsend_buf = buffer;
        mf_bsend_size = (size_t)size;
    }
    MF_API_EXIT();
    return mf_err_world(rc, fn);
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    return mf_bsend_attach(buffer, size, "MPI_Buffer_attach");
}
MF_API_ALIAS(Buffer_attach);

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return mf_bsend_attach(buffer, size, "MPI_Buffer_attach_c");
}
MF_API_ALIAS(Buffer_attach_c);

static bool mf_bsend_drained(void *arg)
{
    return mf_bsend_pending == 0;
}

static int mf_bsend_detach(void *buffer_addr, MPI_Count *size, const char *fn)
{
    int rc = MPI_SUCCESS;
    MF_API_ENTER();
    if (!buffer_addr || !size)
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !buffer_addr ? "buffer_addr" : "size");
    if (!rc)
        rc = mf_progress_wait(mf_bsend_drained, NULL);
    if (!rc) {
        *(void **)buffer_addr = mf_bsend_buf;
        *size = (MPI_Count)mf_bsend_size;
        mf_bsend_buf = NULL;
        mf_bsend_size = 0;
    }
    MF_API_EXIT();
    return mf_err_world(rc, fn);
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    int rc = mf_bsend_detach(buffer_addr, size ? &n : NULL, "MPI_Buffer_detach");
    if (rc == MPI_SUCCESS)
        *size = n > INT_MAX ? INT_MAX : (int)n; /* only MPI_Buffer_attach_c goes beyond */
    return rc;
}
MF_API_ALIAS(Buffer_detach);

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return mf_bsend_detach(buffer_addr, size, "MPI_Buffer_detach_c");
}
MF_API_ALIAS(Buffer_detach_c);

/* First fit in address order; returns the slot or NULL. */
static mf_bsend_slot *mf_bsend_alloc(size_t len)
{
    size_t off = 0;
    mf_bsend_slot **link = &mf_bsend_slots;
    for (; *link; link = &(*link)->bs_next) {
        if ((*link)->bs_off - off >= len)
            break;
        off = (*link)->bs_off + (*link)->bs_len;
    }
    if (!*link && mf_bsend_size - off < len)
        return NULL;
    mf_bsend_slot *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    *s = (mf_bsend_slot){*link, off, len};
    *link = s;
    return s;
}

static void mf_bsend_release(mf_request *r, void *arg)
{
    mf_bsend_slot *s = arg;
    for (mf_bsend_slot **link = &mf_bsend_slots; *link; link = &(*link)->bs_next) {
        if (*link == s) {
            *link = s->bs_next;
            break;
        }
    }
    free(s);
    mf_bsend_pending--;
}

int mf_bsend_start(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                   mf_comm *comm, mf_request **out)
{
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    size_t need = MPI_BSEND_OVERHEAD + bytes;
    mf_bsend_slot *s = mf_bsend_buf ? mf_bsend_alloc(need) : NULL;
    if (!s)
        return mf_error(MPI_ERR_BUFFER,
                        "MPI_Bsend: %zu bytes (message + MPI_BSEND_OVERHEAD) do "
                        "not fit in the attached buffer of %zu bytes",
                        need, mf_bsend_size);
    char *data = mf_bsend_buf + s->bs_off + MPI_BSEND_OVERHEAD;
    mf_datatype_pack(dt, buf, (size_t)count, 0, data, bytes);
    mf_request *inner;
    int rc = mf_isend(data, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), dest, tag, comm,
                      MF_CTX_P2P, MF_SEND_STANDARD, &inner);
    if (rc) {
        mf_bsend_pending++;
        mf_bsend_release(NULL, s);
        return rc;
    }
    mf_bsend_pending++;
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
