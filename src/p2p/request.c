/* Request allocation, wire ids, waiting and freeing: see request.h and p2p.h. */
#include "p2p/request.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bufcache.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/log.h"
#include "core/progress.h"
#include "p2p/match.h"
#include "p2p/p2p_internal.h"

/* Wire ids: slot + 1 in the low 32 bits, a generation in the high bits, so an id that a peer
 * sends back after the request is gone (or a forged one) finds nothing. */
static mf_request **mf_wire_slots;
static uint32_t *mf_wire_gen;
static uint32_t mf_wire_size, mf_wire_hint;

/* Every live request, for failing those that involve a dead peer. */
static mf_request *mf_live_head;

/* Freed requests kept for reuse: a message costs no malloc/free pair in the common case. */
#define MF_REQUEST_CACHE 64
static mf_request *mf_request_cache[MF_REQUEST_CACHE];
static int mf_request_ncached;

/* The request every immediately finished MPI_Isend returns (mf_request_sent): complete, never
 * freed, never in the live list or the wire-id table. Its handle is the last index of the
 * request class below the bit that marks message handles; mf_request_handle never hands out
 * that slot or any above it. */
#define MF_REQUEST_SENT_HANDLE MF_HANDLE_MAKE(MF_HANDLE_USER, MF_CLASS_REQUEST, 0x01ffffff)
static mf_request mf_request_sent_obj = {
    .pub = {.r_handle = MF_REQUEST_SENT_HANDLE,
            .r_kind = MF_REQ_SEND,
            .r_complete = true,
            .r_active = true,
            .r_status = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG}},
    .rq_peer = -1,
};

mf_request *mf_request_sent(void)
{
    return &mf_request_sent_obj;
}

mf_request *mf_request_alloc(mf_request_kind kind, mf_comm *comm)
{
    mf_request *r;
    if (mf_request_ncached > 0) {
        r = mf_request_cache[--mf_request_ncached];
        /* The size is hidden from the compiler on purpose: with it known, GCC inlines the
         * memset as `rep stos`, whose start-up cost made this line a tenth of a small
         * message's time; the C library's vector memset is several times faster here. */
        size_t n = offsetof(mf_request, rq_tmsg); /* rq_tmsg: see request.h */
        __asm__("" : "+r"(n));
        memset(r, 0, n);
    } else if (!(r = calloc(1, sizeof *r))) {
        return NULL;
    }
    r->pub.r_handle = MPI_REQUEST_NULL;
    r->pub.r_kind = kind;
    r->pub.r_comm = comm;
    r->pub.r_status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->pub.r_status.MPI_TAG = MPI_ANY_TAG;
    r->rq_peer = -1;
    if (comm)
        mf_comm_retain(comm);
    r->rq_live_next = mf_live_head;
    if (mf_live_head)
        mf_live_head->rq_live_prev = r;
    mf_live_head = r;
    return r;
}

mf_request *mf_request_new(mf_request_kind kind, mf_comm *comm)
{
    return mf_request_alloc(kind, comm);
}

void mf_request_set_owner(mf_request *r, mf_request_owner owner, intptr_t handle)
{
    r->pub.r_owner = (unsigned char)owner;
    r->rq_owner_handle = handle;
}

intptr_t mf_request_owner_handle(const mf_request *r)
{
    return r->rq_owner_handle;
}

struct mf_request_public *mf_request_info(mf_request *r)
{
    return &r->pub;
}

int mf_request_register_wire(mf_request *r)
{
    if (r->rq_wire_id)
        return MPI_SUCCESS;
    uint32_t i = mf_wire_hint;
    while (i < mf_wire_size && mf_wire_slots[i])
        i++;
    if (i == mf_wire_size) {
        uint32_t n = mf_wire_size ? mf_wire_size * 2 : 256;
        mf_request **s = realloc(mf_wire_slots, n * sizeof *s);
        if (!s)
            return mf_error(MPI_ERR_NO_MEM, "no memory for request ids");
        mf_wire_slots = s;
        uint32_t *g = realloc(mf_wire_gen, n * sizeof *g);
        if (!g)
            return mf_error(MPI_ERR_NO_MEM, "no memory for request ids");
        mf_wire_gen = g;
        memset(mf_wire_slots + mf_wire_size, 0, (n - mf_wire_size) * sizeof *s);
        memset(mf_wire_gen + mf_wire_size, 0, (n - mf_wire_size) * sizeof *g);
        mf_wire_size = n;
    }
    mf_wire_slots[i] = r;
    mf_wire_gen[i]++;
    mf_wire_hint = i + 1;
    r->rq_wire_id = ((uint64_t)mf_wire_gen[i] << 32) | (uint64_t)(i + 1);
    return MPI_SUCCESS;
}

