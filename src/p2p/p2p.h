/*
 * p2p.h — point-to-point messaging inside the library: requests, sends and receives on
 * communicators, used by the MPI point-to-point API (src/api/p2p*.c) and by collectives.
 *
 * Semantics are MPI's: messages between a pair of processes on one context are non-overtaking;
 * a receive matches the earliest message whose (context, source, tag) fit, with MPI_ANY_SOURCE /
 * MPI_ANY_TAG as wildcards. Messages up to the bound fabric's eager limit travel in one frame;
 * larger ones use rendezvous (the receiver pulls with rget where the fabric can, otherwise the
 * sender streams after the receiver's clear-to-send).
 *
 * `ctx` selects the traffic class: MF_CTX_P2P for user messages, MF_CTX_COLL for collectives
 * (see comm.h). Requests returned here are owned by the caller until mf_request_free().
 */
#ifndef MF_P2P_P2P_H
#define MF_P2P_P2P_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm/comm.h"
#include "datatype/datatype.h"

typedef enum mf_request_kind {
    MF_REQ_SEND,
    MF_REQ_RECV,
    MF_REQ_GREQ, /* generalized request (MPI_Grequest_start) */
    MF_REQ_COLL, /* a nonblocking collective's schedule */
    MF_REQ_PART, /* partitioned communication (partitioned.h): a channel, or one round of it */
} mf_request_kind;

enum mf_send_mode { MF_SEND_STANDARD, MF_SEND_SYNC, MF_SEND_READY, MF_SEND_BUFFERED };

typedef struct mf_request mf_request;

/* The object whose error handler an error found at completion goes to: the object the
 * operation was started on, as the handler of a blocking call is the object's it names. */
typedef enum mf_request_owner {
    MF_REQ_OWNER_COMM, /* r_comm (the zero value: every request's unless said otherwise) */
    MF_REQ_OWNER_WIN,  /* the window r_owner_handle names (an MPI_Win) */
    MF_REQ_OWNER_FILE, /* the file r_owner_handle names (an MPI_File) */
} mf_request_owner;

/* What every request exposes; protocol state is private to src/p2p. */
struct mf_request_public {
    MPI_Request r_handle; /* user handle, or MPI_REQUEST_NULL for internal requests */
    mf_request_kind r_kind;
    bool r_complete;
    bool r_persistent; /* created by *_init; inactive between completions */
    bool r_active;
    unsigned char r_owner; /* mf_request_owner (a byte: it fills padding, the hot fields stay) */
    MPI_Status r_status;   /* valid once complete (source, tag, error, byte count, cancelled) */
    mf_comm *r_comm;       /* held while the request exists */
};

/* Makes a window or file the owner of r's errors (mf_request_owner), by its handle: not held,
 * so the completion call checks that it is still open before calling its handler (falling back
 * to r_comm's). */
void mf_request_set_owner(mf_request *r, mf_request_owner owner, intptr_t handle);
intptr_t mf_request_owner_handle(const mf_request *r);

int mf_isend(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag, mf_comm *comm,
             unsigned ctx, enum mf_send_mode mode, mf_request **out);
/* A standard-mode send that finishes as it starts where it can: a contiguous message within the
 * eager limit that the peer's fabric copies at once (MF_FABRIC_INJECT). Then *out is
 * mf_request_sent(), a shared request that is always complete and never freed; otherwise the
 * same as mf_isend. */
int mf_isend_standard(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                      mf_comm *comm, unsigned ctx, mf_request **out);
mf_request *mf_request_sent(void);
int mf_irecv(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
             unsigned ctx, mf_request **out);

/* Blocking forms for collectives: return MPI_SUCCESS or the error code of the operation. */
int mf_send(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag, mf_comm *comm,
            unsigned ctx);
int mf_recv(void *buf, MPI_Count count, mf_datatype *dt, int source, int tag, mf_comm *comm,
            unsigned ctx, MPI_Status *status);
/* A send and a receive as one request that completes when both have (MPI_Isendrecv); its
 * status is the receive's, its error the first of either. */
int mf_isendrecv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, int dest, int stag,
                 void *rbuf, MPI_Count rcount, mf_datatype *rdt, int source, int rtag,
                 mf_comm *comm, unsigned ctx, mf_request **out);
