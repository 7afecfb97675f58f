/*
 * rail.c — the multirail wrapper: one instance ("rail0") sits in a peer's routes in place of
 * several network instances (its rails: tcp0, tcp1, ... or fault wrappers over them), stripes
 * large frames over them and survives the loss of any rail but the last, losing nothing and
 * delivering nothing twice. The registry makes one when MANIFOLD_FABRIC names several instances
 * of classes that can be rails (MF_FABRIC_CAP_RAIL) and MANIFOLD_RAILS=1 (the default).
 *
 * Frames on a rail. Every frame the wrapper puts on a rail is a wire DATA frame (so that the
 * rail's decoder accepts it) whose fields mean:
 *   context  kind: MSG (a chunk of an upper frame), ACK, HB (heartbeat), ECHO, RESYNC
 *   sreq     MSG: the rail sequence number (1, 2, ... per rail and direction); RESYNC: 1 when
 *            the sender still waits for the peer's RESYNC of that rail (answer it)
 *   rreq     every kind: the cumulative acknowledgement of this rail's other direction (the
 *            last MSG sequence number whose payload was completely received)
 *   rkey     MSG: the message number (1, 2, ... per peer and direction); RESYNC: the rail
 *   total    MSG: offset of the chunk's data in the upper frame; HB/ECHO: a timestamp;
 *            RESYNC: the last sequence number received on the failed rail
 *   tag      MSG: bit 0 when the sender waits for the acknowledgement (acknowledge at once),
 *            bit 1 when it is a whole small frame (the receiver answers on the same rail)
 * A MSG payload is the upper frame's encoded header (64 bytes) then the chunk's data.
 *
 * Sending. An upper frame of at most MANIFOLD_RAIL_STRIPE payload bytes is copied (send
 * returns MF_FABRIC_DONE) and goes whole as one MSG on the rail small frames to that peer take,
 * the same both ways (mf_rail_pick_small: moved when another rail's expected delay, least
 * heartbeat round trip plus unacknowledged bytes at its measured rate, is clearly lower). A
 * larger one announces itself by a MSG without data on that rail, then its data is cut into chunks of
 * MANIFOLD_RAIL_CHUNK bytes handed to the rails as their windows open: each rail holds at most
 * MANIFOLD_RAIL_WINDOW unacknowledged bytes, and a chunk goes to the rail whose queue would
 * drain first at its measured throughput (bytes acknowledged per second, re-measured as traffic
 * flows), so rails carry data in proportion to their speed. The send completes once every chunk
 * is acknowledged (until then it may have to be sent again).
 *
 * Receiving. Chunks of a message announced earlier land in place, through the upper sink's
 * iovecs; a chunk whose message is not announced yet, and small frames, are staged and copied.
 * Headers go up (mf_fabric_rx_header) strictly in message-number order, so MPI order holds
 * whatever rail carried what; the upper sink completes when all the message's bytes are in.
 *
 * Failover. Rails are TCP-like (ordered, reliable while up), so the receiver's count of
 * completely received MSGs on a rail says exactly which of them arrived. A rail fails on a
 * connection error (the rail's upcall, see "Rails" in fabric.h: a rail event, not the peer's
 * failure) or when it has been silent for MANIFOLD_RAIL_SILENCE_MS while another rail to the
 * same peer kept receiving without a pause (idle rails carry heartbeats; a peer that is merely
 * busy elsewhere, or descheduled, is silent on every rail and is not failed). Then each side
 * stops taking anything from that rail, breaks its connection and sends RESYNC with its own
 * count on a live rail; on the peer's RESYNC, chunks up to the peer's count are done and every
 * later one is sent again on the live rails (whole, to the same place): none lost, none
 * delivered twice. A RESYNC can be lost with the rail it went on (two rails failing at once):
 * a side still waiting for the peer's sends its own again every heartbeat interval, asking for
 * an answer, and a side that has settled the rail answers with the same count. The first
 * failure of each rail is said once on stderr. Losing the last rail to a peer fails the peer
 * with an error naming it.
 *
 * Return. Every MANIFOLD_RAIL_SILENCE_MS a resynchronised rail is tried again: the rail's
 * revive_peer op lets it reconnect, and a HELLO proposing its next incarnation brings it back
 * on both sides, sequence numbers resuming where the RESYNC left them (incarnation numbers on
 * HELLO and RESYNC keep frames of an incarnation that died meanwhile from being taken).
 */
#include "fabric/rail/rail.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/counter.h"
#include "core/error.h"
#include "core/iov.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric_mpit.h"
#include "tool/mpit.h"

enum {
    MF_RAIL_K_MSG = 1,
    MF_RAIL_K_ACK,
    MF_RAIL_K_HB,
    MF_RAIL_K_ECHO,
    MF_RAIL_K_RESYNC,
    MF_RAIL_K_HELLO
};
enum { MF_RAIL_LIVE, MF_RAIL_FAILED, MF_RAIL_DOWN }; /* FAILED: awaiting the peer's RESYNC */
enum { MF_RAIL_T_URGENT = 1, MF_RAIL_T_SMALL = 2 };  /* bits of a MSG's tag */

/* Small frames move to another rail when its expected delay is below this fraction of their
 * rail's, and by this much (mf_rail_pick_small). */
#define MF_RAIL_SMALL_SWITCH 0.75
#define MF_RAIL_SMALL_MARGIN 20e-6 /* seconds, and by at least this much */
/* A rail's round trip is the least measured in this many seconds. */
#define MF_RAIL_RTT_WINDOW 2.0

/* Delayed acknowledgements: sent at the end of a progress pass once this many MSGs or this
 * long since the first unacknowledged one (piggybacked on every frame otherwise). */
#define MF_RAIL_ACK_FRAMES 16
#define MF_RAIL_ACK_DELAY 0.001
/* A rail that received nothing for MF_RAIL_COLD_RX seconds and sent no chunk for MF_RAIL_COLD_TX
 * is polled every MF_RAIL_COLD_EVERY progress passes, and at a pass that read the clock once
 * MF_RAIL_COLD_MAX seconds went by without (a rank that calls progress seldom), so what arrives
 * on it waits that long at most; the wait fd covers all rails when the engine sleeps. */
#define MF_RAIL_COLD_RX 0.002
#define MF_RAIL_COLD_TX 0.05
#define MF_RAIL_COLD_EVERY 32
#define MF_RAIL_COLD_MAX 0.001
#define MF_RAIL_CLOCK_EVERY 8 /* divides MF_RAIL_COLD_EVERY */

typedef struct mf_rail mf_rail;
typedef struct mf_rail_msg mf_rail_msg;

/* One chunk of an upper frame on its way: on its rail's unacknowledged list or the peer's
 * resend list. Freed once acknowledged (or superseded) and released by the rail. */
typedef struct mf_rail_chunk {
    struct mf_rail_chunk *next;
    mf_rail_msg *msg;
    mf_rail *w;
    uint64_t seq;
    size_t off, len;
    bool need_ack;   /* not yet known to have arrived */
    bool inner_busy; /* the rail still holds the iovecs */
    bool embedded;   /* a small frame's first chunk, in its message's allocation */
    mf_fabric_done idone;
    unsigned char ihdr[MF_WIRE_HDR_SIZE];
    int niov;
    struct iovec iov[]; /* ihdr, then the data pieces */
} mf_rail_chunk;

struct mf_rail_msg {
    mf_rail_msg *next; /* on the peer's queue of frames with data still to cut */
    mf_wire_hdr hdr;
    uint64_t mseq;
    mf_fabric_done *done; /* the caller's; NULL when the data was copied */
    const struct iovec *iov;
    int niov;
    struct iovec one; /* the copy (small frames), in the message's allocation */
    size_t next_off;  /* data not cut into chunks yet starts here */
    int live;         /* chunks not finished */
    int status;       /* for `done`: an error once the peer is lost */
};

typedef struct mf_rail_held {
    struct mf_rail_held *next;
    size_t off, len;
    unsigned char *data;
} mf_rail_held;

/* A message being received. */
typedef struct mf_rail_rxmsg {
    struct mf_rail_rxmsg *next;
    uint64_t mseq;
    mf_wire_hdr hdr;
    mf_fabric_sink sink; /* the upper layer's, once delivered */
    bool delivered;
    uint64_t got; /* data bytes in */
    mf_rail_held *held;
} mf_rail_rxmsg;

