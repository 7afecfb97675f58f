/*
 * tcp.c — the tcp fabric's ops table: open (listen and publish), send, progress, sleeping
 * support and close. Connections and the handshake are in tcp_conn.c, interfaces in tcp_if.c;
 * the framing is the shared stream code (src/fabric/stream).
 *
 * Large messages: max_frame is the wire maximum (1 GiB), so the p2p layer streams a rendezvous
 * payload as one DATA frame, written with writev straight from the user's buffer and read with
 * readv straight into the receiver's — no copy on either side. Small remainders are copied on
 * the send side so that eager sends complete at once.
 */
#include "fabric/tcp/tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"

/* Send remainders up to this size are copied (send returns DONE at once). */
#define MF_TCP_COPY_LIMIT (16 * 1024)
/* Receive staging buffer per connection: many small frames per read; it grows to hold a whole
 * eager frame (the direct receive, rx_peek, takes only whole frames), up to MF_TCP_STAGING_MAX. */
#define MF_TCP_STAGING (64 * 1024)
#define MF_TCP_STAGING_MAX (1024 * 1024)
/* How long close waits for queued frames to drain. */
#define MF_TCP_FLUSH_MS 10000
/* The quiet regime (see tcp.h): at most this many up connections are read without epoll... */
#define MF_TCP_DIRECT_MAX 8
/* ...and one pass in this many asks epoll anyway, for the listeners. */
#define MF_TCP_EPOLL_EVERY 64

static int mf_tcp_open(mf_fabric *f);
static int mf_tcp_start(mf_fabric *f);
static int mf_tcp_close(mf_fabric *f);
static bool mf_tcp_reachable(mf_fabric *f, int peer);
static int mf_tcp_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                       int niov, mf_fabric_done *done);
static int mf_tcp_progress(mf_fabric *f);
static int mf_tcp_wait_fd(mf_fabric *f);
static bool mf_tcp_sleep_prepare(mf_fabric *f);
static void mf_tcp_sleep_end(mf_fabric *f);
static bool mf_tcp_tx_idle(mf_fabric *f);
static int mf_tcp_break_peer(mf_fabric *f, int peer);
static int mf_tcp_revive_peer(mf_fabric *f, int peer);
static int mf_tcp_rx_peek(mf_fabric *f, int peer, mf_wire_hdr *hdr);
static void mf_tcp_rx_take(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                           int niov);

static const mf_fabric_ops mf_tcp_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_tcp_open,
    .start = mf_tcp_start,
    .close = mf_tcp_close,
    .reachable = mf_tcp_reachable,
    .send = mf_tcp_send,
    .rkey_make = mf_fabric_no_rkey_make,
    .rkey_release = mf_fabric_no_rkey_release,
    .rget = mf_fabric_no_rget,
    .progress = mf_tcp_progress,
    .wait_fd = mf_tcp_wait_fd,
    .sleep_prepare = mf_tcp_sleep_prepare,
    .sleep_end = mf_tcp_sleep_end,
    .tx_idle = mf_tcp_tx_idle,
    .rx_peek = mf_tcp_rx_peek,
    .rx_take = mf_tcp_rx_take,
    .break_peer = mf_tcp_break_peer,
    .revive_peer = mf_tcp_revive_peer,
};

/* Defaults of a zeroed instance. */
static void mf_tcp_init(mf_fabric *f)
{
    mf_tcp *t = mf_tcp_of(f);
    f->flags = MF_FABRIC_NETWORK;
    f->eager_limit = 65536;
    f->max_frame = MF_WIRE_MAX_FRAME;
    t->t_epfd = -1;
    t->t_reserve_fd = -1;
    t->t_rl_refused = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
    t->t_rl_shed = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
    t->t_rl_accept = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
}

const mf_fabric_class mf_tcp_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "tcp",
    .ops = &mf_tcp_ops,
    .caps = MF_FABRIC_CAP_RELIABLE | MF_FABRIC_CAP_ORDERED | MF_FABRIC_CAP_RAIL |
            MF_FABRIC_CAP_NETWORK | MF_FABRIC_CAP_IFACES,
    .max_message = MF_WIRE_MAX_FRAME,
    .instance_size = sizeof(mf_tcp),
    .init = mf_tcp_init,
};

