/*
 * nbc.c — the schedule engine of nonblocking and persistent collectives (see nbc.h and
 * nbc_impl.h): building blocks, running rounds from a progress source, tags, requests.
 *
 * Request life: the collective's request (MF_REQ_COLL) is active with one protocol step
 * outstanding (rq_busy = 1) while its schedule runs; the schedule's end drops that step with
 * mf_request_unbusy, which completes the request with s_error and frees it if the user already
 * released it (MPI_Request_free on a running collective). A persistent request holds a step
 * too, for the whole of its life, so that MPI_Request_free does not destroy it under the
 * arguments it keeps; the progress source notices the release, frees the arguments and drops the
 * step.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "coll/nbc_impl.h"
#include "comm/attr.h"
#include "comm/topo.h"
#include "core/error.h"
#include "core/progress.h"
#include "p2p/p2p.h"
#include "tool/mpit.h"

/* ---- Building ---------------------------------------------------------------------------- */

static bool nbc_grow(void **arr, int *cap, int n, size_t elem, mf_nbc_sched *s)
{
    if (n < *cap)
        return true;
    int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p) {
        if (!s->s_error)
            s->s_error = mf_coll_nomem();
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

/* Retains dt for the schedule's life. */
static void nbc_hold(mf_nbc_sched *s, mf_datatype *dt)
{
    if (!dt || !nbc_grow((void **)&s->s_dts, &s->s_capdts, s->s_ndts, sizeof *s->s_dts, s))
        return;
    mf_datatype_retain(dt);
    s->s_dts[s->s_ndts++] = dt;
}

static mf_nbc_op *nbc_add(mf_nbc_sched *s, mf_nbc_op_kind kind)
{
    if (s->s_error || !nbc_grow((void **)&s->s_ops, &s->s_capops, s->s_nops, sizeof *s->s_ops, s))
        return NULL;
    mf_nbc_op *o = &s->s_ops[s->s_nops++];
    memset(o, 0, sizeof *o);
    o->o_kind = kind;
    o->o_round = s->s_round;
    return o;
}

void mf_nbc_send(mf_nbc_sched *s, const void *buf, MPI_Count count, mf_datatype *dt, int peer,
                 mf_comm *comm)
{
    mf_nbc_op *o = nbc_add(s, MF_NBC_OP_SEND);
    if (!o)
        return;
    o->o_comm = comm;
    o->o_peer = peer;
    o->o_src = buf;
    o->o_scount = count;
    o->o_sdt = dt;
    nbc_hold(s, dt);
}

void mf_nbc_recv(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int peer,
                 mf_comm *comm)
{
    mf_nbc_op *o = nbc_add(s, MF_NBC_OP_RECV);
    if (!o)
        return;
    o->o_comm = comm;
    o->o_peer = peer;
    o->o_dst = buf;
    o->o_rcount = count;
    o->o_rdt = dt;
    nbc_hold(s, dt);
}

void mf_nbc_copy(mf_nbc_sched *s, const void *src, MPI_Count scount, mf_datatype *sdt, void *dst,
                 MPI_Count rcount, mf_datatype *rdt)
{
    mf_nbc_op *o = nbc_add(s, MF_NBC_OP_COPY);
    if (!o)
        return;
    o->o_src = src;
    o->o_scount = scount;
    o->o_sdt = sdt;
    o->o_dst = dst;
    o->o_rcount = rcount;
    o->o_rdt = rdt;
    nbc_hold(s, sdt);
    nbc_hold(s, rdt);
}

void mf_nbc_reduce(mf_nbc_sched *s, const void *in, void *inout, MPI_Count count, mf_datatype *dt,
                   mf_op *op)
{
    mf_nbc_op *o = nbc_add(s, MF_NBC_OP_REDUCE);
    if (!o)
        return;
    o->o_src = in;
    o->o_dst = inout;
    o->o_scount = count;
    o->o_sdt = dt;
    o->o_op = op;
    nbc_hold(s, dt);
    if (!s->s_op) {
        s->s_op = op;
        mf_op_retain(op);
    }
}

void mf_nbc_callback(mf_nbc_sched *s, mf_nbc_fn fn, void *arg)
{
    mf_nbc_op *o = nbc_add(s, MF_NBC_OP_CALL);
    if (!o)
        return;
    o->o_fn = fn;
    o->o_arg = arg;
}

void mf_nbc_round(mf_nbc_sched *s)
{
    if (s->s_nops > 0 && s->s_ops[s->s_nops - 1].o_round == s->s_round)
        s->s_round++;
}

void *mf_nbc_tmp(mf_nbc_sched *s, MPI_Count count, mf_datatype *dt)
{
    if (s->s_error ||
        !nbc_grow((void **)&s->s_bufs, &s->s_capbufs, s->s_nbufs, sizeof *s->s_bufs, s))
        return NULL;
    void *raw;
    int rc = MPI_SUCCESS;
    void *p = mf_coll_tmp(count, dt, &raw, &rc);
    if (!p) {
        s->s_error = rc;
        return NULL;
    }
    s->s_bufs[s->s_nbufs++] = raw;
    return p;
}

static void nbc_sched_free(mf_nbc_sched *s)
{
    if (s->s_cleanup)
        s->s_cleanup(s->s_cleanup_arg);
    for (int i = 0; i < s->s_nreqs; i++)
        mf_request_free(s->s_reqs[i]);
    for (int i = 0; i < s->s_nbufs; i++)
        free(s->s_bufs[i]);
    for (int i = 0; i < s->s_ndts; i++)
        mf_datatype_release(s->s_dts[i]);
    if (s->s_op)
        mf_op_release(s->s_op);
    free(s->s_reqs);
    free(s->s_bufs);
    free(s->s_dts);
    free(s->s_ops);
    free(s);
}

/* ---- Tags: a per-communicator sequence number kept as a hidden attribute ------------------ */

static int nbc_keyval = MPI_KEYVAL_INVALID;

static int nbc_next_tag(mf_comm *c, int *tag)
{
    static const char fn[] = "nonblocking collective";
    int rc = MPI_SUCCESS, flag = 0;
    void *val = NULL;
    /* No copy callback: a duplicate starts its own sequence at 0 on every process. */
    if (nbc_keyval == MPI_KEYVAL_INVALID)
        rc = mf_keyval_create(MF_ATTR_COMM, NULL, NULL, NULL, &nbc_keyval, fn);
    if (!rc)
        rc = mf_attr_get(MF_ATTR_COMM, c->c_handle, &c->c_attrs, nbc_keyval, &val, &flag, fn);
    uintptr_t seq = flag ? (uintptr_t)val : 0;
    if (!rc)
        rc = mf_attr_set(MF_ATTR_COMM, c->c_handle, &c->c_attrs, nbc_keyval, (void *)(seq + 1), fn);
    *tag = MF_NBC_TAG_BASE + (int)(seq % MF_NBC_TAG_SPAN);
    return rc;
}

/* ---- Running ----------------------------------------------------------------------------- */

static mf_nbc_sched *nbc_active;

/* Persistent requests and the arguments they keep. */
typedef struct mf_nbc_persist {
    mf_nbc_args p_args;
    int p_tag; /* taken at initialisation: every start's transfers use it (nbc.h) */
    mf_request *p_req;
    struct mf_nbc_persist *p_next;
} mf_nbc_persist;

static mf_nbc_persist *nbc_persistent;

/* What the schedules cost, for tools and for the tests that check each algorithm's shape
 * (MPI_T coll_nbc_*): rounds that posted transfers (dependent steps), transfers posted, and
 * bytes of data sent. Bumped under the library lock. */
static mf_t_counter nbc_rounds, nbc_transfers, nbc_bytes_sent;

static void nbc_publish_counters(void)
{
    static const mf_t_counter_def vars[] = {
        {"coll_nbc_rounds",
         "rounds of nonblocking or persistent collective schedules that posted transfers: the "
         "dependent steps of their algorithms (rounds of local copies and reductions only are "
         "not counted)",
         &nbc_rounds},
        {"coll_nbc_transfers", "sends and receives posted by nonblocking collective schedules",
         &nbc_transfers},
        {"coll_nbc_bytes_sent", "bytes of data sent by nonblocking collective schedules",
         &nbc_bytes_sent},
    };
    mf_t_counters_register("coll", MPI_T_VERBOSITY_TUNER_DETAIL, vars,
                           sizeof vars / sizeof vars[0]);
}

static void nbc_start_op(mf_nbc_sched *s, mf_nbc_op *o)
{
    int rc = MPI_SUCCESS;
    mf_request *r = NULL;
    switch (o->o_kind) {
    case MF_NBC_OP_CALL:
        /* What fn appends goes to the rounds after this one; it may move s_ops, so o is not
         * used after the call. */
        if (s->s_round <= o->o_round)
            s->s_round = o->o_round + 1;
        o->o_fn(s, o->o_arg);
        return;
    case MF_NBC_OP_COPY:
        rc = mf_coll_copy(o->o_src, o->o_scount, o->o_sdt, o->o_dst, o->o_rcount, o->o_rdt);
        break;
    case MF_NBC_OP_REDUCE:
        rc = mf_op_apply(o->o_op, o->o_src, o->o_dst, o->o_scount, o->o_sdt);
        break;
    case MF_NBC_OP_SEND:
    case MF_NBC_OP_RECV:
        if (!nbc_grow((void **)&s->s_reqs, &s->s_capreqs, s->s_nreqs, sizeof *s->s_reqs, s))
            return;
        mf_t_count_serial(&nbc_transfers, 1);
        if (o->o_kind == MF_NBC_OP_SEND) {
            mf_t_count_serial(&nbc_bytes_sent, mf_coll_bytes(o->o_scount, o->o_sdt));
            rc = mf_isend_standard(o->o_src, o->o_scount, o->o_sdt, o->o_peer, s->s_tag, o->o_comm,
                                   MF_CTX_COLL, &r);
        } else {
            rc = mf_irecv(o->o_dst, o->o_rcount, o->o_rdt, o->o_peer, s->s_tag, o->o_comm,
                          MF_CTX_COLL, &r);
        }
        if (!rc)
            s->s_reqs[s->s_nreqs++] = r;
        break;
    }
    if (rc && !s->s_error)
        s->s_error = rc;
}

/* Whether a schedule's round has ended (all its transfers complete): its next round can start. */
static bool nbc_round_done(const mf_nbc_sched *s)
{
    for (int i = 0; i < s->s_nreqs; i++)
        if (!mf_request_info(s->s_reqs[i])->r_complete)
            return false;
    return true;
}

/* Runs the schedule as far as it can go; true when it has ended (completed or failed). */
static bool nbc_advance(mf_nbc_sched *s, int *events)
{
    for (;;) {
        if (!nbc_round_done(s))
            return false;
        for (int i = 0; i < s->s_nreqs; i++) {
            int err = mf_request_info(s->s_reqs[i])->r_status.MPI_ERROR;
            if (err && mf_error_class(err) == MPI_ERR_TRUNCATE) {
                if (!s->s_truncated)
                    s->s_truncated = err;
            } else if (err && !s->s_error) {
                s->s_error = err;
            }
            mf_request_free(s->s_reqs[i]);
        }
        s->s_nreqs = 0;
        if (s->s_error || s->s_next == s->s_nops)
            return true;
        (*events)++;
        int round = s->s_ops[s->s_next].o_round;
        while (s->s_next < s->s_nops && s->s_ops[s->s_next].o_round == round && !s->s_error)
            nbc_start_op(s, &s->s_ops[s->s_next++]);
        if (s->s_nreqs > 0)
            mf_t_count_serial(&nbc_rounds, 1);
    }
}

/* Completes the collective's request and frees the schedule. */
static void nbc_finish(mf_nbc_sched *s)
{
    mf_request *r = s->s_req;
    int error = s->s_error ? s->s_error : s->s_truncated;
    nbc_sched_free(s);
    mf_request_end(r, error);
}

static void nbc_persist_reap(void);

static int nbc_progress(void *arg)
{
    (void)arg;
    static bool running;
    int events = 0;
    if (running)
        return 0;
    running = true;
    mf_nbc_sched *next;
    for (mf_nbc_sched *s = nbc_active; s; s = next) {
        next = s->s_next_active;
        if (!nbc_advance(s, &events))
            continue;
        if (s->s_prev_active)
            s->s_prev_active->s_next_active = s->s_next_active;
        else
            nbc_active = s->s_next_active;
        if (s->s_next_active)
            s->s_next_active->s_prev_active = s->s_prev_active;
        nbc_finish(s);
        events++;
    }
    nbc_persist_reap();
    running = false;
    return events;
}

/* No sleep while a round has ended unseen: its transfers can complete outside the source's pass
 * (a waiter's own pass, another thread), and the next round's peers wait for us. */
static long long nbc_sleep_ns(void *arg)
{
    (void)arg;
    for (const mf_nbc_sched *s = nbc_active; s; s = s->s_next_active)
        if (nbc_round_done(s))
            return 0;
    return -1;
}

static mf_progress_source nbc_source = {.fd = -1, .poll = nbc_progress, .sleep_ns = nbc_sleep_ns};

/* The source stays added once added (until the engine is finalized): it costs a pointer test
 * when nothing runs. */
static int nbc_source_ensure(void)
{
    if (nbc_source.added)
        return MPI_SUCCESS;
    int rc = mf_progress_source_add(&nbc_source);
    if (rc == MPI_SUCCESS)
        nbc_publish_counters();
    return rc;
}

/* Scans and neighbourhood collectives are not defined on intercommunicators (MPI-4.0 6.2.2,
 * 8.6); every other collective is. */
static bool nbc_inter_ok(mf_nbc_kind k)
{
    return k != MF_NBC_SCAN && k != MF_NBC_EXSCAN && k != MF_NBC_NEIGHBOR;
}

static int nbc_check_comm(const mf_nbc_args *a, const mf_comm *comm, const char *fn)
{
    if (comm->c_is_inter && !nbc_inter_ok(a->a_kind))
        return mf_error(MPI_ERR_COMM,
                        "%s: comm is an intercommunicator, on which this collective is not "
                        "defined",
                        fn);
    return MPI_SUCCESS;
}

/* A schedule on comm whose transfers use `tag`, or the comm's next tag when tag < 0. */
static int nbc_sched_new(mf_comm *comm, int tag, const char *fn, mf_nbc_sched **out)
{
    int rc = nbc_source_ensure();
    if (rc)
        return rc;
    mf_request *r = mf_request_new(MF_REQ_COLL, comm);
    mf_nbc_sched *s = r ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        if (r)
            mf_request_free(r);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a collective schedule", fn);
    }
    s->s_comm = comm;
    s->s_req = r;
    s->s_tag = tag;
    if (tag < 0 && (rc = nbc_next_tag(comm, &s->s_tag))) {
        nbc_sched_free(s);
        mf_request_free(r);
        return rc;
    }
    *out = s;
    return MPI_SUCCESS;
}