/* One arriving MSG: the sink handed to the rail. */
typedef struct mf_rail_rxchunk {
    mf_fabric_sink sink;
    mf_rail *w;
    int peer, rail;
    bool urgent;
    bool cached;     /* its link's rxk (mf_rail_rxchunk_get) */
    bool own_staged; /* staged is an allocation of its own (else inside this one) */
    uint64_t seq, mseq;
    uint64_t epoch; /* the rail's incarnation it came on */
    size_t off, dlen;
    unsigned char *staged; /* NULL: the data landed in place */
    unsigned char ihdr[MF_WIRE_HDR_SIZE];
    struct iovec iov[]; /* ihdr, then where the data goes; then staged data up to
                           MF_RAIL_RX_INLINE bytes */
} mf_rail_rxchunk;

/* Arriving frames of up to this many data bytes are staged inside their rxchunk, and each
 * (peer, rail) keeps one such rxchunk for reuse: a rail hands up one frame at a time per peer,
 * so a stream of small frames allocates nothing. */
#define MF_RAIL_RX_INLINE 4096
#define MF_RAIL_RXK_SIZE (sizeof(mf_rail_rxchunk) + 2 * sizeof(struct iovec) + MF_RAIL_RX_INLINE)

typedef struct mf_rail_link {
    int state;
    uint64_t tx_seq, rx_seq, acked_sent;
    mf_rail_chunk *uhead, *utail; /* unacknowledged, in sequence order */
    size_t ubytes;
    double last_rx, last_tx, ack_due_since;
    double run_start; /* when the current run of arrivals without a gap of 2 heartbeats began */
    bool ack_now, need_break;
    uint64_t echo_ts; /* nonzero: an ECHO is due */
    double rtt, rate; /* seconds; bytes per second */
    double rtt_at;    /* when rtt was sampled (a windowed minimum, see MF_RAIL_K_ECHO) */
    double rate_t0;
    uint64_t rate_bytes;
    bool resync_sent, resync_got;
    double resync_again; /* FAILED, the peer's RESYNC not in: when to send ours again */
    uint64_t peer_rx;
    int fail_code;        /* a failure to handle at the end of the progress pass */
    double next_revive;   /* DOWN: when to try the rail again */
    uint64_t epoch;       /* incarnation: how many times the rail came back */
    mf_rail_rxchunk *rxk; /* for reuse (MF_RAIL_RX_INLINE); rxk_busy while a rail holds it */
    bool rxk_busy;
} mf_rail_link;

typedef struct mf_rail_peer {
    mf_rail_link l[MF_ROUTE_MAX_RAILS];
    uint64_t tx_mseq, rx_next;
    mf_rail_msg *qhead, *qtail;
    mf_rail_chunk *rhead, *rtail; /* to send again */
    mf_rail_rxmsg *rx;
    int small; /* the rail small frames take (-1: none chosen yet); see mf_rail_pick_small */
    int failed;
    bool active, dirty;
} mf_rail_peer;

typedef struct mf_rail_ctx {
    mf_rail *w;
    int idx;
} mf_rail_ctx;

struct mf_rail {
    mf_fabric base; /* first */
    int n;
    mf_fabric *rails[MF_ROUTE_MAX_RAILS];
    mf_rail_ctx ctx[MF_ROUTE_MAX_RAILS];
    bool warned[MF_ROUTE_MAX_RAILS], warned_back[MF_ROUTE_MAX_RAILS];
    int epfd;
    mf_rail_peer *peers;
    int npeers;
    int *dirty, ndirty;
    int *active, nactive;
    double now, next_tick;
    /* The clock is read lazily (mf_rail_fresh): not on every idle pass of a spinning rank, but
     * at the first arrival or send of a pass and every MF_RAIL_CLOCK_EVERY passes. */
    bool stale, busy;
    /* Polling: a rail that carried nothing lately is polled every MF_RAIL_COLD_EVERY passes
     * only (one system call less per pass for a small message on the quickest rail). */
    double rail_rx[MF_ROUTE_MAX_RAILS], rail_tx[MF_ROUTE_MAX_RAILS];
    double polled_all; /* when every rail was last polled */
    unsigned pass;
    size_t stripe, chunk, window;
    double silence, hb;
    bool closed;
    uint64_t failovers, resent, revived; /* MPI_T (mf_rail_mpit_publish) */
};

static mf_rail *mf_rail_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_rail, base);
}

/* Rail r's name in messages: the real instance's, under a fault wrapper. */
static const char *mf_rail_name(const mf_rail *w, int r)
{
    const mf_fabric *f = w->rails[r];
    return f->inner ? f->inner->name : f->name;
}

/* w->now, read again if this progress pass has not yet. */
static void mf_rail_fresh(mf_rail *w)
{
    if (w->stale) {
        w->now = mf_clock_s();
        w->stale = false;
    }
}

static void mf_rail_mark(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    if (!p->dirty) {
        p->dirty = true;
        w->dirty[w->ndirty++] = peer;
    }
}

static int mf_rail_nlive(const mf_rail *w, const mf_rail_peer *p)
{
    int n = 0;
    for (int r = 0; r < w->n; r++)
        n += p->l[r].state == MF_RAIL_LIVE;
    return n;
}

/* Sends a frame without payload of `kind` on rail r (carrying the acknowledgement). */
static int mf_rail_send_ctl(mf_rail *w, int peer, int r, int kind, uint64_t total, uint64_t key,
                            uint64_t epoch)
{
    mf_rail_link *l = &w->peers[peer].l[r];
    mf_wire_hdr h = {.type = MF_MSG_DATA,
                     .context = (uint32_t)kind,
                     .tag = (int32_t)(uint32_t)epoch,
                     .total = total,
                     .rreq = l->rx_seq,
                     .rkey = key};
    l->acked_sent = l->rx_seq;
    l->ack_now = false;
    l->last_tx = w->now;
    static mf_fabric_done nothing;
    int rc = w->rails[r]->ops->send(w->rails[r], peer, &h, NULL, 0, &nothing);
    if (rc != MF_FABRIC_DONE && rc != MF_FABRIC_PENDING && !l->fail_code) {
        l->fail_code = rc;
        mf_rail_mark(w, peer);
    }
    return rc;
}

/* ---- Chunks and messages (sending side) ---- */

static void mf_rail_msg_check(mf_rail *w, mf_rail_msg *m)
{
    if (m->live > 0 || m->next_off < m->hdr.len)
        return;
    if (m->done)
        m->done->fd_fn(m->done, m->status);
    free(m);
}

/* A chunk no longer needed by anyone is freed; its message may be complete. */
static void mf_rail_chunk_check(mf_rail_chunk *c)
{
    if (c->need_ack || c->inner_busy)
        return;
    mf_rail_msg *m = c->msg;
    mf_rail *w = c->w;
    if (!c->embedded)
        free(c); /* an embedded one goes with m, which outlives it (m->live counts it) */
    if (!w->closed) {
        m->live--;
        mf_rail_msg_check(w, m);
    }
}

static void mf_rail_idone(mf_fabric_done *done, int status)
{
    mf_rail_chunk *c = (mf_rail_chunk *)(void *)((char *)done - offsetof(mf_rail_chunk, idone));
    c->inner_busy = false;
    if (c->w->closed)
        c->need_ack = false;
    mf_rail_chunk_check(c);
}

/* Room for a chunk with n data pieces. */
#define MF_RAIL_CHUNK_SIZE(n) (sizeof(mf_rail_chunk) + (size_t)((n) + 1) * sizeof(struct iovec))

/* A chunk of m's data [off, off + len) in `mem` (MF_RAIL_CHUNK_SIZE bytes inside m's
 * allocation), or allocated when mem is NULL: NULL without memory. */