static void mf_tcp_release(mf_tcp *t)
{
    while (t->t_conns)
        mf_tcp_conn_close(t, t->t_conns, MPI_ERR_OTHER);
    mf_tcp_bury(t);
    for (int i = 0; i < t->t_nlisteners; i++)
        close(t->t_listeners[i].l_fd);
    t->t_nlisteners = 0;
    if (t->t_epfd >= 0)
        close(t->t_epfd);
    t->t_epfd = -1;
    if (t->t_reserve_fd >= 0)
        close(t->t_reserve_fd);
    t->t_reserve_fd = -1;
    t->t_listen_paused = false;
    free(t->t_peers);
    t->t_peers = NULL;
    t->t_npeers = 0;
    mf_fabric_failures_free(&t->t_fails);
}

/* A whole number from `lo` to `hi` in variable `name` (its default when unset), or an error code
 * naming the variable. */
static int mf_tcp_config_count(const char *name, long lo, long hi, long *out)
{
    const char *s = mf_config_str(name);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return mf_error(MPI_ERR_ARG, "tcp: %s=%s: expected a whole number from %ld to %ld", name, s,
                        lo, hi);
    *out = v;
    return MPI_SUCCESS;
}

/* The bounds on strangers (tcp.h); the cap leaves three quarters of the descriptors to the job. */
static int mf_tcp_open_bounds(mf_tcp *t)
{
    long timeout, pending;
    int rc = mf_tcp_config_count("MANIFOLD_TCP_AUTH_TIMEOUT", 1, 3600, &timeout);
    if (rc == MPI_SUCCESS)
        rc = mf_tcp_config_count("MANIFOLD_TCP_AUTH_PENDING", 1, 1 << 20, &pending);
    if (rc)
        return rc;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)pending > rl.rlim_cur / 4)
        pending = rl.rlim_cur / 4 > 0 ? (long)(rl.rlim_cur / 4) : 1;
    t->t_auth_timeout = (double)timeout;
    t->t_pending_max = (int)pending;
    t->t_npending = 0;
    t->t_reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return MPI_SUCCESS;
}

static int mf_tcp_open(mf_fabric *f)
{
    mf_tcp *t = mf_tcp_of(f);
    int rc = mf_tcp_open_bounds(t);
    if (rc)
        return rc;
    f->eager_limit = mf_config_size("MANIFOLD_TCP_EAGER_LIMIT");
    if (f->eager_limit > f->max_frame)
        f->eager_limit = f->max_frame;
    size_t sockbuf = mf_config_size("MANIFOLD_TCP_SOCKBUF");
    t->t_sockbuf = sockbuf > (1u << 30) ? 1 << 30 : (int)sockbuf;
    t->t_staging = MF_TCP_STAGING;
    if (f->eager_limit + MF_WIRE_HDR_SIZE > t->t_staging)
        t->t_staging = f->eager_limit + MF_WIRE_HDR_SIZE > MF_TCP_STAGING_MAX
                           ? MF_TCP_STAGING_MAX
                           : f->eager_limit + MF_WIRE_HDR_SIZE;
    t->t_npeers = mf_g.size;
    t->t_peers = calloc((size_t)mf_g.size, sizeof *t->t_peers);
    if (!t->t_peers) {
        rc = mf_error(MPI_ERR_NO_MEM, "tcp: no memory for %d peers", mf_g.size);
        goto fail;
    }
    rc = mf_fabric_failures_init(&t->t_fails, mf_g.size, "tcp");
    if (rc)
        goto fail;
    for (int r = 0; r < mf_g.size; r++) {
        mf_stream_out_init(&t->t_peers[r].p_out, MF_TCP_COPY_LIMIT);
        t->t_peers[r].p_naddrs = -1;
    }
    t->t_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->t_epfd < 0) {
        rc = mf_error(MPI_ERR_OTHER, "tcp: epoll_create1 failed: %s", strerror(errno));
        goto fail;
    }
    char pub[MF_PM_VAL_MAX];
    rc = mf_tcp_listen(t, pub, sizeof pub);
    if (rc)
        goto fail;
    rc = mf_fabric_addr_publish(f, pub);
    if (rc)
        goto fail;
    mf_debug("%s: job %016llx", f->name, (unsigned long long)mf_g.job_hash);
    return MPI_SUCCESS;
fail:
    mf_tcp_release(t);
    return rc;
}

static int mf_tcp_start(mf_fabric *f)
{
    return MPI_SUCCESS;
}

/* Every other rank published a tcp address when its tcp fabric opened (the same library runs
 * everywhere), and addresses are looked up lazily at the first send: a peer without one fails
 * then, with a message saying so. */