int mf_nbc_sched_new(mf_comm *comm, const char *fn, mf_nbc_sched **out)
{
    return nbc_sched_new(comm, -1, fn, out);
}

int mf_nbc_sched_launch(mf_nbc_sched *s, mf_request **out)
{
    mf_request *r = s->s_req;
    int rc = s->s_error;
    if (rc) {
        nbc_sched_free(s);
        mf_request_free(r);
        return rc;
    }
    mf_request_hold(r);
    int events = 0;
    if (nbc_advance(s, &events)) {
        nbc_finish(s);
    } else {
        s->s_next_active = nbc_active;
        if (nbc_active)
            nbc_active->s_prev_active = s;
        nbc_active = s;
    }
    *out = r;
    return MPI_SUCCESS;
}

/* Builds and starts `a` on comm, its transfers on `tag` (< 0: the comm's next tag). */
static int nbc_istart(const mf_nbc_args *a, mf_comm *comm, int tag, const char *fn,
                      mf_request **out)
{
    mf_nbc_sched *s;
    int rc = nbc_check_comm(a, comm, fn);
    if (!rc)
        rc = nbc_sched_new(comm, tag, fn, &s);
    if (rc)
        return rc;
    if ((rc = mf_nbc_build(s, a, fn)) && !s->s_error)
        s->s_error = rc;
    return mf_nbc_sched_launch(s, out);
}