static mf_rail_chunk *mf_rail_chunk_new(mf_rail *w, mf_rail_msg *m, size_t off, size_t len,
                                        void *mem)
{
    int pieces = mf_iov_slice(m->iov, m->niov, off, len, NULL, 0);
    mf_rail_chunk *c = mem ? mem : malloc(MF_RAIL_CHUNK_SIZE(pieces));
    if (!c)
        return NULL;
    /* every field but ihdr and iov, which are filled below */
    c->next = NULL;
    c->msg = m;
    c->w = w;
    c->seq = 0;
    c->off = off;
    c->len = len;
    c->need_ack = c->inner_busy = false;
    c->embedded = mem != NULL;
    c->idone.fd_fn = mf_rail_idone;
    c->niov = 0;
    mf_wire_encode(&m->hdr, c->ihdr);
    c->iov[c->niov++] = (struct iovec){c->ihdr, sizeof c->ihdr};
    c->niov += mf_iov_slice(m->iov, m->niov, off, len, c->iov + 1, pieces);
    m->live++;
    return c;
}

/* Puts chunk c on rail r. */
static void mf_rail_chunk_send(mf_rail *w, int peer, mf_rail_chunk *c, int r)
{
    mf_rail_link *l = &w->peers[peer].l[r];
    c->seq = ++l->tx_seq;
    c->need_ack = true;
    c->next = NULL;
    if (l->utail)
        l->utail->next = c;
    else
        l->uhead = c;
    l->utail = c;
    if (!l->ubytes)
        l->rate_t0 = w->now, l->rate_bytes = 0;
    l->ubytes += c->len + MF_WIRE_HDR_SIZE;
    mf_wire_hdr h = {.type = MF_MSG_DATA,
                     .context = MF_RAIL_K_MSG,
                     .tag =
                         (c->msg->done ? MF_RAIL_T_URGENT : 0) |
                         (c->msg->done == NULL && c->len == c->msg->hdr.len ? MF_RAIL_T_SMALL : 0),
                     .len = MF_WIRE_HDR_SIZE + c->len,
                     .total = c->off,
                     .sreq = c->seq,
                     .rreq = l->rx_seq,
                     .rkey = c->msg->mseq};
    l->acked_sent = l->rx_seq;
    l->ack_now = false;
    l->last_tx = w->now;
    w->rail_tx[r] = w->now;
    c->inner_busy = true;
    int rc = w->rails[r]->ops->send(w->rails[r], peer, &h, c->iov, c->niov, &c->idone);
    if (rc == MF_FABRIC_PENDING)
        return;
    c->inner_busy = false;
    if (rc != MF_FABRIC_DONE && !l->fail_code) {
        l->fail_code = rc; /* handled at the end of the progress pass (no upcalls here) */
        mf_rail_mark(w, peer);
    }
}

/* The live rail with the lowest expected delay for `bytes` more; -1 when none (or none with
 * room in its window, when `windowed`). */
static int mf_rail_pick(mf_rail *w, mf_rail_peer *p, size_t bytes, bool windowed)
{
    int best = -1;
    double best_t = 0;
    for (int r = 0; r < w->n; r++) {
        mf_rail_link *l = &p->l[r];
        if (l->state != MF_RAIL_LIVE || (windowed && l->ubytes >= w->window))
            continue;
        double t = (windowed ? 0 : l->rtt) + (double)(l->ubytes + bytes) / l->rate;
        if (best < 0 || t < best_t)
            best = r, best_t = t;
    }
    return best;
}

/* The rail for a small frame (or a large one's announcement) to `peer`. Small frames stay on one
 * rail, the same in both directions: the peer answers on the rail a small frame came on
 * (mf_rail_rx_msg), so a ping-pong's acknowledgements ride on the answers, only that rail needs
 * polling at every pass (mf_rail_progress), and no frame waits for the polling of a cold rail.
 * Of the two ends, the lower rank leads: it moves to another rail when that one's expected
 * delay (round trip plus queue at the measured rate) is clearly lower (MF_RAIL_SMALL_SWITCH,
 * MF_RAIL_SMALL_MARGIN). The higher rank follows, and moves on its own only when its rail is
 * gone or its queue is clearly longer than another rail's: two ends judging round trips of
 * their own (a busy rail's is not re-measured, an idle one's is measured through the peer's
 * less frequent polling) would otherwise disagree and pull the rail back and forth. */
static int mf_rail_pick_small(mf_rail *w, int peer, size_t bytes)
{
    mf_rail_peer *p = &w->peers[peer];
    bool lead = mf_g.rank < peer;
    int cur = p->small, best = -1;
    double tbest = 0, tcur = 0;
    for (int r = 0; r < w->n; r++) {
        const mf_rail_link *l = &p->l[r];
        if (l->state != MF_RAIL_LIVE)
            continue;
        double t = (lead ? l->rtt : 0) + (double)(l->ubytes + bytes) / l->rate;
        if (best < 0 || t < tbest)
            best = r, tbest = t;
        if (r == cur)
            tcur = t;
    }
    if (cur < 0 || p->l[cur].state != MF_RAIL_LIVE ||
        (tbest < tcur * MF_RAIL_SMALL_SWITCH && tcur - tbest > MF_RAIL_SMALL_MARGIN))
        p->small = best;
    return p->small;
}

/* Hands chunks to rails while windows allow: first those to send again, then new ones. */
static void mf_rail_pump(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    while (p->rhead && !p->failed) {
        int r = mf_rail_pick(w, p, p->rhead->len, false);
        if (r < 0)
            return;
        mf_rail_chunk *c = p->rhead;
        p->rhead = c->next;
        if (!p->rhead)
            p->rtail = NULL;
        mf_counter_add(&w->resent, 1);
        mf_rail_chunk_send(w, peer, c, r);
    }
    while (p->qhead && !p->failed) {
        mf_rail_msg *m = p->qhead;
        size_t len = m->hdr.len - m->next_off < w->chunk ? m->hdr.len - m->next_off : w->chunk;
        int r = mf_rail_pick(w, p, len, true);
        if (r < 0)
            return;
        mf_rail_chunk *c = mf_rail_chunk_new(w, m, m->next_off, len, NULL);
        if (!c)
            return; /* tried again on the next pass */
        m->next_off += len;
        if (m->next_off == m->hdr.len) {
            p->qhead = m->next;
            if (!p->qhead)
                p->qtail = NULL;
        }
        mf_rail_chunk_send(w, peer, c, r);
    }
}

/* Sends our RESYNC of rail q (our count of what arrived on it, incarnation e) on the quickest
 * live rail (there is one: the caller just received on it, or checked); `ask`: we still wait
 * for the peer's, which it sends again in answer. */
static void mf_rail_send_resync(mf_rail *w, int peer, int q, uint64_t e, bool ask)
{
    mf_rail_peer *p = &w->peers[peer];
    int s = mf_rail_pick(w, p, 0, false);
    if (s < 0)
        return;
    mf_rail_link *l = &p->l[s];
    mf_wire_hdr h = {.type = MF_MSG_DATA,
                     .context = MF_RAIL_K_RESYNC,
                     .tag = (int32_t)(uint32_t)e,
                     .total = p->l[q].rx_seq,
                     .sreq = ask,
                     .rreq = l->rx_seq,
                     .rkey = (uint64_t)q};
    l->acked_sent = l->rx_seq;
    l->ack_now = false;
    l->last_tx = w->now;
    p->l[q].resync_again = w->now + w->hb;
    static mf_fabric_done nothing;
    int rc = w->rails[s]->ops->send(w->rails[s], peer, &h, NULL, 0, &nothing);
    if (rc != MF_FABRIC_DONE && rc != MF_FABRIC_PENDING && !l->fail_code) {
        l->fail_code = rc;
        mf_rail_mark(w, peer);
    }
}

/* ---- Peers, rails failing ---- */

static void mf_rail_activate(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    if (p->active)
        return;
    p->active = true;
    w->active[w->nactive++] = peer;
    for (int r = 0; r < w->n; r++)
        if (p->l[r].state == MF_RAIL_LIVE) {
            p->l[r].last_rx = p->l[r].run_start = w->now;
            p->l[r].last_tx = 0; /* a heartbeat on the next tick opens every rail */
        }
}

