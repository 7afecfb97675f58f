/*
 * tcp.h — internals of the tcp fabric (the contract it implements is fabric.h).
 *
 * Shape: one epoll fd holds every socket of the fabric and is the fabric's wait fd. Each chosen
 * interface of the instance has a listening socket (tcp_if.c); its addresses are published as
 * "mf.<instance>.<rank>" = "ip:port,ip:port,..." ("mf.tcp0.3"). Each instance (tcp0, tcp1: one
 * per interface setting, see fabric.h) is independent: its own sockets, peers and counters. Connections open lazily on the first send to a peer (tcp_conn.c): until
 * one is up, frames wait in the peer's outbound queue (stream/), which belongs to the peer, not
 * to a connection — so whichever connection wins a simultaneous connect, every frame is written
 * exactly once, on it, in order.
 *
 * Progress: a busy-polling rank calls progress in a tight loop, and the system call it makes per
 * pass is what a message waits for. With few connections (MF_TCP_DIRECT_MAX), all of them up,
 * the fabric is "quiet": each pass reads every up socket directly (one recv that usually finds
 * nothing, and picks an arrived frame up at once) instead of an epoll_wait followed by the read,
 * and the up sockets leave the epoll set unless they wait for room to write. Out of the set, an
 * arriving segment wakes no epoll (the kernel's callback chain, nested into the engine's epoll,
 * costs about a tenth of a loopback round trip). Epoll is still asked every MF_TCP_EPOLL_EVERY
 * passes (new connections on the listeners), after every sleep and while frames wait for room.
 * Before the engine sleeps (sleep_prepare) the up sockets rejoin the set with EPOLLIN, so the
 * epoll fd stays a complete wait fd; a connection being set up or too many peers end the quiet
 * regime until the next pass finds it possible again.
 *
 * Direct receive (rx_peek/rx_take, fabric.h): a blocking receive from one peer reads that peer's
 * socket itself, into the connection's staging buffer (the one progress reads into), and copies
 * a whole eager frame from there into the user's buffer: no request, no matching, no upcall. A
 * frame it leaves staged for progress (not eager, not its tag) is marked (t_staged) so that the
 * next pass delivers it even outside the quiet regime, where the socket no longer reports it.
 *
 * Connection set-up: the connector (initiator) and the acceptor (responder) run the mutual
 * challenge-response of stream.h on channel MF_TCP_CHANNEL before anything else: HELLO,
 * CHALLENGE, PROOF, then ACCEPT, REJECT (both connected at once and the connection started by
 * the lower rank wins; only ever sent to a peer that proved itself, with the acceptor's own
 * proof) or the fixed REFUSE. No frame is written before the connection is up on both sides'
 * terms: the acceptor after writing ACCEPT, the connector after checking it. A connector whose
 * connection is closed before the verdict (the acceptor shed it, see below) dials again, a few
 * times; a REFUSE or a bad proof from the acceptor fails the peer at once.
 *
 * Strangers: anyone who can reach a listener can connect. An incoming connection is "pending"
 * until its PROOF checks; pending connections cost a descriptor and a little memory each, and
 * are bounded: one that has not authenticated within t_auth_timeout seconds is closed; past
 * t_pending_max the oldest pending one is closed (those that have not even sent a valid HELLO
 * first); when accept runs out of descriptors, a pending one is shed for the newcomer, or, if
 * none is pending, a reserve descriptor is given up to accept and close the newcomer, and the
 * listeners pause for a moment instead of spinning. Every refusal or shedding is reported
 * through a rate limiter (one line per interval, with the count held back).
 *
 * Failures: a broken connection fails the peer once: queued sends and a payload being received
 * complete with the error, mf_fabric_peer_failed() is called, later sends fail at once. Inside
 * `send` the report is deferred to the next progress (no upcalls from send).
 */
#ifndef MF_FABRIC_TCP_TCP_H
#define MF_FABRIC_TCP_TCP_H

#include <netinet/in.h>
#include <stdbool.h>

#include "core/ratelimit.h"
#include "fabric/fabric.h"
#include "fabric/stream/stream.h"

#define MF_TCP_MAX_ADDRS 16

enum mf_tcp_kind { MF_TCP_LISTENER = 1, MF_TCP_CONN = 2 };

/* Names the protocol in every proof (stream.h); a new handshake layout gets a new name. */
#define MF_TCP_CHANNEL "manifold-tcp-1"