mf_request *mf_request_by_wire(uint64_t id)
{
    uint32_t slot = (uint32_t)(id & 0xffffffffu);
    if (slot == 0 || slot > mf_wire_size)
        return NULL;
    mf_request *r = mf_wire_slots[slot - 1];
    if (!r || mf_wire_gen[slot - 1] != (uint32_t)(id >> 32))
        return NULL;
    return r;
}

void mf_request_foreach_pending(void (*fn)(mf_request *r, void *arg), void *arg)
{
    mf_request *next;
    for (mf_request *r = mf_live_head; r; r = next) {
        next = r->rq_live_next;
        if (!r->pub.r_complete)
            fn(r, arg);
    }
}

static void mf_request_destroy(mf_request *r)
{
    if (r->rq_live_prev)
        r->rq_live_prev->rq_live_next = r->rq_live_next;
    else
        mf_live_head = r->rq_live_next;
    if (r->rq_live_next)
        r->rq_live_next->rq_live_prev = r->rq_live_prev;
    if (r->rq_wire_id) {
        uint32_t slot = (uint32_t)(r->rq_wire_id & 0xffffffffu) - 1;
        mf_wire_slots[slot] = NULL;
        if (slot < mf_wire_hint)
            mf_wire_hint = slot;
    }
    if (r->rq_dt)
        mf_datatype_release(r->rq_dt);
    if (r->pub.r_comm)
        mf_comm_release(r->pub.r_comm);
    for (int i = 0; i < 2; i++)
        if (r->rq_parts[i])
            mf_request_free(r->rq_parts[i]);
    /* Tested first: most requests own none of these, and free(NULL) is still a call. */
    if (r->rq_packed)
        mf_bufcache_put(r->rq_packed);
    if (r->rq_pieces)
        free(r->rq_pieces);
    if (r->rq_iovs && r->rq_iovs != &r->rq_iov_one)
        free(r->rq_iovs);
    if (mf_request_ncached < MF_REQUEST_CACHE)
        mf_request_cache[mf_request_ncached++] = r;
    else
        free(r);
}

static void mf_request_maybe_destroy(mf_request *r)
{
    if (r->rq_released && r->rq_busy == 0 && (r->pub.r_complete || !r->pub.r_active))
        mf_request_destroy(r);
}

size_t mf_p2p_rndv_out_bytes;
size_t mf_p2p_rndv_out_peak;

void mf_request_finish(mf_request *r)
{
    if (r->pub.r_complete)
        return;
    r->pub.r_status.MPI_ERROR = r->rq_error;
    r->pub.r_complete = true;
    if (r->rq_rndv_out) {
        r->rq_rndv_out = false;
        mf_p2p_rndv_out_bytes -= r->rq_bytes;
    }
    if (r->rq_on_complete)
        r->rq_on_complete(r, r->rq_on_complete_arg);
}

void mf_request_when_done(mf_request *r, void (*done)(mf_request *r, void *arg), void *arg)
{
    if (r->pub.r_complete) {
        done(r, arg);
        return;
    }
    r->rq_on_complete = done;
    r->rq_on_complete_arg = arg;
}

void mf_request_complete(mf_request *r)
{
    mf_request_finish(r);
}

void mf_request_unbusy(mf_request *r)
{
    if (--r->rq_busy == 0 && !r->pub.r_complete)
        mf_request_finish(r);
    mf_request_maybe_destroy(r);
}

void mf_request_hold(mf_request *r)
{
    r->pub.r_active = true;
    r->rq_busy = 1;
}

void mf_request_hold_persistent(mf_request *r, void *data)
{
    r->pub.r_persistent = true;
    r->rq_busy = 1;
    r->rq_buf = data;
}

void *mf_request_owner_data(const mf_request *r)
{
    return r->rq_buf;
}

mf_request **mf_request_inner(mf_request *r)
{
    return &r->rq_inner;
}

bool mf_request_released(const mf_request *r)
{
    return r->rq_released;
}

void mf_request_end(mf_request *r, int error)
{
    r->rq_error = error;
    mf_request_unbusy(r);
}

void mf_request_free(mf_request *r)
{
    if (!r || r == &mf_request_sent_obj)
        return;
    r->rq_released = true;
    /* An operation still under way finishes in the background (MPI_Request_free semantics). */
    if (!r->pub.r_complete && r->pub.r_active)
        return;
    mf_request_maybe_destroy(r);
}

static bool mf_request_is_complete(void *arg)
{
    return ((mf_request *)arg)->pub.r_complete;
}

bool mf_request_test(mf_request *r)
{
    if (!r->pub.r_complete)
        mf_progress_poll();
    return r->pub.r_complete;
}

int mf_request_wait(mf_request *r, MPI_Status *status)
{
    if (!r->pub.r_complete) {
        int rc = mf_progress_wait(mf_request_is_complete, r);
        if (rc)
            return rc;
    }
    mf_status_out(status, &r->pub.r_status);
    return r->pub.r_status.MPI_ERROR;
}

