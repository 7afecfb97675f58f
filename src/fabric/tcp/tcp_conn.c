/*
 * tcp_conn.c — connections of the tcp fabric: lazy dialing, accepting, the handshake, the
 * simultaneous-connect rule, frame traffic on up connections, and failures. See tcp.h for the
 * protocol; this file is its state machine.
 *
 * Simultaneous connect: both ranks of a pair may dial each other before either sees the other's
 * HELLO. The acceptor of a connection whose initiator proved to be `peer` answers REJECT when it
 * is the lower rank and has its own attempt to `peer` (that one wins), and ACCEPT otherwise — marking its own attempt, if
 * any, as the loser, which the other side will REJECT. Both sides therefore agree on the
 * connection started by the lower rank. Frames live in the peer's queue and are written only
 * on the winner, so none is lost or duplicated.
 */
#include "fabric/tcp/tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "tool/mpit.h"

/* Accepts per listener event, so that a flood of connections cannot monopolise a progress pass
 * (the level-triggered listener reports the rest on the next one). */
#define MF_TCP_ACCEPT_BURST 64
/* Seconds the listeners pause after accept failed with nothing to shed. */
#define MF_TCP_LISTEN_BACKOFF 0.1
/* Seconds between two checks of the pending connections' deadline. */
#define MF_TCP_SWEEP_EVERY 0.05
/* Dials made again after the acceptor closed our connection before its verdict. */
#define MF_TCP_HS_RETRIES 3

static void mf_tcp_on_header(void *ctx, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    mf_tcp_conn *c = ctx;
    mf_fabric_count_rx(&c->c_tcp->t_base, hdr);
    mf_fabric_up_rx_header(&c->c_tcp->t_base, c->c_peer, hdr, sink);
}

/* Sets the epoll mask of c; 0 takes it out of the epoll set (c_events 0: not in it). */
static int mf_tcp_conn_events(mf_tcp *t, mf_tcp_conn *c, uint32_t events)
{
    if (c->c_events == events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    int op = !events ? EPOLL_CTL_DEL : c->c_events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(t->t_epfd, op, c->c_fd, &ev) != 0)
        return -1;
    t->t_nout += (events & EPOLLOUT ? 1 : 0) - (c->c_events & EPOLLOUT ? 1 : 0);
    c->c_events = events;
    return 0;
}

static mf_tcp_conn *mf_tcp_conn_new(mf_tcp *t, int fd, bool outgoing, int peer)
{
    mf_tcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->c_kind = MF_TCP_CONN;
    c->c_tcp = t;
    c->c_fd = fd;
    c->c_peer = peer;
    c->c_outgoing = outgoing;
    mf_stream_io_fd(&c->c_io, fd);
    c->c_next = t->t_conns;
    t->t_conns = c;
    t->t_nconns++;
    return c;
}

void mf_tcp_conn_close(mf_tcp *t, mf_tcp_conn *c, int status)
{
    if (c->c_state == MF_TCP_DEAD)
        return;
    if (c->c_in_ready)
        mf_stream_in_abort(&c->c_in, status);
    if (c->c_events)
        epoll_ctl(t->t_epfd, EPOLL_CTL_DEL, c->c_fd, NULL);
    if (c->c_events & EPOLLOUT)
        t->t_nout--;
    c->c_events = 0;
    close(c->c_fd);
    c->c_fd = -1;
    t->t_nconns--;
    if (c->c_state == MF_TCP_UP)
        t->t_nup--;
    if (c->c_pending)
        t->t_npending--;
    c->c_pending = false;
    c->c_state = MF_TCP_DEAD;
    if (c->c_peer >= 0) {
        mf_tcp_peer *p = &t->t_peers[c->c_peer];
        if (p->p_up == c)
            p->p_up = NULL;
        if (p->p_dialing == c)
            p->p_dialing = NULL;
    }
    /* Unlink from the live list; freed by mf_tcp_bury once no epoll event can name it. */
    for (mf_tcp_conn **pp = &t->t_conns; *pp; pp = &(*pp)->c_next) {
        if (*pp == c) {
            *pp = c->c_next;
            break;
        }
    }
    c->c_next = t->t_grave;
    t->t_grave = c;
}

void mf_tcp_bury(mf_tcp *t)
{
    while (t->t_grave) {
        mf_tcp_conn *c = t->t_grave;
        t->t_grave = c->c_next;
        if (c->c_in_ready)
            mf_stream_in_free(&c->c_in);
        free(c);
    }
}

/* Reports `peer`'s failure, already taken from t_fails: closes its connections, fails what was
 * queued for it and tells the layer above (always when `upcall`, else only if frames were lost). */
