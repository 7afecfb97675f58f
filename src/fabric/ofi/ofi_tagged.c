/*
 * ofi_tagged.c — tag matching offloaded to libfabric (FI_TAGGED): the provider side of the
 * optional tagged ops of fabric.h (tagged_enable, tsend, trecv, tprobe, tcancel, tiov_max).
 *
 * Contract. An MPI envelope is packed into the provider's tag bits (W of them: the highest bit
 * of ep_attr->mem_tag_format, 64 when it says nothing), low to high:
 *   bits [0, 31)          the MPI tag (0..MPI_TAG_UB, 2^31 - 1: MPI_TAG_UB is never lowered;
 *                         a provider with fewer bits keeps the message path, saying so)
 *   bits [31, 31 + S)     the sender's rank in the communicator, S = bits of the world size
 *   bits [31 + S, + K)    the message's sequence number towards its receiver, mod 2^K (K up to
 *                         16, leaving 14 bits or more for contexts; always ignored by
 *                         receives): what lets a receiver tell which of several messages of
 *                         one envelope a sender's MPI_Cancel names, where the provider does
 *                         not report remote CQ data to a peek (tcp;ofi_rxm does not)
 *   bits [.., W - 1)      the context id (communicator, + MF_CTX_COLL for collectives)
 *   bit  W - 1            protocol: a synchronous send; the receiver answers with a SYNC_ACK
 *                         frame of the message path naming the sender's request id, which the
 *                         send carries as remote CQ data
 * MPI_ANY_SOURCE and MPI_ANY_TAG are ignore bits of the receive; the protocol bit is always
 * ignored. The provider matches receives in posting order and a sender's messages in sending
 * order (FI_ORDER_SAS, asked for in the hints), eager or by its own rendezvous alike.
 *
 * Sends: fi_tinject from the caller's buffer when it fits the inject size and nothing waits
 * (MF_FABRIC_DONE), else fi_tsendmsg through the wait FIFO (ofi_post.c), completing when the
 * provider is done with the buffer. Receives: fi_trecvmsg (FI_CLAIM for a message an earlier
 * FI_PEEK | FI_CLAIM took); probes: fi_trecvmsg with FI_PEEK (FI_ENOMSG: nothing). Pieces beyond
 * the provider's iov_limit bounce through one buffer. Every receive ends with a shared 64 KiB
 * spill piece (o_tspill), so messages up to that much longer than the receive are not
 * truncated by the provider (tcp;ofi_rxm 1.17 mishandles a truncated eager message); longer
 * ones come as a CQ error entry FI_ETRUNC (olen more than posted), cancel as FI_ECANCELED;
 * mf_ofi_tagged_error turns them into completions, with the bytes that fit the caller's pieces
 * as landed and the message's size. The libfabric context of an operation is the tmsg's tm_scratch
 * (mf_ofi_top), so the caller's struct is all the state there is: no allocation per message.
 *
 * Offload needs: not the shm provider (see mf_ofi_tagged_setup), FI_TAGGED granted, no FI_MR_LOCAL (user buffers are not registered), the tag
 * layout above to fit, MANIFOLD_OFI_TAGGED not off, and the p2p layer's word that this instance
 * carries all point-to-point traffic (tagged_enable). Our own address goes into the AV as the
 * own rank's (messages to self go through the endpoint too, so MPI_ANY_SOURCE needs no second
 * matching engine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/state.h"
#include "fabric/ofi/ofi.h"

#define MF_OFI_TAG_BITS 31
#define MF_OFI_TAG_MASK ((UINT64_C(1) << MF_OFI_TAG_BITS) - 1)
/* Pieces of one tagged operation at most (more bounce), and the spill buffer's size. */
#define MF_OFI_TIOV_MAX 8
#define MF_OFI_SPILL (64 * 1024)

/* The fabric's part of an mf_fabric_tmsg (its tm_scratch). */
typedef struct mf_ofi_top {
    mf_ofi_op t_op;   /* first: the libfabric context; o_kind MF_OFI_TSEND/TRECV/TPEEK */
    void *t_bounce;   /* the pieces gathered into one buffer (iov_limit), or NULL */
    uint64_t t_match; /* tag */
    uint64_t t_ignore;
    bool t_claim; /* trecv of a claimed message / tprobe that claims */
} mf_ofi_top;

