/*
 * mpit_event.c — MPI_T events (MPI-4.0 section 15.3.8) on the library side: the table of events
 * Manifold raises, the tool's registrations, and delivery.
 *
 * Delivery is immediate: mf_t_event_raise calls each registration's callback on the raising
 * thread, outside the MPI_T mutex (a callback may read its instance and query MPI_T). Nothing is
 * buffered: a registration without a callback that suits the raising context counts the event as
 * dropped, and its dropped handler hears of the count at the next delivery that suits it. A
 * registration freed while one of its callbacks runs is freed, and its free callback called, by
 * the thread that ran it, once it returned.
 *
 * One source: CLOCK_MONOTONIC in nanoseconds. Events from several threads may reach tools out of
 * timestamp order, so the source says MPI_T_SOURCE_UNORDERED.
 */
#include <stdlib.h>
#include <time.h>

#include "core/state.h"
#include "tool/mpit_internal.h"

const mf_t_event_def mf_t_events[MF_T_EVENT_N] = {
    [MF_T_EVENT_PEER_LOST] = {"peer_lost",
                              "a peer became unreachable: its pending and later operations fail "
                              "(elements: the peer's rank in MPI_COMM_WORLD, the error class)",
                              "p2p", MPI_T_VERBOSITY_USER_BASIC, 2},
    [MF_T_EVENT_CONNECTION_REFUSED] =
        {"connection_refused",
         "a connection to this process that did not prove it holds the job's secret (or broke "
         "the handshake) was refused by the tcp or sctp fabric (element: the rank it claimed, -1 "
         "before it claimed one)",
         "fabric", MPI_T_VERBOSITY_USER_BASIC, 1},
    [MF_T_EVENT_RAIL_FAILOVER] = {"rail_failover",
                                  "the multirail wrapper stopped using a failed rail to a peer; "
                                  "its traffic goes on over the others (elements: the peer's "
                                  "rank, the rail's index, the rails still live to it)",
                                  "fabric", MPI_T_VERBOSITY_USER_DETAIL, 3},
    [MF_T_EVENT_RAIL_REVIVED] = {"rail_revived",
                                 "a rail to a peer that had failed carries traffic again "
                                 "(elements: the peer's rank, the rail's index)",
                                 "fabric", MPI_T_VERBOSITY_USER_DETAIL, 2},
};

_Atomic int mf_t_event_listeners[MF_T_EVENT_N];
mf_t_event_reg *mf_t_event_regs;

/* The instance being delivered on this thread: the only one MPI_T_event_read may name. */
static _Thread_local const mf_t_event_instance *mf_t_event_now;

MPI_Count mf_t_event_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const mf_t_event_instance *mf_t_event_current(void)
{
    return mf_t_event_now;
}

static bool mf_t_event_reg_listens(const mf_t_event_reg *r)
{
    for (int s = 0; s < MF_T_CB_LEVELS; s++)
        if (r->cb[s].fn)
            return true;
    return false;
}

void mf_t_event_reg_set_cb_locked(mf_t_event_reg *r, int safety, MPI_T_event_cb_function *fn,
                                  void *user_data)
{
    bool before = mf_t_event_reg_listens(r);
    r->cb[safety].fn = fn;
    r->cb[safety].user_data = user_data;
    bool after = mf_t_event_reg_listens(r);
    if (before != after)
        atomic_fetch_add_explicit(&mf_t_event_listeners[r->kind], after ? 1 : -1,
                                  memory_order_relaxed);
}

int mf_t_event_reg_unlink_locked(mf_t_event_reg *r)
{
    for (mf_t_event_reg **p = &mf_t_event_regs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            for (int s = 0; s < MF_T_CB_LEVELS; s++)
                mf_t_event_reg_set_cb_locked(r, s, NULL, NULL);
            r->freed = true;
            return r->busy == 0;
        }
    return -1;
}

void mf_t_event_regs_drop_locked(void)
{
    while (mf_t_event_regs) {
        mf_t_event_reg *r = mf_t_event_regs;
        r->free_cb = NULL;
        if (mf_t_event_reg_unlink_locked(r) == 1)
            free(r);
    }
}

/* The safety level a callback needs to be called here: on the thread that initialized MPI,
 * alone in the library (below MPI_THREAD_MULTIPLE), restricted MPI use suffices; elsewhere
 * (the progress thread, any thread under MPI_THREAD_MULTIPLE) it must be thread safe. */
static int mf_t_event_context(void)
{
    bool main_alone = mf_g.initialized && mf_g.thread_level < MPI_THREAD_MULTIPLE &&
                      pthread_equal(pthread_self(), mf_g.main_thread);
    return main_alone ? MPI_T_CB_REQUIRE_MPI_RESTRICTED : MPI_T_CB_REQUIRE_THREAD_SAFE;
}

/* One delivery: what to call, taken under the mutex, called outside it. */
typedef struct {
    mf_t_event_reg *r;
    MPI_T_event_cb_function *fn;
    void *user_data;
    int safety;
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped;
} mf_t_event_call;

void mf_t_event_raise(mf_t_event_kind kind, const int *elements)
{
    if (!mf_t_event_wanted(kind))
        return;
    mf_t_event_instance ev = {.kind = kind, .timestamp = mf_t_event_clock()};
    for (int i = 0; i < mf_t_events[kind].nelements; i++)
        ev.elements[i] = elements[i];
    int need = mf_t_event_context(), n = 0, cap = 0;
    mf_t_event_call *calls = NULL;
    mf_t_lock();
    for (mf_t_event_reg *r = mf_t_event_regs; r; r = r->next) {
        if (r->kind != (int)kind || !mf_t_event_reg_listens(r))
            continue;
        int s = need;
        while (s < MF_T_CB_LEVELS && !r->cb[s].fn)
            s++;
        if (s == MF_T_CB_LEVELS) {
            r->ndropped++;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            mf_t_event_call *c = realloc(calls, (size_t)cap * sizeof *c);
            if (!c) {
                r->ndropped++;
                continue;
            }
            calls = c;
        }
        calls[n++] = (mf_t_event_call){r, r->cb[s].fn, r->cb[s].user_data,
                                       s, r->dropped,  r->dropped ? r->ndropped : 0};
        if (r->dropped)
            r->ndropped = 0;
        r->busy++;
    }
    mf_t_unlock();
    mf_t_event_now = &ev;
    for (int i = 0; i < n; i++) {
        mf_t_event_call *c = &calls[i];
        if (c->ndropped)
            c->dropped(c->ndropped, c->r, 0, c->safety, c->user_data);
        c->fn((MPI_T_event_instance)&ev, c->r, c->safety, c->user_data);
    }
    mf_t_event_now = NULL;
    /* Registrations freed meanwhile (from their own callbacks) go now. */
    for (int i = 0; i < n; i++) {
        mf_t_event_reg *r = calls[i].r;
        mf_t_lock();
        bool last = --r->busy == 0 && r->freed;
        mf_t_unlock();
        if (last) {
            if (r->free_cb)
                r->free_cb(r, calls[i].safety, r->free_user_data);
            free(r);
        }
    }
    free(calls);
}
