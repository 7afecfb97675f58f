/*
 * Generalized requests (MPI_Grequest_start / MPI_Grequest_complete): operations the program
 * carries out itself, completed through MPI's request machinery. The query callback fills the
 * status when a Wait/Test reports completion; the free callback runs when the request is
 * retired or freed; the cancel callback runs on MPI_Cancel (see p2p_complete.c).
 */
#include "api/p2p_args.h"
#include "core/progress.h"

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    MF_API_ENTER();
    int rc = mf_check_initialized("MPI_Grequest_start");
    if (!rc && (!query_fn || !free_fn || !cancel_fn || !request))
        rc = mf_error(MPI_ERR_ARG, "MPI_Grequest_start: %s is NULL",
                      !query_fn    ? "query_fn"
                      : !free_fn   ? "free_fn"
                      : !cancel_fn ? "cancel_fn"
                                   : "request");
    mf_request *r = NULL;
    if (!rc && !(r = mf_request_new(MF_REQ_GREQ, mf_comm_self())))
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Grequest_start: no memory for a request");
    if (!rc) {
        r->pub.r_active = true;
        r->rq_greq_query = query_fn;
        r->rq_greq_free = free_fn;
        r->rq_greq_cancel = cancel_fn;
        r->rq_greq_state = extra_state;
        rc = mf_request_give(r, request);
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Grequest_start");
}
MF_API_ALIAS(Grequest_start);

int PMPI_Grequest_complete(MPI_Request request)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = mf_p2p_check_request(request, &r, "MPI_Grequest_complete");
    if (!rc && (!r || r->pub.r_kind != MF_REQ_GREQ))
        rc = mf_error(MPI_ERR_REQUEST,
                      "MPI_Grequest_complete: request=0x%x is not a "
                      "generalized request",
                      (unsigned)request);
    if (!rc && r->pub.r_complete)
        rc = mf_error(MPI_ERR_REQUEST,
                      "MPI_Grequest_complete: request=0x%x is already "
                      "complete",
                      (unsigned)request);
    if (!rc) {
        mf_request_complete(r);
        mf_progress_kick();   /* outside any pass: a thread may sleep in MPI_Wait on it */
        if (r->rq_released) { /* MPI_Request_free came first: retire it now */
            rc = r->rq_greq_free(r->rq_greq_state);
            mf_request_handle_free(r);
            mf_request_free(r);
        }
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Grequest_complete");
}
MF_API_ALIAS(Grequest_complete);