enum mf_tcp_state {
    MF_TCP_CONNECTING,     /* outgoing: nonblocking connect in flight */
    MF_TCP_WAIT_CHALLENGE, /* outgoing: HELLO being written / CHALLENGE awaited */
    MF_TCP_WAIT_VERDICT,   /* outgoing: PROOF being written / ACCEPT or REJECT awaited */
    MF_TCP_WAIT_HELLO,     /* incoming: accepted, HELLO awaited */
    MF_TCP_WAIT_PROOF,     /* incoming: CHALLENGE being written / PROOF awaited */
    MF_TCP_REPLYING,       /* incoming: the verdict being written; then up (ACCEPT) or closed */
    MF_TCP_UP,             /* frames flow */
    MF_TCP_DEAD,           /* closed, waiting to be freed at the end of progress */
};

typedef struct mf_tcp_listener {
    int l_kind; /* MF_TCP_LISTENER: first, to tell epoll entries apart */
    int l_fd;
    struct sockaddr_in l_addr;
} mf_tcp_listener;

typedef struct mf_tcp_conn mf_tcp_conn;
struct mf_tcp_conn {
    int c_kind; /* MF_TCP_CONN */
    int c_fd;
    int c_state;
    int c_peer; /* world rank; -1 until the PROOF checked (incoming) */
    bool c_outgoing;
    bool c_loser;       /* outgoing that lost a simultaneous connect: expect REJECT */
    bool c_close_after; /* incoming: close once the verdict is written (REJECT) */
    bool c_pending;     /* incoming, not authenticated yet: counted in t_npending */
    int c_claim;        /* incoming: the rank its HELLO claims, -1 before it came */
    int c_addr_idx;     /* outgoing: which of the peer's addresses is being tried */
    int c_retries;      /* outgoing: dials made again after a close before the verdict */
    uint32_t c_events;  /* epoll mask currently set */
    double c_since;     /* when accepted (deadline, shedding) or dialed (counting cut handshakes) */
    unsigned char c_hs_out[MF_STREAM_HS_SIZE];
    size_t c_hs_sent, c_hs_len;
    unsigned char c_hs_in[MF_STREAM_HS_SIZE];
    size_t c_hs_got;
    mf_stream_auth c_auth; /* the handshake's nonces and identities */
    mf_stream_io c_io;
    mf_stream_in c_in; /* valid when c_in_ready */
    bool c_in_ready;
    char c_where[64];     /* remote "ip:port", for messages */
    mf_tcp_conn *c_next;  /* on mf_tcp.conns or mf_tcp.grave */
    struct mf_tcp *c_tcp; /* the instance it belongs to */
};

typedef struct mf_tcp_peer {
    mf_stream_out p_out;    /* frames for this peer, in order */
    mf_tcp_conn *p_up;      /* the connection frames use (reply may still be in flight) */
    mf_tcp_conn *p_dialing; /* our outgoing attempt, not up yet */
    bool p_expect_incoming; /* our attempt lost a simultaneous connect: theirs is coming */
    int p_naddrs;           /* -1: not looked up yet */
    struct sockaddr_in p_addrs[MF_TCP_MAX_ADDRS]; /* in the order to try */
} mf_tcp_peer;

typedef struct mf_tcp {
    mf_fabric t_base; /* first: the registry sees an mf_fabric (an instance, "tcp0") */
    int t_epfd;
    mf_tcp_listener t_listeners[MF_TCP_MAX_ADDRS];
    int t_nlisteners;
    mf_tcp_peer *t_peers;
    int t_npeers;
    mf_tcp_conn *t_conns; /* live connections */
    mf_tcp_conn *t_grave; /* closed, freed at the end of progress */
    int t_nconns;         /* live connections (on t_conns) */
    int t_nup;            /* of which up (MF_TCP_UP) */
    int t_nout;           /* live connections with EPOLLOUT armed */
    unsigned t_pass;      /* progress passes, to interleave epoll passes with direct ones */
    bool t_epoll_due;     /* the next progress pass must also ask epoll (after a sleep) */
    bool t_quiet;         /* up connections are read directly and out of epoll (see above) */
    /* A direct receive (rx_peek/rx_take) left a deliverable frame in a connection's staging
     * buffer, which the socket no longer reports: the next pass delivers it (outside the quiet
     * regime too), and the engine does not sleep before. */
    bool t_staged;
    int t_in_progress;          /* progress is running (nested calls counted): no direct receive */
    mf_fabric_failures t_fails; /* failed peers; deferred ones await their report */
    int t_sockbuf;              /* SO_SNDBUF/SO_RCVBUF, 0: autotuning */
    size_t t_staging;           /* receive staging buffer per connection */
    /* Strangers (see above). */
    int t_npending;            /* incoming connections not authenticated yet */
    int t_pending_max;         /* MANIFOLD_TCP_AUTH_PENDING, at most a quarter of RLIMIT_NOFILE */
    double t_auth_timeout;     /* MANIFOLD_TCP_AUTH_TIMEOUT, seconds */
    double t_next_sweep;       /* when pending connections are next checked for the deadline */
    int t_reserve_fd;          /* /dev/null, given up to accept and drop when out of fds */
    bool t_listen_paused;      /* listeners out of the epoll set until t_listen_resume */
    double t_listen_resume;    /* mf_clock_s() */
    mf_ratelimit t_rl_refused; /* "refused an unauthenticated connection" */
    mf_ratelimit t_rl_shed;    /* "closed pending connections" (deadline, cap) */
    mf_ratelimit t_rl_accept;  /* accept failures, descriptors exhausted */
} mf_tcp;

