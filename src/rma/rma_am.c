/*
 * rma_am.c — the emulated back end: operations as active messages over point-to-point on the
 * window's private communicator (see rma.h for the protocol), origin and target side, and the
 * progress source that serves every window.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll/op.h"
#include "core/bufcache.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "datatype/status.h"
#include "fabric/shm/shm_wake.h"
#include "rma/rma.h"

/* A payload or reply this rank sent; freed once the send completed. */
struct mf_rma_send {
    mf_request *s_req;
    void *s_buf;
    struct mf_rma_send *s_next;
};

/* An origin operation waiting for its reply. */
struct mf_rma_op {
    int o_target;
    mf_request *o_reply;
    void *o_tmp; /* reply bytes, unpacked into o_result at the end */
    size_t o_bytes;
    void *o_result;
    MPI_Count o_count;
    mf_datatype *o_dt;
    mf_request *o_user; /* request-based operations */
    struct mf_rma_op *o_next;
};

/* An operation arrived at the target. */
struct mf_rma_tgt {
    mf_rma_hdr t_hdr;
    int t_source;
    mf_request *t_req; /* payload receive, NULL without payload */
    unsigned char *t_payload;
    struct mf_rma_tgt *t_next;
};

static mf_win *rma_windows;
static bool rma_serving; /* inside rma_serve_all: a nested pass does not serve again */
static int rma_serve_all(void *arg);
static long long rma_sleep_ns(void *arg);
static mf_progress_source rma_source = {.fd = -1, .poll = rma_serve_all, .sleep_ns = rma_sleep_ns};

static mf_datatype *rma_byte(void)
{
    return mf_datatype_get(MPI_BYTE);
}

/* Copies `bytes` of the stream of count elements of dt at buf into `out` (pack) or out of `in`
 * (unpack): a memcpy for contiguous types, which is what the latency of put and get is made of. */
static void rma_pack(mf_datatype *dt, const void *buf, MPI_Count count, void *out, size_t bytes)
{
    const struct mf_datatype_public *di = mf_datatype_info(dt);
    if (di->dt_contig)
        mf_rma_copy(out, (const char *)buf + di->dt_true_lb, bytes);
    else
        mf_datatype_pack(dt, buf, (size_t)count, 0, out, bytes);
}

static void rma_unpack(mf_datatype *dt, void *buf, MPI_Count count, const void *in, size_t bytes)
{
    const struct mf_datatype_public *di = mf_datatype_info(dt);
    if (di->dt_contig)
        mf_rma_copy((char *)buf + di->dt_true_lb, in, bytes);
    else
        mf_datatype_unpack(dt, buf, (size_t)count, 0, in, bytes);
}

/* Serves the window from the progress source (added with the first window, removed with the
 * last). */
static int rma_serve_attach(mf_win *w)
{
    if (!rma_source.added) {
        int rc = mf_progress_source_add(&rma_source);
        if (rc)
            return rc;
    }
    w->w_next = rma_windows;
    rma_windows = w;
    return MPI_SUCCESS;
}

static void rma_serve_detach(mf_win *w)
{
    for (mf_win **p = &rma_windows; *p; p = &(*p)->w_next) {
        if (*p == w) {
            *p = w->w_next;
            break;
        }
    }
    if (!rma_windows)
        mf_progress_source_remove(&rma_source);
}

static bool rma_done(mf_request *r)
{
    return !r || mf_request_info(r)->r_complete;
}

/* Sends `len` bytes at data to rank; mem (of mf_bufcache_get, holding data, or NULL) is taken
 * over and given back once the send completed. */
static int rma_send_in(mf_win *w, void *mem, const void *data, size_t len, int rank, int tag)
{
    struct mf_rma_send *s = calloc(1, sizeof *s);
    if (!s) {
        mf_bufcache_put(mem);
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a send");
    }
    int rc = mf_isend(data, (MPI_Count)len, rma_byte(), rank, tag, w->w_comm, MF_CTX_P2P,
                      MF_SEND_STANDARD, &s->s_req);
    if (rc) {
        mf_bufcache_put(mem);
        free(s);
        return rc;
    }
    s->s_buf = mem;
    s->s_next = w->w_sends;
    w->w_sends = s;
    return MPI_SUCCESS;
}

/* The same for a buffer that is all data. */
static int rma_send(mf_win *w, void *buf, size_t len, int rank, int tag)
{
    return rma_send_in(w, buf, buf, len, rank, tag);
}

static int rma_reap_sends(mf_win *w)
{
    int n = 0;
    for (struct mf_rma_send **p = &w->w_sends; *p;) {
        struct mf_rma_send *s = *p;
        if (!rma_done(s->s_req)) {
            p = &s->s_next;
            continue;
        }
        *p = s->s_next;
        mf_request_free(s->s_req);
        mf_bufcache_put(s->s_buf);
        free(s);
        n++;
    }
    return n;
}

static int rma_post_hdr(mf_win *w)
{
    return mf_irecv(w->w_hdr_in, MF_RMA_MSG_MAX, rma_byte(), MPI_ANY_SOURCE, MF_RMA_TAG_HDR,
                    w->w_comm, MF_CTX_P2P, &w->w_hdr_req);
}

/* ---- target side -------------------------------------------------------------------------- */

/* Copies between the target segments at `base` (NULL: the offsets are addresses, dynamic
 * windows) and a contiguous stream (gather: window -> stream). */