/* Every rail to `peer` is gone: the peer fails, with what waited for it. */
static void mf_rail_peer_lost(mf_rail *w, int peer, int cause)
{
    mf_rail_peer *p = &w->peers[peer];
    char text[MPI_MAX_ERROR_STRING];
    int tl;
    mf_error_string(cause, text, &tl);
    p->failed =
        mf_error(MPI_ERR_OTHER, "%s: lost the last rail to rank %d (%s)", w->base.name, peer, text);
    /* Pending messages complete with the error; chunks are let go. */
    for (int r = 0; r < w->n; r++) {
        mf_rail_link *l = &p->l[r];
        for (mf_rail_chunk *c = l->uhead, *nx; c; c = nx) {
            nx = c->next;
            c->need_ack = false;
            c->msg->status = p->failed;
            mf_rail_chunk_check(c);
        }
        l->uhead = l->utail = NULL;
        l->ubytes = 0;
    }
    for (mf_rail_chunk *c = p->rhead, *nx; c; c = nx) {
        nx = c->next;
        c->need_ack = false;
        c->msg->status = p->failed;
        mf_rail_chunk_check(c);
    }
    p->rhead = p->rtail = NULL;
    for (mf_rail_msg *m = p->qhead, *nx; m; m = nx) {
        nx = m->next;
        m->next_off = m->hdr.len;
        m->status = p->failed;
        if (m->live == 0)
            mf_rail_msg_check(w, m);
    }
    p->qhead = p->qtail = NULL;
    for (mf_rail_rxmsg *m = p->rx, *nx; m; m = nx) {
        nx = m->next;
        if (m->delivered && m->sink.fs_done)
            m->sink.fs_done(&m->sink, p->failed);
        for (mf_rail_held *h = m->held, *hn; h; h = hn) {
            hn = h->next;
            free(h->data);
            free(h);
        }
        free(m);
    }
    p->rx = NULL;
    mf_fabric_peer_failed(&w->base, peer, p->failed);
}

/* Both sides have said what they received on failed rail r: finish or resend its chunks. */
static void mf_rail_resync(mf_rail *w, int peer, int r)
{
    mf_rail_peer *p = &w->peers[peer];
    mf_rail_link *l = &p->l[r];
    if (l->state != MF_RAIL_FAILED || !l->resync_sent || !l->resync_got)
        return;
    l->state = MF_RAIL_DOWN;
    mf_debug("%s: %s to rank %d resynchronised: sent %llu, it received %llu; received %llu",
             w->base.name, mf_rail_name(w, r), peer, (unsigned long long)l->tx_seq,
             (unsigned long long)l->peer_rx, (unsigned long long)l->rx_seq);
    for (mf_rail_chunk *c = l->uhead, *nx; c; c = nx) {
        nx = c->next;
        if (c->seq > l->peer_rx) {
            mf_rail_chunk *again = mf_rail_chunk_new(w, c->msg, c->off, c->len, NULL);
            if (!again)
                mf_fatal("%s: no memory to send a chunk again", w->base.name);
            if (p->rtail)
                p->rtail->next = again;
            else
                p->rhead = again;
            p->rtail = again;
        }
        c->need_ack = false;
        mf_rail_chunk_check(c);
    }
    l->uhead = l->utail = NULL;
    l->ubytes = 0;
    l->tx_seq = l->peer_rx;
    l->next_revive = w->now + w->silence;
    mf_rail_mark(w, peer);
}

/* A rail resynchronised after its failure carries traffic again: both sides agree on where its
 * sequence numbers stand (each took the other's RESYNC count), so it resumes from there. */
static void mf_rail_back(mf_rail *w, int peer, int r)
{
    mf_rail_link *l = &w->peers[peer].l[r];
    l->state = MF_RAIL_LIVE;
    mf_debug("%s: %s to rank %d back: sent %llu, received %llu", w->base.name, mf_rail_name(w, r),
             peer, (unsigned long long)l->tx_seq, (unsigned long long)l->rx_seq);
    l->resync_sent = l->resync_got = false;
    mf_counter_add(&w->revived, 1);
    mf_t_event_raise(MF_T_EVENT_RAIL_REVIVED, (const int[]){peer, r});
    l->last_rx = l->run_start = w->now;
    l->rate_t0 = w->now;
    l->rate_bytes = 0;
    if (!w->warned_back[r]) {
        w->warned_back[r] = true;
        mf_warn("%s: rail %s to rank %d is back in use", w->base.name, mf_rail_name(w, r), peer);
    }
    mf_rail_mark(w, peer);
}

/* Rail r to `peer` stops being used (code names why). */
static void mf_rail_fail(mf_rail *w, int peer, int r, int code)
{
    mf_rail_peer *p = &w->peers[peer];
    mf_rail_link *l = &p->l[r];
    if (l->state != MF_RAIL_LIVE || p->failed)
        return;
    l->state = MF_RAIL_FAILED;
    mf_debug("%s: %s to rank %d failed: sent %llu, received %llu", w->base.name, mf_rail_name(w, r),
             peer, (unsigned long long)l->tx_seq, (unsigned long long)l->rx_seq);
    l->need_break = true;
    mf_counter_add(&w->failovers, 1);
    mf_rail_mark(w, peer);
    int live = mf_rail_nlive(w, p);
    if (live == 0) {
        mf_rail_peer_lost(w, peer, code);
        return;
    }
    mf_t_event_raise(MF_T_EVENT_RAIL_FAILOVER, (const int[]){peer, r, live});
    if (!w->warned[r]) {
        w->warned[r] = true;
        char text[MPI_MAX_ERROR_STRING];
        int tl;
        mf_error_string(code, text, &tl);
        mf_warn("%s: rail %s to rank %d failed (%s); traffic goes on over the other rails",
                w->base.name, mf_rail_name(w, r), peer, text);
    }
    l->resync_sent = true;
    mf_rail_send_resync(w, peer, r, l->epoch, false); /* again, asking, if nothing comes */
    mf_rail_resync(w, peer, r);
}

/* ---- Arrivals (the rails' upcalls) ---- */

static mf_rail_rxmsg *mf_rail_rxmsg_find(mf_rail_peer *p, uint64_t mseq)
{
    for (mf_rail_rxmsg *m = p->rx; m; m = m->next)
        if (m->mseq == mseq)
            return m;
    return NULL;
}

/* Iovecs for data bytes [off, off + len) of sink s into out (at most max); returns how many. */
static int mf_rail_sink_range(const mf_fabric_sink *s, size_t off, size_t len, struct iovec *out,
                              int max)
{
    int n = mf_iov_slice(s->fs_iov, s->fs_niov, off, len, out, max);
    return n < max ? n : max;
}

static void mf_rail_copy_in(const mf_fabric_sink *s, size_t off, const unsigned char *data,
                            size_t len)
{
    mf_iov_scatter_at(s->fs_iov, s->fs_niov, off, data, len);
}