static void mf_tcp_peer_report(mf_tcp *t, int peer, bool upcall)
{
    mf_tcp_peer *p = &t->t_peers[peer];
    int code = t->t_fails.code[peer];
    if (p->p_up)
        mf_tcp_conn_close(t, p->p_up, code);
    if (p->p_dialing)
        mf_tcp_conn_close(t, p->p_dialing, code);
    int dropped = mf_stream_out_fail(&p->p_out, code);
    if (upcall || dropped > 0)
        mf_fabric_up_peer_failed(&t->t_base, peer, code);
}

void mf_tcp_peer_fail(mf_tcp *t, int peer, int code, enum mf_tcp_fail_mode mode)
{
    if (!mf_fabric_failures_mark(&t->t_fails, peer, code) || mode == MF_TCP_FAIL_DEFERRED)
        return;
    mf_fabric_failures_take(&t->t_fails, peer);
    if (mode == MF_TCP_FAIL_NOW)
        mf_debug("tcp: rank %d failed", peer);
    mf_tcp_peer_report(t, peer, mode == MF_TCP_FAIL_NOW);
}

int mf_tcp_peer_revive(mf_tcp *t, int peer)
{
    mf_tcp_peer *p = &t->t_peers[peer];
    if (!t->t_fails.code[peer]) {
        /* Dialing into a network that is down waits for TCP's retransmitted SYN (1, 3, 7 s
         * apart): a dial not connected within a second is dropped, so that the next try after
         * the network returns dials at once. */
        mf_tcp_conn *c = p->p_dialing;
        if (t->t_base.upcalls && c && c->c_state == MF_TCP_CONNECTING &&
            mf_clock_s() - c->c_since > 1.0)
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        return MPI_SUCCESS;
    }
    if (!t->t_base.upcalls || !t->t_fails.reported[peer] || p->p_up || p->p_dialing)
        return MF_FABRIC_BUSY;
    mf_fabric_failures_forget(&t->t_fails, peer);
    p->p_expect_incoming = false;
    return MPI_SUCCESS;
}

static void mf_tcp_report_one(mf_fabric *f, int peer, int code)
{
    mf_tcp_peer_report(mf_tcp_of(f), peer, true);
}

int mf_tcp_report_failures(mf_tcp *t)
{
    return mf_fabric_failures_report(&t->t_fails, &t->t_base, mf_tcp_report_one);
}

/* The connection to c's peer is lost: fail the peer with a message naming both ends. */
static void mf_tcp_conn_lost(mf_tcp *t, mf_tcp_conn *c, const char *why, int sys_err)
{
    if (c->c_loser || c->c_peer < 0) {
        mf_tcp_conn_close(t, c, MPI_ERR_OTHER); /* nothing depended on it */
        return;
    }
    int code = mf_error(MPI_ERR_OTHER, "tcp: connection to rank %d (%s) lost: %s%s%s", c->c_peer,
                        c->c_where, why, sys_err ? ": " : "", sys_err ? strerror(sys_err) : "");
    mf_tcp_peer_fail(t, c->c_peer, code, MF_TCP_FAIL_NOW);
    mf_tcp_conn_close(t, c, code);
}

/* ---- Handshake I/O: exact-size reads, so no frame byte is consumed before it is due ---- */