_Static_assert(sizeof(mf_ofi_top) <= sizeof(((mf_fabric_tmsg *)0)->tm_scratch),
               "mf_fabric_tmsg.tm_scratch must hold ofi's operation");
_Static_assert(offsetof(mf_fabric_tmsg, tm_scratch) == 0, "tm_scratch must come first");

static inline mf_ofi_top *mf_ofi_top_of(mf_fabric_tmsg *m)
{
    return (mf_ofi_top *)(void *)m->tm_scratch;
}

static inline mf_fabric_tmsg *mf_ofi_tmsg_of(mf_ofi_op *op)
{
    return (mf_fabric_tmsg *)(void *)op;
}

/* Bits needed for ranks 0..n-1. */
static int mf_ofi_bits_for(int n)
{
    int b = 1;
    while (b < 31 && (1 << b) < n)
        b++;
    return b;
}

/* Called from getinfo: whether the instance can offload at all (else o_twhy says why), and the
 * layout of its tag bits. */
void mf_ofi_tagged_setup(mf_ofi *o)
{
    const char *mode = mf_config_str("MANIFOLD_OFI_TAGGED");
    o->o_tmode = strcmp(mode, "on") == 0 ? 1 : strcmp(mode, "off") == 0 ? -1 : 0;
    if (o->o_tmode < 0) {
        snprintf(o->o_twhy, sizeof o->o_twhy, "MANIFOLD_OFI_TAGGED=off");
        return;
    }
    if (!(o->o_info->caps & FI_TAGGED)) {
        snprintf(o->o_twhy, sizeof o->o_twhy, "the provider has no FI_TAGGED");
        return;
    }
    if (strcmp(o->o_prov, "shm") == 0) {
        /* seen with libfabric 1.17: ranks that send to each other at once, each message
         * arriving before its receive is posted, lose one of them for good (ofi_tagged's
         * wildcard case hangs in about half the runs; the message path, whose receives are
         * posted in advance, does not) */
        snprintf(o->o_twhy, sizeof o->o_twhy,
                 "the shm provider loses unexpected tagged messages of ranks that send to each "
                 "other at once");
        return;
    }
    if (o->o_mr_mode & FI_MR_LOCAL) {
        snprintf(o->o_twhy, sizeof o->o_twhy,
                 "the provider wants local registrations (FI_MR_LOCAL), not done for tagged "
                 "messages yet");
        return;
    }
    uint64_t fmt = o->o_info->ep_attr->mem_tag_format;
    int w = fmt ? 64 - __builtin_clzll(fmt) : 64;
    o->o_tsrc_bits = mf_ofi_bits_for(o->o_npeers);
    int ctx = w - 1 - MF_OFI_TAG_BITS - o->o_tsrc_bits;
    if (ctx < 2) {
        snprintf(o->o_twhy, sizeof o->o_twhy,
                 "the provider's %d tag bits do not fit a 31-bit MPI tag, %d bits of source "
                 "rank (world size %d), context ids and a protocol bit",
                 w, o->o_tsrc_bits, o->o_npeers);
        return;
    }
    /* the sequence bits: as many as leave 14 for context ids (Manifold's go up to 8191),
     * at most 16 */
    o->o_tseq_bits = ctx - 14 > 16 ? 16 : ctx - 14 > 0 ? ctx - 14 : 0;
    ctx -= o->o_tseq_bits;
    o->o_tctx_bits = ctx > 32 ? 32 : ctx;
    o->o_tseq_tx = calloc((size_t)o->o_npeers, sizeof *o->o_tseq_tx);
    if (!o->o_tseq_tx) {
        snprintf(o->o_twhy, sizeof o->o_twhy, "no memory");
        return;
    }
    o->o_tsync_bit = UINT64_C(1) << (w - 1);
    o->o_tiov = o->o_info->tx_attr->iov_limit < o->o_info->rx_attr->iov_limit
                    ? o->o_info->tx_attr->iov_limit
                    : o->o_info->rx_attr->iov_limit;
    if (o->o_tiov > MF_OFI_TIOV_MAX)
        o->o_tiov = MF_OFI_TIOV_MAX;
    if (o->o_tiov < 1)
        o->o_tiov = 1;
    o->o_tcap = true;
}