int mf_nbc_istart(const mf_nbc_args *a, mf_comm *comm, mf_request **out)
{
    return nbc_istart(a, comm, -1, "nonblocking collective", out);
}

/* ---- Persistent requests ----------------------------------------------------------------- */

/* How many entries each array of `a` has at this process (0: not significant here). */
static void nbc_array_lens(const mf_nbc_args *a, const mf_comm *c, int *ns, int *nr)
{
    int n = mf_comm_peer_size(c);
    bool root = c->c_is_inter ? a->a_root == MPI_ROOT : c->c_rank == a->a_root;
    *ns = *nr = 0;
    switch (a->a_kind) {
    case MF_NBC_GATHERV:
        *nr = root ? n : 0;
        break;
    case MF_NBC_SCATTERV:
        *ns = root ? n : 0;
        break;
    case MF_NBC_ALLGATHERV:
        *nr = n;
        break;
    case MF_NBC_ALLTOALLV:
    case MF_NBC_ALLTOALLW:
        *ns = a->a_sbuf == MPI_IN_PLACE ? 0 : n;
        *nr = n;
        break;
    case MF_NBC_REDUCE_SCATTER:
        *nr = c->c_size;
        break;
    case MF_NBC_NEIGHBOR: {
        int *src, *dst;
        bool owned = false;
        if (mf_topo_neighbors(c, nr, &src, ns, &dst, &owned))
            *ns = *nr = 0;
        if (owned) {
            free(src);
            free(dst);
        }
        break;
    }
    default:
        break;
    }
}