static void mf_rail_rx_check(mf_rail_peer *p, mf_rail_rxmsg *m)
{
    if (!m->delivered || m->got < m->hdr.len)
        return;
    for (mf_rail_rxmsg **pp = &p->rx; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    mf_fabric_sink s = m->sink;
    free(m);
    if (s.fs_done)
        s.fs_done(&s, MPI_SUCCESS);
}

/* Hands the next messages' headers up, in order, with what arrived of them. */
static void mf_rail_deliver(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    mf_rail_rxmsg *m;
    while (!p->failed && (m = mf_rail_rxmsg_find(p, p->rx_next)) && !m->delivered) {
        m->delivered = true;
        p->rx_next++;
        mf_fabric_count_rx(&w->base, &m->hdr);
        mf_fabric_rx_header(&w->base, peer, &m->hdr, &m->sink);
        if (p->failed)
            return;
        for (mf_rail_held *h = m->held, *hn; h; h = hn) {
            hn = h->next;
            mf_rail_copy_in(&m->sink, h->off, h->data, h->len);
            m->got += h->len;
            free(h->data);
            free(h);
        }
        m->held = NULL;
        mf_rail_rx_check(p, m);
    }
}

static void mf_rail_protocol_error(mf_rail *w, int peer, int r, const char *why)
{
    mf_rail_fail(w, peer, r,
                 mf_error(MPI_ERR_OTHER, "%s: rank %d sent a bad frame on %s: %s", w->base.name,
                          peer, mf_rail_name(w, r), why));
}

/* An rxchunk for a MSG on link l with niov iovecs, staging `inl` bytes inside it (at most
 * MF_RAIL_RX_INLINE); the link's own when free and large enough. The caller sets sink, w, peer,
 * rail, urgent, seq, mseq, off and dlen. */
static mf_rail_rxchunk *mf_rail_rxchunk_get(mf_rail *w, mf_rail_link *l, int niov, size_t inl)
{
    mf_rail_rxchunk *k = NULL;
    bool cache = niov <= 2 && !l->rxk_busy;
    if (cache && !l->rxk)
        l->rxk = malloc(MF_RAIL_RXK_SIZE);
    if (cache && l->rxk) {
        k = l->rxk;
        l->rxk_busy = true;
        niov = 2;
    } else {
        k = malloc(sizeof *k + (size_t)niov * sizeof(struct iovec) + inl);
        if (!k)
            mf_fatal("%s: no memory for an arriving chunk", w->base.name);
    }
    /* The fields the caller does not set (ihdr and iov are filled by the rail). */
    k->cached = k == l->rxk;
    k->own_staged = false;
    k->staged = inl ? (unsigned char *)(k->iov + niov) : NULL;
    return k;
}

static void mf_rail_rxchunk_put(mf_rail_rxchunk *k)
{
    if (k->own_staged)
        free(k->staged);
    if (k->cached)
        k->w->peers[k->peer].l[k->rail].rxk_busy = false;
    else
        free(k);
}

static void mf_rail_rxchunk_done(mf_fabric_sink *sink, int status)
{
    mf_rail_rxchunk *k = sink->fs_ctx;
    mf_rail *w = k->w;
    mf_rail_peer *p = w->closed ? NULL : &w->peers[k->peer];
    mf_rail_link *l = p ? &p->l[k->rail] : NULL;
    int peer = k->peer, rail = k->rail;
    mf_rail_fresh(w);
    /* Not counted, so sent again: a chunk that failed, came on a rail that failed meanwhile,
     * or on an incarnation of it before the current one (its sequence number could otherwise
     * be the next expected one, and it would arrive twice). */
    if (!p || status != MPI_SUCCESS || l->state != MF_RAIL_LIVE || p->failed ||
        k->epoch != l->epoch) {
        mf_rail_rxchunk_put(k);
        return;
    }
    if (k->seq != l->rx_seq + 1) {
        mf_rail_rxchunk_put(k);
        return mf_rail_protocol_error(w, peer, rail, "sequence number out of order");
    }
    l->rx_seq = k->seq;
    if (l->rx_seq == l->acked_sent + 1)
        l->ack_due_since = w->now;
    if (k->urgent || l->rx_seq - l->acked_sent >= MF_RAIL_ACK_FRAMES)
        l->ack_now = true;
    mf_rail_mark(w, k->peer);
    mf_wire_hdr h;
    const char *why;
    if (mf_wire_decode(k->ihdr, &h, &why) != 0 || k->off > h.len || k->dlen > h.len - k->off) {
        mf_rail_rxchunk_put(k);
        return mf_rail_protocol_error(w, peer, rail, "bad chunk header");
    }
    if (k->off == 0 && k->dlen == h.len && (k->staged || !k->dlen) && k->mseq == p->rx_next &&
        !p->rx) {
        /* The common case, a whole frame next in order with nothing else under way: straight
         * up, nothing kept. */
        p->rx_next++;
        mf_fabric_count_rx(&w->base, &h);
        mf_fabric_sink up = {0};
        mf_fabric_rx_header(&w->base, peer, &h, &up);
        int st = p->failed ? p->failed : MPI_SUCCESS;
        if (st == MPI_SUCCESS && k->dlen)
            mf_rail_copy_in(&up, 0, k->staged, k->dlen);
        mf_rail_rxchunk_put(k);
        if (up.fs_done)
            up.fs_done(&up, st);
        return;
    }
    mf_rail_rxmsg *m = mf_rail_rxmsg_find(p, k->mseq);
    if (!m && k->mseq < p->rx_next && k->dlen == 0) {
        mf_rail_rxchunk_put(k); /* an announcement overtaken by the data, which announced it too */
        return;
    }
    if (!m && k->mseq < p->rx_next) {
        mf_rail_rxchunk_put(k);
        return mf_rail_protocol_error(w, peer, rail, "chunk of a finished message");
    }
    if (!m) {
        m = calloc(1, sizeof *m);
        if (!m)
            mf_fatal("%s: no memory for an arriving message", w->base.name);
        m->mseq = k->mseq;
        m->hdr = h;
        m->next = p->rx;
        p->rx = m;
    }
    if (!k->staged) {
        m->got += k->dlen;
    } else if (m->delivered) {
        mf_rail_copy_in(&m->sink, k->off, k->staged, k->dlen);
        m->got += k->dlen;
    } else if (k->dlen) {
        /* Held until the message is handed up: the staged data, taken over or copied. */
        mf_rail_held *hd = malloc(sizeof *hd);
        unsigned char *data = k->own_staged ? k->staged : malloc(k->dlen);
        if (!hd || !data)
            mf_fatal("%s: no memory to hold a chunk", w->base.name);
        if (!k->own_staged)
            memcpy(data, k->staged, k->dlen);
        k->own_staged = false;
        *hd = (mf_rail_held){m->held, k->off, k->dlen, data};
        m->held = hd;
    }
    mf_rail_rxchunk_put(k);
    if (m->delivered)
        mf_rail_rx_check(p, m);
    mf_rail_deliver(w, peer);
}

/* A MSG's header: where its payload goes. */
static void mf_rail_rx_msg(mf_rail *w, int peer, int r, const mf_wire_hdr *h, mf_fabric_sink *sink)
{
    mf_rail_peer *p = &w->peers[peer];
    if (h->len < MF_WIRE_HDR_SIZE)
        return mf_rail_protocol_error(w, peer, r, "chunk without a header");
    size_t dlen = h->len - MF_WIRE_HDR_SIZE;
    if (h->tag & MF_RAIL_T_SMALL)
        p->small = r; /* answers go back on this rail (mf_rail_pick_small) */
    /* Data of a message already handed up lands in place; other data is staged. */
    mf_rail_rxmsg *m = p->rx ? mf_rail_rxmsg_find(p, h->rkey) : NULL;
    bool in_place = m && m->delivered;
    int max = in_place ? m->sink.fs_niov : 0;
    size_t inl = !in_place && dlen <= MF_RAIL_RX_INLINE ? dlen : 0;
    mf_rail_rxchunk *k = mf_rail_rxchunk_get(w, &p->l[r], max + 2, inl);
    k->w = w;
    k->peer = peer;
    k->rail = r;
    k->urgent = (h->tag & MF_RAIL_T_URGENT) != 0;
    k->seq = h->sreq;
    k->mseq = h->rkey;
    k->epoch = p->l[r].epoch;
    k->off = h->total;
    k->dlen = dlen;
    int n = 0;
    k->iov[n++] = (struct iovec){k->ihdr, sizeof k->ihdr};
    if (in_place) {
        n += mf_rail_sink_range(&m->sink, k->off, dlen, k->iov + n, max);
    } else if (dlen) {
        if (!inl) {
            k->staged = malloc(dlen);
            if (!k->staged)
                mf_fatal("%s: no memory to stage %zu bytes", w->base.name, dlen);
            k->own_staged = true;
        }
        k->iov[n++] = (struct iovec){k->staged, dlen};
    }
    *sink = (mf_fabric_sink){k->iov, n, mf_rail_rxchunk_done, k};
}

/* Acknowledgement `ack` for rail r's sends. */
static void mf_rail_acked(mf_rail *w, int peer, int r, uint64_t ack)
{
    mf_rail_link *l = &w->peers[peer].l[r];
    if (ack > l->tx_seq)
        return mf_rail_protocol_error(w, peer, r, "acknowledgement beyond what was sent");
    bool moved = false;
    while (l->uhead && l->uhead->seq <= ack) {
        mf_rail_chunk *c = l->uhead;
        l->uhead = c->next;
        if (!l->uhead)
            l->utail = NULL;
        l->ubytes -= c->len + MF_WIRE_HDR_SIZE;
        l->rate_bytes += c->len + MF_WIRE_HDR_SIZE;
        c->need_ack = false;
        mf_rail_chunk_check(c);
        moved = true;
    }
    if (!moved)
        return;
    /* Throughput: bytes acknowledged over the time the rail was busy, smoothed. */
    double dt = w->now - l->rate_t0;
    if (dt > 0.002 && l->rate_bytes > w->chunk) {
        double sample = (double)l->rate_bytes / dt;
        l->rate = l->rate * 0.5 + sample * 0.5;
        l->rate_t0 = w->now;
        l->rate_bytes = 0;
    }
    if (!l->ubytes)
        l->rate_bytes = 0, l->rate_t0 = w->now;
    mf_rail_mark(w, peer);
}

static void mf_rail_up_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *h, mf_fabric_sink *sink)
{
    mf_rail_ctx *x = f->upcall_ctx;
    mf_rail *w = x->w;
    int r = x->idx;
    *sink = (mf_fabric_sink){0};
    if (w->closed || peer < 0 || peer >= w->npeers)
        return; /* a rail closing after the wrapper (the registry closes in reverse order) */
    mf_rail_fresh(w);
    mf_rail_peer *p = &w->peers[peer];
    mf_rail_link *l = &p->l[r];
    if (h->type == MF_MSG_DATA && h->context == MF_RAIL_K_HELLO && !p->failed) {
        /* The peer resynchronised this rail and connected it again, proposing incarnation E:
         * taken when we are resynchronised too and have not seen E yet (a HELLO of an
         * incarnation that died meanwhile is stale). A request is answered at once, before
         * any chunk can go out on the rail. */
        uint64_t e = (uint32_t)h->tag;
        if (l->state == MF_RAIL_DOWN && e > l->epoch) {
            l->epoch = e;
            mf_rail_back(w, peer, r);
        }
        if (h->total && l->state == MF_RAIL_LIVE && e == l->epoch)
            mf_rail_send_ctl(w, peer, r, MF_RAIL_K_HELLO, 0, 0, e);
    }
    if (l->state != MF_RAIL_LIVE || p->failed)
        return; /* nothing is taken from a failed rail */
    if (h->type != MF_MSG_DATA)
        return mf_rail_protocol_error(w, peer, r, "not a rail frame");
    mf_rail_activate(w, peer);
    if (w->now - l->last_rx > 2 * w->hb)
        l->run_start = w->now;
    l->last_rx = w->now;
    w->rail_rx[r] = w->now;
    mf_rail_acked(w, peer, r, h->rreq);
    if (l->state != MF_RAIL_LIVE)
        return;
    switch (h->context) {
    case MF_RAIL_K_MSG:
        return mf_rail_rx_msg(w, peer, r, h, sink);
    case MF_RAIL_K_ACK:
    case MF_RAIL_K_HELLO:
        return;
    case MF_RAIL_K_HB:
        l->echo_ts = h->total ? h->total : 1;
        mf_rail_mark(w, peer);
        return;
    case MF_RAIL_K_ECHO: {
        double sent = (double)h->total * 1e-9, rtt = w->now - sent;
        /* The path's latency is the least a round trip took lately: larger samples measure
         * a peer that was descheduled or polled the rail late, or a connection being set up. */
        if (rtt >= 0 && rtt < 10 &&
            (!l->rtt || rtt <= l->rtt || w->now - l->rtt_at > MF_RAIL_RTT_WINDOW)) {
            l->rtt = rtt;
            l->rtt_at = w->now;
        }
        return;
    }
    case MF_RAIL_K_RESYNC: {
        if (h->rkey >= (uint64_t)w->n)
            return mf_rail_protocol_error(w, peer, r, "resync of an unknown rail");
        int q = (int)h->rkey;
        mf_rail_link *lq = &p->l[q];
        uint64_t e = (uint32_t)h->tag;
        if (h->total > lq->tx_seq)
            return mf_rail_protocol_error(w, peer, r, "resync beyond what was sent");
        if (e < lq->epoch || (e > lq->epoch && lq->state != MF_RAIL_DOWN))
            return; /* of an incarnation already settled (or, rarer, not reachable from here) */
        if (lq->state == MF_RAIL_DOWN && e == lq->epoch) {
            /* Settled here: the peer sends its own again because ours did not reach it (it
             * went on a rail that failed too); the count is the one sent then. */
            if (h->sreq)
                mf_rail_send_resync(w, peer, q, e, false);
            return;
        }
        if (lq->state == MF_RAIL_FAILED && lq->resync_sent && h->sreq)
            mf_rail_send_resync(w, peer, q, e, false); /* ours did not reach the peer */
        lq->resync_got = true;
        lq->peer_rx = h->total;
        if (e > lq->epoch) {
            /* The peer took the rail back and lost it before its HELLO reached us: that
             * incarnation carried nothing of ours; settle it at once. */
            lq->epoch = e;
            lq->state = MF_RAIL_FAILED;
            lq->resync_sent = true;
            mf_rail_send_resync(w, peer, q, e, false);
        }
        if (lq->state == MF_RAIL_LIVE)
            mf_rail_fail(
                w, peer, q,
                mf_error(MPI_ERR_OTHER, "rank %d reports %s failed", peer, mf_rail_name(w, q)));
        mf_rail_resync(w, peer, q);
        return;
    }
    default:
        return mf_rail_protocol_error(w, peer, r, "unknown rail frame kind");
    }
}