/* 1 when all written, 0 when the socket is full, -1 with errno. */
static int mf_tcp_hs_write(mf_tcp_conn *c)
{
    while (c->c_hs_sent < c->c_hs_len) {
        ssize_t n = send(c->c_fd, c->c_hs_out + c->c_hs_sent, c->c_hs_len - c->c_hs_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        c->c_hs_sent += (size_t)n;
    }
    return 1;
}

/* 1 when a record is complete (and the buffer is ready for the next one), 0 when more is due,
 * -1 with errno (0 for end of stream). */
static int mf_tcp_hs_read(mf_tcp_conn *c)
{
    while (c->c_hs_got < MF_STREAM_HS_SIZE) {
        ssize_t n =
            recv(c->c_fd, c->c_hs_in + c->c_hs_got, MF_STREAM_HS_SIZE - c->c_hs_got, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        if (n == 0) {
            errno = 0;
            return -1;
        }
        c->c_hs_got += (size_t)n;
    }
    c->c_hs_got = 0;
    return 1;
}

/* Queues record h as the next thing c writes. */
static void mf_tcp_hs_put(mf_tcp_conn *c, const mf_stream_hs *h)
{
    mf_stream_hs_encode(h, c->c_hs_out);
    c->c_hs_len = MF_STREAM_HS_SIZE;
    c->c_hs_sent = 0;
}

/* Queues the record carrying this side's MAC (PROOF, ACCEPT or REJECT). */
static void mf_tcp_hs_put_mac(mf_tcp_conn *c, int kind)
{
    mf_stream_hs h = {.kind = (uint8_t)kind};
    mf_stream_auth_mac(&mf_g.job_secret, MF_TCP_CHANNEL, kind, &c->c_auth, h.blob);
    mf_tcp_hs_put(c, &h);
}

/* Writes what c has to write, then sets its epoll mask to `want` plus EPOLLOUT while bytes
 * remain. 1 when all is written, 0 when the socket is full, -1 with errno. */
static int mf_tcp_hs_flush(mf_tcp *t, mf_tcp_conn *c, uint32_t want)
{
    int w = mf_tcp_hs_write(c);
    if (w < 0)
        return -1;
    if (mf_tcp_conn_events(t, c, want | (w ? 0 : EPOLLOUT)) != 0)
        return -1;
    return w;
}

/* ---- Strangers: the bounds on connections that have not authenticated (tcp.h) ---- */

/* Reports through rl that a pending connection was `done` ("closed", "refused") for `why`. */
static void mf_tcp_note(mf_ratelimit *rl, mf_tcp_conn *c, const char *done, const char *why)
{
    unsigned held;
    if (mf_ratelimit_pass(rl, mf_clock_s(), &held))
        mf_warn("tcp: %s an unauthenticated connection from %s: %s (%u more %s since the last "
                "report)",
                done, c->c_where, why, held, done);
}

/* Closes the pending connection to give up first: one that has not sent a valid HELLO before
 * one that has, then the oldest. False when none is pending. */
static bool mf_tcp_shed(mf_tcp *t, const char *why)
{
    mf_tcp_conn *v = NULL;
    for (mf_tcp_conn *c = t->t_conns; c; c = c->c_next) {
        if (!c->c_pending)
            continue;
        bool silent = c->c_claim < 0, vsilent = v && v->c_claim < 0;
        if (!v || silent > vsilent || (silent == vsilent && c->c_since < v->c_since))
            v = c;
    }
    if (!v)
        return false;
    mf_tcp_note(&t->t_rl_shed, v, "closed", why);
    mf_tcp_conn_close(t, v, MPI_ERR_OTHER);
    return true;
}

/* Answers an incoming connection that failed a check with the fixed refusal, best effort, and
 * closes it. The reason stays in our log (rate-limited); the stranger learns nothing. */
static int mf_tcp_refuse(mf_tcp *t, mf_tcp_conn *c, const char *why)
{
    mf_tcp_note(&t->t_rl_refused, c, "refused", why);
    mf_t_event_raise(MF_T_EVENT_CONNECTION_REFUSED, (const int[]){c->c_claim});
    mf_stream_hs r = {.kind = MF_STREAM_HS_REFUSE};
    mf_tcp_hs_put(c, &r);
    (void)mf_tcp_hs_write(c);
    /* A FIN after the refusal rather than a reset that could overtake it: drop a little of what
     * the stranger sent (bounded: it may keep sending). */
    shutdown(c->c_fd, SHUT_WR);
    char sink[4096];
    (void)recv(c->c_fd, sink, sizeof sink, MSG_DONTWAIT);
    mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
    return 1;
}

static void mf_tcp_listeners_arm(mf_tcp *t, bool on)
{
    for (int i = 0; i < t->t_nlisteners; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &t->t_listeners[i]};
        epoll_ctl(t->t_epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, t->t_listeners[i].l_fd, &ev);
    }
    t->t_listen_paused = !on;
}

/* accept failed with nothing to shed (out of descriptors, all of them authenticated) or for a
 * system reason. The waiting connection is taken with the reserve descriptor and dropped when
 * possible (its initiator, if a rank, dials again), and the listeners pause for
 * MF_TCP_LISTEN_BACKOFF: the level-triggered listener must not make progress spin. */
static void mf_tcp_accept_failed(mf_tcp *t, mf_tcp_listener *l, int err)
{
    bool dropped = false;
    if ((err == EMFILE || err == ENFILE) && t->t_reserve_fd >= 0) {
        close(t->t_reserve_fd);
        int fd = accept4(l->l_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            close(fd);
        dropped = fd >= 0;
        t->t_reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    unsigned held;
    if (mf_ratelimit_pass(&t->t_rl_accept, mf_clock_s(), &held))
        mf_warn("tcp: accept failed: %s; %s, not accepting for %g s (%u more failures since the "
                "last report)",
                strerror(err), dropped ? "dropped the incoming connection" : "nothing dropped",
                MF_TCP_LISTEN_BACKOFF, held);
    mf_tcp_listeners_arm(t, false);
    t->t_listen_resume = mf_clock_s() + MF_TCP_LISTEN_BACKOFF;
}

int mf_tcp_timer_us(const mf_tcp *t)
{
    return t->t_npending || t->t_listen_paused ? (int)(MF_TCP_SWEEP_EVERY * 1e6) : 0;
}

int mf_tcp_housekeeping(mf_tcp *t)
{
    if (!t->t_npending && !t->t_listen_paused)
        return 0;
    double now = mf_clock_s();
    int n = 0;
    if (t->t_listen_paused && now >= t->t_listen_resume) {
        mf_tcp_listeners_arm(t, true);
        n++;
    }
    if (t->t_npending && now >= t->t_next_sweep) {
        t->t_next_sweep = now + MF_TCP_SWEEP_EVERY;
        char why[96];
        snprintf(why, sizeof why, "not authenticated within %g s (MANIFOLD_TCP_AUTH_TIMEOUT)",
                 t->t_auth_timeout);
        for (mf_tcp_conn *c = t->t_conns, *next; c; c = next) {
            next = c->c_next; /* closing unlinks c */
            if (c->c_pending && now - c->c_since >= t->t_auth_timeout) {
                mf_tcp_note(&t->t_rl_shed, c, "closed", why);
                mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
                n++;
            }
        }
    }
    return n;
}

/* The connection carries frames from now on. */
static int mf_tcp_conn_establish(mf_tcp *t, mf_tcp_conn *c)
{
    mf_tcp_peer *p = &t->t_peers[c->c_peer];
    int rc = mf_stream_in_init(&c->c_in, t->t_staging, mf_tcp_on_header, c);
    if (rc) {
        mf_tcp_peer_fail(t, c->c_peer, rc, MF_TCP_FAIL_NOW);
        return 1;
    }
    c->c_in_ready = true;
    c->c_state = MF_TCP_UP;
    t->t_nup++;
    mf_counter_add(&t->t_base.counters.connections, 1);
    p->p_up = c;
    if (p->p_dialing == c)
        p->p_dialing = NULL;
    p->p_expect_incoming = false;
    mf_debug("tcp: connected to rank %d (%s, %s)", c->c_peer, c->c_where,
             c->c_outgoing ? "outgoing" : "incoming");
    int err = 0;
    if (!mf_stream_out_empty(&p->p_out) && mf_stream_out_flush(&p->p_out, &c->c_io, &err) < 0) {
        mf_tcp_conn_lost(t, c, "write failed", err);
        return 1;
    }
    mf_tcp_conn_update(t, c);
    return 1;
}

void mf_tcp_conn_update(mf_tcp *t, mf_tcp_conn *c)
{
    if (c->c_state != MF_TCP_UP)
        return;
    uint32_t want = t->t_quiet ? 0 : EPOLLIN;
    if (!mf_stream_out_empty(&t->t_peers[c->c_peer].p_out))
        want |= EPOLLOUT;
    if (mf_tcp_conn_events(t, c, want) != 0)
        mf_tcp_conn_lost(t, c, "epoll_ctl failed", errno);
}

void mf_tcp_set_quiet(mf_tcp *t, bool quiet)
{
    if (t->t_quiet == quiet)
        return;
    t->t_quiet = quiet;
    for (mf_tcp_conn *c = t->t_conns; c; c = c->c_next) {
        if (c->c_state != MF_TCP_UP)
            continue;
        uint32_t want = (quiet ? 0 : EPOLLIN) | (c->c_events & EPOLLOUT);
        if (mf_tcp_conn_events(t, c, want) != 0) {
            int code = mf_error(MPI_ERR_OTHER,
                                "tcp: connection to rank %d (%s) lost: epoll_ctl failed: %s",
                                c->c_peer, c->c_where, strerror(errno));
            mf_tcp_peer_fail(t, c->c_peer, code, MF_TCP_FAIL_DEFERRED);
        }
    }
}

/* ---- Outgoing ---- */

/* socket(), shedding a pending stranger when out of descriptors: our own connections first. */
static int mf_tcp_socket(mf_tcp *t)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) &&
        mf_tcp_shed(t, "out of file descriptors for our own connections"))
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return fd;
}