static bool mf_tcp_reachable(mf_fabric *f, int peer)
{
    return peer != mf_g.rank && peer >= 0 && peer < mf_g.size;
}

static int mf_tcp_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                       int niov, mf_fabric_done *done)
{
    mf_tcp *t = mf_tcp_of(f);
    if (peer < 0 || peer >= t->t_npeers || peer == mf_g.rank)
        return mf_error(MPI_ERR_INTERN, "tcp: send to invalid rank %d", peer);
    if (hdr->len > f->max_frame)
        return mf_error(MPI_ERR_INTERN, "tcp: frame of %llu bytes exceeds max_frame",
                        (unsigned long long)hdr->len);
    mf_tcp_peer *p = &t->t_peers[peer];
    if (t->t_fails.code[peer])
        return t->t_fails.code[peer];
    if (!p->p_up && !p->p_dialing && !p->p_expect_incoming) {
        int rc = mf_tcp_dial(t, peer);
        if (rc) {
            mf_tcp_peer_fail(t, peer, rc, MF_TCP_FAIL_DEFERRED);
            return rc;
        }
    }
    unsigned char h[MF_WIRE_HDR_SIZE];
    mf_wire_encode(hdr, h);
    mf_tcp_conn *c = p->p_up && p->p_up->c_state == MF_TCP_UP ? p->p_up : NULL;
    int err = 0;
    int rc = mf_stream_out_send(&p->p_out, c ? &c->c_io : NULL, h, iov, niov, (size_t)hdr->len,
                                done, &err);
    if (rc == MF_STREAM_FAILED) {
        if (err == EINVAL)
            return mf_error(MPI_ERR_INTERN,
                            "tcp: send to rank %d: the iovecs do not hold the "
                            "header's %llu bytes",
                            peer, (unsigned long long)hdr->len);
        /* Part of the frame may be on the wire already: the stream is unusable either way. */
        int code = err == ENOMEM ? mf_error(MPI_ERR_NO_MEM,
                                            "tcp: connection to rank %d (%s) abandoned: no "
                                            "memory to queue a frame",
                                            peer, c ? c->c_where : "-")
                                 : mf_error(MPI_ERR_OTHER,
                                            "tcp: connection to rank %d (%s) lost: write "
                                            "failed: %s",
                                            peer, c ? c->c_where : "-", strerror(err));
        mf_tcp_peer_fail(t, peer, code, MF_TCP_FAIL_DEFERRED);
        return code;
    }
    mf_fabric_count_tx(f, hdr);
    if (c && !mf_stream_out_empty(&p->p_out))
        mf_tcp_conn_update(t, c);
    return rc;
}

/* Reads every up connection once, as if epoll had reported it readable. */
static int mf_tcp_progress_direct(mf_tcp *t)
{
    /* Upcalls may close connections (they stay allocated until mf_tcp_bury) and open new ones
     * (at the head of the list): walk a snapshot and skip what is no longer up. */
    mf_tcp_conn *up[MF_TCP_DIRECT_MAX];
    int k = 0, n = 0;
    for (mf_tcp_conn *c = t->t_conns; c && k < MF_TCP_DIRECT_MAX; c = c->c_next)
        up[k++] = c;
    for (int i = 0; i < k; i++) {
        if (up[i]->c_state == MF_TCP_UP)
            n += mf_tcp_conn_event(t, up[i], EPOLLIN);
    }
    return n;
}

static int mf_tcp_progress_epoll(mf_tcp *t)
{
    struct epoll_event ev[64];
    int k, n = 0;
    t->t_epoll_due = false;
    do
        k = epoll_wait(t->t_epfd, ev, 64, 0);
    while (k < 0 && errno == EINTR);
    for (int i = 0; i < k; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == MF_TCP_LISTENER) {
            mf_tcp_accept(t, ev[i].data.ptr);
            continue;
        }
        mf_tcp_conn *c = ev[i].data.ptr;
        n += mf_tcp_conn_event(t, c, ev[i].events);
    }
    return n;
}

/* The connections a direct receive left staged bytes in (t_staged), outside the quiet regime,
 * where they would not be read otherwise. */
static int mf_tcp_progress_staged(mf_tcp *t)
{
    int n = 0;
    t->t_staged = false;
    for (int r = 0; r < t->t_npeers; r++) {
        mf_tcp_conn *c = t->t_peers[r].p_up;
        if (c && c->c_state == MF_TCP_UP && c->c_in_ready && mf_stream_in_staged(&c->c_in))
            n += mf_tcp_conn_event(t, c, EPOLLIN);
    }
    return n;
}

