/*
 * Completion: MPI_Wait/Test and their any/all/some forms, Request_free, Request_get_status and
 * its any/all/some forms (MPI-4.1), Cancel, Test_cancelled.
 *
 * MPI_Request_get_status* report as MPI_Test* do (flags, indices, statuses, errors) but leave
 * every request as it was: not freed, not deactivated (a generalized request's query function
 * is asked each time, its free function only when the request is retired).
 *
 * A persistent request is complete when the operation its last MPI_Start began is complete; an
 * inactive (or null) request counts as complete with an empty status, as the standard says.
 *
 * An operation's error goes to the handler of the object it was started on: a communicator, or
 * the window of MPI_Rput and kin, or the file of MPI_File_iread and kin (whose default handler
 * returns errors). Wait and Test use their request's; the calls on arrays use the first failed
 * request's, and MPI_COMM_WORLD's for an error that is no request's (a bad argument).
 */
#include <stdlib.h>

#include "api/file_api.h"
#include "api/p2p_args.h"
#include "api/rma_api.h"
#include "core/progress.h"
#include "rma/rma.h"

/* The request whose completion matters: the started operation of a persistent request. */
static mf_request *mf_req_op(mf_request *r)
{
    return r->pub.r_persistent ? r->rq_inner : r;
}

/* The object an error is raised on: taken from a request before it is retired, resolved under
 * the library lock (a window or file that is no longer open falls back to the request's
 * communicator), raised after it, since a user handler may call MPI. The communicator is held
 * from take to raise: retiring the request drops the request's reference, which may have been
 * the last (a communicator freed while its operation was pending). Taken only from a request
 * that is to report an error, so a completion that succeeds pays nothing for it. */
typedef struct mf_req_blame {
    bool taken;
    mf_comm *comm; /* held; NULL: no object (mf_err_no_object) */
    mf_request_owner owner;
    intptr_t handle;
    mf_win *win;
    mf_file *file;
} mf_req_blame;

/* Takes r's object (once per blame) when the caller has an error already (rc) or retiring r
 * will report one: its operation's status holds it, or a generalized request's query will
 * tell. Before the retire, while r lives. */
static void mf_req_blame_take(mf_req_blame *b, mf_request *r, int rc)
{
    mf_request *op = r ? mf_req_op(r) : NULL;
    bool fails = rc || (op && (op->pub.r_kind == MF_REQ_GREQ || op->pub.r_status.MPI_ERROR));
    if (b->taken || !r || !fails)
        return;
    *b = (mf_req_blame){.taken = true,
                        .comm = r->pub.r_comm,
                        .owner = r->pub.r_owner,
                        .handle =
                            r->pub.r_owner != MF_REQ_OWNER_COMM ? mf_request_owner_handle(r) : 0};
    if (b->comm)
        mf_comm_retain(b->comm);
}

/* Under the lock. */
static void mf_req_blame_drop(mf_req_blame *b)
{
    if (b->comm)
        mf_comm_release(b->comm);
    *b = (mf_req_blame){0};
}

/* Under the lock, after the requests are retired: with no error to raise, the blame is dropped
 * at once. */
static void mf_req_blame_resolve(mf_req_blame *b, int code)
{
    if (code == MPI_SUCCESS) {
        mf_req_blame_drop(b);
        return;
    }
    if (b->owner == MF_REQ_OWNER_WIN)
        b->win = mf_win_get((MPI_Win)b->handle);
    else if (b->owner == MF_REQ_OWNER_FILE)
        b->file = mf_file_lookup((MPI_File)b->handle);
}

/* Unlocked: raises the error on the blamed object, then lets the communicator go. */
static int mf_req_raise(mf_req_blame *b, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return code;
    code = b->file  ? mf_err_file(b->file, code, fn)
           : b->win ? mf_err_win(b->win, code, fn)
                    : mf_err_comm(b->comm, code, fn);
    if (b->comm) {
        MF_API_ENTER();
        mf_req_blame_drop(b);
        MF_API_EXIT();
    }
    return code;
}

