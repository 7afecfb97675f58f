/*
 * sctp_assoc.c — the sctp fabric's associations: dialing, the authenticated handshake, the
 * messages assembled from usrsctp's pieces, the per-(peer, context) order of frames, sending
 * with explicit end-of-record, and failures. See sctp.h for the design.
 */
#include "fabric/sctp/sctp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "runtime/pm.h"
#include "tool/mpit.h"

/* Records a handshake may have waiting: ours as initiator (HELLO, PROOF) and as responder
 * (CHALLENGE, ACCEPT) when both dialed at once. */
#define MF_SCTP_HS_QUEUE 4

void mf_sctp_out_free(mf_sctp_out *o)
{
    free(o->o_copy);
    free(o);
}

mf_sctp_ctx *mf_sctp_ctx_of(mf_sctp_peer *p, uint32_t ctx)
{
    for (int i = 0; i < p->p_nctx; i++)
        if (p->p_ctx[i].c_ctx == ctx)
            return &p->p_ctx[i];
    if (p->p_nctx == p->p_ctx_cap) {
        int cap = p->p_ctx_cap ? 2 * p->p_ctx_cap : 4;
        mf_sctp_ctx *n = realloc(p->p_ctx, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        p->p_ctx = n;
        p->p_ctx_cap = cap;
    }
    p->p_ctx[p->p_nctx] = (mf_sctp_ctx){.c_ctx = ctx};
    return &p->p_ctx[p->p_nctx++];
}

uint16_t mf_sctp_stream_of(const mf_wire_hdr *h, int nout)
{
    if (nout <= 1)
        return 0;
    uint32_t k = h->context * 2654435761u ^ (uint32_t)h->tag * 40503u;
    return (uint16_t)(1 + (k ^ k >> 15) % (uint32_t)(nout - 1));
}

/* ---- Associations ---- */

static mf_sctp_assoc *mf_sctp_assoc_find(mf_sctp *s, sctp_assoc_t id)
{
    for (mf_sctp_assoc *a = s->s_assocs; a; a = a->a_next)
        if (a->a_id == id)
            return a;
    return NULL;
}

/* The record of association `id`, created (unauthenticated, counted as pending) if new. */
static mf_sctp_assoc *mf_sctp_assoc_get(mf_sctp *s, sctp_assoc_t id)
{
    mf_sctp_assoc *a = mf_sctp_assoc_find(s, id);
    if (a)
        return a;
    a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->a_id = id;
    a->a_peer = a->a_dial_peer = a->a_claim = -1;
    a->a_since = mf_clock_s();
    a->a_counted = true;
    s->s_npending++;
    a->a_next = s->s_assocs;
    s->s_assocs = a;
    return a;
}

static void mf_sctp_assoc_clear(mf_sctp *s, mf_sctp_assoc *a)
{
    for (int i = 0; i < MF_SCTP_STREAMS; i++)
        if (a->a_asm[i]) {
            mf_sctp_asm_reset(a->a_asm[i]);
            free(a->a_asm[i]);
            a->a_asm[i] = NULL;
        }
    while (a->a_held) {
        mf_sctp_msg *m = a->a_held;
        a->a_held = m->m_next;
        mf_sctp_msg_free(m);
    }
    a->a_held_tail = NULL;
    a->a_held_bytes = 0;
    a->a_hs_n = 0;
    if (a->a_counted)
        s->s_npending--;
    a->a_counted = false;
}

static void mf_sctp_assoc_remove(mf_sctp *s, mf_sctp_assoc *a)
{
    for (mf_sctp_assoc **pp = &s->s_assocs; *pp; pp = &(*pp)->a_next)
        if (*pp == a) {
            *pp = a->a_next;
            break;
        }
    mf_sctp_assoc_clear(s, a);
    free(a);
}

void mf_sctp_assoc_free_all(mf_sctp *s)
{
    while (s->s_assocs)
        mf_sctp_assoc_remove(s, s->s_assocs);
}

/* ---- Failures ---- */

void mf_sctp_peer_fail(mf_sctp *s, int peer, int code)
{
    if (!mf_fabric_failures_mark(&s->s_fails, peer, code))
        return;
    mf_sctp_peer *p = &s->s_peers[peer];
    p->p_assoc = 0;
    p->p_dialed = false;
}

void mf_sctp_peer_drop(mf_sctp_peer *p, int code)
{
    while (p->p_head) {
        mf_sctp_out *o = p->p_head;
        p->p_head = o->o_next;
        if (o->o_done)
            o->o_done->fd_fn(o->o_done, code);
        mf_sctp_out_free(o);
    }
    p->p_tail = NULL;
    while (p->p_wait) {
        mf_sctp_msg *m = p->p_wait;
        p->p_wait = m->m_next;
        mf_sctp_msg_free(m);
    }
}

/* One failure's report: the peer's frames are dropped, then the layer above is told. */
static void mf_sctp_report_one(mf_fabric *f, int r, int code)
{
    mf_sctp *s = mf_sctp_of(f);
    mf_sctp_peer *p = &s->s_peers[r];
    if (p->p_head)
        s->s_nqueued--;
    mf_sctp_peer_drop(p, code);
    if (!s->s_closing)
        mf_fabric_peer_failed(&s->s_base, r, code);
}

int mf_sctp_report_failures(mf_sctp *s)
{
    return mf_fabric_failures_report(&s->s_fails, &s->s_base, mf_sctp_report_one);
}

static void mf_sctp_abort(mf_sctp *s, sctp_assoc_t id)
{
    struct sctp_sndinfo si = {.snd_flags = SCTP_ABORT, .snd_assoc_id = id};
    usrsctp_sendv(s->s_sock, "", 0, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
}

static void mf_sctp_hs_send(mf_sctp *s, mf_sctp_assoc *a, const mf_stream_hs *h);

/* Ends association `a` for a protocol or authentication failure: the fixed REFUSE, an ABORT,
 * a rate-limited line; the rank it was dialed for or trusted as fails with `why`. */
static void mf_sctp_refuse(mf_sctp *s, mf_sctp_assoc *a, const char *why)
{
    mf_stream_hs r = {.kind = MF_STREAM_HS_REFUSE};
    mf_sctp_hs_send(s, a, &r);
    mf_sctp_abort(s, a->a_id);
    mf_t_event_raise(MF_T_EVENT_CONNECTION_REFUSED, (const int[]){a->a_claim});
    int peer = a->a_peer >= 0 ? a->a_peer : a->a_dial_peer;
    if (peer >= 0) {
        mf_sctp_peer_fail(s, peer,
                          mf_error(MPI_ERR_OTHER, "%s: association with rank %d ended: %s",
                                   s->s_base.name, peer, why));
    } else {
        unsigned held;
        if (mf_ratelimit_pass(&s->s_rl_refused, mf_clock_s(), &held))
            mf_warn("%s: refused an unauthenticated association: %s (%u more since the last "
                    "report)",
                    s->s_base.name, why, held);
    }
    mf_sctp_assoc_remove(s, a);
}

/* The rank association `a` carried stops using it: its frames go over another trusted
 * association to the same rank, or the peer is closed (`clean`: shut down on purpose, nothing
 * queued) or failed. */
static void mf_sctp_assoc_unuse(mf_sctp *s, mf_sctp_assoc *a, bool clean, const char *how)
{
    int peer = a->a_peer >= 0 ? a->a_peer : a->a_dial_peer;
    if (peer >= 0 && !s->s_closing) {
        mf_sctp_peer *p = &s->s_peers[peer];
        bool carried = p->p_assoc == a->a_id || (a->a_peer < 0 && p->p_dialed);
        if (carried) {
            p->p_assoc = 0;
            p->p_dialed = false;
            /* Another trusted association to the same rank (both dialed at once and SCTP kept
             * two) carries on. */
            for (mf_sctp_assoc *b = s->s_assocs; b; b = b->a_next)
                if (b != a && b->a_peer == peer && !b->a_draining && !p->p_assoc) {
                    p->p_assoc = b->a_id;
                    p->p_nout = b->a_nout;
                }
        }
        if (carried && !p->p_assoc) {
            if (clean && a->a_peer >= 0 && !p->p_head)
                p->p_closed = true;
            else
                mf_sctp_peer_fail(
                    s, peer,
                    mf_error(MPI_ERR_OTHER,
                             "%s: association with rank %d lost (%s)%s; our addresses: %s",
                             s->s_base.name, peer, how,
                             clean ? " with frames still queued for it" : "", s->s_addrs));
        }
    }
}

/* The association is gone (notification). `clean`: the peer shut it down on purpose. */
static void mf_sctp_assoc_lost(mf_sctp *s, mf_sctp_assoc *a, bool clean, const char *how)
{
    if (!a->a_draining)
        mf_sctp_assoc_unuse(s, a, clean, how);
    mf_sctp_assoc_remove(s, a);
}

/* ---- Writing ---- */

static ssize_t mf_sctp_raw(mf_sctp *s, sctp_assoc_t id, uint16_t sid, const void *buf, size_t len,
                           bool eor)
{
    struct sctp_sndinfo si = {.snd_sid = sid, .snd_flags = eor ? SCTP_EOR : 0, .snd_assoc_id = id};
    return usrsctp_sendv(s->s_sock, buf, len, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
}

static bool mf_sctp_would_block(int e)
{
    return e == EWOULDBLOCK || e == EAGAIN || e == ENOBUFS || e == ENOTCONN || e == EINPROGRESS;
}

/* Sends the handshake records waiting on `a`, in order; what does not fit yet stays. */
static int mf_sctp_hs_flush(mf_sctp *s, mf_sctp_assoc *a)
{
    int n = 0;
    while (n < a->a_hs_n) {
        ssize_t k = mf_sctp_raw(s, a->a_id, 0, a->a_hs_out[n], sizeof a->a_hs_out[n], true);
        if (k < 0)
            break; /* no room, or not up yet: COMM_UP and progress retry; a dead association
                      ends through its notification */
        n++;
    }
    if (n) {
        memmove(a->a_hs_out, a->a_hs_out[n], (size_t)(a->a_hs_n - n) * sizeof a->a_hs_out[0]);
        a->a_hs_n -= n;
    }
    if (a->a_hs_n)
        s->s_hs_waiting = true; /* progress retries (mf_sctp_flush_all) */
    return n;
}

static void mf_sctp_hs_send(mf_sctp *s, mf_sctp_assoc *a, const mf_stream_hs *h)
{
    if (a->a_hs_n == MF_SCTP_HS_QUEUE)
        return; /* a REFUSE after a full queue: the ABORT says enough */
    unsigned char *r = a->a_hs_out[a->a_hs_n++];
    memset(r, 0, MF_SCTP_PREFIX);
    r[0] = MF_SCTP_MSG_HS;
    mf_stream_hs_encode(h, r + MF_SCTP_PREFIX);
    mf_sctp_hs_flush(s, a);
}

int mf_sctp_out_write(mf_sctp *s, mf_sctp_peer *p, mf_sctp_out *o)
{
    size_t total = MF_SCTP_HEAD + o->o_len;
    if (o->o_sid == 0) {
        mf_wire_hdr h;
        const char *why;
        if (mf_wire_decode(o->o_head + MF_SCTP_PREFIX, &h, &why) == 0)
            o->o_sid = mf_sctp_stream_of(&h, p->p_nout);
    }
    while (o->o_sent < total) {
        const unsigned char *buf;
        size_t len;
        unsigned char small[MF_SCTP_HEAD + 16 * 1024];
        if (o->o_sent == 0 && total <= sizeof small) {
            /* Head and a small payload in one message piece. */
            memcpy(small, o->o_head, MF_SCTP_HEAD);
            size_t off = MF_SCTP_HEAD;
            for (int i = 0; i < o->o_niov && off < total; i++) {
                size_t k = o->o_iov[i].iov_len < total - off ? o->o_iov[i].iov_len : total - off;
                memcpy(small + off, o->o_iov[i].iov_base, k);
                off += k;
            }
            buf = small;
            len = total;
        } else if (o->o_sent < MF_SCTP_HEAD) {
            buf = o->o_head + o->o_sent;
            len = MF_SCTP_HEAD - o->o_sent;
        } else {
            size_t off = o->o_sent - MF_SCTP_HEAD;
            int i = 0;
            while (i < o->o_niov && off >= o->o_iov[i].iov_len) {
                off -= o->o_iov[i].iov_len;
                i++;
            }
            buf = (const unsigned char *)o->o_iov[i].iov_base + off;
            len = o->o_iov[i].iov_len - off;
        }
        /* Records end at every multiple of MF_SCTP_RECORD and at the frame's end (sctp.h). */
        size_t end = (o->o_sent / MF_SCTP_RECORD + 1) * MF_SCTP_RECORD;
        if (end > total)
            end = total;
        if (len > end - o->o_sent)
            len = end - o->o_sent;
        ssize_t k = mf_sctp_raw(s, p->p_assoc, o->o_sid, buf, len, o->o_sent + len == end);
        if (k < 0) {
            if (mf_sctp_would_block(errno))
                return 0;
            int peer = (int)(p - s->s_peers);
            mf_sctp_peer_fail(s, peer,
                              mf_error(MPI_ERR_OTHER,
                                       "%s: association with rank %d failed: cannot send: %s",
                                       s->s_base.name, peer, strerror(errno)));
            return -1;
        }
        o->o_sent += (size_t)k;
        if ((size_t)k < len)
            return 0;
    }
    return 1;
}

int mf_sctp_flush_peer(mf_sctp *s, int peer)
{
    mf_sctp_peer *p = &s->s_peers[peer];
    int n = 0;
    while (p->p_head && p->p_assoc && !s->s_fails.code[peer]) {
        mf_sctp_out *o = p->p_head;
        size_t before = o->o_sent;
        if (mf_sctp_out_write(s, p, o) <= 0) {
            /* Only bytes usrsctp took count as work: a pass that found no room must let the
             * engine sleep (the send callback rings when room frees), not spin on usrsctp's
             * locks and starve its threads, whose late SACKs then fired retransmission
             * timeouts. */
            n += o->o_sent > before;
            break;
        }
        p->p_head = o->o_next;
        if (!p->p_head) {
            p->p_tail = NULL;
            s->s_nqueued--;
        }
        if (o->o_done)
            o->o_done->fd_fn(o->o_done, MPI_SUCCESS);
        mf_sctp_out_free(o);
        n++;
    }
    return n;
}

int mf_sctp_flush_all(mf_sctp *s)
{
    int n = 0;
    s->s_hs_waiting = false;
    for (mf_sctp_assoc *a = s->s_assocs; a; a = a->a_next)
        if (a->a_hs_n)
            n += mf_sctp_hs_flush(s, a);
    for (int r = 0; r < s->s_npeers && s->s_nqueued; r++)
        if (s->s_peers[r].p_head && s->s_peers[r].p_assoc)
            n += mf_sctp_flush_peer(s, r);
    return n;
}

/* ---- Dialing ---- */

int mf_sctp_dial(mf_sctp *s, int peer)
{
    char val[MF_PM_VAL_MAX];
    int rc = mf_fabric_addr_lookup(&s->s_base, peer, val, sizeof val);
    if (rc)
        return rc;
    unsigned udp, port;
    int used = 0;
    if (sscanf(val, "%u:%u:%n", &udp, &port, &used) != 2 || udp == 0 || udp > 65535 || port == 0 ||
        port > 65535)
        return mf_error(MPI_ERR_OTHER, "%s: rank %d published a malformed address '%s'",
                        s->s_base.name, peer, val);
    /* Same host: loopback first (it needs no network); another host: never loopback. */
    bool same = mf_g.node_of && mf_g.node_of[peer] == mf_g.node_of[mf_g.rank];
    struct sockaddr_in addrs[MF_SCTP_MAX_ADDRS];
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        char copy[MF_PM_VAL_MAX];
        snprintf(copy, sizeof copy, "%s", val + used);
        for (char *save, *tok = strtok_r(copy, ",", &save); tok && n < MF_SCTP_MAX_ADDRS;
             tok = strtok_r(NULL, ",", &save)) {
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
            if (inet_pton(AF_INET, tok, &a.sin_addr) != 1)
                continue;
            bool loop = (ntohl(a.sin_addr.s_addr) >> 24) == 127;
            if ((pass == 0 && loop && same) || (pass == 1 && !loop))
                addrs[n++] = a;
        }
    }
    if (n == 0)
        return mf_error(MPI_ERR_OTHER, "%s: no usable address of rank %d in '%s'", s->s_base.name,
                        peer, val);
    /* The association starts implicitly with our HELLO, sent to the peer's first address
     * (its INIT-ACK brings the others: multihoming), after the socket's remote UDP port was
     * set to the peer's. usrsctp_connectx would not do: in usrsctp 0.9.5 it does not take that
     * port for the new association's paths, and a packet without a port goes out as raw
     * IP/SCTP, which every usrsctp process on the host sees. */
    struct sctp_udpencaps ue;
    memset(&ue, 0, sizeof ue);
    ue.sue_assoc_id = SCTP_FUTURE_ASSOC;
    ue.sue_port = htons((uint16_t)udp);
    if (usrsctp_setsockopt(s->s_sock, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue) !=
        0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot set the UDP port of rank %d: %s", s->s_base.name,
                        peer, strerror(errno));
    unsigned char nonce[MF_AUTH_NONCE_BYTES];
    mf_auth_nonce(nonce);
    mf_stream_hs h = {.kind = MF_STREAM_HS_HELLO,
                      .from = mf_g.rank,
                      .to = peer,
                      .size = mf_g.size,
                      .job_hash = mf_g.job_hash};
    memcpy(h.blob, nonce, sizeof h.blob);
    unsigned char rec[MF_SCTP_PREFIX + MF_STREAM_HS_SIZE] = {MF_SCTP_MSG_HS};
    mf_stream_hs_encode(&h, rec + MF_SCTP_PREFIX);
    struct sctp_sndinfo si = {.snd_flags = SCTP_EOR};
    if (usrsctp_sendv(s->s_sock, rec, sizeof rec, (struct sockaddr *)&addrs[0], 1, &si, sizeof si,
                      SCTP_SENDV_SNDINFO, 0) < 0 &&
        !mf_sctp_would_block(errno)) {
        if (errno == EALREADY || errno == EISCONN) {
            /* The peer's association to us exists already: its handshake will make it ours. */
            s->s_peers[peer].p_dialed = true;
            return MPI_SUCCESS;
        }
        return mf_error(MPI_ERR_OTHER, "%s: cannot associate with rank %d at %s: %s",
                        s->s_base.name, peer, val, strerror(errno));
    }
    sctp_assoc_t id = usrsctp_getassocid(s->s_sock, (struct sockaddr *)&addrs[0]);
    if (id == 0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot associate with rank %d at %s", s->s_base.name,
                        peer, val);
    mf_sctp_assoc *a = mf_sctp_assoc_get(s, id);
    if (!a)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for an association", s->s_base.name);
    a->a_dial_peer = peer;
    a->a_istate = 1;
    memcpy(a->a_iauth.sa_nonce_i, nonce, sizeof nonce);
    mf_stream_auth_ids(&a->a_iauth, mf_g.job_hash, mf_g.size, mf_g.rank, peer);
    s->s_peers[peer].p_dialed = true;
    mf_debug("%s: associating with rank %d at %s", s->s_base.name, peer, val);
    return MPI_SUCCESS;
}

/* ---- Arrivals ---- */

static void mf_sctp_deliver(mf_sctp *s, int peer, mf_sctp_msg *m)
{
    mf_fabric_sink sink = {0};
    mf_fabric_rx_header(&s->s_base, peer, &m->m_hdr, &sink);
    int i = 0;
    size_t ioff = 0;
    for (mf_sctp_piece *pc = m->m_pieces; pc; pc = pc->pc_next) {
        const unsigned char *src = pc->pc_data + pc->pc_off;
        size_t left = pc->pc_len - pc->pc_off;
        while (left && i < sink.fs_niov) {
            size_t room = sink.fs_iov[i].iov_len - ioff;
            size_t k = left < room ? left : room;
            memcpy((char *)sink.fs_iov[i].iov_base + ioff, src, k);
            src += k;
            left -= k;
            ioff += k;
            if (ioff == sink.fs_iov[i].iov_len) {
                i++;
                ioff = 0;
            }
        }
    }
    mf_fabric_count_rx(&s->s_base, &m->m_hdr);
    if (sink.fs_done)
        sink.fs_done(&sink, MPI_SUCCESS);
    mf_sctp_msg_free(m);
}

/* A frame from trusted `peer`: handed up in its (peer, context) order, or kept until then. */
static void mf_sctp_frame_in(mf_sctp *s, int peer, mf_sctp_msg *m)
{
    mf_sctp_peer *p = &s->s_peers[peer];
    if (s->s_closing || s->s_fails.code[peer]) {
        mf_sctp_msg_free(m);
        return;
    }
    mf_sctp_ctx *c = mf_sctp_ctx_of(p, m->m_hdr.context);
    if (!c) {
        mf_sctp_msg_free(m);
        mf_sctp_peer_fail(
            s, peer,
            mf_error(MPI_ERR_NO_MEM, "%s: no memory for rank %d's order", s->s_base.name, peer));
        return;
    }
    if (m->m_seq != c->c_rx) {
        m->m_next = p->p_wait;
        p->p_wait = m;
        return;
    }
    uint32_t ctx = m->m_hdr.context;
    for (;;) {
        mf_sctp_deliver(s, peer, m);
        c = mf_sctp_ctx_of(p, ctx); /* the upcall's sends may have grown the table */
        c->c_rx++;
        m = NULL;
        for (mf_sctp_msg **pp = &p->p_wait; *pp; pp = &(*pp)->m_next)
            if ((*pp)->m_hdr.context == ctx && (*pp)->m_seq == c->c_rx) {
                m = *pp;
                *pp = m->m_next;
                break;
            }
        if (!m)
            return;
    }
}

/* `a` is now known to be rank `peer`: frames may flow, held ones are handed on. */
static void mf_sctp_trust(mf_sctp *s, mf_sctp_assoc *a, int peer)
{
    if (a->a_peer == peer)
        return;
    a->a_peer = peer;
    if (a->a_counted)
        s->s_npending--;
    a->a_counted = false;
    mf_sctp_peer *p = &s->s_peers[peer];
    if (!p->p_assoc) {
        p->p_assoc = a->a_id;
        p->p_nout = a->a_nout;
    }
    mf_counter_add(&s->s_base.counters.connections, 1);
    mf_debug("%s: association %u with rank %d authenticated", s->s_base.name, (unsigned)a->a_id,
             peer);
    while (a->a_held) {
        mf_sctp_msg *m = a->a_held;
        a->a_held = m->m_next;
        mf_sctp_frame_in(s, peer, m);
    }
    a->a_held_tail = NULL;
    a->a_held_bytes = 0;
    mf_sctp_flush_peer(s, peer);
}

/* A handshake record on `a`. May free `a` (refusal). */
static void mf_sctp_hs_in(mf_sctp *s, mf_sctp_assoc *a, const unsigned char *rec)
{
    mf_stream_hs h;
    const char *why = NULL;
    if (mf_stream_hs_decode(rec, &h, &why) != 0) {
        mf_sctp_refuse(s, a, why);
        return;
    }
    mf_stream_hs out = {0};
    switch (h.kind) {
    case MF_STREAM_HS_HELLO:
        if (a->a_rstate != 0) {
            mf_sctp_refuse(s, a, "a second HELLO");
            return;
        }
        if (mf_stream_hs_check_hello(&h, mf_g.job_hash, mf_g.size, mf_g.rank, &why) != 0) {
            mf_sctp_refuse(s, a, why);
            return;
        }
        if (a->a_dial_peer >= 0 && h.from != a->a_dial_peer) {
            mf_sctp_refuse(s, a, "its HELLO names another rank than the one dialed");
            return;
        }
        a->a_claim = h.from;
        mf_stream_auth_ids(&a->a_rauth, mf_g.job_hash, mf_g.size, h.from, mf_g.rank);
        memcpy(a->a_rauth.sa_nonce_i, h.blob, sizeof a->a_rauth.sa_nonce_i);
        mf_auth_nonce(a->a_rauth.sa_nonce_r);
        out.kind = MF_STREAM_HS_CHALLENGE;
        memcpy(out.blob, a->a_rauth.sa_nonce_r, sizeof out.blob);
        a->a_rstate = 1;
        mf_sctp_hs_send(s, a, &out);
        return;
    case MF_STREAM_HS_CHALLENGE:
        if (a->a_istate != 1) {
            mf_sctp_refuse(s, a, "an unexpected CHALLENGE");
            return;
        }
        memcpy(a->a_iauth.sa_nonce_r, h.blob, sizeof a->a_iauth.sa_nonce_r);
        out.kind = MF_STREAM_HS_PROOF;
        mf_stream_auth_mac(&mf_g.job_secret, MF_SCTP_CHANNEL, out.kind, &a->a_iauth, out.blob);
        a->a_istate = 2;
        mf_sctp_hs_send(s, a, &out);
        return;
    case MF_STREAM_HS_PROOF:
        if (a->a_rstate != 1 ||
            !mf_stream_auth_check(&mf_g.job_secret, MF_SCTP_CHANNEL, &h, &a->a_rauth)) {
            mf_sctp_refuse(s, a,
                           a->a_rstate != 1 ? "an unexpected PROOF"
                                            : "its proof does not check (not this "
                                              "job's secret)");
            return;
        }
        a->a_rstate = 2;
        out.kind = MF_STREAM_HS_ACCEPT;
        mf_stream_auth_mac(&mf_g.job_secret, MF_SCTP_CHANNEL, out.kind, &a->a_rauth, out.blob);
        mf_sctp_hs_send(s, a, &out);
        mf_sctp_trust(s, a, a->a_claim);
        return;
    case MF_STREAM_HS_ACCEPT:
        if (a->a_istate != 2 ||
            !mf_stream_auth_check(&mf_g.job_secret, MF_SCTP_CHANNEL, &h, &a->a_iauth)) {
            mf_sctp_refuse(s, a,
                           a->a_istate != 2 ? "an unexpected ACCEPT"
                                            : "its answer does not prove the job's "
                                              "secret");
            return;
        }
        a->a_istate = 3;
        mf_sctp_trust(s, a, a->a_dial_peer);
        return;
    case MF_STREAM_HS_REFUSE:
        if (a->a_istate == 1 || a->a_istate == 2) {
            mf_sctp_refuse(s, a, "it refused our handshake");
            return;
        }
        mf_sctp_refuse(s, a, "an unexpected REFUSE");
        return;
    default:
        mf_sctp_refuse(s, a, "an unexpected handshake record");
        return;
    }
}

/* A complete message on `a`. May free `a`. */
static void mf_sctp_msg_in(mf_sctp *s, mf_sctp_assoc *a, mf_sctp_msg *m)
{
    if (m->m_kind == MF_SCTP_MSG_HS) {
        unsigned char rec[MF_STREAM_HS_SIZE];
        memcpy(rec, m->m_rec, sizeof rec);
        mf_sctp_msg_free(m);
        mf_sctp_hs_in(s, a, rec);
        return;
    }
    if (a->a_peer >= 0) {
        mf_sctp_frame_in(s, a->a_peer, m);
        return;
    }
    /* Not proven yet. Only on an association we dialed may frames come early (they overtook
     * the ACCEPT on another stream); hold them, unread, up to a bound. */
    if (a->a_istate < 1) {
        mf_sctp_msg_free(m);
        mf_sctp_refuse(s, a, "it sent a frame before proving itself");
        return;
    }
    a->a_held_bytes += MF_SCTP_HEAD + m->m_bytes;
    if (a->a_held_bytes > MF_SCTP_HOLD_MAX) {
        mf_sctp_msg_free(m);
        mf_sctp_refuse(s, a, "it sent too much before proving itself");
        return;
    }
    if (a->a_held_tail)
        a->a_held_tail->m_next = m;
    else
        a->a_held = m;
    a->a_held_tail = m;
}

static void mf_sctp_data_in(mf_sctp *s, mf_sctp_piece *pc)
{
    mf_sctp_assoc *a = mf_sctp_assoc_get(s, pc->pc_assoc);
    if (!a) {
        mf_sctp_piece_free(pc);
        return;
    }
    if (pc->pc_sid >= MF_SCTP_STREAMS) {
        mf_sctp_piece_free(pc);
        mf_sctp_refuse(s, a, "a message on a stream beyond those agreed");
        return;
    }
    mf_sctp_asm *as = a->a_asm[pc->pc_sid];
    if (!as)
        as = a->a_asm[pc->pc_sid] = calloc(1, sizeof *as);
    if (!as) {
        mf_sctp_piece_free(pc);
        mf_sctp_refuse(s, a, "no memory for a message");
        return;
    }
    if (!(pc->pc_flags & MSG_EOR))
        s->s_partial++;
    mf_sctp_msg *m;
    const char *why = NULL;
    int r = mf_sctp_asm_feed(as, pc, s->s_base.max_frame, &m, &why);
    if (r < 0)
        mf_sctp_refuse(s, a, why);
    else if (r > 0)
        mf_sctp_msg_in(s, a, m);
}

static const char *mf_sctp_path_state(uint32_t st)
{
    switch (st) {
    case SCTP_ADDR_AVAILABLE:
        return "available";
    case SCTP_ADDR_UNREACHABLE:
        return "unreachable";
    case SCTP_ADDR_REMOVED:
        return "removed";
    case SCTP_ADDR_ADDED:
        return "added";
    case SCTP_ADDR_MADE_PRIM:
        return "made primary";
    case SCTP_ADDR_CONFIRMED:
        return "confirmed";
    default:
        return "potentially failed";
    }
}

/* CMT while a path is down: usrsctp 0.9.5 kept handing the dead path its share of the data,
 * each share waiting out a retransmission timeout, and the coupled congestion control held the
 * live path back: 60 Mbit/s of two 200 Mbit/s rails while one was pulled, against 190 with CMT
 * off. So an association's CMT pauses while any path of it is reported unreachable or
 * potentially failed (plain multihoming: the live path carries all), and resumes when every
 * path is available again. */
static void mf_sctp_cmt_path(mf_sctp *s, mf_sctp_assoc *a, struct in_addr ip, bool down)
{
    int i = 0;
    while (i < a->a_ndown && a->a_down[i].s_addr != ip.s_addr)
        i++;
    int before = a->a_ndown;
    if (down && i == a->a_ndown && a->a_ndown < MF_SCTP_MAX_ADDRS)
        a->a_down[a->a_ndown++] = ip;
    else if (!down && i < a->a_ndown)
        a->a_down[i] = a->a_down[--a->a_ndown];
    if (!before == !a->a_ndown)
        return;
    struct sctp_assoc_value av = {.assoc_id = a->a_id,
                                  .assoc_value = a->a_ndown ? 0 : MF_SCTP_CMT_MODE};
    usrsctp_setsockopt(s->s_sock, IPPROTO_SCTP, MF_SCTP_CMT_ON_OFF, &av, sizeof av);
    mf_debug("%s: CMT %s on the association with rank %d", s->s_base.name,
             a->a_ndown ? "paused" : "resumed", a->a_peer);
}

static void mf_sctp_notification_in(mf_sctp *s, mf_sctp_piece *pc)
{
    const union sctp_notification *n = (const void *)pc->pc_data;
    if (pc->pc_len < sizeof n->sn_header)
        return;
    mf_sctp_assoc *a = mf_sctp_assoc_find(s, pc->pc_assoc);
    switch (n->sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        if (pc->pc_len < sizeof n->sn_assoc_change)
            return;
        switch (n->sn_assoc_change.sac_state) {
        case SCTP_COMM_UP:
            if (!a) {
                /* A stranger's (or a peer's) new association: bounded while unproven. */
                if (s->s_npending >= s->s_pending_max) {
                    mf_sctp_assoc *old = NULL;
                    for (mf_sctp_assoc *b = s->s_assocs; b; b = b->a_next)
                        if (b->a_counted && b->a_dial_peer < 0)
                            old = b; /* the list is newest first: the last is the oldest */
                    if (old)
                        mf_sctp_refuse(s, old, "too many associations waiting to authenticate");
                }
                a = mf_sctp_assoc_get(s, pc->pc_assoc);
                if (!a)
                    return;
            }
            a->a_nout = n->sn_assoc_change.sac_outbound_streams;
            if (a->a_peer >= 0 && s->s_peers[a->a_peer].p_assoc == a->a_id)
                s->s_peers[a->a_peer].p_nout = a->a_nout;
            mf_sctp_hs_flush(s, a);
            return;
        case SCTP_COMM_LOST:
            if (a)
                mf_sctp_assoc_lost(s, a, false, "communication lost: no path answers");
            return;
        case SCTP_CANT_STR_ASSOC:
            if (a)
                mf_sctp_assoc_lost(s, a, false, "cannot start the association: no answer");
            return;
        case SCTP_RESTART:
            if (a)
                mf_sctp_assoc_lost(s, a, false, "the peer restarted");
            return;
        case SCTP_SHUTDOWN_COMP:
            if (a)
                mf_sctp_assoc_lost(s, a, true, "shut down");
            return;
        default:
            return;
        }
    case SCTP_SHUTDOWN_EVENT:
        /* The association lives on for the SHUTDOWN ACK and COMPLETE. Its record is kept until
         * usrsctp reports it gone: closing the socket before that lets usrsctp's receive thread
         * deliver the last notification to a socket being freed (a crash inside usrsctp, seen
         * under ThreadSanitizer's timing). */
        if (a && !a->a_draining) {
            mf_sctp_assoc_unuse(s, a, true, "shut down by the peer");
            a->a_draining = true;
        }
        return;
    case SCTP_PEER_ADDR_CHANGE: {
        if (pc->pc_len < sizeof n->sn_paddr_change || !a)
            return;
        char ip[INET_ADDRSTRLEN] = "?";
        const struct sockaddr_in *sin = (const void *)&n->sn_paddr_change.spc_aaddr;
        if (sin->sin_family == AF_INET)
            inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
        unsigned held;
        if (mf_ratelimit_pass(&s->s_rl_path, mf_clock_s(), &held))
            mf_verbose("%s: path to rank %d via %s %s (%u more path changes)", s->s_base.name,
                       a->a_peer, ip, mf_sctp_path_state(n->sn_paddr_change.spc_state), held);
        uint32_t st = n->sn_paddr_change.spc_state;
        if (s->s_cmt && sin->sin_family == AF_INET && st != SCTP_ADDR_MADE_PRIM &&
            st != SCTP_ADDR_ADDED && st != SCTP_ADDR_REMOVED)
            mf_sctp_cmt_path(s, a, sin->sin_addr,
                             st != SCTP_ADDR_AVAILABLE && st != SCTP_ADDR_CONFIRMED);
        return;
    }
    default:
        return;
    }
}

int mf_sctp_piece_in(mf_sctp *s, mf_sctp_piece *pc)
{
    if (pc->pc_flags & MSG_NOTIFICATION) {
        mf_sctp_notification_in(s, pc);
        mf_sctp_piece_free(pc);
    } else if (s->s_closing) {
        mf_sctp_piece_free(pc);
    } else {
        mf_sctp_data_in(s, pc);
    }
    return 1;
}

int mf_sctp_housekeeping(mf_sctp *s)
{
    double now = mf_clock_s();
    if (now < s->s_next_sweep)
        return 0;
    s->s_next_sweep = now + 0.25;
    int n = 0;
    for (mf_sctp_assoc *a = s->s_assocs, *next; a; a = next) {
        next = a->a_next;
        if (a->a_counted && now - a->a_since > s->s_auth_timeout) {
            mf_sctp_refuse(s, a, "it did not authenticate in time");
            n++;
        }
    }
    return n;
}

/* Debugging aid (sctp_test.c prints it when frames go missing): every peer's order state and
 * every association's handshake and partial messages, on stderr. */
void mf_sctp_dump(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    for (int r = 0; r < s->s_npeers; r++) {
        mf_sctp_peer *p = &s->s_peers[r];
        for (int i = 0; i < p->p_nctx; i++)
            fprintf(stderr, "peer %d ctx %u tx %u rx %u\n", r, p->p_ctx[i].c_ctx, p->p_ctx[i].c_tx,
                    p->p_ctx[i].c_rx);
        int nw = 0;
        uint32_t lo = UINT32_MAX;
        for (mf_sctp_msg *m = p->p_wait; m; m = m->m_next, nw++)
            lo = m->m_seq < lo ? m->m_seq : lo;
        fprintf(stderr, "peer %d assoc %u waiting %d lowest %u queued %d\n", r,
                (unsigned)p->p_assoc, nw, lo, p->p_head != NULL);
    }
    for (mf_sctp_assoc *a = s->s_assocs; a; a = a->a_next) {
        fprintf(stderr, "assoc %u peer %d dial %d i %d r %d held %zu\n", (unsigned)a->a_id,
                a->a_peer, a->a_dial_peer, a->a_istate, a->a_rstate, a->a_held_bytes);
        for (int i = 0; i < MF_SCTP_STREAMS; i++)
            if (a->a_asm[i] && (a->a_asm[i]->as_cur || a->a_asm[i]->as_head_got))
                fprintf(stderr, "  sid %d partial: head %zu bytes %zu\n", i,
                        a->a_asm[i]->as_head_got,
                        a->a_asm[i]->as_cur ? a->a_asm[i]->as_cur->m_bytes : 0);
    }
}