/* The pass runs on every poll of every wait: what has nothing to do is skipped by a test here,
 * not by a call that returns at once (the pass costs little more than its read). */
static int mf_tcp_progress(mf_fabric *f)
{
    mf_tcp *t = mf_tcp_of(f);
    int n = t->t_fails.npending ? mf_tcp_report_failures(t) : 0;
    /* Not quiet while another thread sleeps on our epoll fd (fabric.h, sleepers). */
    bool quiet = t->t_nconns == t->t_nup && t->t_nup <= MF_TCP_DIRECT_MAX && f->sleepers == 0;
    if (quiet != t->t_quiet)
        mf_tcp_set_quiet(t, quiet);
    t->t_in_progress++;
    if (t->t_quiet) {
        t->t_staged = false; /* every up connection is read below */
        n += mf_tcp_progress_direct(t);
        if (t->t_nout || t->t_epoll_due || ++t->t_pass % MF_TCP_EPOLL_EVERY == 0)
            n += mf_tcp_progress_epoll(t);
    } else {
        if (t->t_staged)
            n += mf_tcp_progress_staged(t);
        n += mf_tcp_progress_epoll(t);
    }
    t->t_in_progress--;
    /* Sends made by upcalls may have failed a peer: report before returning. */
    if (t->t_fails.npending)
        n += mf_tcp_report_failures(t);
    if (t->t_npending || t->t_listen_paused)
        n += mf_tcp_housekeeping(t);
    if (t->t_grave)
        mf_tcp_bury(t);
    return n;
}

/* Direct receive (fabric.h): the peer's up connection, read on the same staging buffer as
 * progress (mf_stream_in_peek). Not inside progress (an upcall's blocking receive would read
 * under the frame being delivered), nor under a wrapper that takes our frames (upcalls). */
static int mf_tcp_rx_peek(mf_fabric *f, int peer, mf_wire_hdr *hdr)
{
    mf_tcp *t = mf_tcp_of(f);
    if (peer < 0 || peer >= t->t_npeers || t->t_in_progress || f->upcalls || t->t_fails.code[peer])
        return -1;
    mf_tcp_conn *c = t->t_peers[peer].p_up;
    if (!c || c->c_state != MF_TCP_UP || !c->c_in_ready)
        return -1; /* not connected yet: progress makes the connection */
    int got = mf_stream_in_peek(&c->c_in, &c->c_io, hdr);
    /* A frame peek showed (and the receive may leave) or left to progress is deliverable now;
     * a part of one (0) is not, and the socket reports the rest when it comes: no need to keep
     * the engine awake for it. */
    if (got != 0 && mf_stream_in_staged(&c->c_in))
        t->t_staged = true;
    return got;
}

static void mf_tcp_rx_take(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                           int niov)
{
    mf_tcp *t = mf_tcp_of(f);
    mf_tcp_conn *c = t->t_peers[peer].p_up;
    mf_fabric_count_rx(f, hdr);
    mf_stream_in_take(&c->c_in, hdr, iov, niov);
    if (mf_stream_in_staged(&c->c_in))
        t->t_staged = true;
}

static int mf_tcp_wait_fd(mf_fabric *f)
{
    return (mf_tcp_of(f))->t_epfd;
}

/* A failure noticed inside send is reported by the next progress: do not sleep past it. Nor past
 * a handshake deadline or the listeners' pause (the sleep is bounded while there is one).
 * Quiet connections rejoin the epoll set first; epoll_ctl reports data that came meanwhile, so
 * the engine's wait returns at once for it. */
static bool mf_tcp_sleep_prepare(mf_fabric *f)
{
    mf_tcp *t = mf_tcp_of(f);
    mf_tcp_set_quiet(t, false);
    f->poll_interval_us = mf_tcp_timer_us(t);
    return t->t_fails.npending == 0 && !t->t_staged;
}

/* Whatever woke the engine (a new connection, a handshake, room to write) may be something only
 * epoll reports: the next pass asks it (and makes the fabric quiet again if it can be). */
static void mf_tcp_sleep_end(mf_fabric *f)
{
    (mf_tcp_of(f))->t_epoll_due = true;
}

static bool mf_tcp_all_flushed(mf_tcp *t)
{
    for (int r = 0; r < t->t_npeers; r++) {
        mf_tcp_peer *p = &t->t_peers[r];
        if (!t->t_fails.code[r] && !mf_stream_out_empty(&p->p_out))
            return false;
    }
    return true;
}

