/*
 * p2p_args.h — argument checks and request plumbing shared by the point-to-point entry points.
 */
#ifndef MF_API_P2P_ARGS_H
#define MF_API_P2P_ARGS_H

#include "api/api.h"
#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"

#ifndef MF_TAG_UB
#define MF_TAG_UB 2147483647
#endif

static inline bool mf_p2p_rank_ok(int rank, int size, bool is_recv)
{
    return rank == MPI_PROC_NULL || (is_recv && rank == MPI_ANY_SOURCE) ||
           (rank >= 0 && rank < size);
}

static inline bool mf_p2p_tag_ok(int tag, bool is_recv)
{
    return (is_recv && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= MF_TAG_UB);
}

/* mf_p2p_check's answer to a datatype that failed its check with `rc`: MPI_DATATYPE_NULL with
 * count 0, an empty message of no type, which MPICH accepts and programs pass (MPICH's own
 * tests do), passes as MPI_BYTE; anything else keeps rc. */
int mf_p2p_check_empty(MPI_Count count, MPI_Datatype datatype, mf_datatype **dt, int rc);
/* mf_p2p_check's buffer, rank and tag checks, with their messages (out of line). */
int mf_p2p_check_rest(const void *buf, const char *bufname, MPI_Count count, mf_datatype *dt,
                      int rank, int tag, mf_comm *c, bool is_recv, const char *fn);

/* Checks comm, count, datatype, buffer (named `bufname` in messages: "buf", or "sendbuf" and
 * "recvbuf" with their counts; never MPI_IN_PLACE), and the peer rank (dest or source) and
 * tag; `is_recv` allows MPI_ANY_SOURCE / MPI_ANY_TAG. Inline: every send and receive passes
 * here, and the valid case is a few compares. */
static inline __attribute__((always_inline)) int
mf_p2p_check(const void *buf, const char *bufname, MPI_Count count, MPI_Datatype datatype, int rank,
             int tag, MPI_Comm comm, bool is_recv, const char *fn, mf_comm **c, mf_datatype **dt)
{
    int rc = mf_check_comm(comm, c, fn);
    if (!rc)
        rc = mf_check_count(count, fn);
    if (!rc && (rc = mf_check_datatype(datatype, dt, fn)))
        rc = mf_p2p_check_empty(count, datatype, dt, rc);
    if (rc)
        return rc;
    if (__builtin_expect(buf && buf != MPI_IN_PLACE &&
                             mf_p2p_rank_ok(rank, mf_comm_peer_size(*c), is_recv) &&
                             mf_p2p_tag_ok(tag, is_recv),
                         1))
        return MPI_SUCCESS;
    return mf_p2p_check_rest(buf, bufname, count, *dt, rank, tag, *c, is_recv, fn);
}
/* mf_p2p_check_request's error: a handle that names no request. */
int mf_p2p_bad_request(MPI_Request handle, const char *fn);
/* Checks a request handle and resolves it (NULL for MPI_REQUEST_NULL). Inline: every wait and
 * test passes here once per request. */
static inline int mf_p2p_check_request(MPI_Request handle, mf_request **out, const char *fn)
{
    *out = NULL;
    if (handle == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    mf_request *r = mf_request_from_handle(handle);
    if (__builtin_expect(!r, 0))
        return mf_p2p_bad_request(handle, fn);
    *out = r;
    return MPI_SUCCESS;
}
/* A status with the values the standard gives for null or inactive requests. */
void mf_status_empty(MPI_Status *status);
/* Buffered sends (bsend.c). Starts one through the buffer of the communicator, else of its
 * session, else of the process. */
int mf_bsend_start(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                   mf_comm *comm, mf_request **out);
/* A communicator's (c_bsend) or a session's attached buffer; NULL: none. */
typedef struct mf_bsend_pool mf_bsend_pool;
/* Detaches the buffer kept at *where, if any, once its messages have left: a communicator's
 * (MPI_Comm_free, _disconnect) or a session's (MPI_Session_finalize). */
int mf_bsend_release_pool(mf_bsend_pool **where, const char *fn);

#endif