int mf_sendrecv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, int dest, int stag,
                void *rbuf, MPI_Count rcount, mf_datatype *rdt, int source, int rtag, mf_comm *comm,
                unsigned ctx, MPI_Status *status);

/* Copies an operation's status to the caller's (nothing for NULL or MPI_STATUS_IGNORE) except
 * MPI_ERROR: calls that return one status never write that field, only those returning several
 * do, and only with MPI_ERR_IN_STATUS (MPI-4.0 section 3.2.5). */
static inline void mf_status_out(MPI_Status *dst, const MPI_Status *src)
{
    if (!dst || dst == MPI_STATUS_IGNORE)
        return;
    int err = dst->MPI_ERROR;
    *dst = *src;
    dst->MPI_ERROR = err;
}

struct mf_request_public *mf_request_info(mf_request *r);
/* Waits for completion; copies the status out (mf_status_out). Returns
 * the request's error code (MPI_SUCCESS or e.g. MPI_ERR_TRUNCATE). Does not free. */
int mf_request_wait(mf_request *r, MPI_Status *status);
/* Waits for all; returns MPI_SUCCESS or the first error. Does not free. */
int mf_request_waitall(int n, mf_request **reqs);
bool mf_request_test(mf_request *r);
void mf_request_free(mf_request *r);

/* Decides, once the routes are built (MPI_Init), whether point-to-point matching is offloaded
 * to a fabric (src/p2p/offload.h); tells each capable instance the outcome. MPI_SUCCESS, or the
 * error of an instance where the offload was demanded but is impossible. */
int mf_p2p_offload_init(void);

/* Progresses until every send this process started has completed and the fabrics hold no
 * outbound frame, or `seconds` passed (MPI_ERR_OTHER then). Used by MPI_Finalize. */
int mf_p2p_drain_sends(double seconds);
/* Frees the engine's queues and caches after the fabrics closed (MPI_Finalize); warns about
 * messages that arrived but were never received. */
void mf_p2p_finalize(void);

/* User handles for requests (MPI_Request). */
int mf_request_handle(mf_request *r, MPI_Request *handle);
/* mf_request_handle for a request the caller hands over: on failure r is freed. */
int mf_request_give(mf_request *r, MPI_Request *handle);
mf_request *mf_request_from_handle(MPI_Request handle);
void mf_request_handle_free(mf_request *r);

/* Calls done(r, arg) once r completes: at once if it already has, else from its completion
 * (mf_request_finish, in progress). One such hook per request; for what builds on requests it
 * started (MPI_Isendrecv's parts, a buffered send's slot, a partitioned round's transfers). */
void mf_request_when_done(mf_request *r, void (*done)(mf_request *r, void *arg), void *arg);

/* Lets a layer above complete its own requests (nonblocking collectives, generalized requests). */
mf_request *mf_request_new(mf_request_kind kind, mf_comm *comm);
void mf_request_complete(mf_request *r);

/* Requests whose work a layer above drives (a nonblocking collective's schedule). The owner
 * holds one outstanding step from mf_request_hold until it calls mf_request_unbusy (or
 * mf_request_end, which records the error first); the request completes when no step is left
 * and is freed then if its creator already released it. These keep src/coll out of the fields
 * of struct mf_request, which are p2p's (request.h). */
/* Takes the owner's step on a request that starts now (r_active). */
void mf_request_hold(mf_request *r);
/* Takes the owner's step on a persistent request and keeps `data` (the owner's, see
 * mf_request_owner_data) for its starts; the step lasts until the user frees the request. */
void mf_request_hold_persistent(mf_request *r, void *data);
void *mf_request_owner_data(const mf_request *r);
/* Where a start of persistent request r stores the request doing the work of that start. */
mf_request **mf_request_inner(mf_request *r);
/* Whether the creator has called mf_request_free on r. */
bool mf_request_released(const mf_request *r);
/* Drops one step; completes r when it was the last, frees it if released too. */
void mf_request_unbusy(mf_request *r);
/* Records `error` as r's outcome (its status' MPI_ERROR), then drops the owner's step. */
void mf_request_end(mf_request *r, int error);

#endif