/* Null, or persistent and not started: counts as complete with an empty status. */
static bool mf_req_inactive(const mf_request *r)
{
    return !r || (r->pub.r_persistent && !r->rq_inner);
}

static bool mf_req_done(mf_request *r)
{
    mf_request *op = r ? mf_req_op(r) : NULL;
    return !op || op->pub.r_complete;
}

/* Reports a complete request: status out, then, unless `keep` (the get_status forms), free it
 * (or deactivate a persistent one) and null the handle. Returns the operation's error code. */
static int mf_req_retire(MPI_Request *handle, mf_request *r, MPI_Status *status, bool keep)
{
    mf_request *op = r ? mf_req_op(r) : NULL;
    if (!op) {
        mf_status_empty(status);
        return MPI_SUCCESS;
    }
    if (op->pub.r_kind == MF_REQ_GREQ) {
        /* The program tells what its operation did, then releases its state. */
        int qrc = op->rq_greq_query(op->rq_greq_state, &op->pub.r_status);
        int frc = keep ? MPI_SUCCESS : op->rq_greq_free(op->rq_greq_state);
        op->pub.r_status.MPI_ERROR = qrc ? qrc : frc;
    }
    int err = op->pub.r_status.MPI_ERROR;
    mf_status_out(status, &op->pub.r_status);
    if (keep)
        return err;
    if (r->pub.r_persistent) {
        mf_request_free(op);
        r->rq_inner = NULL;
        r->pub.r_active = false;
    } else {
        mf_request_handle_free(r);
        mf_request_free(r);
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

static int mf_req_lookup_all(int count, MPI_Request reqs[], mf_request **out, const char *fn)
{
    if (count < 0)
        return mf_error(MPI_ERR_COUNT, "%s: count=%d is negative", fn, count);
    if (count > 0 && !reqs)
        return mf_error(MPI_ERR_ARG, "%s: array_of_requests is NULL", fn);
    for (int i = 0; i < count; i++) {
        int rc = mf_p2p_check_request(reqs[i], &out[i], fn);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = request ? mf_p2p_check_request(*request, &r, "MPI_Wait")
                     : mf_error(MPI_ERR_REQUEST, "MPI_Wait: request is NULL");
    mf_req_blame b = {0};
    if (!rc && r && !mf_req_done(r))
        rc = mf_request_wait(mf_req_op(r), NULL);
    mf_req_blame_take(&b, r, rc);
    if (!rc || (r && mf_req_done(r)))
        rc = mf_req_retire(request, r, status, false);
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, "MPI_Wait");
}
MF_API_ALIAS(Wait);

/* MPI_Test, or MPI_Request_get_status (`keep`). */
static int mf_req_test(MPI_Request *request, int *flag, MPI_Status *status, bool keep,
                       const char *fn)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = request && flag
                 ? mf_p2p_check_request(*request, &r, fn)
                 : mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !request ? "request" : "flag");
    mf_req_blame b = {0};
    if (!rc) {
        if (!mf_req_done(r))
            mf_progress_poll();
        *flag = mf_req_done(r);
        mf_req_blame_take(&b, *flag ? r : NULL, rc);
        if (*flag)
            rc = mf_req_retire(request, r, status, keep);
    }
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, fn);
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return mf_req_test(request, flag, status, false, "MPI_Test");
}
MF_API_ALIAS(Test);

/* ---- Arrays of requests ---- */

typedef struct mf_req_set {
    int n;
    mf_request **r;
    int need;   /* how many must be done: n for all, 1 for any/some */
    int all_to; /* Waitall: requests [0, all_to) are known done or inactive */
} mf_req_set;

static int mf_req_set_done_count(mf_req_set *s, int *active)
{
    int done = 0;
    *active = 0;
    for (int i = 0; i < s->n; i++) {
        if (mf_req_inactive(s->r[i]))
            continue;
        (*active)++;
        done += mf_req_done(s->r[i]);
    }
    return done;
}