int mf_ofi_tagged_enable(mf_fabric *f, const char *why_not, bool *on, uint32_t *max_context)
{
    mf_ofi *o = mf_ofi_of(f);
    *on = false;
    *max_context = 0;
    if (o->o_tcap && why_not)
        snprintf(o->o_twhy, sizeof o->o_twhy, "%s", why_not);
    if (o->o_tcap && !why_not) {
        /* messages to our own rank go through our own address */
        if (o->o_self == FI_ADDR_NOTAVAIL) {
            unsigned char self[256];
            size_t slen = sizeof self;
            if (fi_getname(&o->o_ep->fid, self, &slen) != 0 ||
                fi_av_insert(o->o_av, self, 1, &o->o_self, 0, NULL) != 1) {
                o->o_self = FI_ADDR_NOTAVAIL;
                snprintf(o->o_twhy, sizeof o->o_twhy, "our own address is not in the AV");
            }
        }
        if (o->o_self != FI_ADDR_NOTAVAIL && o->o_tiov > 1 && !o->o_tspill &&
            !(o->o_tspill = malloc(MF_OFI_SPILL)))
            return mf_error(MPI_ERR_NO_MEM, "%s: no memory for the tagged spill buffer", f->name);
        if (o->o_self != FI_ADDR_NOTAVAIL) {
            o->o_addr[mf_g.rank] = o->o_self;
            o->o_tagged = true;
            *on = true;
            *max_context = (uint32_t)((UINT64_C(1) << o->o_tctx_bits) - 1);
            return MPI_SUCCESS;
        }
    }
    if (o->o_tmode > 0)
        return mf_error(MPI_ERR_OTHER,
                        "%s (libfabric provider %s): MANIFOLD_OFI_TAGGED=on, but tag matching "
                        "cannot be offloaded: %s",
                        f->name, o->o_prov, o->o_twhy);
    return MPI_SUCCESS;
}

int mf_ofi_tiov_max(mf_fabric *f)
{
    return (int)mf_ofi_of(f)->o_tiov;
}

/* Where the sequence bits start, and their mask there. */
static inline int mf_ofi_seq_shift(const mf_ofi *o)
{
    return MF_OFI_TAG_BITS + o->o_tsrc_bits;
}
static inline uint64_t mf_ofi_seq_mask(const mf_ofi *o)
{
    return ((UINT64_C(1) << o->o_tseq_bits) - 1) << mf_ofi_seq_shift(o);
}

/* The tag of an envelope (src and tag real ones; sequence 0). */
static inline uint64_t mf_ofi_tag(const mf_ofi *o, uint32_t context, int src, int tag)
{
    return (uint64_t)(uint32_t)tag | (uint64_t)(uint32_t)src << MF_OFI_TAG_BITS |
           (uint64_t)context << (mf_ofi_seq_shift(o) + o->o_tseq_bits);
}

/* The matched envelope of a completion's tag. */
static void mf_ofi_tag_decode(const mf_ofi *o, uint64_t t, mf_fabric_tmsg *m)
{
    m->tm_mtag = (int)(t & MF_OFI_TAG_MASK);
    m->tm_msrc = (int)((t >> MF_OFI_TAG_BITS) & ((UINT64_C(1) << o->o_tsrc_bits) - 1));
    m->tm_msync = (t & o->o_tsync_bit) != 0;
    m->tm_seq = o->o_tseq_bits ? (uint32_t)((t & mf_ofi_seq_mask(o)) >> mf_ofi_seq_shift(o)) |
                                     UINT32_C(0x80000000)
                               : 0;
}

static size_t mf_ofi_iov_len(const struct iovec *iov, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    return len;
}

/* The pieces of m as the provider takes them: m's own, or one bounce buffer (sends: filled). */
static int mf_ofi_t_iov(mf_ofi *o, mf_fabric_tmsg *m, bool send, struct iovec *one,
                        const struct iovec **iov, size_t *count)
{
    mf_ofi_top *t = mf_ofi_top_of(m);
    *iov = m->tm_iov;
    *count = (size_t)m->tm_niov;
    if ((size_t)m->tm_niov <= o->o_tiov - (o->o_tspill && !send ? 1 : 0))
        return MPI_SUCCESS;
    size_t len = mf_ofi_iov_len(m->tm_iov, m->tm_niov);
    if (!t->t_bounce) {
        t->t_bounce = malloc(len ? len : 1);
        if (!t->t_bounce)
            return mf_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of a tagged message",
                            o->o_base.name, len);
        if (send) {
            char *p = t->t_bounce;
            for (int i = 0; i < m->tm_niov; i++) {
                memcpy(p, m->tm_iov[i].iov_base, m->tm_iov[i].iov_len);
                p += m->tm_iov[i].iov_len;
            }
        }
    }
    *one = (struct iovec){t->t_bounce, len};
    *iov = one;
    *count = 1;
    return MPI_SUCCESS;
}