/* Starts a nonblocking connect to the peer's addresses from index idx on. */
static int mf_tcp_connect_from(mf_tcp *t, int peer, int idx)
{
    mf_tcp_peer *p = &t->t_peers[peer];
    int err = 0;
    char where[64] = "";
    for (; idx < p->p_naddrs; idx++) {
        mf_tcp_addr_str(&p->p_addrs[idx], where, sizeof where);
        int fd = mf_tcp_socket(t);
        if (fd < 0)
            return mf_error(MPI_ERR_OTHER, "tcp: socket() failed: %s", strerror(errno));
        mf_tcp_tune(t, fd);
        if (connect(fd, (struct sockaddr *)&p->p_addrs[idx], sizeof p->p_addrs[idx]) != 0 &&
            errno != EINPROGRESS) {
            err = errno;
            close(fd);
            continue;
        }
        mf_tcp_conn *c = mf_tcp_conn_new(t, fd, true, peer);
        if (!c) {
            close(fd);
            return mf_error(MPI_ERR_NO_MEM, "tcp: no memory for a connection");
        }
        c->c_state = MF_TCP_CONNECTING;
        c->c_since = mf_clock_s();
        c->c_addr_idx = idx;
        snprintf(c->c_where, sizeof c->c_where, "%s", where);
        p->p_dialing = c;
        if (mf_tcp_conn_events(t, c, EPOLLOUT) != 0) {
            int e = errno;
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
            return mf_error(MPI_ERR_OTHER, "tcp: epoll_ctl failed: %s", strerror(e));
        }
        return MPI_SUCCESS;
    }
    return mf_error(MPI_ERR_OTHER, "tcp: cannot connect to rank %d (last tried %s): %s", peer,
                    where, strerror(err ? err : ENETUNREACH));
}

