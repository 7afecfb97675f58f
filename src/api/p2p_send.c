/* Sends: MPI_Send, Bsend, Ssend, Rsend and their nonblocking and large-count forms. */
#include "api/p2p_args.h"
#include "tool/mpit.h"

/* Every send entry point: check, start, then wait (blocking) or hand out a request. */
static int mf_api_send(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, enum mf_send_mode mode, MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_request *r = NULL;
    int rc = mf_p2p_check(buf, "buf", count, datatype, dest, tag, comm, false, fn, &c, &dt);
    if (!rc && !request && (mode == MF_SEND_STANDARD || mode == MF_SEND_READY)) {
        /* Blocking standard (and ready: the same protocol) sends: no request unless needed. */
        rc = mf_send(buf, count, dt, dest, tag, c, MF_CTX_P2P);
    } else if (!rc) {
        if (mode == MF_SEND_BUFFERED)
            rc = mf_bsend_start(buf, count, dt, dest, tag, c, &r);
        else if (mode == MF_SEND_STANDARD || mode == MF_SEND_READY)
            rc = mf_isend_standard(buf, count, dt, dest, tag, c, MF_CTX_P2P, &r);
        else
            rc = mf_isend(buf, count, dt, dest, tag, c, MF_CTX_P2P, mode, &r);
    }
    if (!rc && request && r == mf_request_sent()) {
        *request = mf_request_info(r)->r_handle; /* finished already: no handle of its own */
    } else if (!rc && request) {
        rc = mf_request_give(r, request);
    } else if (!rc && r) {
        rc = mf_request_wait(r, NULL);
        mf_request_free(r);
    }
    if (!rc && dest != MPI_PROC_NULL) /* MPI_T pvars p2p_api_messages_sent, _bytes_sent */
        mf_t_count_api_send((uint64_t)count * mf_datatype_info(dt)->dt_size);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

#define MF_SEND_PAIR(Name, mode)                                                                   \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,          \
                    MPI_Comm comm)                                                                 \
    {                                                                                              \
        return mf_api_send(buf, count, datatype, dest, tag, comm, mode, NULL, "MPI_" #Name);       \
    }                                                                                              \
    MF_API_ALIAS(Name);                                                                            \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,         \
                        int tag, MPI_Comm comm)                                                    \
    {                                                                                              \
        return mf_api_send(buf, count, datatype, dest, tag, comm, mode, NULL, "MPI_" #Name "_c");  \
    }                                                                                              \
    MF_API_ALIAS(Name##_c);

#define MF_ISEND_PAIR(Name, mode)                                                                  \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                           \
    {                                                                                              \
        if (!request)                                                                              \
            return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_" #Name ": request is NULL"),       \
                                    "MPI_" #Name);                                                 \
        return mf_api_send(buf, count, datatype, dest, tag, comm, mode, request, "MPI_" #Name);    \
    }                                                                                              \
    MF_API_ALIAS(Name);                                                                            \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,         \
                        int tag, MPI_Comm comm, MPI_Request *request)                              \
    {                                                                                              \
        if (!request)                                                                              \
            return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_" #Name "_c: request is NULL"),     \
                                    "MPI_" #Name "_c");                                            \
        return mf_api_send(buf, count, datatype, dest, tag, comm, mode, request,                   \
                           "MPI_" #Name "_c");                                                     \
    }                                                                                              \
    MF_API_ALIAS(Name##_c);

MF_SEND_PAIR(Send, MF_SEND_STANDARD)
MF_SEND_PAIR(Ssend, MF_SEND_SYNC)
MF_SEND_PAIR(Rsend, MF_SEND_READY)
MF_SEND_PAIR(Bsend, MF_SEND_BUFFERED)
MF_ISEND_PAIR(Isend, MF_SEND_STANDARD)
MF_ISEND_PAIR(Issend, MF_SEND_SYNC)
MF_ISEND_PAIR(Irsend, MF_SEND_READY)
MF_ISEND_PAIR(Ibsend, MF_SEND_BUFFERED)