static void mf_rail_up_peer_failed(mf_fabric *f, int peer, int code)
{
    mf_rail_ctx *x = f->upcall_ctx;
    if (!x->w->closed && peer >= 0 && peer < x->w->npeers) {
        mf_rail_fresh(x->w);
        mf_rail_fail(x->w, peer, x->idx, code);
    }
}

static const mf_fabric_upcalls mf_rail_upcalls = {mf_rail_up_rx_header, mf_rail_up_peer_failed};

/* ---- Ops ---- */

static int mf_rail_open(mf_fabric *f)
{
    return MPI_SUCCESS; /* the rails are opened by the registry */
}

static int mf_rail_start(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    w->npeers = mf_g.size;
    w->peers = calloc((size_t)w->npeers, sizeof *w->peers);
    w->dirty = calloc((size_t)w->npeers, sizeof *w->dirty);
    w->active = calloc((size_t)w->npeers, sizeof *w->active);
    if (!w->peers || !w->dirty || !w->active)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for %s", f->name);
    for (int peer = 0; peer < w->npeers; peer++) {
        w->peers[peer].rx_next = 1; /* message numbers start at 1 */
        w->peers[peer].small = -1;
    }
    for (int peer = 0; peer < w->npeers; peer++)
        for (int r = 0; r < w->n; r++) {
            mf_rail_link *l = &w->peers[peer].l[r];
            l->rate = 1e9; /* until measured */
            l->state = peer != mf_g.rank && w->rails[r]->ops->reachable(w->rails[r], peer)
                           ? MF_RAIL_LIVE
                           : MF_RAIL_DOWN;
        }
    return MPI_SUCCESS;
}

static void mf_rail_free_peers(mf_rail *w)
{
    for (int peer = 0; w->peers && peer < w->npeers; peer++) {
        mf_rail_peer *p = &w->peers[peer];
        for (int r = 0; r < w->n; r++) {
            /* One a rail still holds is freed when the rail lets it go (after the wrapper). */
            if (p->l[r].rxk_busy)
                p->l[r].rxk->cached = false;
            else
                free(p->l[r].rxk);
        }
        for (int r = 0; r < w->n; r++)
            for (mf_rail_chunk *c = p->l[r].uhead, *nx; c; c = nx) {
                nx = c->next;
                c->need_ack = false;
                mf_rail_chunk_check(c);
            }
        for (mf_rail_chunk *c = p->rhead, *nx; c; c = nx) {
            nx = c->next;
            c->need_ack = false;
            mf_rail_chunk_check(c);
        }
        for (mf_rail_rxmsg *m = p->rx, *nx; m; m = nx) {
            nx = m->next;
            for (mf_rail_held *h = m->held, *hn; h; h = hn) {
                hn = h->next;
                free(h->data);
                free(h);
            }
            free(m);
        }
    }
}

static int mf_rail_close(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    /* Messages still pending cannot be freed while chunks the rails hold point into them: the
     * rails complete those (with an error) when the registry closes them next, and a closed
     * wrapper then frees each chunk alone. */
    w->closed = true;
    mf_rail_free_peers(w);
    if (w->failovers)
        mf_verbose("%s: %llu rail failures, %llu chunks sent again", f->name,
                   (unsigned long long)w->failovers, (unsigned long long)w->resent);
    free(w->peers);
    free(w->dirty);
    free(w->active);
    w->peers = NULL;
    if (w->epfd >= 0)
        close(w->epfd);
    w->epfd = -1;
    return MPI_SUCCESS;
}