static inline mf_tcp *mf_tcp_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_tcp, t_base);
}

/* tcp_if.c: opens a listener on every chosen interface, adds them to the epoll fd, and writes
 * the published value ("ip:port,...") into pub. MPI_SUCCESS, MF_FABRIC_UNAVAILABLE (no usable
 * interface and none asked for) or an error code. */
int mf_tcp_listen(mf_tcp *t, char *pub, size_t publen);
/* Parses a published value into addresses ordered for a peer on the same host (loopback first)
 * or another host (loopback skipped). Returns the count (0: none usable). */
int mf_tcp_parse_addrs(const char *pub, bool same_host, struct sockaddr_in *out, int max);
/* Rails only: keeps the peer's addresses in a subnet of this instance's interfaces; an error
 * naming both when none is. */
int mf_tcp_rail_pair(mf_tcp *t, int peer, struct sockaddr_in *addrs, int *n);
/* "a.b.c.d:port" */
void mf_tcp_addr_str(const struct sockaddr_in *a, char *buf, size_t len);
/* Seconds on the monotonic clock. */
/* TCP_NODELAY, buffer sizes, close-on-exec/nonblocking already set by the caller. */
void mf_tcp_tune(mf_tcp *t, int fd);

/* tcp_conn.c */
int mf_tcp_dial(mf_tcp *t, int peer);
/* Accepts what waits on listener l (a bounded number per call), within the bounds above. */
void mf_tcp_accept(mf_tcp *t, mf_tcp_listener *l);
/* Enforces the deadline of pending connections and resumes paused listeners; cheap when there
 * is nothing to do. Returns events handled. */
int mf_tcp_housekeeping(mf_tcp *t);
/* How long the engine may sleep before mf_tcp_housekeeping has work (microseconds; 0: no
 * bound), while connections wait for their handshake deadline or the listeners are paused:
 * the sweep's period, so that a deadline is enforced when due rather than when the engine's
 * sleep runs out at its cap. */
int mf_tcp_timer_us(const mf_tcp *t);
/* Handles epoll events of a connection; returns events handled. */
int mf_tcp_conn_event(mf_tcp *t, mf_tcp_conn *c, uint32_t ev);
/* Sets the epoll mask of an up connection: EPOLLIN unless the fabric is quiet, EPOLLOUT while
 * its peer's queue is not empty; out of the epoll set when neither. */
void mf_tcp_conn_update(mf_tcp *t, mf_tcp_conn *c);
/* Enters or leaves the quiet regime (above), moving the up connections out of or back into the
 * epoll set. Safe outside progress: a failure is deferred to the next progress. */
void mf_tcp_set_quiet(mf_tcp *t, bool quiet);
/* Closes a connection; a payload it was receiving completes with `status`. */
void mf_tcp_conn_close(mf_tcp *t, mf_tcp_conn *c, int status);

enum mf_tcp_fail_mode {
    MF_TCP_FAIL_NOW,      /* inside progress: report at once */
    MF_TCP_FAIL_DEFERRED, /* inside send: report from the next progress */
    MF_TCP_FAIL_SILENT,   /* the peer finalized: no report unless frames were still queued */
};
/* Marks `peer` failed with `code` (first failure wins), closes its connections and fails what
 * was queued for it. */
void mf_tcp_peer_fail(mf_tcp *t, int peer, int code, enum mf_tcp_fail_mode mode);
/* Rails: forgets the reported failure of `peer` so that it may be connected to again (only
 * under a wrapper that installed upcalls). MPI_SUCCESS, or MF_FABRIC_BUSY while the failure
 * is not reported yet. */
int mf_tcp_peer_revive(mf_tcp *t, int peer);
/* Reports deferred failures; returns how many. */
int mf_tcp_report_failures(mf_tcp *t);
/* Frees closed connections. */
void mf_tcp_bury(mf_tcp *t);

#endif