static void rma_segments(char *base, const mf_rma_hdr *h, const int64_t *seg, char *stream,
                         bool gather)
{
    size_t at = 0;
    for (int i = 0; i < h->h_nseg; i++) {
        int64_t off = h->h_disp + seg[2 * i];
        char *addr = base ? base + off : (char *)(uintptr_t)off;
        size_t len = (size_t)seg[2 * i + 1];
        if (gather)
            memcpy(stream + at, addr, len);
        else
            memcpy(addr, stream + at, len);
        at += len;
    }
}

/* cur = in op cur over `bytes` of stream of basic type `type`: unpacked to element layout
 * (pair types have gaps), reduced with the op kernels, packed back. */
static int rma_reduce(MPI_Datatype type, MPI_Op op, const char *in, char *cur, size_t bytes)
{
    if (op == MPI_NO_OP)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) {
        memcpy(cur, in, bytes);
        return MPI_SUCCESS;
    }
    mf_datatype *dt = mf_datatype_get(type);
    const mf_op *o = mf_op_get(op);
    if (!dt || !o || !mf_datatype_info(dt)->dt_builtin || !o->op_builtin)
        return mf_error(MPI_ERR_OP, "RMA accumulate: bad type or op from the origin");
    const struct mf_datatype_public *di = mf_datatype_info(dt);
    size_t n = di->dt_size ? bytes / di->dt_size : 0;
    char *a = malloc(n * (size_t)di->dt_extent + 1), *b = malloc(n * (size_t)di->dt_extent + 1);
    int rc = MPI_SUCCESS;
    if (!a || !b) {
        rc = mf_error(MPI_ERR_NO_MEM, "RMA accumulate: no memory for %zu elements", n);
    } else {
        mf_datatype_unpack(dt, a, n, 0, in, bytes);
        mf_datatype_unpack(dt, b, n, 0, cur, bytes);
        rc = mf_op_apply(o, a, b, (MPI_Count)n, dt);
        if (!rc)
            mf_datatype_pack(dt, b, n, 0, cur, bytes);
    }
    free(a);
    free(b);
    return rc;
}

/* Sends the reply of an operation: `len` bytes of buf (taken over; NULL for an ack). */
static int rma_reply(mf_win *w, const struct mf_rma_tgt *t, void *buf, size_t len)
{
    return rma_send(w, buf, len, t->t_source, t->t_hdr.h_reply_tag);
}

/* Whether a lock word holding v admits a holder of `type` (MPI_LOCK_SHARED: no exclusive
 * holder; exclusive: no holder at all). */
static bool rma_lock_fits(int v, int type)
{
    return type == MPI_LOCK_SHARED ? v >= 0 : v == 0;
}

/* Takes a passive-target lock word for a shared (MPI_LOCK_SHARED) or exclusive holder if it
 * is free enough now. */