/* Waitall's condition: every active request done. A request stays done until it is retired
 * after the wait, so a cursor over the done prefix makes each poll O(1) in the usual case
 * (requests finishing about in order) instead of a scan of the whole array. */
static bool mf_req_set_all_ready(void *arg)
{
    mf_req_set *s = arg;
    while (s->all_to < s->n) {
        mf_request *r = s->r[s->all_to];
        if (!mf_req_inactive(r) && !mf_req_done(r))
            return false;
        s->all_to++;
    }
    return true;
}

static bool mf_req_set_ready(void *arg)
{
    mf_req_set *s = arg;
    int active, done = mf_req_set_done_count(s, &active);
    return active == 0 || done >= (s->need < active ? s->need : active);
}

/* Retires the complete requests among the set; with `statuses` per index. Returns
 * MPI_ERR_IN_STATUS if any failed and statuses carry the codes, else the first error; the first
 * failed request's object is blamed. */
static int mf_req_set_retire(mf_req_set *s, MPI_Request reqs[], MPI_Status *statuses, int *indices,
                             int *outcount, bool only_done, bool keep, mf_req_blame *blame)
{
    int err = MPI_SUCCESS, k = 0;
    bool ignore = statuses == MPI_STATUSES_IGNORE || !statuses;
    for (int i = 0; i < s->n; i++) {
        bool inactive = mf_req_inactive(s->r[i]);
        if (only_done && (inactive || !mf_req_done(s->r[i])))
            continue;
        MPI_Status *st = ignore ? NULL : &statuses[indices ? k : i];
        mf_req_blame b = {0};
        mf_req_blame_take(&b, s->r[i], MPI_SUCCESS);
        int rc = mf_req_retire(&reqs[i], s->r[i], st, keep);
        if (st)
            st->MPI_ERROR = rc; /* read only with MPI_ERR_IN_STATUS, then for every status */
        if (rc && !err)
            *blame = b; /* the first failed request's, held until raised */
        else
            mf_req_blame_drop(&b);
        err = err ? err : rc;
        if (indices)
            indices[k] = i;
        k++;
    }
    if (outcount)
        *outcount = k;
    return err && !ignore ? MPI_ERR_IN_STATUS : err;
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    MF_API_ENTER();
    mf_request *stack[64];
    mf_request **r = count <= 64 ? stack : malloc((size_t)count * sizeof *r);
    int rc = r ? mf_req_lookup_all(count, array_of_requests, r, "MPI_Waitall")
               : mf_error(MPI_ERR_NO_MEM, "MPI_Waitall: no memory for %d requests", count);
    mf_req_set s = {count, r, count, 0};
    mf_req_blame b = {0};
    if (!rc)
        rc = mf_progress_wait(mf_req_set_all_ready, &s);
    if (!rc)
        rc = mf_req_set_retire(&s, array_of_requests, array_of_statuses, NULL, NULL, false, false,
                               &b);
    if (r != stack)
        free(r);
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, "MPI_Waitall");
}
MF_API_ALIAS(Waitall);

/* MPI_Testall, or MPI_Request_get_status_all (`keep`). */
static int mf_req_test_all(int count, MPI_Request reqs[], int *flag, MPI_Status *statuses,
                           bool keep, const char *fn)
{
    MF_API_ENTER();
    mf_request *stack[64];
    mf_request **r = count <= 64 ? stack : malloc((size_t)count * sizeof *r);
    int rc = !flag ? mf_error(MPI_ERR_ARG, "%s: flag is NULL", fn)
             : r   ? mf_req_lookup_all(count, reqs, r, fn)
                   : mf_error(MPI_ERR_NO_MEM, "%s: no memory for %d requests", fn, count);
    mf_req_set s = {count, r, count};
    mf_req_blame b = {0};
    if (!rc) {
        mf_progress_poll();
        int active, done = mf_req_set_done_count(&s, &active);
        *flag = done == active;
        if (*flag)
            rc = mf_req_set_retire(&s, reqs, statuses, NULL, NULL, false, keep, &b);
    }
    if (r != stack)
        free(r);
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, fn);
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status *array_of_statuses)
{
    return mf_req_test_all(count, array_of_requests, flag, array_of_statuses, false, "MPI_Testall");
}
MF_API_ALIAS(Testall);