int mf_tcp_dial(mf_tcp *t, int peer)
{
    mf_tcp_peer *p = &t->t_peers[peer];
    if (p->p_naddrs < 0) {
        char val[MF_PM_VAL_MAX];
        int rc = mf_fabric_addr_lookup(&t->t_base, peer, val, sizeof val);
        if (rc)
            return rc;
        bool same_host = mf_g.node_of && mf_g.node_of[peer] == mf_g.node;
        p->p_naddrs = mf_tcp_parse_addrs(val, same_host, p->p_addrs, MF_TCP_MAX_ADDRS);
        if (p->p_naddrs == 0)
            return mf_error(MPI_ERR_OTHER,
                            "tcp: rank %d has no address reachable from %s "
                            "(published: %s)",
                            peer, same_host ? "its host" : "another host", val);
        if (t->t_base.upcalls && !same_host) {
            rc = mf_tcp_rail_pair(t, peer, p->p_addrs, &p->p_naddrs);
            if (rc) {
                p->p_naddrs = -1;
                return rc;
            }
        }
    }
    return mf_tcp_connect_from(t, peer, 0);
}

/* Replaces outgoing c (closed here) by a new attempt at its peer's addresses from idx on, with
 * c's loser mark and `retries`. Failing to start one fails the peer, unless c had lost anyway. */
static int mf_tcp_redial(mf_tcp *t, mf_tcp_conn *c, int idx, int retries)
{
    int peer = c->c_peer;
    bool loser = c->c_loser;
    mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
    int rc = mf_tcp_connect_from(t, peer, idx);
    if (rc && !loser) {
        mf_tcp_peer_fail(t, peer, rc, MF_TCP_FAIL_NOW);
    } else if (!rc) {
        t->t_peers[peer].p_dialing->c_loser = loser;
        t->t_peers[peer].p_dialing->c_retries = retries;
    }
    return 1;
}

/* The connection ended under our handshake. Closed before the verdict (end of stream, reset),
 * the acceptor may have shed it as a stranger (deadline, cap, out of descriptors: it cannot
 * tell us before we prove ourselves): dial again before calling the peer lost.
 * Only quick cuts count against MF_TCP_HS_RETRIES: those are a peer shedding us under load, and
 * a peer that keeps doing so is lost. A cut that comes a whole deadline after we dialed is the
 * peer's MANIFOLD_TCP_AUTH_TIMEOUT: most often our own doing (this rank computed between two MPI
 * calls for longer than the deadline while its first message to the peer was connecting), and
 * in any case proof that the peer is alive and answering, so it is not counted; otherwise a
 * correct program that overlaps long computation with its first send would fail
 * (tests/security/slow_first_send.c). */
static int mf_tcp_hs_broken(mf_tcp *t, mf_tcp_conn *c, const char *why, int err)
{
    bool cut = err == 0 || err == ECONNRESET || err == EPIPE;
    bool timed_out = mf_clock_s() - c->c_since >= t->t_auth_timeout;
    if (!cut || (!timed_out && c->c_retries >= MF_TCP_HS_RETRIES)) {
        mf_tcp_conn_lost(t, c, why, err);
        return 1;
    }
    mf_debug("tcp: handshake with rank %d (%s) cut short (%s); dialing again", c->c_peer,
             c->c_where, err ? strerror(err) : "closed");
    return mf_tcp_redial(t, c, 0, timed_out ? c->c_retries : c->c_retries + 1);
}