/* Hands a tagged operation to the provider (mf_ofi_post): 0, -FI_EAGAIN or an error. A
 * receive ends with the spill buffer as one more piece, so that a message up to MF_OFI_SPILL
 * bytes longer than the receive is not truncated by the provider (tcp;ofi_rxm 1.17 completes
 * a truncated eager message as a success of 0 bytes and loses the connection's framing); what
 * lands there only counts. */
ssize_t mf_ofi_tagged_post(mf_ofi *o, mf_ofi_op *op)
{
    mf_fabric_tmsg *m = mf_ofi_tmsg_of(op);
    mf_ofi_top *t = mf_ofi_top_of(m);
    struct iovec one, pieces[MF_OFI_TIOV_MAX + 1];
    const struct iovec *iov = NULL;
    size_t count = 0;
    if (op->o_kind != MF_OFI_TPEEK &&
        mf_ofi_t_iov(o, m, op->o_kind == MF_OFI_TSEND, &one, &iov, &count))
        return -FI_ENOMEM;
    if (op->o_kind == MF_OFI_TRECV && o->o_tspill && count < o->o_tiov) {
        memcpy(pieces, iov, count * sizeof *iov);
        pieces[count++] = (struct iovec){o->o_tspill, MF_OFI_SPILL};
        iov = pieces;
    }
    struct fi_msg_tagged msg = {.msg_iov = iov,
                                .iov_count = count,
                                .addr = FI_ADDR_UNSPEC,
                                .tag = t->t_match,
                                .ignore = t->t_ignore,
                                .context = &op->o_ctx};
    if (op->o_kind == MF_OFI_TSEND) {
        msg.addr = o->o_addr[op->o_peer];
        msg.data = m->tm_id;
        return fi_tsendmsg(o->o_ep, &msg, FI_COMPLETION | (m->tm_id ? FI_REMOTE_CQ_DATA : 0));
    }
    if (op->o_kind == MF_OFI_TPEEK)
        return fi_trecvmsg(o->o_ep, &msg, FI_COMPLETION | FI_PEEK | (t->t_claim ? FI_CLAIM : 0));
    return fi_trecvmsg(o->o_ep, &msg, FI_COMPLETION | (t->t_claim ? FI_CLAIM : 0));
}

static void mf_ofi_t_start(mf_ofi_top *t, int kind, int peer, uint64_t match, uint64_t ignore)
{
    t->t_op.o_kind = kind;
    t->t_op.o_peer = peer;
    t->t_op.o_next = NULL;
    t->t_bounce = NULL;
    t->t_match = match;
    t->t_ignore = ignore;
}

int mf_ofi_tsend(mf_fabric *f, int peer, mf_fabric_tmsg *m)
{
    mf_ofi *o = mf_ofi_of(f);
    if (o->o_fails.code[peer])
        return o->o_fails.code[peer];
    if (m->tm_tag < 0 || (uint32_t)m->tm_context >> o->o_tctx_bits ||
        (uint32_t)m->tm_src >> o->o_tsrc_bits)
        return mf_error(MPI_ERR_INTERN,
                        "%s: envelope (context %u, source %d, tag %d) does not fit the tag bits",
                        f->name, m->tm_context, m->tm_src, m->tm_tag);
    uint64_t tag = mf_ofi_tag(o, m->tm_context, m->tm_src, m->tm_tag);
    uint64_t seq = o->o_tseq_tx[peer] & ((UINT64_C(1) << o->o_tseq_bits) - 1);
    tag |= seq << mf_ofi_seq_shift(o);
    m->tm_seq = o->o_tseq_bits ? (uint32_t)seq | UINT32_C(0x80000000) : 0;
    if (!m->tm_sync && !o->o_wait_head && m->tm_niov <= 1) {
        size_t len = m->tm_niov ? m->tm_iov[0].iov_len : 0;
        if (len <= o->o_inject) {
            const void *buf = m->tm_niov ? m->tm_iov[0].iov_base : NULL;
            ssize_t rc = m->tm_id
                             ? fi_tinjectdata(o->o_ep, buf, len, m->tm_id, o->o_addr[peer], tag)
                             : fi_tinject(o->o_ep, buf, len, o->o_addr[peer], tag);
            if (rc == 0) {
                o->o_tseq_tx[peer]++;
                mf_fabric_count_tx_as(f, MF_MSG_EAGER, len);
                o->o_tinjects++;
                return MF_FABRIC_DONE;
            }
            if (rc != -FI_EAGAIN) {
                int code = mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_tinject to rank %d", peer);
                mf_ofi_peer_fail(o, peer, code);
                return code;
            }
        }
    }
    if (!m->tm_done)
        return MF_FABRIC_BUSY;
    mf_fabric_count_tx_as(f, MF_MSG_EAGER, mf_ofi_iov_len(m->tm_iov, m->tm_niov));
    o->o_tseq_tx[peer]++;
    mf_ofi_top *t = mf_ofi_top_of(m);
    mf_ofi_t_start(t, MF_OFI_TSEND, peer, tag | (m->tm_sync ? o->o_tsync_bit : 0), 0);
    o->o_tsends++;
    mf_ofi_submit(o, &t->t_op);
    return MF_FABRIC_PENDING;
}