/* Waitany/Testany: retire the first complete active request (Request_get_status_any: `keep`
 * it). */
static int mf_req_any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                      bool blocking, bool keep, const char *fn)
{
    MF_API_ENTER();
    mf_request *stack[64];
    mf_request **r = count <= 64 ? stack : malloc((size_t)count * sizeof *r);
    int rc = !index ? mf_error(MPI_ERR_ARG, "%s: index is NULL", fn)
             : r    ? mf_req_lookup_all(count, reqs, r, fn)
                    : mf_error(MPI_ERR_NO_MEM, "%s: no memory for %d requests", fn, count);
    mf_req_set s = {count, r, 1};
    mf_req_blame b = {0};
    if (!rc) {
        if (blocking)
            rc = mf_progress_wait(mf_req_set_ready, &s);
        else
            mf_progress_poll();
    }
    if (!rc) {
        int active;
        mf_req_set_done_count(&s, &active);
        *index = MPI_UNDEFINED;
        if (flag)
            *flag = active == 0;
        if (active == 0)
            mf_status_empty(status);
        for (int i = 0; i < count && active; i++) {
            bool inactive = mf_req_inactive(r[i]);
            if (inactive || !mf_req_done(r[i]))
                continue;
            *index = i;
            if (flag)
                *flag = 1;
            mf_req_blame_take(&b, r[i], MPI_SUCCESS);
            rc = mf_req_retire(&reqs[i], r[i], status, keep);
            break;
        }
    }
    if (r != stack)
        free(r);
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, fn);
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return mf_req_any(count, array_of_requests, index, NULL, status, true, false, "MPI_Waitany");
}
MF_API_ALIAS(Waitany);

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Testany: flag is NULL"), "MPI_Testany");
    return mf_req_any(count, array_of_requests, index, flag, status, false, false, "MPI_Testany");
}
MF_API_ALIAS(Testany);

static int mf_req_some(int incount, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status *statuses, bool blocking, bool keep, const char *fn)
{
    MF_API_ENTER();
    mf_request *stack[64];
    mf_request **r = incount <= 64 ? stack : malloc((size_t)incount * sizeof *r);
    int rc = !outcount || (incount > 0 && !indices)
                 ? mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !outcount ? "outcount" : "indices")
             : r ? mf_req_lookup_all(incount, reqs, r, fn)
                 : mf_error(MPI_ERR_NO_MEM, "%s: no memory for %d requests", fn, incount);
    mf_req_set s = {incount, r, 1};
    mf_req_blame b = {0};
    if (!rc) {
        if (blocking)
            rc = mf_progress_wait(mf_req_set_ready, &s);
        else
            mf_progress_poll();
    }
    if (!rc) {
        int active;
        mf_req_set_done_count(&s, &active);
        if (active == 0)
            *outcount = MPI_UNDEFINED;
        else
            rc = mf_req_set_retire(&s, reqs, statuses, indices, outcount, true, keep, &b);
    }
    if (r != stack)
        free(r);
    mf_req_blame_resolve(&b, rc);
    MF_API_EXIT();
    return mf_req_raise(&b, rc, fn);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses)
{
    return mf_req_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                       true, false, "MPI_Waitsome");
}
MF_API_ALIAS(Waitsome);

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses)
{
    return mf_req_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                       false, false, "MPI_Testsome");
}
MF_API_ALIAS(Testsome);

/* ---- Single requests: free, status, cancel ---- */