/* The connect completed (or failed): on to the HELLO, or to the peer's next address. */
static int mf_tcp_connected(mf_tcp *t, mf_tcp_conn *c)
{
    mf_tcp_peer *p = &t->t_peers[c->c_peer];
    int err = 0;
    socklen_t l = sizeof err;
    if (getsockopt(c->c_fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
        err = errno;
    if (err) {
        int next = c->c_addr_idx + 1;
        if (next < p->p_naddrs) {
            mf_debug("tcp: connect to rank %d failed (%s), trying its next address", c->c_peer,
                     strerror(err));
            return mf_tcp_redial(t, c, next, c->c_retries);
        }
        if (c->c_loser) {
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
            return 1;
        }
        int peer = c->c_peer;
        int code = mf_error(MPI_ERR_OTHER, "tcp: cannot connect to rank %d (%s): %s", peer,
                            c->c_where, strerror(err));
        mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        mf_tcp_peer_fail(t, peer, code, MF_TCP_FAIL_NOW);
        return 1;
    }
    mf_auth_nonce(c->c_auth.sa_nonce_i);
    mf_stream_auth_ids(&c->c_auth, mf_g.job_hash, mf_g.size, mf_g.rank, c->c_peer);
    mf_stream_hs h = {.kind = MF_STREAM_HS_HELLO,
                      .from = mf_g.rank,
                      .to = c->c_peer,
                      .size = mf_g.size,
                      .job_hash = mf_g.job_hash};
    memcpy(h.blob, c->c_auth.sa_nonce_i, sizeof h.blob);
    mf_tcp_hs_put(c, &h);
    c->c_state = MF_TCP_WAIT_CHALLENGE;
    return 0;
}

/* The acceptor's verdict, its proof checked: up, or the simultaneous-connect loss. */
static int mf_tcp_verdict(mf_tcp *t, mf_tcp_conn *c, int kind)
{
    mf_tcp_peer *p = &t->t_peers[c->c_peer];
    if (kind == MF_STREAM_HS_REJECT) {
        if (mf_g.rank > c->c_peer) {
            /* Lost a simultaneous connect: the peer's connection carries the frames. */
            mf_debug("tcp: rank %d preferred its own connection", c->c_peer);
            p->p_expect_incoming = p->p_up == NULL;
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
            return 1;
        }
        mf_tcp_conn_lost(t, c, "the peer rejected the connection of the lower rank", 0);
        return 1;
    }
    if (c->c_loser) {
        /* Cannot happen with a conforming peer (it has our winning connection). */
        mf_warn("tcp: rank %d accepted a connection it should have rejected; closing it",
                c->c_peer);
        mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        return 1;
    }
    return mf_tcp_conn_establish(t, c);
}

static int mf_tcp_outgoing_event(mf_tcp *t, mf_tcp_conn *c, uint32_t ev)
{
    if (c->c_state == MF_TCP_CONNECTING && mf_tcp_connected(t, c))
        return 1;
    for (;;) {
        if (mf_tcp_hs_flush(t, c, EPOLLIN) < 0)
            return mf_tcp_hs_broken(t, c, "handshake write failed", errno);
        int r = mf_tcp_hs_read(c);
        if (r == 0)
            return 0;
        if (r < 0)
            return mf_tcp_hs_broken(t, c,
                                    errno ? "handshake read failed"
                                          : "connection closed by the peer during the handshake",
                                    errno);
        mf_stream_hs h;
        const char *why = NULL;
        if (mf_stream_hs_decode(c->c_hs_in, &h, &why) != 0) {
            mf_tcp_conn_lost(t, c, why, 0);
            return 1;
        }
        if (h.kind == MF_STREAM_HS_REFUSE) {
            mf_tcp_conn_lost(t, c,
                             "the process there refused our handshake (not a rank of this job, "
                             "or it does not share our job secret)",
                             0);
            return 1;
        }
        bool want_challenge = c->c_state == MF_TCP_WAIT_CHALLENGE;
        if (want_challenge ? h.kind != MF_STREAM_HS_CHALLENGE
                           : h.kind != MF_STREAM_HS_ACCEPT && h.kind != MF_STREAM_HS_REJECT) {
            mf_tcp_conn_lost(t, c, "unexpected handshake record", 0);
            return 1;
        }
        if (!want_challenge) {
            if (!mf_stream_auth_check(&mf_g.job_secret, MF_TCP_CHANNEL, &h, &c->c_auth)) {
                mf_tcp_conn_lost(t, c,
                                 "the process there failed to prove it belongs to this job "
                                 "(it does not hold our job secret)",
                                 0);
                return 1;
            }
            return mf_tcp_verdict(t, c, h.kind);
        }
        memcpy(c->c_auth.sa_nonce_r, h.blob, sizeof c->c_auth.sa_nonce_r);
        mf_tcp_hs_put_mac(c, MF_STREAM_HS_PROOF);
        c->c_state = MF_TCP_WAIT_VERDICT;
    }
}

/* ---- Incoming ---- */

void mf_tcp_accept(mf_tcp *t, mf_tcp_listener *l)
{
    for (int i = 0; i < MF_TCP_ACCEPT_BURST; i++) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        int fd = accept4(l->l_fd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == EINTR || e == ECONNABORTED)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK)
                return;
            /* Out of descriptors: a stranger waiting to authenticate makes room first. */
            if ((e == EMFILE || e == ENFILE) && mf_tcp_shed(t, "out of file descriptors"))
                continue;
            mf_tcp_accept_failed(t, l, e);
            return;
        }
        if (t->t_npending >= t->t_pending_max) {
            char why[96];
            snprintf(why, sizeof why,
                     "more than %d connections waiting to authenticate "
                     "(MANIFOLD_TCP_AUTH_PENDING)",
                     t->t_pending_max);
            mf_tcp_shed(t, why);
        }
        mf_tcp_tune(t, fd);
        mf_tcp_conn *c = mf_tcp_conn_new(t, fd, false, -1);
        if (!c) {
            close(fd);
            continue;
        }
        c->c_state = MF_TCP_WAIT_HELLO;
        c->c_pending = true;
        c->c_claim = -1;
        c->c_since = mf_clock_s();
        t->t_npending++;
        mf_tcp_addr_str(&from, c->c_where, sizeof c->c_where);
        if (mf_tcp_conn_events(t, c, EPOLLIN) != 0)
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        else /* the HELLO usually arrived with the connection */
            mf_tcp_conn_event(t, c, EPOLLIN);
    }
}

