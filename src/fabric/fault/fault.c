/*
 * fault.c — the fault-injection wrapper: a class whose instance sits over a real instance and
 * misbehaves on command, so that every failure path gets a deterministic test. Never selected
 * by default: only MANIFOLD_FAULT (tests) makes one.
 *
 *   MANIFOLD_FAULT = entry[;entry...]     entry = INSTANCE:key=value[,key=value...]
 *     delay_us=D           every send waits D µs first (a slow peer or link)
 *     break_after_bytes=N  once N payload bytes went out through the instance, the connection
 *                          to the peer that got the last of them breaks (both ends see it)
 *     break_after_ms=T     T ms after start, every connection of the instance breaks
 *     down_ms=A,up_ms=B    the rail is down from A to B ms after start: sends wait for it and
 *                          nothing is received; traffic resumes when it is back (survived)
 *   e.g. MANIFOLD_FAULT="tcp0:break_after_bytes=1000000"
 *
 * The registry (fabric.c) puts the wrapper in the routes in place of the instance it wraps; the
 * wrapped instance keeps its state, its counters and its upcalls (arrivals name it, and the p2p
 * layer answers on it: the faults act on what is sent through the route and on the rail as a
 * whole). The wrapper owns nothing but its settings; the registry opens and closes the wrapped
 * instance as any other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "fabric/fault/fault.h"

typedef struct mf_fault {
    mf_fabric base; /* first */
    mf_fabric *inner;
    mf_fault_settings set;
    double t0;         /* seconds, when wrapped */
    uint64_t sent;     /* payload bytes sent through the wrapper */
    bool broken_bytes; /* break_after_bytes fired */
    bool broken_timed; /* break_after_ms fired */
} mf_fault;

static mf_fault *mf_fault_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_fault, base);
}

static void mf_fault_sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Milliseconds since the wrapper was made. */
static double mf_fault_elapsed_ms(const mf_fault *w)
{
    return (mf_clock_s() - w->t0) * 1e3;
}

static bool mf_fault_down(const mf_fault *w)
{
    if (w->set.down_ms < 0)
        return false;
    double ms = mf_fault_elapsed_ms(w);
    return ms >= (double)w->set.down_ms && ms < (double)w->set.up_ms;
}

/* break_after_ms: every peer's connection, once. */
static void mf_fault_timed_break(mf_fault *w)
{
    if (w->set.break_after_ms < 0 || w->broken_timed ||
        mf_fault_elapsed_ms(w) < (double)w->set.break_after_ms)
        return;
    w->broken_timed = true;
    mf_info("%s: breaking every connection of %s (break_after_ms=%lld)", w->base.name,
            w->inner->name, w->set.break_after_ms);
    for (int r = 0; r < mf_g.size; r++)
        if (r != mf_g.rank && w->inner->ops->reachable(w->inner, r))
            w->inner->ops->break_peer(w->inner, r);
}

static int mf_fault_open(mf_fabric *f)
{
    return MPI_SUCCESS; /* the wrapped instance is opened by the registry */
}

static int mf_fault_start(mf_fabric *f)
{
    return MPI_SUCCESS;
}

static int mf_fault_close(mf_fabric *f)
{
    return MPI_SUCCESS;
}

static bool mf_fault_reachable(mf_fabric *f, int peer)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->reachable(in, peer);
}

static int mf_fault_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                         int niov, mf_fabric_done *done)
{
    mf_fault *w = mf_fault_of(f);
    if (w->set.delay_us > 0)
        mf_fault_sleep_s((double)w->set.delay_us * 1e-6);
    if (mf_fault_down(w)) /* the rail is down: the send waits until it is back */
        mf_fault_sleep_s(((double)w->set.up_ms - mf_fault_elapsed_ms(w)) * 1e-3);
    int rc = w->inner->ops->send(w->inner, peer, hdr, iov, niov, done);
    if (rc != MF_FABRIC_DONE && rc != MF_FABRIC_PENDING)
        return rc;
    mf_fabric_count_tx(f, hdr);
    w->sent += hdr->len;
    if (w->set.break_after_bytes >= 0 && !w->broken_bytes &&
        w->sent >= (uint64_t)w->set.break_after_bytes) {
        w->broken_bytes = true;
        mf_info("%s: breaking the connection of %s to rank %d after %llu bytes", f->name,
                w->inner->name, peer, (unsigned long long)w->sent);
        w->inner->ops->break_peer(w->inner, peer);
    }
    return rc;
}

static int mf_fault_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->rkey_make(in, addr, len, rkey);
}

static void mf_fault_rkey_release(mf_fabric *f, uint64_t rkey)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    in->ops->rkey_release(in, rkey);
}

static int mf_fault_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset,
                         const struct iovec *iov, int niov, size_t len, mf_fabric_done *done)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->rget(in, peer, rkey, offset, iov, niov, len, done);
}

static int mf_fault_progress(mf_fabric *f)
{
    mf_fault *w = mf_fault_of(f);
    mf_fault_timed_break(w);
    if (mf_fault_down(w))
        return 0; /* nothing moves on a rail that is down */
    return w->inner->ops->progress(w->inner);
}

static int mf_fault_wait_fd(mf_fabric *f)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->wait_fd(in);
}

static bool mf_fault_sleep_prepare(mf_fabric *f)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    in->sleepers = f->sleepers;
    return in->ops->sleep_prepare(in);
}

static void mf_fault_sleep_end(mf_fabric *f)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    in->ops->sleep_end(in);
    in->sleepers = 0;
}