static void *nbc_dup(const void *p, size_t bytes, bool *failed)
{
    if (!p || !bytes)
        return NULL;
    void *q = malloc(bytes);
    if (!q)
        *failed = true;
    else
        memcpy(q, p, bytes);
    return q;
}

static void nbc_args_release(mf_nbc_args *a, int ns, int nr)
{
    if (a->a_sdt)
        mf_datatype_release(a->a_sdt);
    if (a->a_rdt)
        mf_datatype_release(a->a_rdt);
    for (int i = 0; a->a_sdts && i < ns; i++)
        mf_datatype_release(a->a_sdts[i]);
    for (int i = 0; a->a_rdts && i < nr; i++)
        mf_datatype_release(a->a_rdts[i]);
    if (a->a_op)
        mf_op_release(a->a_op);
    free((void *)a->a_scounts);
    free((void *)a->a_sdispls);
    free((void *)a->a_sdts);
    free((void *)a->a_rcounts);
    free((void *)a->a_rdispls);
    free((void *)a->a_rdts);
}

/* A copy of `a` that owns its arrays and holds its datatypes and op. */
static int nbc_args_keep(const mf_nbc_args *a, const mf_comm *c, mf_nbc_args *k, const char *fn)
{
    int ns, nr;
    bool failed = false;
    nbc_array_lens(a, c, &ns, &nr);
    *k = *a;
    k->a_scounts = nbc_dup(a->a_scounts, (size_t)ns * sizeof(MPI_Count), &failed);
    k->a_sdispls = nbc_dup(a->a_sdispls, (size_t)ns * sizeof(MPI_Aint), &failed);
    k->a_rcounts = nbc_dup(a->a_rcounts, (size_t)nr * sizeof(MPI_Count), &failed);
    k->a_rdispls = nbc_dup(a->a_rdispls, (size_t)nr * sizeof(MPI_Aint), &failed);
    k->a_sdts = nbc_dup(a->a_sdts, (size_t)ns * sizeof(mf_datatype *), &failed);
    k->a_rdts = nbc_dup(a->a_rdts, (size_t)nr * sizeof(mf_datatype *), &failed);
    if (k->a_sdt)
        mf_datatype_retain(k->a_sdt);
    if (k->a_rdt)
        mf_datatype_retain(k->a_rdt);
    for (int i = 0; k->a_sdts && i < ns; i++)
        mf_datatype_retain(k->a_sdts[i]);
    for (int i = 0; k->a_rdts && i < nr; i++)
        mf_datatype_retain(k->a_rdts[i]);
    if (k->a_op)
        mf_op_retain(k->a_op);
    if (failed) {
        nbc_args_release(k, ns, nr);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory to keep the arguments", fn);
    }
    return MPI_SUCCESS;
}