/* The reply is written: the connection is up, or closed (REJECT). */
static int mf_tcp_replied(mf_tcp *t, mf_tcp_conn *c)
{
    if (c->c_close_after) {
        mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        return 1;
    }
    return mf_tcp_conn_establish(t, c);
}

/* Sends the verdict (ACCEPT or REJECT, with our proof) to a peer that proved itself. */
static int mf_tcp_reply(mf_tcp *t, mf_tcp_conn *c, int kind)
{
    mf_tcp_hs_put_mac(c, kind);
    c->c_state = MF_TCP_REPLYING;
    c->c_close_after = kind != MF_STREAM_HS_ACCEPT;
    int w = mf_tcp_hs_flush(t, c, 0);
    if (w < 0) {
        mf_tcp_conn_lost(t, c, "handshake write failed", errno);
        return 1;
    }
    return w ? mf_tcp_replied(t, c) : 1;
}

/* A HELLO arrived: answer with our CHALLENGE, or refuse. */
static int mf_tcp_on_hello(mf_tcp *t, mf_tcp_conn *c, const mf_stream_hs *h)
{
    const char *why = NULL;
    if (mf_stream_hs_check_hello(h, mf_g.job_hash, mf_g.size, mf_g.rank, &why) != 0)
        return mf_tcp_refuse(t, c, why);
    c->c_claim = h->from;
    memcpy(c->c_auth.sa_nonce_i, h->blob, sizeof c->c_auth.sa_nonce_i);
    mf_auth_nonce(c->c_auth.sa_nonce_r);
    mf_stream_auth_ids(&c->c_auth, mf_g.job_hash, mf_g.size, h->from, mf_g.rank);
    mf_stream_hs ch = {.kind = MF_STREAM_HS_CHALLENGE};
    memcpy(ch.blob, c->c_auth.sa_nonce_r, sizeof ch.blob);
    mf_tcp_hs_put(c, &ch);
    c->c_state = MF_TCP_WAIT_PROOF;
    return 0;
}

/* A PROOF arrived: the peer is rank c_claim of this job, or a stranger to refuse. Then the
 * simultaneous-connect rule (file comment) picks the verdict. */