static bool mf_fault_tx_idle(mf_fabric *f)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->tx_idle(in);
}

static int mf_fault_break_peer(mf_fabric *f, int peer)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->break_peer(in, peer);
}

static int mf_fault_revive_peer(mf_fabric *f, int peer)
{
    mf_fabric *in = mf_fault_of(f)->inner;
    return in->ops->revive_peer ? in->ops->revive_peer(in, peer) : MF_FABRIC_BUSY;
}

static const mf_fabric_ops mf_fault_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_fault_open,
    .start = mf_fault_start,
    .close = mf_fault_close,
    .reachable = mf_fault_reachable,
    .send = mf_fault_send,
    .rkey_make = mf_fault_rkey_make,
    .rkey_release = mf_fault_rkey_release,
    .rget = mf_fault_rget,
    .progress = mf_fault_progress,
    .wait_fd = mf_fault_wait_fd,
    .sleep_prepare = mf_fault_sleep_prepare,
    .sleep_end = mf_fault_sleep_end,
    .tx_idle = mf_fault_tx_idle,
    /* rx_peek/rx_take stay NULL: blocking receives go through progress, where faults act. */
    .break_peer = mf_fault_break_peer,
    .revive_peer = mf_fault_revive_peer,
};

static void mf_fault_init(mf_fabric *f)
{
    f->max_frame = MF_WIRE_MAX_FRAME; /* until it wraps: then the wrapped instance's */
}

const mf_fabric_class mf_fault_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "fault",
    .ops = &mf_fault_ops,
    .caps = MF_FABRIC_CAP_RAIL,
    .max_message = MF_WIRE_MAX_FRAME,
    .instance_size = sizeof(mf_fault),
    .init = mf_fault_init,
};

void mf_fault_wrap(mf_fabric *f, mf_fabric *inner, const mf_fault_settings *set)
{
    mf_fault *w = mf_fault_of(f);
    w->inner = inner;
    f->inner = inner;
    w->set = *set;
    w->t0 = mf_clock_s();
    f->flags = inner->flags;
    f->eager_limit = inner->eager_limit;
    f->max_frame = inner->max_frame;
    f->rget_min_busy = inner->rget_min_busy;
    f->rget_min_busy_shared = inner->rget_min_busy_shared;
    /* Timed faults fire from progress: an idle rank wakes for them. */
    f->poll_interval_us = inner->poll_interval_us;
    if ((set->break_after_ms >= 0 || set->down_ms >= 0) &&
        (f->poll_interval_us == 0 || f->poll_interval_us > 1000))
        f->poll_interval_us = 1000;
    f->ifaces = inner->name; /* reports say what it wraps */
}

/* Reads one "key=value" of an entry into set; false when unknown or malformed. */
static bool mf_fault_setting(const char *kv, size_t len, mf_fault_settings *set)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"delay_us", offsetof(mf_fault_settings, delay_us)},
        {"break_after_bytes", offsetof(mf_fault_settings, break_after_bytes)},
        {"break_after_ms", offsetof(mf_fault_settings, break_after_ms)},
        {"down_ms", offsetof(mf_fault_settings, down_ms)},
        {"up_ms", offsetof(mf_fault_settings, up_ms)},
    };
    const char *eq = memchr(kv, '=', len);
    if (!eq)
        return false;
    size_t klen = (size_t)(eq - kv);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strlen(keys[i].key) != klen || strncmp(keys[i].key, kv, klen) != 0)
            continue;
        char num[24];
        size_t nlen = len - klen - 1;
        if (nlen == 0 || nlen >= sizeof num)
            return false;
        memcpy(num, eq + 1, nlen);
        num[nlen] = '\0';
        char *end;
        errno = 0;
        long long v = strtoll(num, &end, 10);
        if (errno || *end || v < 0 || num[0] == '-' || num[0] == '+')
            return false;
        *(long long *)(void *)((char *)set + keys[i].off) = v;
        return true;
    }
    return false;
}

int mf_fault_parse(const char *spec, mf_fault_entry *out, int max, char *why, size_t whylen)
{
    int n = 0;
    for (const char *s = spec; *s;) {
        size_t len = strcspn(s, ";");
        size_t nlen = strcspn(s, ":;");
        if (n == max) {
            snprintf(why, whylen, "more than %d entries", max);
            return -1;
        }
        mf_fault_entry *e = &out[n];
        e->set = (mf_fault_settings){-1, -1, -1, -1, -1};
        if (nlen == 0 || nlen >= sizeof e->instance || nlen == len) {
            snprintf(why, whylen, "'%.*s' is not INSTANCE:key=value,...", (int)len, s);
            return -1;
        }
        memcpy(e->instance, s, nlen);
        e->instance[nlen] = '\0';
        for (const char *kv = s + nlen + 1; kv < s + len;) {
            size_t kvlen = strcspn(kv, ",;");
            if (!mf_fault_setting(kv, kvlen, &e->set)) {
                snprintf(why, whylen,
                         "'%.*s' is not one of delay_us, break_after_bytes, break_after_ms, "
                         "down_ms, up_ms = a whole number",
                         (int)kvlen, kv);
                return -1;
            }
            kv += kvlen + (kv[kvlen] == ',');
        }
        if ((e->set.down_ms >= 0) != (e->set.up_ms >= 0) ||
            (e->set.down_ms >= 0 && e->set.up_ms <= e->set.down_ms)) {
            snprintf(why, whylen, "%s: down_ms and up_ms go together, up_ms after down_ms",
                     e->instance);
            return -1;
        }
        n++;
        s += len + (s[len] == ';');
    }
    return n;
}