int PMPI_Request_free(MPI_Request *request)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = request ? mf_p2p_check_request(*request, &r, "MPI_Request_free")
                     : mf_error(MPI_ERR_ARG, "MPI_Request_free: request is NULL");
    if (!rc && !r)
        rc = mf_error(MPI_ERR_REQUEST, "MPI_Request_free: request is MPI_REQUEST_NULL");
    if (!rc && r == mf_request_sent()) {
        *request = MPI_REQUEST_NULL; /* the shared finished send: nothing of its own to free */
    } else if (!rc && r->pub.r_kind == MF_REQ_GREQ && !r->pub.r_complete) {
        /* The program may still complete it through a copy of the handle: the handle stays
         * valid until MPI_Grequest_complete, which then runs the free callback. */
        r->rq_released = true;
        *request = MPI_REQUEST_NULL;
    } else if (!rc) {
        if (r->pub.r_kind == MF_REQ_GREQ)
            rc = r->rq_greq_free(r->rq_greq_state);
        if (r->pub.r_persistent && r->rq_inner)
            mf_request_free(r->rq_inner); /* finishes in the background */
        r->rq_inner = NULL;
        mf_request_handle_free(r);
        r->pub.r_active = r->pub.r_active && !r->pub.r_persistent;
        mf_request_free(r);
        *request = MPI_REQUEST_NULL;
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Request_free");
}
MF_API_ALIAS(Request_free);

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return mf_req_test(&request, flag, status, true, "MPI_Request_get_status");
}
MF_API_ALIAS(Request_get_status);

/* The array forms take const handles: with `keep` nothing writes to the array. */
int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status *array_of_statuses)
{
    return mf_req_test_all(count, (MPI_Request *)array_of_requests, flag, array_of_statuses, true,
                           "MPI_Request_get_status_all");
}
MF_API_ALIAS(Request_get_status_all);

int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *indx,
                                int *flag, MPI_Status *status)
{
    const char *fn = "MPI_Request_get_status_any";
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "%s: flag is NULL", fn), fn);
    return mf_req_any(count, (MPI_Request *)array_of_requests, indx, flag, status, false, true, fn);
}
MF_API_ALIAS(Request_get_status_any);

int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                 int array_of_indices[], MPI_Status *array_of_statuses)
{
    return mf_req_some(incount, (MPI_Request *)array_of_requests, outcount, array_of_indices,
                       array_of_statuses, false, true, "MPI_Request_get_status_some");
}
MF_API_ALIAS(Request_get_status_some);

int PMPI_Cancel(MPI_Request *request)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = request ? mf_p2p_check_request(*request, &r, "MPI_Cancel")
                     : mf_error(MPI_ERR_ARG, "MPI_Cancel: request is NULL");
    if (!rc && !r)
        rc = mf_error(MPI_ERR_REQUEST, "MPI_Cancel: request is MPI_REQUEST_NULL");
    if (!rc && r->pub.r_kind == MF_REQ_GREQ)
        rc = r->rq_greq_cancel(r->rq_greq_state, r->pub.r_complete);
    else if (!rc && mf_req_op(r))
        mf_p2p_cancel(mf_req_op(r)); /* a send, or a matched receive, completes normally */
    if (!rc)
        mf_progress_kick(); /* outside any pass: a thread may sleep in MPI_Wait on it */
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Cancel");
}
MF_API_ALIAS(Cancel);

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return mf_err_no_object(
            mf_error(MPI_ERR_ARG, "MPI_Test_cancelled: %s is NULL", !status ? "status" : "flag"),
            "MPI_Test_cancelled");
    *flag = mf_status_cancelled(status);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Test_cancelled);

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Status_set_cancelled: status is %s",
                                         status ? "MPI_STATUS_IGNORE" : "NULL"),
                                "MPI_Status_set_cancelled");
    mf_status_set_cancelled(status, flag != 0);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Status_set_cancelled);