static bool mf_tcp_tx_idle(mf_fabric *f)
{
    return mf_tcp_all_flushed(mf_tcp_of(f));
}

static int mf_tcp_close(mf_fabric *f)
{
    mf_tcp *t = mf_tcp_of(f);
    if (!t->t_peers)
        return MPI_SUCCESS;
    /* 1. Let queued frames drain, for a bounded time (the peers must be progressing). */
    double deadline = mf_clock_s() + MF_TCP_FLUSH_MS / 1000.0;
    while (!mf_tcp_all_flushed(t) && mf_clock_s() < deadline) {
        struct pollfd pfd = {.fd = t->t_epfd, .events = POLLIN};
        poll(&pfd, 1, 10);
        mf_tcp_progress(f);
    }
    int rc = MPI_SUCCESS;
    if (!mf_tcp_all_flushed(t)) {
        rc = mf_error(MPI_ERR_OTHER, "tcp: frames still queued after %d s at finalize",
                      MF_TCP_FLUSH_MS / 1000);
        mf_warn("tcp: frames still queued after %d s at finalize; dropping them",
                MF_TCP_FLUSH_MS / 1000);
    }
    /* 2. Say goodbye on every up connection, so that peers take the end of stream that follows
     *    for a clean close and not for our death. */
    for (mf_tcp_conn *c = t->t_conns; c; c = c->c_next) {
        if (c->c_state != MF_TCP_UP)
            continue;
        mf_tcp_peer *p = &t->t_peers[c->c_peer];
        int err = 0;
        mf_stream_out_fail(&p->p_out, rc ? rc : MPI_ERR_OTHER);
        if (mf_stream_out_bye(&p->p_out, &err) == MF_FABRIC_DONE) {
            for (int tries = 0; tries < 100 && !mf_stream_out_empty(&p->p_out); tries++) {
                if (mf_stream_out_flush(&p->p_out, &c->c_io, &err) < 0)
                    break;
                if (!mf_stream_out_empty(&p->p_out)) {
                    struct pollfd pfd = {.fd = c->c_fd, .events = POLLOUT};
                    poll(&pfd, 1, 10);
                }
            }
            mf_stream_out_fail(&p->p_out, MPI_ERR_OTHER); /* the goodbye, if it did not fit */
        }
        shutdown(c->c_fd, SHUT_WR);
        /* Read what already arrived, so that close() does not answer it with a reset that
         * could overtake our goodbye at the peer. */
        char sink[4096];
        while (recv(c->c_fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
    }
    /* 3. Release everything; anything still pending completes with an error. */
    for (int r = 0; r < t->t_npeers; r++)
        mf_stream_out_fail(&t->t_peers[r].p_out, rc ? rc : MPI_ERR_OTHER);
    mf_tcp_release(t);
    return rc;
}

/* Fault injection: the peer's connection goes down as if the network cut it. Shutting the
 * socket down makes the peer read an end of stream without our goodbye (its failure); ours is
 * reported from the next progress, naming the cause. */
static int mf_tcp_break_peer(mf_fabric *f, int peer)
{
    mf_tcp *t = mf_tcp_of(f);
    if (peer < 0 || peer >= t->t_npeers || peer == mf_g.rank)
        return mf_error(MPI_ERR_INTERN, "%s: cannot break the connection to rank %d", f->name,
                        peer);
    mf_tcp_peer *p = &t->t_peers[peer];
    if (p->p_up)
        shutdown(p->p_up->c_fd, SHUT_RDWR);
    if (p->p_dialing)
        shutdown(p->p_dialing->c_fd, SHUT_RDWR);
    mf_tcp_peer_fail(t, peer,
                     mf_error(MPI_ERR_OTHER,
                              "%s: connection to rank %d broken (fault injection, "
                              "MANIFOLD_FAULT)",
                              f->name, peer),
                     MF_TCP_FAIL_DEFERRED);
    return MPI_SUCCESS;
}

/* Rails (fabric.h): a peer failed under a multirail wrapper may be connected to again. */
static int mf_tcp_revive_peer(mf_fabric *f, int peer)
{
    mf_tcp *t = mf_tcp_of(f);
    if (peer < 0 || peer >= t->t_npeers || peer == mf_g.rank)
        return mf_error(MPI_ERR_INTERN, "%s: cannot revive rank %d", f->name, peer);
    return mf_tcp_peer_revive(t, peer);
}
