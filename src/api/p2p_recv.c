/* Receives and probes: MPI_Recv, Irecv, Sendrecv(_replace), Probe, Iprobe, Mprobe, Improbe,
 * Mrecv, Imrecv, and their large-count forms. */
#include <stdlib.h>

#include "api/p2p_args.h"
#include "core/bufcache.h"
#include "core/progress.h"

static int mf_api_recv(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Status *status, MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_request *r = NULL;
    int rc = mf_p2p_check(buf, "buf", count, datatype, source, tag, comm, true, fn, &c, &dt);
    if (!rc && !request) {
        rc = mf_recv(buf, count, dt, source, tag, c, MF_CTX_P2P, status);
    } else if (!rc) {
        rc = mf_irecv(buf, count, dt, source, tag, c, MF_CTX_P2P, &r);
        if (!rc)
            rc = mf_request_give(r, request);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return mf_api_recv(buf, count, datatype, source, tag, comm, status, NULL, "MPI_Recv");
}
MF_API_ALIAS(Recv);

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    return mf_api_recv(buf, count, datatype, source, tag, comm, status, NULL, "MPI_Recv_c");
}
MF_API_ALIAS(Recv_c);

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    if (!request)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Irecv: request is NULL"), "MPI_Irecv");
    return mf_api_recv(buf, count, datatype, source, tag, comm, NULL, request, "MPI_Irecv");
}
MF_API_ALIAS(Irecv);

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Irecv_c: request is NULL"),
                                "MPI_Irecv_c");
    return mf_api_recv(buf, count, datatype, source, tag, comm, NULL, request, "MPI_Irecv_c");
}
MF_API_ALIAS(Irecv_c);

static int mf_api_sendrecv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                           MPI_Status *status, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL;
    int rc = mf_p2p_check(sendbuf, "sendbuf", sendcount, sendtype, dest, sendtag, comm, false, fn,
                          &c, &sdt);
    if (!rc)
        rc = mf_p2p_check(recvbuf, "recvbuf", recvcount, recvtype, source, recvtag, comm, true, fn,
                          &c, &rdt);
    if (!rc)
        rc = mf_sendrecv(sendbuf, sendcount, sdt, dest, sendtag, recvbuf, recvcount, rdt, source,
                         recvtag, c, MF_CTX_P2P, status);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return mf_api_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status, "MPI_Sendrecv");
}
MF_API_ALIAS(Sendrecv);

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mf_api_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status, "MPI_Sendrecv_c");
}
MF_API_ALIAS(Sendrecv_c);

/* Sendrecv_replace: the outgoing data is packed first, so the buffer can take the reply. */
static int mf_api_sendrecv_replace(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                   int sendtag, int source, int recvtag, MPI_Comm comm,
                                   MPI_Status *status, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    int rc = mf_p2p_check(buf, "buf", count, datatype, dest, sendtag, comm, false, fn, &c, &dt);
    if (!rc)
        rc = mf_p2p_check(buf, "buf", count, datatype, source, recvtag, comm, true, fn, &c, &dt);
    size_t bytes = rc ? 0 : (size_t)count * mf_datatype_info(dt)->dt_size;
    void *copy = NULL;
    if (!rc && bytes) {
        copy = malloc(bytes);
        if (!copy)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory to stage %zu bytes", fn, bytes);
        else
            mf_datatype_pack(dt, buf, (size_t)count, 0, copy, bytes);
    }
    if (!rc)
        rc = mf_sendrecv(copy, (MPI_Count)bytes, mf_datatype_get(MPI_BYTE), dest, sendtag, buf,
                         count, dt, source, recvtag, c, MF_CTX_P2P, status);
    free(copy);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mf_api_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   status, "MPI_Sendrecv_replace");
}
MF_API_ALIAS(Sendrecv_replace);

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mf_api_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   status, "MPI_Sendrecv_replace_c");
}
MF_API_ALIAS(Sendrecv_replace_c);

/* ---- Probes ---- */

static int mf_probe_check(int source, int tag, MPI_Comm comm, const char *fn, mf_comm **c)
{
    mf_datatype *dt;
    return mf_p2p_check(NULL, "buf", 0, MPI_BYTE, source, tag, comm, true, fn, c, &dt);
}

typedef struct mf_probe_wait {
    int source, tag;
    mf_comm *comm;
    bool take;
    int flag;
    MPI_Status status;
    mf_unexpected *msg;
} mf_probe_wait;

static bool mf_probe_found(void *arg)
{
    mf_probe_wait *p = arg;
    mf_p2p_iprobe(p->source, p->tag, p->comm, MF_CTX_P2P, p->take, &p->flag, &p->status,
                  p->take ? &p->msg : NULL);
    return p->flag;
}

static int mf_api_probe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status,
                        MPI_Message *message, bool blocking, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_probe_check(source, tag, comm, fn, &c);
    mf_probe_wait p = {source, tag, c, message != NULL, 0, {0}, NULL};
    if (!rc) {
        if (blocking)
            rc = mf_progress_wait(mf_probe_found, &p);
        else
            mf_probe_found(&p);
    }
    if (!rc && flag)
        *flag = p.flag;
    if (!rc && p.flag)
        mf_status_out(status, &p.status);
    if (!rc && message) {
        if (!p.flag)
            *message = MPI_MESSAGE_NULL;
        else if (source == MPI_PROC_NULL)
            *message = MPI_MESSAGE_NO_PROC;
        else
            rc = mf_message_handle(p.msg, message);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return mf_api_probe(source, tag, comm, NULL, status, NULL, true, "MPI_Probe");
}
MF_API_ALIAS(Probe);

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Iprobe: flag is NULL"), "MPI_Iprobe");
    return mf_api_probe(source, tag, comm, flag, status, NULL, false, "MPI_Iprobe");
}
MF_API_ALIAS(Iprobe);

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Mprobe: message is NULL"), "MPI_Mprobe");
    return mf_api_probe(source, tag, comm, NULL, status, message, true, "MPI_Mprobe");
}
MF_API_ALIAS(Mprobe);

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    if (!flag || !message)
        return mf_err_no_object(
            mf_error(MPI_ERR_ARG, "MPI_Improbe: %s is NULL", !flag ? "flag" : "message"),
            "MPI_Improbe");
    return mf_api_probe(source, tag, comm, flag, status, message, false, "MPI_Improbe");
}
MF_API_ALIAS(Improbe);