static int mf_tcp_on_proof(mf_tcp *t, mf_tcp_conn *c, const mf_stream_hs *h)
{
    if (h->kind != MF_STREAM_HS_PROOF)
        return mf_tcp_refuse(t, c, "it sent no PROOF after our CHALLENGE");
    if (!mf_stream_auth_check(&mf_g.job_secret, MF_TCP_CHANNEL, h, &c->c_auth))
        return mf_tcp_refuse(t, c, "its PROOF is wrong (it does not hold the job secret)");
    c->c_pending = false;
    t->t_npending--;
    int peer = c->c_claim;
    mf_tcp_peer *p = &t->t_peers[peer];
    if (t->t_fails.code[peer] && mf_tcp_peer_revive(t, peer) != MPI_SUCCESS) {
        mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
        return 1;
    }
    if (p->p_up || (p->p_dialing && mf_g.rank < peer)) {
        /* Ours wins (or one is already up): the peer will accept ours / already uses it. */
        mf_debug("tcp: rejecting rank %d's connection in favour of ours", peer);
        return mf_tcp_reply(t, c, MF_STREAM_HS_REJECT);
    }
    if (p->p_dialing)
        p->p_dialing->c_loser = true; /* theirs wins; ours will be rejected */
    c->c_peer = peer;
    p->p_up = c; /* claims the peer now; frames flow once the ACCEPT is written */
    return mf_tcp_reply(t, c, MF_STREAM_HS_ACCEPT);
}

static int mf_tcp_incoming_event(mf_tcp *t, mf_tcp_conn *c, uint32_t ev)
{
    if (c->c_state == MF_TCP_REPLYING) {
        int w = mf_tcp_hs_write(c);
        if (w < 0)
            mf_tcp_conn_lost(t, c, "handshake write failed", errno);
        else if (w == 1)
            return mf_tcp_replied(t, c);
        return 1;
    }
    for (;;) {
        int r = mf_tcp_hs_flush(t, c, EPOLLIN) < 0 ? -1 : mf_tcp_hs_read(c);
        if (r == 0)
            return 0;
        if (r < 0) {
            mf_debug("tcp: connection from %s ended before it authenticated", c->c_where);
            mf_tcp_conn_close(t, c, MPI_ERR_OTHER);
            return 1;
        }
        mf_stream_hs h;
        const char *why = NULL;
        if (mf_stream_hs_decode(c->c_hs_in, &h, &why) != 0)
            return mf_tcp_refuse(t, c, why);
        int done =
            c->c_state == MF_TCP_WAIT_HELLO ? mf_tcp_on_hello(t, c, &h) : mf_tcp_on_proof(t, c, &h);
        if (done)
            return done;
    }
}

/* ---- Up ---- */

static int mf_tcp_up_event(mf_tcp *t, mf_tcp_conn *c, uint32_t ev)
{
    int n = 0;
    int peer = c->c_peer;
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        int rc = mf_stream_in_progress(&c->c_in, &c->c_io);
        if (rc == MF_STREAM_CLOSED) {
            int code = mf_error(MPI_ERR_OTHER, "tcp: rank %d (%s) has finalized", peer, c->c_where);
            mf_tcp_peer_fail(t, peer, code, MF_TCP_FAIL_SILENT);
            return 1;
        }
        if (rc == MF_STREAM_FAILED) {
            /* The end of the stream or a read error is a lost peer; anything else is a frame
             * that failed validation. */
            char why[160];
            bool plain = c->c_in.sys_err || strstr(c->c_in.why, "closed by the peer");
            snprintf(why, sizeof why, "%s%s", plain ? "" : "malformed frame: ", c->c_in.why);
            mf_tcp_conn_lost(t, c, why, c->c_in.sys_err);
            return 1;
        }
        n += rc;
        if (c->c_state != MF_TCP_UP) /* an upcall failed the peer meanwhile */
            return n;
    }
    mf_tcp_peer *p = &t->t_peers[peer];
    if ((ev & (EPOLLOUT | EPOLLERR)) && !mf_stream_out_empty(&p->p_out)) {
        int err = 0;
        int rc = mf_stream_out_flush(&p->p_out, &c->c_io, &err);
        if (rc < 0) {
            mf_tcp_conn_lost(t, c, "write failed", err);
            return n + 1;
        }
        n += rc;
    }
    if (c->c_state == MF_TCP_UP)
        mf_tcp_conn_update(t, c);
    return n;
}

int mf_tcp_conn_event(mf_tcp *t, mf_tcp_conn *c, uint32_t ev)
{
    switch (c->c_state) {
    case MF_TCP_CONNECTING:
    case MF_TCP_WAIT_CHALLENGE:
    case MF_TCP_WAIT_VERDICT:
        return mf_tcp_outgoing_event(t, c, ev);
    case MF_TCP_WAIT_HELLO:
    case MF_TCP_WAIT_PROOF:
    case MF_TCP_REPLYING:
        return mf_tcp_incoming_event(t, c, ev);
    case MF_TCP_UP:
        return mf_tcp_up_event(t, c, ev);
    default:
        return 0;
    }
}