/* Frees the arguments of released persistent requests and lets the requests go. */
static void nbc_persist_reap(void)
{
    for (mf_nbc_persist **pp = &nbc_persistent; *pp;) {
        mf_nbc_persist *p = *pp;
        if (!mf_request_released(p->p_req)) {
            pp = &p->p_next;
            continue;
        }
        *pp = p->p_next;
        int ns, nr;
        nbc_array_lens(&p->p_args, mf_request_info(p->p_req)->r_comm, &ns, &nr);
        nbc_args_release(&p->p_args, ns, nr);
        mf_request *r = p->p_req;
        free(p);
        mf_request_unbusy(r);
    }
}

static int nbc_persist_new(const mf_nbc_args *a, mf_comm *comm, const char *fn, mf_request **out)
{
    int rc = nbc_check_comm(a, comm, fn);
    if (!rc)
        rc = nbc_source_ensure();
    if (rc)
        return rc;
    mf_nbc_persist *p = calloc(1, sizeof *p);
    mf_request *r = p ? mf_request_new(MF_REQ_COLL, comm) : NULL;
    if (!r) {
        free(p);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a persistent request", fn);
    }
    if ((rc = nbc_next_tag(comm, &p->p_tag)) || (rc = nbc_args_keep(a, comm, &p->p_args, fn))) {
        free(p);
        mf_request_free(r);
        return rc;
    }
    mf_request_hold_persistent(r, p); /* the operation as posted: its kept arguments */
    p->p_req = r;
    p->p_next = nbc_persistent;
    nbc_persistent = p;
    *out = r;
    return MPI_SUCCESS;
}

int mf_nbc_start(mf_request *p)
{
    mf_nbc_persist *k = mf_request_owner_data(p);
    return nbc_istart(&k->p_args, mf_request_info(p)->r_comm, k->p_tag, "MPI_Start",
                      mf_request_inner(p));
}

int mf_nbc_post(const mf_nbc_call *call, const mf_nbc_args *a, mf_comm *comm, const char *fn)
{
    if (!call->nc_request)
        return mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
    mf_request *r = NULL;
    int rc =
        call->nc_persistent ? nbc_persist_new(a, comm, fn, &r) : nbc_istart(a, comm, -1, fn, &r);
    if (rc)
        return rc;
    rc = mf_request_handle(r, call->nc_request);
    if (rc)
        mf_request_free(r); /* a started collective still ends, in the background */
    return rc;
}