static int mf_api_mrecv(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                        MPI_Status *status, MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    mf_datatype *dt = NULL;
    mf_request *r = NULL;
    mf_comm *c = mf_comm_self();
    if (!message)
        rc = mf_error(MPI_ERR_ARG, "%s: message is NULL", fn);
    if (!rc)
        rc = mf_check_initialized(fn);
    if (!rc && (rc = mf_check_data(buf, count, datatype, &dt, fn, "buf", "count")))
        rc = mf_p2p_check_empty(count, datatype, &dt, rc);
    if (!rc && *message == MPI_MESSAGE_NO_PROC) {
        /* A message from MPI_PROC_NULL: an empty receive that completes at once. */
        rc = mf_irecv(buf, count, dt, MPI_PROC_NULL, 0, c, MF_CTX_P2P, &r);
    } else if (!rc) {
        mf_unexpected *u = mf_message_take(*message);
        if (!u)
            rc = mf_error(MPI_ERR_REQUEST, "%s: message=0x%x is not a matched message", fn,
                          (unsigned)*message);
        if (!rc) {
            r = mf_request_new(MF_REQ_RECV, c);
            if (!r)
                rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a request", fn);
        }
        if (!rc) {
            r->pub.r_active = true;
            r->rq_buf = buf;
            r->rq_count = count;
            r->rq_dt = dt;
            mf_datatype_retain(dt);
            r->rq_bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
            rc = mf_p2p_recv_message(r, u);
        }
    }
    if (!rc)
        *message = MPI_MESSAGE_NULL;
    if (!rc && request) {
        rc = mf_request_handle(r, request);
    } else if (!rc) {
        rc = mf_request_wait(r, status);
        mf_request_free(r);
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mf_api_mrecv(buf, count, datatype, message, status, NULL, "MPI_Mrecv");
}
MF_API_ALIAS(Mrecv);

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    return mf_api_mrecv(buf, count, datatype, message, status, NULL, "MPI_Mrecv_c");
}
MF_API_ALIAS(Mrecv_c);

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    if (!request)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Imrecv: request is NULL"), "MPI_Imrecv");
    return mf_api_mrecv(buf, count, datatype, message, NULL, request, "MPI_Imrecv");
}
MF_API_ALIAS(Imrecv);

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    if (!request)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Imrecv_c: request is NULL"),
                                "MPI_Imrecv_c");
    return mf_api_mrecv(buf, count, datatype, message, NULL, request, "MPI_Imrecv_c");
}
MF_API_ALIAS(Imrecv_c);

/* ---- Nonblocking send-receive (MPI-4.0) ---- */

static int mf_api_isendrecv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Request *request, bool replace, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL;
    mf_request *r = NULL;
    void *copy = NULL;
    int rc = request ? mf_p2p_check(sendbuf, replace ? "buf" : "sendbuf", sendcount, sendtype, dest,
                                    sendtag, comm, false, fn, &c, &sdt)
                     : mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
    if (!rc)
        rc = mf_p2p_check(recvbuf, replace ? "buf" : "recvbuf", recvcount, recvtype, source,
                          recvtag, comm, true, fn, &c, &rdt);
    if (!rc && replace) {
        /* The outgoing data is packed first, so the buffer is free to take the reply. */
        size_t bytes = (size_t)sendcount * mf_datatype_info(sdt)->dt_size;
        copy = mf_bufcache_get(bytes); /* request.c gives rq_packed back to the cache */
        if (!copy)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory to stage %zu bytes", fn, bytes);
        else
            mf_datatype_pack(sdt, sendbuf, (size_t)sendcount, 0, copy, bytes);
        sendbuf = copy;
        sendcount = (MPI_Count)bytes;
        sdt = mf_datatype_get(MPI_BYTE);
    }
    if (!rc)
        rc = mf_isendrecv(sendbuf, sendcount, sdt, dest, sendtag, recvbuf, recvcount, rdt, source,
                          recvtag, c, MF_CTX_P2P, &r);
    if (!rc) {
        r->rq_packed = copy; /* freed with the request */
        copy = NULL;
        rc = mf_request_give(r, request);
    }
    mf_bufcache_put(copy);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return mf_api_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, request, false, "MPI_Isendrecv");
}
MF_API_ALIAS(Isendrecv);

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return mf_api_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, request, false, "MPI_Isendrecv_c");
}
MF_API_ALIAS(Isendrecv_c);

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return mf_api_isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                            recvtag, comm, request, true, "MPI_Isendrecv_replace");
}
MF_API_ALIAS(Isendrecv_replace);

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return mf_api_isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                            recvtag, comm, request, true, "MPI_Isendrecv_replace_c");
}
MF_API_ALIAS(Isendrecv_replace_c);