static bool mf_rail_reachable(mf_fabric *f, int peer)
{
    mf_rail *w = mf_rail_of(f);
    for (int r = 0; r < w->n; r++)
        if (w->rails[r]->ops->reachable(w->rails[r], peer))
            return true;
    return false;
}

static int mf_rail_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                        int niov, mf_fabric_done *done)
{
    mf_rail *w = mf_rail_of(f);
    mf_rail_peer *p = &w->peers[peer];
    if (p->failed)
        return p->failed;
    bool small = hdr->len <= w->stripe;
    if (!small && !done)
        return MF_FABRIC_BUSY;
    /* A small frame is copied: the message, its one chunk and the copy in one allocation, the
     * copy behind room for its encoded header, so that the rail writes one piece. */
    size_t room = small ? MF_RAIL_CHUNK_SIZE(1) + MF_WIRE_HDR_SIZE + hdr->len : 0;
    mf_rail_msg *m = malloc(sizeof *m + room);
    if (!m)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a frame", f->name);
    memset(m, 0, sizeof *m);
    /* A small frame takes the time of this pass (the rank usually answers what it just
     * received); a large one starts measuring its rails' throughput: the time now. */
    if (!small)
        w->stale = true;
    mf_rail_fresh(w);
    mf_rail_activate(w, peer);
    m->hdr = *hdr;
    m->mseq = ++p->tx_mseq;
    if (small) {
        m->one.iov_base = (char *)(m + 1) + MF_RAIL_CHUNK_SIZE(1) + MF_WIRE_HDR_SIZE;
        m->one.iov_len = hdr->len;
        for (size_t i = 0, off = 0; off < hdr->len; i++) {
            size_t n = iov[i].iov_len < hdr->len - off ? iov[i].iov_len : hdr->len - off;
            memcpy((char *)m->one.iov_base + off, iov[i].iov_base, n);
            off += n;
        }
        m->iov = &m->one;
        m->niov = 1;
    } else {
        m->done = done;
        m->iov = iov;
        m->niov = niov;
    }
    /* The whole small frame, or the large one's announcement, on the quickest rail. */
    mf_rail_chunk *c = mf_rail_chunk_new(w, m, 0, small ? hdr->len : 0, small ? m + 1 : NULL);
    if (!c) {
        free(m);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a frame", f->name);
    }
    if (small) {
        char *at = (char *)m->one.iov_base - MF_WIRE_HDR_SIZE;
        memcpy(at, c->ihdr, MF_WIRE_HDR_SIZE);
        c->iov[0] = (struct iovec){at, MF_WIRE_HDR_SIZE + hdr->len};
        c->niov = 1;
    }
    mf_fabric_count_tx(f, hdr);
    m->next_off = small ? hdr->len : 0;
    int r = mf_rail_pick_small(w, peer, small ? hdr->len : 0);
    if (r < 0) { /* cannot be while the peer is not failed: its last rail fails it */
        if (!c->embedded)
            free(c);
        free(m);
        return mf_error(MPI_ERR_OTHER, "%s: no rail reaches rank %d", f->name, peer);
    }
    mf_rail_chunk_send(w, peer, c, r);
    if (small)
        return MF_FABRIC_DONE;
    if (p->qtail)
        p->qtail->next = m;
    else
        p->qhead = m;
    p->qtail = m;
    mf_rail_pump(w, peer);
    return MF_FABRIC_PENDING;
}

/* Heartbeats, silence and delayed acknowledgements of one peer. */
static void mf_rail_tick(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    if (p->failed)
        return;
    /* The peer is alive and sending when a rail has received without a gap of two heartbeats
     * for half the silence threshold: only then is another rail's silence its own fault (a
     * peer descheduled or computing is silent everywhere, and its first frames after the pause
     * start a new run). */
    bool alive = false;
    for (int r = 0; r < w->n; r++)
        alive |= p->l[r].state == MF_RAIL_LIVE && w->now - p->l[r].last_rx < 2 * w->hb &&
                 w->now - p->l[r].run_start > w->silence / 2;
    for (int r = 0; r < w->n && !p->failed; r++) {
        mf_rail_link *l = &p->l[r];
        if (l->state == MF_RAIL_DOWN && l->next_revive && w->now >= l->next_revive) {
            /* Try the rail again: reconnect, and ask the peer to take it back. */
            l->next_revive = w->now + w->silence;
            mf_fabric *f = w->rails[r];
            if (f->ops->revive_peer && f->ops->revive_peer(f, peer) == MPI_SUCCESS) {
                mf_wire_hdr h = {.type = MF_MSG_DATA,
                                 .context = MF_RAIL_K_HELLO,
                                 .tag = (int32_t)(uint32_t)(l->epoch + 1),
                                 .total = 1,
                                 .rreq = l->rx_seq};
                static mf_fabric_done nothing;
                f->ops->send(f, peer, &h, NULL, 0, &nothing); /* a failure is seen later */
            }
            continue;
        }
        if (l->state == MF_RAIL_FAILED && l->resync_sent && !l->resync_got &&
            w->now >= l->resync_again) {
            mf_rail_send_resync(w, peer, r, l->epoch, true);
            continue;
        }
        if (l->state != MF_RAIL_LIVE)
            continue;
        if (w->now - l->last_rx > w->silence && alive) {
            mf_rail_fail(w, peer, r,
                         mf_error(MPI_ERR_OTHER, "nothing heard on it for %.0f ms",
                                  (w->now - l->last_rx) * 1e3));
            continue;
        }
        if (w->now - l->last_tx > w->hb)
            mf_rail_send_ctl(w, peer, r, MF_RAIL_K_HB, (uint64_t)(w->now * 1e9), 0, 0);
        else if (l->rx_seq > l->acked_sent && w->now - l->ack_due_since > MF_RAIL_ACK_DELAY)
            mf_rail_send_ctl(w, peer, r, MF_RAIL_K_ACK, 0, 0, 0);
    }
}

/* The work left by arrivals and sends: failures, breaks, answers, acknowledgements, chunks. */
static void mf_rail_flush(mf_rail *w, int peer)
{
    mf_rail_peer *p = &w->peers[peer];
    p->dirty = false;
    for (int r = 0; r < w->n; r++) {
        mf_rail_link *l = &p->l[r];
        if (l->fail_code) {
            int code = l->fail_code;
            l->fail_code = 0;
            mf_rail_fail(w, peer, r, code);
        }
        if (l->need_break) {
            l->need_break = false;
            w->rails[r]->ops->break_peer(w->rails[r], peer);
        }
        if (l->state != MF_RAIL_LIVE || p->failed)
            continue;
        if (l->echo_ts) {
            uint64_t ts = l->echo_ts;
            l->echo_ts = 0;
            mf_rail_send_ctl(w, peer, r, MF_RAIL_K_ECHO, ts, 0, 0);
        } else if (l->ack_now && l->rx_seq > l->acked_sent) {
            mf_rail_send_ctl(w, peer, r, MF_RAIL_K_ACK, 0, 0, 0);
        }
    }
    if (!p->failed)
        mf_rail_pump(w, peer);
}

static int mf_rail_progress(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    w->stale = true;
    bool all = ++w->pass % MF_RAIL_COLD_EVERY == 0;
    if (w->busy || w->pass % MF_RAIL_CLOCK_EVERY == 0) {
        mf_rail_fresh(w);
        all |= w->now - w->polled_all > MF_RAIL_COLD_MAX;
    }
    if (all && !w->stale)
        w->polled_all = w->now;
    int n = 0;
    for (int r = 0; r < w->n; r++)
        if (all || w->now - w->rail_rx[r] < MF_RAIL_COLD_RX ||
            w->now - w->rail_tx[r] < MF_RAIL_COLD_TX)
            n += w->rails[r]->ops->progress(w->rails[r]);
    w->busy = n > 0 || w->ndirty > 0;
    if (w->ndirty > 0)
        mf_rail_fresh(w);
    while (w->ndirty > 0) {
        int peer = w->dirty[--w->ndirty];
        mf_rail_flush(w, peer);
    }
    if (!w->stale && w->now >= w->next_tick) {
        w->next_tick = w->now + w->hb / 4;
        for (int i = 0; i < w->nactive; i++)
            mf_rail_tick(w, w->active[i]);
        while (w->ndirty > 0)
            mf_rail_flush(w, w->dirty[--w->ndirty]);
    }
    return n;
}

