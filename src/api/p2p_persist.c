/*
 * Persistent requests: MPI_Send_init, Bsend_init, Ssend_init, Rsend_init, Recv_init (and large-
 * count forms), MPI_Start, MPI_Startall. The persistent request keeps the arguments; each Start
 * begins a fresh operation (rq_inner) whose completion the Wait/Test family reports.
 */
#include "api/p2p_args.h"
#include "coll/nbc.h"
#include "p2p/partitioned.h"

static int mf_api_persist(const void *buf, MPI_Count count, MPI_Datatype datatype, int rank,
                          int tag, MPI_Comm comm, mf_request_kind kind, enum mf_send_mode mode,
                          MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_request *r = NULL;
    int rc = request ? mf_p2p_check(buf, "buf", count, datatype, rank, tag, comm,
                                    kind == MF_REQ_RECV, fn, &c, &dt)
                     : mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
    if (!rc) {
        r = mf_request_new(kind, c);
        if (!r)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a request", fn);
    }
    if (!rc) {
        r->pub.r_persistent = true;
        r->rq_buf = (void *)buf;
        r->rq_count = count;
        r->rq_dt = dt;
        mf_datatype_retain(dt);
        r->rq_rank = rank;
        r->rq_tag = tag;
        r->rq_mode = mode;
        rc = mf_request_give(r, request);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

#define MF_PERSIST_PAIR(Name, kind, mode)                                                          \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype datatype, int rank, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                           \
    {                                                                                              \
        return mf_api_persist(buf, count, datatype, rank, tag, comm, kind, mode, request,          \
                              "MPI_" #Name);                                                       \
    }                                                                                              \
    MF_API_ALIAS(Name);                                                                            \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int rank,         \
                        int tag, MPI_Comm comm, MPI_Request *request)                              \
    {                                                                                              \
        return mf_api_persist(buf, count, datatype, rank, tag, comm, kind, mode, request,          \
                              "MPI_" #Name "_c");                                                  \
    }                                                                                              \
    MF_API_ALIAS(Name##_c);

MF_PERSIST_PAIR(Send_init, MF_REQ_SEND, MF_SEND_STANDARD)
MF_PERSIST_PAIR(Ssend_init, MF_REQ_SEND, MF_SEND_SYNC)
MF_PERSIST_PAIR(Rsend_init, MF_REQ_SEND, MF_SEND_READY)
MF_PERSIST_PAIR(Bsend_init, MF_REQ_SEND, MF_SEND_BUFFERED)

/* Recv_init takes a non-const buffer; same body. */
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return mf_api_persist(buf, count, datatype, source, tag, comm, MF_REQ_RECV, MF_SEND_STANDARD,
                          request, "MPI_Recv_init");
}
MF_API_ALIAS(Recv_init);

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    return mf_api_persist(buf, count, datatype, source, tag, comm, MF_REQ_RECV, MF_SEND_STANDARD,
                          request, "MPI_Recv_init_c");
}
MF_API_ALIAS(Recv_init_c);

static int mf_start_one(MPI_Request handle, const char *fn)
{
    mf_request *r = NULL;
    int rc = mf_p2p_check_request(handle, &r, fn);
    if (!rc && (!r || !r->pub.r_persistent))
        rc = mf_error(MPI_ERR_REQUEST, "%s: request=0x%x is not a persistent request", fn,
                      (unsigned)handle);
    if (!rc && r->rq_inner)
        rc = mf_error(MPI_ERR_REQUEST, "%s: request=0x%x is already active", fn, (unsigned)handle);
    if (rc)
        return rc;
    mf_comm *c = r->pub.r_comm;
    /* Persistent collectives (MPI_<Coll>_init) keep their arguments in the collective layer,
     * which builds a fresh schedule as rq_inner on each start (src/coll/nbc.h). */
    if (r->pub.r_kind == MF_REQ_COLL)
        rc = mf_nbc_start(r);
    else if (r->pub.r_kind == MF_REQ_PART)
        rc = mf_part_start(r); /* partitioned: a round of the channel (src/p2p/partitioned.h) */
    else if (r->pub.r_kind == MF_REQ_RECV)
        rc = mf_irecv(r->rq_buf, r->rq_count, r->rq_dt, r->rq_rank, r->rq_tag, c, MF_CTX_P2P,
                      &r->rq_inner);
    else if (r->rq_mode == MF_SEND_BUFFERED)
        rc = mf_bsend_start(r->rq_buf, r->rq_count, r->rq_dt, r->rq_rank, r->rq_tag, c,
                            &r->rq_inner);
    else
        rc = mf_isend(r->rq_buf, r->rq_count, r->rq_dt, r->rq_rank, r->rq_tag, c, MF_CTX_P2P,
                      r->rq_mode, &r->rq_inner);
    if (!rc)
        r->pub.r_active = true;
    return rc;
}

int PMPI_Start(MPI_Request *request)
{
    MF_API_ENTER();
    int rc = request ? mf_start_one(*request, "MPI_Start")
                     : mf_error(MPI_ERR_ARG, "MPI_Start: request is NULL");
    /* As for waits and tests: the handler of the request's communicator, if it names one. */
    mf_request *r = NULL;
    mf_comm *c = rc && request && !mf_p2p_check_request(*request, &r, "MPI_Start") && r
                     ? r->pub.r_comm
                     : NULL;
    MF_API_EXIT();
    return mf_err_comm(c, rc, "MPI_Start");
}
MF_API_ALIAS(Start);

int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    MF_API_ENTER();
    int rc = count < 0 ? mf_error(MPI_ERR_COUNT, "MPI_Startall: count=%d is negative", count)
             : (count > 0 && !array_of_requests)
                 ? mf_error(MPI_ERR_ARG, "MPI_Startall: array_of_requests is NULL")
                 : MPI_SUCCESS;
    for (int i = 0; i < count && !rc; i++)
        rc = mf_start_one(array_of_requests[i], "MPI_Startall");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Startall");
}
MF_API_ALIAS(Startall);