typedef struct mf_waitall_arg {
    int n;
    mf_request **reqs;
} mf_waitall_arg;

static bool mf_request_all_complete(void *arg)
{
    mf_waitall_arg *a = arg;
    for (int i = 0; i < a->n; i++)
        if (a->reqs[i] && !a->reqs[i]->pub.r_complete)
            return false;
    return true;
}

int mf_request_waitall(int n, mf_request **reqs)
{
    mf_waitall_arg a = {n, reqs};
    int rc = mf_progress_wait(mf_request_all_complete, &a);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (reqs[i] && reqs[i]->pub.r_status.MPI_ERROR)
            return reqs[i]->pub.r_status.MPI_ERROR;
    return MPI_SUCCESS;
}

/* ---- User handles ---- */

static mf_handle_table mf_request_table = MF_HANDLE_TABLE_INIT(MF_CLASS_REQUEST);
/* Matched messages share the request class, as in the ABI (MPI_MESSAGE_NULL has it). */
static mf_handle_table mf_message_table = MF_HANDLE_TABLE_INIT(MF_CLASS_REQUEST);

int mf_request_handle(mf_request *r, MPI_Request *handle)
{
    int h = mf_handle_alloc(&mf_request_table, r);
    if (h && MF_HANDLE_INDEX(h) >= MF_HANDLE_INDEX(MF_REQUEST_SENT_HANDLE)) {
        /* Slots from here on belong to the shared request and to message handles (bit 25). */
        mf_handle_free(&mf_request_table, h);
        h = 0;
    }
    if (!h)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a request handle");
    r->pub.r_handle = h;
    *handle = h;
    return MPI_SUCCESS;
}

int mf_request_give(mf_request *r, MPI_Request *handle)
{
    int rc = mf_request_handle(r, handle);
    if (rc)
        mf_request_free(r); /* a started operation still ends, in the background */
    return rc;
}

mf_request *mf_request_from_handle(MPI_Request handle)
{
    if (handle == MF_REQUEST_SENT_HANDLE)
        return &mf_request_sent_obj;
    return mf_handle_lookup(&mf_request_table, handle);
}

void mf_request_handle_free(mf_request *r)
{
    if (r == &mf_request_sent_obj)
        return;
    if (r->pub.r_handle != MPI_REQUEST_NULL)
        mf_handle_free(&mf_request_table, r->pub.r_handle);
    r->pub.r_handle = MPI_REQUEST_NULL;
}

int mf_message_handle(mf_unexpected *u, MPI_Message *handle)
{
    /* Message handles index a table separate from requests; bit 25 tells them apart so a
     * message handle is never taken for a request. */
    int h = mf_handle_alloc(&mf_message_table, u);
    if (!h)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a message handle");
    *handle = h | (1 << 25);
    return MPI_SUCCESS;
}

mf_unexpected *mf_message_take(MPI_Message handle)
{
    if (!(handle & (1 << 25)))
        return NULL;
    int h = handle & ~(1 << 25);
    mf_unexpected *u = mf_handle_lookup(&mf_message_table, h);
    if (u)
        mf_handle_free(&mf_message_table, h);
    return u;
}

/* ---- Draining at finalize ---- */

typedef struct mf_drain {
    long long deadline_ns;
} mf_drain;

static bool mf_sends_drained(void *arg)
{
    mf_drain *d = arg;
    /* Requests may be done while fabrics still hold copies of eager frames (e.g. for a
     * connection still being set up). */
    bool busy = !mf_fabrics_tx_idle();
    /* A send to a peer that failed waits for nothing more: its protocol answers (CTS, FIN)
     * will never come. */
    for (mf_request *r = mf_live_head; r && !busy; r = r->rq_live_next)
        busy = r->pub.r_kind == MF_REQ_SEND && r->pub.r_active &&
               (!r->pub.r_complete || r->rq_busy > 0) &&
               !(r->rq_peer >= 0 && mf_p2p_peer_status(r->rq_peer));
    if (!busy) {
        d->deadline_ns = 0; /* drained */
        return true;
    }
    return mf_clock_ns() > d->deadline_ns;
}

int mf_p2p_drain_sends(double seconds)
{
    mf_drain d = {mf_clock_ns() + (long long)(seconds * 1e9)};
    int rc = mf_progress_wait(mf_sends_drained, &d);
    if (rc)
        return rc;
    return d.deadline_ns ? mf_error(MPI_ERR_OTHER, "sends still pending") : MPI_SUCCESS;
}

void mf_p2p_finalize(void)
{
    int leftover = mf_match_finalize();
    if (leftover)
        mf_warn("MPI_Finalize: %d message%s arrived but %s never received", leftover,
                leftover == 1 ? "" : "s", leftover == 1 ? "was" : "were");
    while (mf_request_ncached > 0)
        free(mf_request_cache[--mf_request_ncached]);
}