static int mf_rail_wait_fd(mf_fabric *f)
{
    return mf_rail_of(f)->epfd;
}

static bool mf_rail_sleep_prepare(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    bool ok = true;
    for (int r = 0; r < w->n; r++) {
        w->rails[r]->sleepers = f->sleepers;
        ok &= w->rails[r]->ops->sleep_prepare(w->rails[r]);
    }
    return ok;
}

static void mf_rail_sleep_end(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    w->pass = MF_RAIL_COLD_EVERY - 1; /* woken by any rail: the next pass polls them all */
    for (int r = 0; r < w->n; r++) {
        w->rails[r]->ops->sleep_end(w->rails[r]);
        w->rails[r]->sleepers = 0;
    }
}

/* Also sends the acknowledgements still owed: a peer waiting for them in MPI_Finalize gets
 * them before this rank goes into the final fence. A rail that has carried no MSG either way
 * is not asked whether it is idle: all it ever held were heartbeats, which nobody waits for,
 * and the first of them may sit behind a connection the peer, already in the final fence,
 * will never accept (a job with two tcp rails over one interface stalled 10 s in
 * MPI_Finalize that way in one run of two). */
static bool mf_rail_tx_idle(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    w->now = mf_clock_s();
    bool idle = true, carried[MF_ROUTE_MAX_RAILS] = {false};
    for (int i = 0; i < w->nactive; i++) {
        mf_rail_peer *p = &w->peers[w->active[i]];
        if (p->failed)
            continue;
        idle &= !p->qhead && !p->rhead;
        for (int r = 0; r < w->n; r++) {
            mf_rail_link *l = &p->l[r];
            idle &= l->uhead == NULL && l->state != MF_RAIL_FAILED;
            carried[r] |= l->tx_seq > 0 || l->rx_seq > 0;
            if (l->state == MF_RAIL_LIVE && l->rx_seq > l->acked_sent)
                mf_rail_send_ctl(w, w->active[i], r, MF_RAIL_K_ACK, 0, 0, 0);
        }
    }
    for (int r = 0; r < w->n; r++)
        if (carried[r])
            idle &= w->rails[r]->ops->tx_idle(w->rails[r]);
    return idle;
}

static int mf_rail_break_peer(mf_fabric *f, int peer)
{
    mf_rail *w = mf_rail_of(f);
    for (int r = 0; r < w->n; r++)
        w->rails[r]->ops->break_peer(w->rails[r], peer);
    return MPI_SUCCESS;
}

/* For --report-fabrics: what each rail runs over (the hosts' interfaces are paired by subnet
 * on each, see "Rails" in fabric.h) and how frames are spread. */
static void mf_rail_describe_op(mf_fabric *f, char *buf, size_t len)
{
    mf_rail *w = mf_rail_of(f);
    size_t n = 0;
    for (int r = 0; r < w->n && n < len; r++) {
        const mf_fabric *g = w->rails[r]->inner ? w->rails[r]->inner : w->rails[r];
        n += (size_t)snprintf(buf + n, len - n, "%s%s over %s", r ? ", " : "", g->name,
                              g->ifaces && *g->ifaces ? g->ifaces : "every interface");
    }
    if (n < len)
        snprintf(buf + n, len - n,
                 "; frames up to %zu bytes whole on one rail, larger ones in chunks of %zu",
                 w->stripe, w->chunk);
}

static void mf_rail_mpit_publish(mf_fabric *f)
{
    mf_rail *w = mf_rail_of(f);
    mf_fabric_mpit_counter(f, "rail_failovers",
                           "rails given up on to a peer (a connection error, or silence while "
                           "another rail to the peer was heard), each counted once per failure",
                           &w->failovers);
    mf_fabric_mpit_counter(f, "chunks_resent",
                           "chunks (whole small frames or stripes of large ones) sent again on "
                           "another rail because the rail they went on failed before the peer "
                           "had them",
                           &w->resent);
    mf_fabric_mpit_counter(f, "rails_revived",
                           "failed rails to a peer reconnected and taken back into use",
                           &w->revived);
}

static const mf_fabric_ops mf_rail_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_rail_open,
    .start = mf_rail_start,
    .close = mf_rail_close,
    .reachable = mf_rail_reachable,
    .send = mf_rail_send,
    .rkey_make = mf_fabric_no_rkey_make,
    .rkey_release = mf_fabric_no_rkey_release,
    .rget = mf_fabric_no_rget,
    .progress = mf_rail_progress,
    .wait_fd = mf_rail_wait_fd,
    .sleep_prepare = mf_rail_sleep_prepare,
    .sleep_end = mf_rail_sleep_end,
    .tx_idle = mf_rail_tx_idle,
    .break_peer = mf_rail_break_peer,
    .describe = mf_rail_describe_op,
    .mpit_publish = mf_rail_mpit_publish,
};

static void mf_rail_init(mf_fabric *f)
{
    f->max_frame = MF_WIRE_MAX_FRAME;
    mf_rail_of(f)->epfd = -1;
    mf_rail_of(f)->stale = true;
}

const mf_fabric_class mf_rail_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "rail",
    .ops = &mf_rail_ops,
    .caps = MF_FABRIC_CAP_NETWORK,
    .max_message = MF_WIRE_MAX_FRAME,
    .instance_size = sizeof(mf_rail),
    .init = mf_rail_init,
};

int mf_rail_wrap(mf_fabric *f, mf_fabric *const *rails, int n)
{
    mf_rail *w = mf_rail_of(f);
    if (n > MF_ROUTE_MAX_RAILS)
        n = MF_ROUTE_MAX_RAILS;
    w->n = n;
    w->stripe = mf_config_size("MANIFOLD_RAIL_STRIPE");
    w->chunk = mf_config_size("MANIFOLD_RAIL_CHUNK");
    w->window = mf_config_size("MANIFOLD_RAIL_WINDOW");
    w->silence = (double)mf_config_long("MANIFOLD_RAIL_SILENCE_MS") * 1e-3;
    if (w->chunk < 4096)
        w->chunk = 4096;
    /* a MSG carries the upper header in front of its data: it must fit every rail's frames
     * (ofi's are 64 KiB) */
    for (int r = 0; r < n; r++) {
        size_t room = rails[r]->max_frame - MF_WIRE_HDR_SIZE;
        w->chunk = w->chunk < room ? w->chunk : room;
        w->stripe = w->stripe < room ? w->stripe : room;
    }
    if (w->window < w->chunk)
        w->window = w->chunk;
    w->hb = w->silence / 4;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0)
        return mf_error(MPI_ERR_OTHER, "MPI_Init: %s: epoll_create1 failed", f->name);
    f->flags =
        MF_FABRIC_NETWORK; /* not INJECT: a send queued behind others must stay cancellable */
    f->eager_limit = rails[0]->eager_limit;
    f->poll_interval_us = (int)(w->hb * 1e6 / 2);
    for (int r = 0; r < n; r++) {
        w->rails[r] = rails[r];
        w->ctx[r] = (mf_rail_ctx){w, r};
        mf_fabric_set_upcalls(rails[r], &mf_rail_upcalls, &w->ctx[r]);
        if (rails[r]->poll_interval_us > 0 && rails[r]->poll_interval_us < f->poll_interval_us)
            f->poll_interval_us = rails[r]->poll_interval_us;
        int fd = rails[r]->ops->wait_fd(rails[r]);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)r};
        if (fd >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
            return mf_error(MPI_ERR_OTHER, "MPI_Init: %s: cannot watch %s", f->name,
                            rails[r]->name);
    }
    char desc[96];
    mf_rail_describe(f, desc, sizeof desc);
    mf_verbose("%s stripes over its rails (%s)", f->name, desc);
    return MPI_SUCCESS;
}

void mf_rail_describe(mf_fabric *f, char *buf, size_t len)
{
    mf_rail *w = mf_rail_of(f);
    size_t n = (size_t)snprintf(buf, len, "%s(", f->name);
    for (int r = 0; r < w->n && n < len; r++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", r ? "/" : "", mf_rail_name(w, r));
    if (n < len)
        snprintf(buf + n, len - n, ")");
}