/* The match and ignore bits of a receive or probe. */
static void mf_ofi_t_match(const mf_ofi *o, const mf_fabric_tmsg *m, uint64_t *match,
                           uint64_t *ignore)
{
    *ignore = o->o_tsync_bit | mf_ofi_seq_mask(o);
    int src = m->tm_src, tag = m->tm_tag;
    if (src == MPI_ANY_SOURCE) {
        *ignore |= ((UINT64_C(1) << o->o_tsrc_bits) - 1) << MF_OFI_TAG_BITS;
        src = 0;
    }
    if (tag == MPI_ANY_TAG) {
        *ignore |= MF_OFI_TAG_MASK;
        tag = 0;
    }
    *match = mf_ofi_tag(o, m->tm_context, src, tag);
}

int mf_ofi_trecv(mf_fabric *f, mf_fabric_tmsg *m, bool claimed)
{
    mf_ofi *o = mf_ofi_of(f);
    mf_ofi_top *t = mf_ofi_top_of(m);
    if (claimed) {
        /* the same context as the claiming probe: only the kind and the pieces change */
        t->t_op.o_kind = MF_OFI_TRECV;
        t->t_op.o_next = NULL;
        t->t_bounce = NULL;
    } else {
        uint64_t match, ignore;
        mf_ofi_t_match(o, m, &match, &ignore);
        mf_ofi_t_start(t, MF_OFI_TRECV, mf_g.rank, match, ignore);
    }
    t->t_claim = claimed;
    m->tm_cancelled = false;
    o->o_trecvs++;
    mf_ofi_submit(o, &t->t_op);
    return MF_FABRIC_PENDING;
}

int mf_ofi_tprobe(mf_fabric *f, mf_fabric_tmsg *m, bool claim)
{
    mf_ofi *o = mf_ofi_of(f);
    mf_ofi_top *t = mf_ofi_top_of(m);
    uint64_t match, ignore;
    mf_ofi_t_match(o, m, &match, &ignore);
    memset(t->t_op.o_ctx.internal, 0, sizeof t->t_op.o_ctx.internal);
    mf_ofi_t_start(t, MF_OFI_TPEEK, mf_g.rank, match, ignore);
    t->t_claim = claim;
    m->tm_found = false;
    mf_ofi_submit(o, &t->t_op);
    return MF_FABRIC_PENDING;
}

void mf_ofi_tcancel(mf_fabric *f, mf_fabric_tmsg *m)
{
    mf_ofi *o = mf_ofi_of(f);
    mf_ofi_top *t = mf_ofi_top_of(m);
    /* Still in our wait FIFO: never handed over, so it ends here. */
    for (mf_ofi_op **p = &o->o_wait_head, *prev = NULL; *p; prev = *p, p = &(*p)->o_next) {
        if (*p != &t->t_op)
            continue;
        *p = t->t_op.o_next;
        if (o->o_wait_tail == &t->t_op)
            o->o_wait_tail = prev;
        m->tm_cancelled = true;
        m->tm_len = m->tm_size = 0;
        m->tm_done(m, MPI_SUCCESS);
        return;
    }
    fi_cancel(&o->o_ep->fid, &t->t_op.o_ctx); /* the CQ says how it ended */
}