static bool rma_lock_try(int *word, int type)
{
    int v = __atomic_load_n(word, __ATOMIC_RELAXED);
    if (!rma_lock_fits(v, type))
        return false;
    return __atomic_compare_exchange_n(word, &v, type == MPI_LOCK_SHARED ? v + 1 : -1, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void rma_lock_release(int *word)
{
    if (__atomic_load_n(word, __ATOMIC_RELAXED) < 0)
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    else
        __atomic_fetch_sub(word, 1, __ATOMIC_RELEASE);
}

static int rma_lock_type(const struct mf_rma_tgt *t)
{
    return t->t_hdr.h_kind == MF_RMA_LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
}

/* Grants waiting lock requests in arrival order while they fit (on every progress pass: a
 * same-host origin releasing the word sends nothing, though it wakes us: s_queued). */
static int rma_lock_drain(mf_win *w)
{
    int rc = MPI_SUCCESS;
    struct mf_rma_slot *slot = mf_rma_own_slot(w);
    while (!rc && w->w_lq_head && rma_lock_try(&slot->s_rw, rma_lock_type(w->w_lq_head))) {
        struct mf_rma_tgt *t = w->w_lq_head;
        if (!(w->w_lq_head = t->t_next))
            w->w_lq_tail = NULL;
        rc = rma_reply(w, t, NULL, 0);
        free(t);
    }
    if (!w->w_lq_head)
        __atomic_store_n(&slot->s_queued, 0, __ATOMIC_RELAXED);
    return rc;
}

/* Queues a lock request that does not fit now, and tells same-host origins to wake us when they
 * release the word. The store is ordered before our next look at the word by the fence in
 * rma_sleep_ns, the releaser's by its own fence (mf_rma_direct_unlock): either the releaser
 * sees the flag, or our look before sleeping sees the word free. */
static void rma_lock_queue(mf_win *w, struct mf_rma_tgt *t)
{
    t->t_next = NULL;
    if (w->w_lq_tail)
        w->w_lq_tail->t_next = t;
    else
        w->w_lq_head = t;
    w->w_lq_tail = t;
    __atomic_store_n(&mf_rma_own_slot(w)->s_queued, 1, __ATOMIC_RELAXED);
}

static int rma_reduce(MPI_Datatype type, MPI_Op op, const char *in, char *cur, size_t bytes);

/* The predefined type and op an accumulate names, or false (handles of derived types and user
 * ops mean nothing across processes). */
static bool rma_acc_type_op(const mf_rma_hdr *h, mf_datatype **dt, const mf_op **op)
{
    *dt = mf_datatype_get(h->h_type);
    *op = mf_op_get(h->h_op);
    return *dt && *op && mf_datatype_info(*dt)->dt_builtin && (*op)->op_builtin;
}

/* Whether an accumulate can be reduced into the window in place: its basic type has no gaps
 * (its packed stream is its memory layout) and every segment holds whole elements. */
static bool rma_in_place_ok(const mf_rma_hdr *h, const int64_t *seg)
{
    mf_datatype *dt;
    const mf_op *op;
    if (!rma_acc_type_op(h, &dt, &op))
        return false;
    const struct mf_datatype_public *di = mf_datatype_info(dt);
    if (!di->dt_size || (MPI_Aint)di->dt_size != di->dt_extent)
        return false;
    for (int i = 0; i < h->h_nseg; i++)
        if ((size_t)seg[2 * i + 1] % di->dt_size)
            return false;
    return true;
}

/* window segments op= data, segment by segment, with the op's own loops (no copies of the
 * target data); the caller checked rma_in_place_ok. */
static void rma_reduce_in_place(char *base, const mf_rma_hdr *h, const int64_t *seg,
                                const char *data)
{
    mf_datatype *dt;
    const mf_op *op;
    rma_acc_type_op(h, &dt, &op);
    size_t at = 0, size = mf_datatype_info(dt)->dt_size;
    for (int i = 0; i < h->h_nseg; i++) {
        int64_t off = h->h_disp + seg[2 * i];
        char *addr = base ? base + off : (char *)(uintptr_t)off;
        size_t len = (size_t)seg[2 * i + 1];
        if (h->h_op == MPI_REPLACE)
            memcpy(addr, data + at, len);
        else
            mf_op_apply(op, data + at, addr, (MPI_Count)(len / size), dt);
        at += len;
    }
}

/* Applies a data operation (put, get, accumulate, get_accumulate, compare-and-swap) to the
 * memory at base; the caller holds the target's atomicity domain. For the fetching kinds
 * *fetched receives the target data as it was (mf_bufcache_get, *bytes long), else NULL. */
static int rma_update(char *base, const mf_rma_hdr *h, const int64_t *seg, char *data,
                      char **fetched, size_t *bytes_out)
{
    size_t bytes = 0;
    for (int i = 0; i < h->h_nseg; i++)
        bytes += (size_t)seg[2 * i + 1];
    *fetched = NULL;
    *bytes_out = bytes;
    if (h->h_kind == MF_RMA_PUT) {
        rma_segments(base, h, seg, data, false);
        return MPI_SUCCESS;
    }
    if ((h->h_kind == MF_RMA_ACC || h->h_kind == MF_RMA_GACC) && rma_in_place_ok(h, seg)) {
        if (h->h_kind == MF_RMA_GACC) {
            if (!(*fetched = mf_bufcache_get(bytes)))
                return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for %zu bytes at the target",
                                bytes);
            rma_segments(base, h, seg, *fetched, true);
        }
        if (h->h_data)
            rma_reduce_in_place(base, h, seg, data);
        return MPI_SUCCESS;
    }
    char *cur = mf_bufcache_get(bytes);
    if (!cur)
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for %zu bytes at the target", bytes);
    rma_segments(base, h, seg, cur, true);
    if (h->h_kind == MF_RMA_GET) {
        *fetched = cur;
        return MPI_SUCCESS;
    }
    char *old = NULL;
    if (h->h_kind != MF_RMA_ACC) {
        if (!(old = mf_bufcache_get(bytes))) {
            mf_bufcache_put(cur);
            return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for %zu bytes at the target", bytes);
        }
        memcpy(old, cur, bytes);
    }
    int rc = MPI_SUCCESS;
    if (h->h_kind == MF_RMA_CAS) {
        if (memcmp(cur, data + bytes, bytes) == 0)
            memcpy(cur, data, bytes);
    } else {
        rc = rma_reduce(h->h_type, h->h_op, data, cur, bytes);
    }
    if (!rc)
        rma_segments(base, h, seg, cur, false);
    mf_bufcache_put(cur);
    if (rc)
        mf_bufcache_put(old);
    else
        *fetched = old;
    return rc;
}

/* Applies one operation. Returns true when t was kept (a lock request queued). */
static int rma_apply(mf_win *w, struct mf_rma_tgt *t, bool *kept)
{
    const mf_rma_hdr *h = &t->t_hdr;
    const int64_t *seg = (const int64_t *)(void *)t->t_payload;
    char *data = (char *)t->t_payload + (size_t)h->h_nseg * 2 * sizeof(int64_t);
    *kept = false;
    switch (h->h_kind) {
    case MF_RMA_LOCK_SHARED:
    case MF_RMA_LOCK_EXCL:
        if (!w->w_lq_head && rma_lock_try(&mf_rma_own_slot(w)->s_rw, rma_lock_type(t)))
            return rma_reply(w, t, NULL, 0);
        rma_lock_queue(w, t);
        *kept = true;
        return MPI_SUCCESS;
    case MF_RMA_UNLOCK:
        rma_lock_release(&mf_rma_own_slot(w)->s_rw);
        int rc = rma_reply(w, t, NULL, 0);
        return rc ? rc : rma_lock_drain(w);
    case MF_RMA_CLOSE:
        w->w_closing = true;
        return rma_reply(w, t, NULL, 0);
    default:
        break;
    }
    char *fetched;
    size_t bytes;
    int *acc = &mf_rma_own_slot(w)->s_acc; /* held by a same-host origin only briefly */
    while (__atomic_exchange_n(acc, 1, __ATOMIC_ACQUIRE))
        sched_yield();
    int rc = rma_update(w->w_flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : (char *)w->w_base, h, seg,
                        data, &fetched, &bytes);
    __atomic_store_n(acc, 0, __ATOMIC_RELEASE);
    if (rc)
        return rc;
    return fetched ? rma_reply(w, t, fetched, bytes) : rma_reply(w, t, NULL, 0);
}

/* What the decoder checks arriving operations against. */
static mf_rma_wire_win rma_wire_win(const mf_win *w)
{
    return (mf_rma_wire_win){.size = (int64_t)w->w_size,
                             .dynamic = w->w_flavor == MPI_WIN_FLAVOR_DYNAMIC};
}

/* An arrived operation that failed the checks is answered with an empty acknowledgement (its
 * origin's flush must not hang) and otherwise dropped, with a warning naming what was wrong. */
static void rma_drop(struct mf_rma_tgt *t, const char *why)
{
    mf_warn("RMA target: dropped an operation from rank %d (%s)", t->t_source, why);
    t->t_hdr.h_kind = MF_RMA_PUT, t->t_hdr.h_nseg = 0, t->t_hdr.h_data = 0;
    t->t_hdr.h_result = 0;
}

/* Checks an arrived operation's payload (rma_drop when it fails) and applies it; frees t unless
 * the lock manager keeps it. The payload stays the caller's. */
static int rma_apply_arrived(mf_win *w, struct mf_rma_tgt *t)
{
    bool kept = false;
    const char *why = NULL;
    mf_rma_wire_win ww = rma_wire_win(w);
    if (mf_rma_wire_check_payload(&t->t_hdr, t->t_payload, &ww, &why) != 0)
        rma_drop(t, why);
    int rc = rma_apply(w, t, &kept);
    t->t_payload = NULL;
    if (!kept)
        free(t);
    return rc;
}

/* Takes arrived headers, posts their payload receives and applies, in arrival order, every
 * operation whose payload is in. */
static int rma_serve(mf_win *w, int *events)
{
    int rc = MPI_SUCCESS;
    while (!rc && w->w_hdr_req && rma_done(w->w_hdr_req)) {
        struct mf_rma_tgt *t = calloc(1, sizeof *t);
        if (!t)
            return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for an arriving operation");
        const struct mf_request_public *ri = mf_request_info(w->w_hdr_req);
        t->t_source = ri->r_status.MPI_SOURCE;
        size_t got = (size_t)mf_status_get_bytes(&ri->r_status), len = 0;
        const char *why = NULL;
        mf_rma_wire_win ww = rma_wire_win(w);
        bool ok = ri->r_status.MPI_ERROR == MPI_SUCCESS &&
                  mf_rma_wire_decode(w->w_hdr_in, got, &ww, &t->t_hdr, &len, &why) == 0;
        mf_request_free(w->w_hdr_req);
        w->w_hdr_req = NULL;
        if (!ok && t->t_hdr.h_reply_tag < MF_RMA_TAG_REPLY) {
            /* nothing to answer on (a tag below the reply range is another protocol's) */
            mf_warn("RMA target: ignored a malformed operation header from rank %d (%s)",
                    t->t_source, why ? why : "truncated");
            free(t);
            rc = rma_post_hdr(w);
            (*events)++;
            continue;
        }
        if (!ok) {
            rma_drop(t, why ? why : "truncated header");
            len = 0;
        }
        bool closing = t->t_hdr.h_kind == MF_RMA_CLOSE;
        if (!w->w_tq_head && (!len || t->t_hdr.h_inline)) {
            /* Complete, with nothing queued ahead of it: applied now, its payload read in place
             * in the header buffer (which is posted again only after). */
            t->t_payload = len ? w->w_hdr_in + sizeof(mf_rma_hdr) : NULL;
            rc = rma_apply_arrived(w, t);
        } else {
            if (len && !(t->t_payload = mf_bufcache_get(len)))
                rc = mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a %zu-byte payload", len);
            else if (len && t->t_hdr.h_inline)
                memcpy(t->t_payload, w->w_hdr_in + sizeof(mf_rma_hdr), len);
            else if (len)
                rc = mf_irecv(t->t_payload, (MPI_Count)len, rma_byte(), t->t_source,
                              MF_RMA_TAG_DATA, w->w_comm, MF_CTX_P2P, &t->t_req);
            if (w->w_tq_tail)
                w->w_tq_tail->t_next = t;
            else
                w->w_tq_head = t;
            w->w_tq_tail = t;
        }
        if (!closing) {
            int prc = rma_post_hdr(w);
            rc = rc ? rc : prc;
        }
        (*events)++;
    }
    while (!rc && w->w_tq_head && rma_done(w->w_tq_head->t_req)) {
        struct mf_rma_tgt *t = w->w_tq_head;
        if (!(w->w_tq_head = t->t_next))
            w->w_tq_tail = NULL;
        if (t->t_req)
            mf_request_free(t->t_req);
        t->t_req = NULL;
        unsigned char *payload = t->t_payload;
        rc = rma_apply_arrived(w, t);
        mf_bufcache_put(payload);
        (*events)++;
    }
    return rc;
}

/* ---- origin side -------------------------------------------------------------------------- */

static void rma_op_finish(mf_win *w, struct mf_rma_op *o)
{
    int err = mf_request_info(o->o_reply)->r_status.MPI_ERROR;
    if (o->o_result && o->o_bytes)
        rma_unpack(o->o_dt, o->o_result, o->o_count, o->o_tmp, o->o_bytes);
    mf_request_free(o->o_reply);
    if (o->o_dt)
        mf_datatype_release(o->o_dt);
    mf_bufcache_put(o->o_tmp);
    w->w_pending[o->o_target]--;
    if (o->o_user)
        mf_request_end(o->o_user, err);
    free(o);
}

static int rma_reap_ops(mf_win *w)
{
    int n = 0;
    for (struct mf_rma_op **p = &w->w_ops; *p;) {
        struct mf_rma_op *o = *p;
        if (!rma_done(o->o_reply)) {
            p = &o->o_next;
            continue;
        }
        *p = o->o_next;
        rma_op_finish(w, o);
        n++;
    }
    return n;
}

/* The source's sleep bound: none, unless a queued lock request fits the word now (a same-host
 * origin released it; the frames of remote origins wake the engine themselves). */
static long long rma_sleep_ns(void *arg)
{
    (void)arg;
    bool fence = false;
    for (mf_win *w = rma_windows; w; w = w->w_next) {
        if (!w->w_lq_head)
            continue;
        if (!fence) {
            __atomic_thread_fence(__ATOMIC_SEQ_CST); /* our flag's store, then the word's load */
            fence = true;
        }
        int v = __atomic_load_n(&mf_rma_own_slot(w)->s_rw, __ATOMIC_RELAXED);
        if (rma_lock_fits(v, rma_lock_type(w->w_lq_head)))
            return 0;
    }
    return -1;
}

static int rma_serve_all(void *arg)
{
    (void)arg;
    if (rma_serving)
        return 0;
    rma_serving = true;
    int events = 0;
    for (mf_win *w = rma_windows; w; w = w->w_next) {
        int rc = rma_serve(w, &events);
        if (!rc && w->w_lq_head)
            rc = rma_lock_drain(w);
        if (rc) {
            /* no caller to hand it to: the origin's operation stays unanswered */
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            mf_error_string(rc, text, &len);
            mf_warn("RMA target: %s", text);
        }
        events += rma_reap_ops(w) + rma_reap_sends(w);
    }
    rma_serving = false;
    return events;
}

/* Registers an operation expecting a reply of `bytes` into result (count elements of dt), posts
 * the reply receive and sends the operation: msg (of mf_bufcache_get, taken over; NULL without
 * payload) has room for the header, then `len` bytes of payload. Header and payload go as one message
 * when they fit the target's header receive, else the payload follows on its own tag. */
static int rma_issue(mf_win *w, mf_rma_hdr *h, int target, void *result, MPI_Count count,
                     mf_datatype *dt, size_t bytes, char *msg, size_t len, mf_request **user,
                     struct mf_rma_op **out)
{
    struct mf_rma_op *o = calloc(1, sizeof *o);
    bool one = len <= MF_RMA_INLINE_MAX;
    mf_rma_hdr *hb = one && msg ? (mf_rma_hdr *)(void *)msg : mf_bufcache_get(sizeof *hb);
    int rc = MPI_SUCCESS;
    if (!o || !hb || (bytes && !(o->o_tmp = mf_bufcache_get(bytes)))) {
        rc = mf_error(MPI_ERR_NO_MEM, "RMA: no memory for an operation");
        goto fail;
    }
    h->h_reply_tag = MF_RMA_TAG_REPLY + (int32_t)(w->w_seq++ % 0x3fff0000u);
    h->h_result = (int64_t)bytes;
    h->h_inline = one && len;
    if ((rc = mf_irecv(o->o_tmp, (MPI_Count)bytes, rma_byte(), target, h->h_reply_tag, w->w_comm,
                       MF_CTX_P2P, &o->o_reply)))
        goto fail;
    memcpy(hb, h, sizeof *h);
    rc = rma_send(w, hb, sizeof *hb + (h->h_inline ? len : 0), target, MF_RMA_TAG_HDR);
    if (hb == (mf_rma_hdr *)(void *)msg)
        msg = NULL; /* taken over by the send */
    hb = NULL;
    if (rc) {
        mf_request_free(o->o_reply); /* never matched: the target got no header */
        goto fail;
    }
    if (msg && len) {
        /* the payload's own message: sent after the header, so matched after it */
        rc = rma_send_in(w, msg, msg + sizeof *h, len, target, MF_RMA_TAG_DATA);
        msg = NULL;
        if (rc)
            goto fail_sent;
    }
    mf_bufcache_put(msg);
    o->o_target = target;
    o->o_bytes = bytes;
    o->o_result = result;
    o->o_count = count;
    if ((o->o_dt = result ? dt : NULL))
        mf_datatype_retain(dt);
    if (user) {
        o->o_user = mf_rma_request_new(w);
        *user = o->o_user;
    }
    o->o_next = w->w_ops;
    w->w_ops = o;
    w->w_pending[target]++;
    if (out)
        *out = o;
    return MPI_SUCCESS;
fail_sent:
    /* the header went: the target answers it; the op stays tracked so that a flush waits */
    o->o_target = target;
    o->o_next = w->w_ops;
    w->w_ops = o;
    w->w_pending[target]++;
    return rc;
fail:
    if (hb != (mf_rma_hdr *)(void *)msg)
        mf_bufcache_put(hb);
    mf_bufcache_put(msg);
    if (o)
        mf_bufcache_put(o->o_tmp);
    free(o);
    return rc;
}

int mf_rma_control(mf_win *w, enum mf_rma_kind kind, int target)
{
    mf_rma_hdr h = {.h_kind = kind};
    return rma_issue(w, &h, target, NULL, 0, NULL, 0, NULL, 0, NULL, NULL);
}

/* The target layout of `count` elements of dt as (offset, length) pairs relative to the
 * target address: the iovecs of a buffer at a fixed reference address, less that address. */
static int rma_layout(mf_datatype *dt, MPI_Count count, int64_t **segs, int *nseg)
{
    static char ref[1];
    size_t total = (size_t)count * mf_datatype_info(dt)->dt_size, at = 0;
    int n = 0, cap = 0;
    int64_t *s = NULL;
    while (at < total) {
        struct iovec iov[64];
        size_t got = 0;
        int k = mf_datatype_iov(dt, ref, (size_t)count, at, iov, 64, &got);
        if (n + k > cap) {
            cap = 2 * (n + k);
            int64_t *t = realloc(s, (size_t)cap * 2 * sizeof *t);
            if (!t) {
                free(s);
                return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a target layout");
            }
            s = t;
        }
        for (int i = 0; i < k; i++) {
            s[2 * (n + i)] = (int64_t)((intptr_t)iov[i].iov_base - (intptr_t)ref);
            s[2 * (n + i) + 1] = (int64_t)iov[i].iov_len;
        }
        n += k;
        at += got;
        if (!got)
            break;
    }
    *segs = s;
    *nseg = n;
    return MPI_SUCCESS;
}

/* ---- direct back end ------------------------------------------------------------------- */

/* A user request complete already (direct operations are complete when they return). */
static int rma_request_done(mf_win *w, mf_request **req)
{
    if (!(*req = mf_rma_request_new(w)))
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a request");
    mf_request_end(*req, MPI_SUCCESS);
    return MPI_SUCCESS;
}

/* Waits for a word in the shared slots to change, serving this rank's own duties meanwhile
 * and letting other threads of this process into the library (one of them may hold the lock
 * this thread waits for). */
static void rma_direct_pause(void)
{
    mf_progress_poll();
    mf_unlock();
    sched_yield();
    mf_lock();
}

/* Applies the operation to the target's part of the mapping under the target's accumulate
 * lock (every operation takes it: put and get stay ordered with accumulates, as the
 * emulation's one-at-a-time service orders them), unpacks what it fetched, frees the
 * payload. Complete on return; a request-based form gets a request complete already. */
static int rma_direct(mf_win *w, const mf_rma_hdr *h, const mf_rma_args *a, char *msg,
                      mf_request **req)
{
    int64_t *payload = (int64_t *)(void *)(msg + sizeof *h);
    struct mf_rma_slot *slot = &w->w_slots[w->w_slot_of[a->target]];
    char *data = (char *)payload + (size_t)h->h_nseg * 2 * sizeof(int64_t), *fetched = NULL;
    size_t bytes = 0;
    while (__atomic_exchange_n(&slot->s_acc, 1, __ATOMIC_ACQUIRE))
        rma_direct_pause();
    int rc = rma_update(w->w_seg + w->w_seg_off[a->target], h, payload, data, &fetched, &bytes);
    __atomic_store_n(&slot->s_acc, 0, __ATOMIC_RELEASE);
    if (!rc && fetched && a->result)
        mf_datatype_unpack(a->result_dt, a->result, (size_t)a->result_count, 0, fetched, bytes);
    mf_bufcache_put(fetched);
    mf_bufcache_put(msg);
    w->w_direct_dirty = true;
    return !rc && req ? rma_request_done(w, req) : rc;
}

int mf_rma_direct_lock(mf_win *w, int rank, int type)
{
    while (!rma_lock_try(&w->w_slots[w->w_slot_of[rank]].s_rw, type))
        rma_direct_pause();
    return MPI_SUCCESS;
}

void mf_rma_direct_unlock(mf_win *w, int rank)
{
    struct mf_rma_slot *slot = &w->w_slots[w->w_slot_of[rank]];
    rma_lock_release(&slot->s_rw);
    /* The word's store, then the flag's load (rma_lock_queue says why). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&slot->s_queued, __ATOMIC_RELAXED))
        mf_shm_wake_rank(mf_comm_peer(w->w_comm, rank));
}

/* ---- direct back end, one block ------------------------------------------------------- */

/* The accumulating kinds on one block `tgt` of `bytes` in the mapping, under the target's
 * accumulate lock: the origin's stream is reduced into the window in place, as an array of
 * the basic type (whose size is its extent: the caller checked), with the op's own loops. */
static int rma_direct_atomic(struct mf_rma_slot *slot, const mf_rma_args *a, char *tgt,
                             size_t bytes)
{
    bool reads = a->kind == MF_RMA_CAS || !(a->op && a->op->op_handle == MPI_NO_OP);
    const char *in = NULL;
    char *tmp = NULL, old[64];
    if (reads && a->origin_dt && !mf_datatype_info(a->origin_dt)->dt_contig) {
        if (!(tmp = malloc(bytes)))
            return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for %zu bytes of origin data", bytes);
        mf_datatype_pack(a->origin_dt, a->origin, (size_t)a->origin_count, 0, tmp, bytes);
        in = tmp;
    } else if (reads) {
        in = (const char *)a->origin + mf_datatype_info(a->origin_dt)->dt_true_lb;
    }
    mf_datatype *basic = mf_datatype_get(mf_datatype_basic_type(a->target_dt));
    int rc = MPI_SUCCESS;
    while (__atomic_exchange_n(&slot->s_acc, 1, __ATOMIC_ACQUIRE))
        rma_direct_pause();
    if (a->kind == MF_RMA_CAS) {
        /* one predefined element (at most 32 bytes); compare may alias result */
        memcpy(old, tgt, bytes);
        if (memcmp(old, (const char *)a->compare + mf_datatype_info(a->origin_dt)->dt_true_lb,
                   bytes) == 0)
            memcpy(tgt, in, bytes);
        rma_unpack(a->result_dt, a->result, a->result_count, old, bytes);
    } else {
        if (a->kind == MF_RMA_GACC)
            rma_unpack(a->result_dt, a->result, a->result_count, tgt, bytes);
        if (reads && a->op->op_handle == MPI_REPLACE)
            memcpy(tgt, in, bytes);
        else if (reads)
            rc = mf_op_apply(a->op, in, tgt, (MPI_Count)(bytes / mf_datatype_info(basic)->dt_size),
                             basic);
    }
    __atomic_store_n(&slot->s_acc, 0, __ATOMIC_RELEASE);
    free(tmp);
    return rc;
}

/* Whether an operation on a same-host target takes the one-block path: the target datatype is
 * one block, and for the accumulating kinds its basic type has no gaps (pair types with
 * padding go through the general path) and fits the compare-and-swap buffer. */
static bool rma_direct_block_ok(const mf_rma_args *a, const struct mf_datatype_public *ti)
{
    if (!ti->dt_contig)
        return false;
    if (a->kind == MF_RMA_PUT || a->kind == MF_RMA_GET)
        return true;
    mf_datatype *basic = mf_datatype_get(mf_datatype_basic_type(a->target_dt));
    if (!basic)
        return false;
    const struct mf_datatype_public *bi = mf_datatype_info(basic);
    return bi->dt_size && (MPI_Aint)bi->dt_size == bi->dt_extent && bi->dt_size <= 64;
}

/* An operation on a same-host target, or on the own part of any window, whose datatype is one
 * block: put and get are one copy between the user buffer and the memory, without the
 * accumulate lock (a put or get that conflicts with another origin's access to the same bytes
 * is erroneous in MPI: nothing to order); the accumulating kinds reduce in place under it, the
 * same lock the target's service of other origins' operations takes. Complete on return. */
static int rma_direct_block(mf_win *w, const mf_rma_args *a, const struct mf_datatype_public *ti,
                            size_t bytes, mf_request **req)
{
    bool shared = mf_rma_direct_to(w, a->target);
    char *part = shared ? w->w_seg + w->w_seg_off[a->target] : (char *)w->w_base;
    char *tgt = part + a->target_disp * w->w_units[a->target] + ti->dt_true_lb;
    int rc = MPI_SUCCESS;
    if (a->kind == MF_RMA_PUT)
        rma_pack(a->origin_dt, a->origin, a->origin_count, tgt, bytes);
    else if (a->kind == MF_RMA_GET)
        rma_unpack(a->result_dt, a->result, a->result_count, tgt, bytes);
    else
        rc = rma_direct_atomic(shared ? &w->w_slots[w->w_slot_of[a->target]] : mf_rma_own_slot(w),
                               a, tgt, bytes);
    w->w_direct_dirty = true;
    if (!rc && req)
        rc = rma_request_done(w, req);
    return rc;
}

mf_request *mf_rma_request_new(mf_win *w)
{
    mf_request *r = mf_request_new(MF_REQ_COLL, w->w_comm);
    if (r) {
        mf_request_hold(r);
        mf_request_set_owner(r, MF_REQ_OWNER_WIN, (intptr_t)w->w_handle);
    }
    return r;
}

int mf_rma_op(mf_win *w, const mf_rma_args *a, mf_request **req, const char *fn)
{
    const struct mf_datatype_public *ti = mf_datatype_info(a->target_dt);
    size_t tbytes = (size_t)a->target_count * ti->dt_size;
    size_t obytes =
        a->origin_dt ? (size_t)a->origin_count * mf_datatype_info(a->origin_dt)->dt_size : 0;
    size_t rbytes =
        a->result_dt ? (size_t)a->result_count * mf_datatype_info(a->result_dt)->dt_size : 0;
    bool sends = a->kind != MF_RMA_GET && !(a->op && a->op->op_handle == MPI_NO_OP);
    bool fetches = a->kind == MF_RMA_GET || a->kind == MF_RMA_GACC || a->kind == MF_RMA_CAS;
    if (sends && obytes != tbytes)
        return mf_error(MPI_ERR_TYPE,
                        "%s: origin data (%zu bytes) and target data (%zu bytes) differ in size",
                        fn, obytes, tbytes);
    if (fetches && rbytes != tbytes)
        return mf_error(MPI_ERR_TYPE,
                        "%s: result buffer (%zu bytes) and target data (%zu bytes) differ in size",
                        fn, rbytes, tbytes);
    if (w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        /* first and one past the last byte touched, every step checked for overflow (a huge
         * displacement must not wrap around into the window) */
        MPI_Aint lo, span, hi;
        bool bad = a->target_disp < 0 ||
                   __builtin_mul_overflow(a->target_disp, w->w_units[a->target], &lo) ||
                   __builtin_add_overflow(lo, ti->dt_true_lb, &lo);
        if (!bad && tbytes)
            bad = lo < 0 ||
                  __builtin_mul_overflow((MPI_Aint)(a->target_count - 1), ti->dt_extent, &span) ||
                  __builtin_add_overflow(lo, span, &hi) ||
                  __builtin_add_overflow(hi, ti->dt_true_extent, &hi) || hi > w->w_sizes[a->target];
        if (bad)
            return mf_error(MPI_ERR_RMA_RANGE,
                            "%s: target_disp=%ld with %lld elements lies outside rank %d's "
                            "window of %ld bytes",
                            fn, (long)a->target_disp, (long long)a->target_count, a->target,
                            (long)w->w_sizes[a->target]);
    }
    if (!tbytes && !req)
        return MPI_SUCCESS;
    if (w->w_nat_amask && a->kind != MF_RMA_PUT && a->kind != MF_RMA_GET) {
        int nrc = mf_rma_native_atomic(w, a, tbytes, req);
        if (nrc != MF_RMA_NATIVE_NO)
            return nrc;
    }
    if (mf_rma_direct_to(w, a->target) && rma_direct_block_ok(a, ti))
        return rma_direct_block(w, a, ti, tbytes, req);
    /* The own part of a window of another flavor: the same one copy, rather than a message to
     * itself through two bounce buffers (a 1 MiB put to itself took 1.2 ms, faulting both in
     * afresh, against 50 us for 512 KiB). Not while earlier operations to itself are still
     * queued (they would be overtaken), nor on dynamic windows (the target checks the address
     * against the attached regions). */
    if (a->target == w->w_comm->c_rank && w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        w->w_pending[a->target] == 0 && rma_direct_block_ok(a, ti))
        return rma_direct_block(w, a, ti, tbytes, req);
    if (mf_rma_native_to(w, a->target)) {
        int nrc = mf_rma_native_op(w, a, tbytes, req);
        if (nrc != MF_RMA_NATIVE_NO)
            return nrc;
    }
    int64_t one_seg[2] = {ti->dt_true_lb, (int64_t)tbytes}, *segs = one_seg;
    int nseg = tbytes ? 1 : 0, rc = MPI_SUCCESS;
    if (!ti->dt_contig && (rc = rma_layout(a->target_dt, a->target_count, &segs, &nseg)))
        return rc;
    size_t data = sends ? (a->kind == MF_RMA_CAS ? 2 * tbytes : tbytes) : 0;
    size_t seglen = (size_t)nseg * 2 * sizeof(int64_t);
    mf_rma_hdr h = {.h_kind = a->kind,
                    .h_nseg = nseg,
                    .h_op = a->op ? (int32_t)a->op->op_handle : 0,
                    .h_data = (int64_t)data,
                    .h_disp = w->w_flavor == MPI_WIN_FLAVOR_DYNAMIC
                                  ? (int64_t)a->target_disp
                                  : (int64_t)(a->target_disp * w->w_units[a->target])};
    if (a->op)
        h.h_type = (int32_t)mf_datatype_basic_type(a->target_dt);
    if (a->kind == MF_RMA_ACC && a->op && a->op->op_handle == MPI_NO_OP)
        h.h_nseg = nseg = 0, seglen = 0; /* accumulate with MPI_NO_OP changes nothing */
    /* room for the header in front, so that a small operation goes as one message */
    char *msg = mf_bufcache_get(sizeof h + seglen + data), *payload = msg + sizeof h;
    if (!msg) {
        if (segs != one_seg)
            free(segs);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a %zu-byte payload", fn, seglen + data);
    }
    memcpy(payload, segs, seglen);
    if (segs != one_seg)
        free(segs);
    if (data) {
        rma_pack(a->origin_dt, a->origin, a->origin_count, payload + seglen, tbytes);
        if (a->kind == MF_RMA_CAS)
            rma_pack(a->origin_dt, a->compare, 1, payload + seglen + tbytes, tbytes);
    }
    if (mf_rma_direct_to(w, a->target))
        return rma_direct(w, &h, a, msg, req);
    return rma_issue(w, &h, a->target, fetches ? a->result : NULL, a->result_count, a->result_dt,
                     fetches ? tbytes : 0, msg, seglen + data, req, NULL);
}

/* ---- waiting -------------------------------------------------------------------------------- */

struct rma_wait {
    mf_win *w;
    int target;
};

static bool rma_flushed(void *arg)
{
    struct rma_wait *x = arg;
    rma_reap_ops(x->w);
    if (x->target >= 0)
        return x->w->w_pending[x->target] == 0;
    return x->w->w_ops == NULL && x->w->w_nat_inflight == 0;
}

int mf_rma_flush(mf_win *w, int target)
{
    if (w->w_direct_dirty) {
        /* direct operations: visible before what follows (once per batch of them) */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        w->w_direct_dirty = false;
    }
    /* nothing in flight to that target (direct targets never have anything): no engine pass,
     * but one in 64 such flushes still makes one, so that a rank looping over direct epochs
     * (lock, get of a flag in its own part, unlock) serves the remote origins that would set
     * that flag */
    int rc = MPI_SUCCESS;
    if (target >= 0 ? w->w_pending[target] == 0 : w->w_ops == NULL && w->w_nat_inflight == 0) {
        if ((++w->w_idle_flushes & 63) == 0)
            mf_progress_poll();
    } else {
        struct rma_wait x = {w, target};
        rc = mf_progress_wait(rma_flushed, &x);
    }
    if (!rc && w->w_nat_err) { /* a native operation failed: the flush after it says so */
        rc = w->w_nat_err;
        w->w_nat_err = 0;
    }
    return rc;
}

int mf_rma_window_open(mf_win *w)
{
    if (!(w->w_hdr_in = malloc(MF_RMA_MSG_MAX)))
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a window's operation buffer");
    int rc = rma_post_hdr(w);
    return rc ? rc : rma_serve_attach(w);
}

static bool rma_closed(void *arg)
{
    mf_win *w = arg;
    return w->w_closing && !w->w_tq_head && !w->w_sends;
}

int mf_rma_window_close(mf_win *w)
{
    int rc = mf_rma_flush(w, -1);
    if (!rc)
        rc = mf_rma_control(w, MF_RMA_CLOSE, w->w_comm->c_rank);
    if (!rc)
        rc = mf_rma_flush(w, -1);
    if (!rc)
        rc = mf_progress_wait(rma_closed, w);
    rma_serve_detach(w);
    return rc;
}