/* A tagged operation's completion. Receives: e->len bytes landed, the message had `size` (at
 * least e->len); only what fits the caller's pieces counts as landed. */
static void mf_ofi_tagged_end(mf_ofi *o, mf_ofi_op *op, const struct fi_cq_tagged_entry *e,
                              size_t size)
{
    mf_fabric_tmsg *m = mf_ofi_tmsg_of(op);
    mf_ofi_top *t = mf_ofi_top_of(m);
    if (op->o_kind == MF_OFI_TSEND) {
        o->o_tx_inflight--;
        free(t->t_bounce);
        t->t_bounce = NULL;
        m->tm_done(m, MPI_SUCCESS);
        return;
    }
    mf_ofi_tag_decode(o, e->tag, m);
    m->tm_id = (e->flags & FI_REMOTE_CQ_DATA) ? e->data : 0;
    m->tm_size = size > e->len ? size : e->len;
    if (op->o_kind == MF_OFI_TPEEK) {
        m->tm_found = true;
        m->tm_done(m, MPI_SUCCESS);
        return;
    }
    size_t room = mf_ofi_iov_len(m->tm_iov, m->tm_niov);
    m->tm_len = e->len < room ? e->len : room;
    if (t->t_bounce) { /* into the caller's pieces */
        const char *p = t->t_bounce;
        size_t left = m->tm_len;
        for (int i = 0; i < m->tm_niov && left; i++) {
            size_t n = m->tm_iov[i].iov_len < left ? m->tm_iov[i].iov_len : left;
            memcpy(m->tm_iov[i].iov_base, p, n);
            p += n;
            left -= n;
        }
        free(t->t_bounce);
        t->t_bounce = NULL;
    }
    mf_fabric_count_rx_as(&o->o_base, MF_MSG_EAGER, m->tm_len);
    m->tm_done(m, MPI_SUCCESS);
}

void mf_ofi_tagged_done(mf_ofi *o, mf_ofi_op *op, const struct fi_cq_tagged_entry *e)
{
    mf_ofi_tagged_end(o, op, e, e->len);
}

/* A tagged operation's CQ error entry: truncation, cancel and "no message" (probes) are
 * outcomes; anything else fails the operation (a send also its peer) with a message naming
 * the provider, the call and the reason. */
void mf_ofi_tagged_error(mf_ofi *o, mf_ofi_op *op, const struct fi_cq_err_entry *e,
                         const char *prov)
{
    mf_fabric_tmsg *m = mf_ofi_tmsg_of(op);
    mf_ofi_top *t = mf_ofi_top_of(m);
    if (op->o_kind == MF_OFI_TPEEK && e->err == FI_ENOMSG) {
        m->tm_found = false;
        m->tm_done(m, MPI_SUCCESS);
        return;
    }
    if (op->o_kind == MF_OFI_TRECV && (e->err == FI_ETRUNC || e->err == FI_ECANCELED)) {
        struct fi_cq_tagged_entry ok = {
            .flags = e->flags, .len = e->len, .data = e->data, .tag = e->tag};
        if (e->err == FI_ECANCELED) {
            free(t->t_bounce);
            t->t_bounce = NULL;
            m->tm_cancelled = true;
            m->tm_len = m->tm_size = 0;
            m->tm_done(m, MPI_SUCCESS);
            return;
        }
        /* olen: what did not fit the posted pieces (spill included); providers differ on
         * whether len is what landed or the message's size */
        size_t posted = mf_ofi_iov_len(m->tm_iov, m->tm_niov) + (o->o_tspill ? MF_OFI_SPILL : 0);
        mf_ofi_tagged_end(o, op, &ok, posted + e->olen);
        return;
    }
    if (op->o_kind == MF_OFI_TSEND)
        o->o_tx_inflight--;
    free(t->t_bounce);
    t->t_bounce = NULL;
    int code = mf_error(MPI_ERR_OTHER, "%s (libfabric provider %s): %s with rank %d failed: %s%s",
                        o->o_base.name, o->o_prov, mf_ofi_op_name(op), op->o_peer,
                        o->o_lib->strerror(e->err), prov);
    if (op->o_kind == MF_OFI_TSEND)
        mf_ofi_peer_fail(o, op->o_peer, code);
    m->tm_done(m, code);
}
