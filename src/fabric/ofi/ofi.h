/*
 * ofi.h — internals of the ofi fabric: libfabric RDM endpoints (the contract it implements is
 * fabric.h; what the providers here are like is in docs/FABRICS.md, "ofi").
 *
 * One instance = one provider and domain (fi_getinfo with the provider MANIFOLD_OFI_PROVIDER
 * names, else whatever FI_PROVIDER lets libfabric offer, else "tcp;ofi_rxm"; the domain
 * MANIFOLD_OFI_DOMAIN names, else for IP providers the first IPv4 domain on an interface the
 * instance's interfaces select ("ofi:eth1", else MANIFOLD_IF), loopback last, else the
 * provider's first): a fabric, a domain, one
 * reliable datagram endpoint (FI_EP_RDM) with one completion queue for everything, and an
 * address vector (FI_AV_TABLE) into which every reachable peer's address goes at start. The
 * address (fi_getname) is published as "mf.<instance>.<rank>" in hex.
 *
 * Message path: every frame is one libfabric message: the 64-byte wire header followed by its
 * payload, sent with remote CQ data holding the sender's world rank (low 32 bits) and its
 * sequence number towards this receiver (high 32 bits): the receiver learns the source from its
 * completion, and delivers each peer's frames in sequence order. (Frames are not matched by the
 * provider — Manifold's own matching in src/p2p does that.) Sequence numbers are needed although
 * FI_ORDER_SAS is asked for: SAS orders how messages are matched to receive buffers, not the
 * order of their completions — tcp;ofi_rxm completes a small message before a larger one sent
 * earlier that it moves by its own rendezvous. A frame that completes early is copied aside
 * (o_held) and its buffer posted again at once, so early frames can never hold every buffer.
 * A frame that fits the provider's inject size (in the short form where it can) goes with fi_injectdata
 * (complete at once); others are copied into a transmit buffer and sent with fi_senddata, so
 * `send` always returns MF_FABRIC_DONE. Receives: MF_OFI_RX_BUFS
 * buffers of header + max_frame bytes stay posted; a frame is copied from its buffer into the
 * sink the p2p layer chose and the buffer is posted again. max_frame is the buffer's payload,
 * so the push rendezvous (DATA frames) also fits.
 *
 * Direct receive (fabric.h rx_peek/rx_take; ofi_direct.c): a blocking receive waiting on one
 * peer looks for that peer's next frame (sequence o_rx_seq) among the frames held aside and
 * the staged completions; when there is none it reads a few completions from the CQ itself.
 * Everything it reads is staged (o_stage, in CQ order) and progress handles the staged
 * completions before it reads the CQ again, so nothing is lost or reordered; rx_take copies an
 * EAGER frame's payload out of its receive buffer and posts the buffer again, as progress
 * would, and marks its staged entry consumed. Refused inside progress (an upcall's blocking
 * receive would take frames under the one being delivered) and under a wrapper that takes our
 * frames (f->upcalls: rails, fault injection).
 *
 * Rendezvous: where the provider has FI_RMA, rkey_make registers the sender's buffer for remote
 * reads (fi_mr_reg, honouring mr_mode: FI_MR_VIRT_ADDR puts the buffer's address in the key,
 * otherwise offsets start at 0; FI_MR_PROV_KEY takes the provider's key, otherwise ours;
 * FI_MR_LOCAL registers local buffers too; FI_MR_ENDPOINT binds the region to the endpoint) and
 * rget pulls with fi_read. The rkey packs (key + 1) in its top 16 bits and the address (< 2^48)
 * below; a provider key that does not fit makes rkey_make fail, which sends that message by
 * the push protocol instead (counted: o_rkey_fallbacks, shown by --report-fabrics).
 *
 * Native one-sided (fabric.h: rma_key, rput; used by src/rma/rma_native.c): rma_key registers a
 * window for remote reads and writes into the same key slots (rkey packing as above); rput is
 * rget's mirror, one fi_writemsg per local piece with FI_DELIVERY_COMPLETE, so its completion
 * is the remote completion MPI_Win_flush needs (hints ask FI_WRITE | FI_REMOTE_WRITE with the
 * reads).
 *
 * Native atomics (fabric.h: atomic_max, ratomic; ofi_atomic.c): fi_atomic, fi_fetch_atomic and
 * fi_compare_atomic where fi_query_atomic grants the (op, type), into the same registrations,
 * the own rank included (o_self); in issue order per peer.
 *
 * Flow control: an operation the provider refuses with -FI_EAGAIN waits in one FIFO (o_wait),
 * retried after the completion queue was read on the next progress pass; frames sent while it
 * is not empty queue behind it, which keeps their order.
 *
 * Progress and sleeping: every pass reads the completion queue (manual progress: this is also
 * what moves the provider's own connection set-up and the target side of fi_read). Where the
 * provider gives the completion queue a wait fd (FI_WAIT_FD, fi_control FI_GETWAIT) it is the
 * wait fd and sleep_prepare asks fi_trywait; elsewhere (shm) the engine polls every
 * MANIFOLD_OFI_POLL_US microseconds while asleep. While a window is exposed (rma_key) sleeps
 * are bounded by MANIFOLD_OFI_RMA_POLL_US on every provider: a peer's put, get or atomic
 * needs our progress (manual progress) and wakes no fd (seen on tcp;ofi_rxm: the CQ fd stays
 * quiet for an incoming fi_write, and an 8 B put with its flush took 90 us against a sleeping
 * target, 12 us against a polling one). Sleeping threads get a 1 us timer slack, without which
 * a bounded sleep lasts up to 50 us longer.
 *
 * Tagged offload (ofi_tagged.c): where the provider has FI_TAGGED and the p2p layer finds this
 * instance carrying all point-to-point traffic (src/p2p/offload.c), MPI envelopes go into the
 * provider's tag bits and the provider matches them (fi_tinject/fi_tsendmsg, fi_trecvmsg,
 * FI_PEEK/FI_CLAIM, fi_cancel); the message path above stays for every other frame. The CQ is
 * opened with FI_CQ_FORMAT_TAGGED for the matched tags.
 *
 * Trust: libfabric's tcp provider has no authentication (unlike the tcp fabric's handshake).
 * Frames are validated (wire header, length, source rank) before anything is done with them,
 * so a stranger can disturb a job but not crash it; use ofi on trusted networks.
 */
#ifndef MF_FABRIC_OFI_OFI_H
#define MF_FABRIC_OFI_OFI_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdbool.h>

#include "core/ratelimit.h"
#include "fabric/fabric.h"

/* libfabric's own functions, from the library loaded at run time (ofi_lib.c). */
typedef struct mf_ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info); /* NULL: a new, empty one */
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
    char *(*tostr)(const void *data, enum fi_type datatype);
} mf_ofi_lib;

/* Loads libfabric once per process; NULL with *why saying why it cannot. */
const mf_ofi_lib *mf_ofi_lib_load(const char **why);

/* The short form of a frame (every eager message whose other header fields are zero and that
 * then fits the provider's inject size): type, flags, context, src, tag, sreq (little-endian,
 * 1+1+4+4+4+8 bytes) then the payload, whose length is the message's less the 22 bytes; the
 * remote CQ data says so with MF_OFI_CQ_SHORT in its rank half. Small: the shm provider moves
 * messages of up to 32 bytes faster (about 0.25 against 0.30 us one way here), and 22 + 8 fit. */
#define MF_OFI_SHORT_HDR 22
#define MF_OFI_CQ_SHORT (UINT32_C(1) << 31)

/* How often a rank with a core of its own polls while it sleeps without a CQ fd
 * (MANIFOLD_OFI_POLL_US's default), and the progress thread while a window is exposed (the
 * default of MANIFOLD_OFI_RMA_POLL_US keeps application threads from sleeping at all). */
#define MF_OFI_POLL_US_DEFAULT 2

/* Completions a direct receive may stage (read from the CQ, handled later by progress). */
#define MF_OFI_STAGE 64
/* Completions a direct receive reads from the CQ at once. */
#define MF_OFI_STAGE_READ 8

/* Receive buffers kept posted, and the payload each takes (max_frame). */
#define MF_OFI_RX_BUFS 32
#define MF_OFI_FRAME (64 * 1024)
/* Transmit buffers kept for reuse once their sends completed (more are allocated on demand). */
#define MF_OFI_TX_CACHE 64
/* Registrations for remote reads at once (the key's 16 bits). */
#define MF_OFI_MAX_KEYS 0xffff
/* An rkey: (key + 1) above MF_OFI_KEY_BITS, the address (FI_MR_VIRT_ADDR) below. */
#define MF_OFI_KEY_BITS 48
#define MF_OFI_ADDR_MASK ((UINT64_C(1) << MF_OFI_KEY_BITS) - 1)

enum mf_ofi_kind {
    MF_OFI_SEND = 1,
    MF_OFI_RECV,
    MF_OFI_READ,
    MF_OFI_ATOMIC,
    MF_OFI_TSEND, /* tagged offload (ofi_tagged.c): an mf_fabric_tmsg */
    MF_OFI_TRECV,
    MF_OFI_TPEEK,
};

/* What every operation handed to libfabric starts with: its context is the operation. */
typedef struct mf_ofi_op {
    struct fi_context2 o_ctx; /* first: libfabric gives back &o_ctx as op_context */
    int o_kind;               /* enum mf_ofi_kind */
    int o_peer;
    struct mf_ofi_op *o_next; /* on the wait FIFO or a free list */
} mf_ofi_op;

/* A frame being sent (MF_OFI_SEND), or a receive buffer (MF_OFI_RECV). */
typedef struct mf_ofi_buf {
    mf_ofi_op b_op;
    size_t b_len;        /* send: bytes in b_data (header + payload) */
    uint64_t b_cqdata;   /* send: the remote CQ data (sequence and our rank) */
    struct fid_mr *b_mr; /* FI_MR_LOCAL: its registration */
    void *b_desc;
    bool b_posted; /* receive: in the provider's hands */
    unsigned char b_data[];
} mf_ofi_buf;

/* One rget (MF_OFI_READ pieces point to it). */
typedef struct mf_ofi_get {
    mf_fabric_done *g_done;
    int g_left;   /* pieces not completed */
    int g_status; /* first error */
} mf_ofi_get;

/* One fi_read of an rget: a piece of the local iovecs. */
typedef struct mf_ofi_piece {
    mf_ofi_op p_op;
    mf_ofi_get *p_get;
    void *p_buf;
    size_t p_len;
    uint64_t p_raddr, p_key;
    struct fid_mr *p_mr; /* FI_MR_LOCAL */
    bool p_write;        /* an rput piece: fi_writemsg with FI_DELIVERY_COMPLETE */
} mf_ofi_piece;

/* One provider atomic of a ratomic (ofi_atomic.c): a piece of at most the provider's count. */
typedef struct mf_ofi_atom {
    mf_ofi_op a_op; /* kind MF_OFI_ATOMIC */
    mf_ofi_get *a_get;
    struct mf_ofi_atom *a_qnext; /* per-peer order queue (unordered providers) */
    mf_fabric_atomic a_args;     /* this piece's part of the operation */
    uint64_t a_raddr, a_key;
    struct fid_mr *a_mr[3]; /* FI_MR_LOCAL: source, compare, result */
    void *a_scratch;        /* o_afetch: where a plain atomic's unused old values go */
} mf_ofi_atom;

/* A frame that arrived ahead of its turn, copied aside until its predecessors are delivered. */
typedef struct mf_ofi_held {
    struct mf_ofi_held *h_next;
    int h_peer;
    uint32_t h_seq;
    mf_wire_hdr h_hdr;
    unsigned char h_data[]; /* the payload */
} mf_ofi_held;

/* A registration handed out by rkey_make. */
typedef struct mf_ofi_key {
    struct fid_mr *k_mr;
    uint64_t k_rkey; /* 0: slot free */
    bool k_exposed;  /* a window's (rma_key): peers may write it any time */
} mf_ofi_key;

typedef struct mf_ofi {
    mf_fabric o_base;        /* first: the registry sees an mf_fabric ("ofi0") */
    const mf_ofi_lib *o_lib; /* libfabric's functions (NULL until open loaded it) */
    struct fi_info *o_info;
    struct fid_fabric *o_fabric;
    struct fid_domain *o_domain;
    struct fid_cq *o_cq;
    struct fid_av *o_av;
    struct fid_ep *o_ep;
    char o_prov[64];    /* provider name ("tcp;ofi_rxm") */
    char o_dom[64];     /* domain name ("lo") */
    int o_wait_fd;      /* the CQ's fd, -1: none (timed poll) */
    int o_poll_us;      /* sleeping without a fd: MANIFOLD_OFI_POLL_US */
    int o_rma_poll_us;  /* sleeping while a window is exposed: MANIFOLD_OFI_RMA_POLL_US; -1 none */
    int o_nexposed;     /* window registrations (rma_key) alive */
    bool o_rma;         /* FI_RMA: rendezvous by fi_read */
    uint64_t o_mr_mode; /* the provider's mr_mode */
    size_t o_inject;    /* the provider's inject size */
    int o_npeers;
    fi_addr_t *o_addr;          /* by world rank; FI_ADDR_NOTAVAIL when unreachable */
    uint32_t *o_tx_seq;         /* by world rank: sequence number of the next frame sent */
    uint32_t *o_rx_seq;         /* by world rank: sequence number of the next frame to deliver */
    mf_ofi_held *o_held;        /* frames that arrived early */
    uint64_t o_early;           /* how many did */
    mf_fabric_failures o_fails; /* failed peers; their reports wait for progress */
    mf_ofi_buf *o_rx[MF_OFI_RX_BUFS];
    int o_rx_unposted;      /* receive buffers the provider refused (EAGAIN) for now */
    mf_ofi_buf *o_rx_later; /* one whose frame was taken directly, to post at the next look */
    mf_ofi_buf *o_tx_free;  /* cached transmit buffers (via b_op.o_next) */
    int o_tx_nfree;
    long o_tx_inflight; /* sends and reads handed to the provider, not completed */
    mf_ofi_op *o_wait_head, *o_wait_tail; /* refused with -FI_EAGAIN, to retry in order */
    mf_ofi_key *o_keys;                   /* MF_OFI_MAX_KEYS slots, allocated on first rkey_make */
    int o_key_hint;                       /* where to look for a free slot first */
    uint64_t o_rkey_fallbacks;            /* rkey_make refusals (message sent by push instead) */
    uint64_t o_injects, o_reads, o_writes;
    /* native atomics (ofi_atomic.c): FI_ATOMIC granted; whether the provider orders atomics to
     * one peer (FI_ORDER_ATOMIC_RAR|RAW|WAR|WAW), else they go one at a time per peer through
     * o_aq; the provider's element limits by [fetch][op][type] (0: not supported); our own
     * address in the AV (atomics on the own window part go through the provider too) */
    bool o_atomic, o_aordered, o_afetch;
    const char *o_awhy; /* why there are no native atomics; NULL: there are */
    size_t o_amax[2][MF_AOP_COUNT][MF_AT_COUNT];
    fi_addr_t o_self;
    mf_ofi_atom **o_aq_head, **o_aq_tail; /* by world rank */
    int *o_abusy;                         /* by world rank: atomics handed to the provider */
    uint64_t o_atomics;
    /* tag matching offloaded (ofi_tagged.c): MANIFOLD_OFI_TAGGED (1 on, 0 auto, -1 off); the
     * provider can (o_tcap) and the p2p layer switched it on (o_tagged), else why not; the tag
     * layout (source and context bits, the protocol bit); pieces per operation; counters */
    int o_tmode;
    bool o_tcap, o_tagged;
    char o_twhy[160];
    int o_tsrc_bits, o_tctx_bits, o_tseq_bits;
    uint32_t *o_tseq_tx; /* by world rank: sequence number of the next tagged message */
    uint64_t o_tsync_bit;
    size_t o_tiov;
    void *o_tspill; /* where the part of a too long message that the receive lacks goes */
    uint64_t o_tsends, o_tinjects, o_trecvs;
    /* direct receive (ofi_direct.c): completions read by rx_peek, in CQ order (a ring; an
     * entry rx_take consumed has op_context NULL); progress passes running (rx_peek refuses
     * inside them); early frames may have become deliverable (a direct take advanced
     * o_rx_seq: progress delivers them); frames taken directly; the staged frame rx_peek
     * decoded last (its buffer, place, header and payload), so rx_take does not decode it again */
    struct fi_cq_tagged_entry o_stage[MF_OFI_STAGE];
    int o_stage_head, o_stage_n;
    const mf_ofi_buf *o_peeked;
    int o_peeked_slot; /* its place in the stage when decoded (checked before use) */
    mf_wire_hdr o_peeked_hdr;
    const unsigned char *o_peeked_payload;
    int o_in_progress;
    bool o_held_ready;
    uint64_t o_direct;
    bool o_closing;             /* close: errors of the peers' goodbyes are not failures */
    mf_ratelimit o_rl_stranger; /* frames that fail validation */
} mf_ofi;

static inline mf_ofi *mf_ofi_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_ofi, o_base);
}

/* Shared helpers (ofi.c): an error code naming the instance, its provider, the operation and
 * libfabric's reason; registering local memory where the provider asks for it (FI_MR_LOCAL,
 * else *mr and *desc NULL); monotonic seconds. */
int mf_ofi_err(mf_ofi *o, int err_class, ssize_t fi_rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int mf_ofi_reg_local(mf_ofi *o, void *buf, size_t len, uint64_t access, struct fid_mr **mr,
                     void **desc);

/* Provider selection and set-up (ofi_setup.c): the provider and domain into o_info; then
 * fabric, domain, CQ, AV and the enabled endpoint with its receive buffers posted. */
int mf_ofi_getinfo(mf_ofi *o);
int mf_ofi_open_ep(mf_ofi *o);

/* Address exchange (ofi_addr.c): publishing ours from open; the start and reachable ops. */
int mf_ofi_addr_publish(mf_ofi *o);
int mf_ofi_start(mf_fabric *f);
bool mf_ofi_reachable(mf_fabric *f, int peer);

/* The message path (ofi_msg.c): the send op; a frame arrived in receive buffer b (len bytes,
 * remote CQ data cqdata), validated and delivered in its peer's order. Buffers: a frame's send
 * (MF_OFI_SEND) or receive (MF_OFI_RECV) buffer of header + max_frame bytes, registered under
 * FI_MR_LOCAL (NULL without memory); a transmit buffer back to the cache; posting a receive
 * buffer (false when the provider refused it for now, -FI_EAGAIN). */
int mf_ofi_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov, int niov,
                mf_fabric_done *done);
void mf_ofi_arrived(mf_ofi *o, mf_ofi_buf *b, size_t len, uint64_t cqdata);
/* Decodes and checks a received message of len bytes (the short form when short_form) into *h
 * and sets *payload: NULL, or why it is no frame. Delivers, in order, every early frame whose
 * turn has come (after a direct take advanced a peer's sequence). */
const char *mf_ofi_parse(const unsigned char *m, size_t len, bool short_form, mf_wire_hdr *h,
                         const unsigned char **payload);
void mf_ofi_release_held(mf_ofi *o);
mf_ofi_buf *mf_ofi_buf_new(mf_ofi *o, int kind);
void mf_ofi_buf_free(mf_ofi_buf *b);
void mf_ofi_tx_put(mf_ofi *o, mf_ofi_buf *b);
bool mf_ofi_rx_post(mf_ofi *o, mf_ofi_buf *b);
/* Posts again the receive buffers the provider refused (o_rx_unposted). */
void mf_ofi_rx_repost(mf_ofi *o);
/* The receive buffer whose frame a direct receive took is posted again later (o_rx_later), at
 * the next rx_peek or progress pass: the caller's answer to that frame goes out first. One
 * waits at a time; defer posts the one waiting before, post_later posts it. */
void mf_ofi_rx_defer(mf_ofi *o, mf_ofi_buf *b);
void mf_ofi_rx_post_later(mf_ofi *o);

/* Posting (ofi_post.c). Hands an operation to the provider: 0, -FI_EAGAIN, or another
 * libfabric error. */
ssize_t mf_ofi_post(mf_ofi *o, mf_ofi_op *op);
/* Posts it unless operations wait (then, or on -FI_EAGAIN, it waits behind them in o_wait). */
void mf_ofi_submit(mf_ofi *o, mf_ofi_op *op);
/* Appends an operation to the wait FIFO; retries what waits, in order, until the provider
 * refuses again (how many left the FIFO); the libfabric call behind an operation. */
void mf_ofi_wait_push(mf_ofi *o, mf_ofi_op *op);
int mf_ofi_wait_drain(mf_ofi *o);
const char *mf_ofi_op_name(const mf_ofi_op *op);

/* Registrations and RMA (ofi_rma.c): the rkey_make, rkey_release, rma_key, rget and rput ops;
 * a read/write piece's completion (status: MPI_SUCCESS or an error code); ending one piece of
 * an rget/rput/ratomic, and the whole with its last piece. */
int mf_ofi_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
void mf_ofi_rkey_release(mf_fabric *f, uint64_t rkey);
int mf_ofi_rma_key(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
int mf_ofi_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done);
int mf_ofi_rput(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done);
void mf_ofi_read_piece_done(mf_ofi *o, mf_ofi_piece *p, int status);
void mf_ofi_piece_end(mf_ofi_get *g, int status);

/* Progress and sleeping (ofi_progress.c): the progress, wait_fd, sleep_prepare and tx_idle
 * ops; marking a peer failed (first failure wins; the report goes out from progress); how long
 * the engine may sleep (f->poll_interval_us) from the instance's state. */
int mf_ofi_progress(mf_fabric *f);
void mf_ofi_complete(mf_ofi *o, const struct fi_cq_tagged_entry *e);
int mf_ofi_wait_fd(mf_fabric *f);
bool mf_ofi_sleep_prepare(mf_fabric *f);
bool mf_ofi_tx_idle(mf_fabric *f);
void mf_ofi_peer_fail(mf_ofi *o, int peer, int code);
void mf_ofi_sleep_bound(mf_ofi *o);

/* Direct receive (ofi_direct.c): the rx_peek and rx_take ops; handing the staged completions to
 * mf_ofi_complete in order (progress, before it reads the CQ; how many). */
int mf_ofi_rx_peek(mf_fabric *f, int peer, mf_wire_hdr *hdr);
void mf_ofi_rx_take(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                    int niov);
int mf_ofi_stage_drain(mf_ofi *o);

/* Atomics (ofi_atomic.c): the limits after the domain opened; the ops; posting one piece;
 * a piece's completion (status: MPI_SUCCESS or an error code). */
void mf_ofi_atomic_setup(mf_ofi *o);
size_t mf_ofi_atomic_max(mf_fabric *f, int op, int type, bool fetch);
int mf_ofi_ratomic(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const mf_fabric_atomic *a,
                   mf_fabric_done *done);
ssize_t mf_ofi_atomic_post(mf_ofi *o, mf_ofi_atom *a);
void mf_ofi_atomic_done(mf_ofi *o, mf_ofi_atom *a, int status);

/* Tagged offload (ofi_tagged.c): what the provider allows (after getinfo); the tagged ops of
 * fabric.h; posting one (mf_ofi_post); its completion and its CQ error entry (prov: the
 * provider's own words, or ""). */
void mf_ofi_tagged_setup(mf_ofi *o);
int mf_ofi_tagged_enable(mf_fabric *f, const char *why_not, bool *on, uint32_t *max_context);
int mf_ofi_tsend(mf_fabric *f, int peer, mf_fabric_tmsg *m);
int mf_ofi_trecv(mf_fabric *f, mf_fabric_tmsg *m, bool claimed);
int mf_ofi_tprobe(mf_fabric *f, mf_fabric_tmsg *m, bool claim);
void mf_ofi_tcancel(mf_fabric *f, mf_fabric_tmsg *m);
int mf_ofi_tiov_max(mf_fabric *f);
ssize_t mf_ofi_tagged_post(mf_ofi *o, mf_ofi_op *op);
void mf_ofi_tagged_done(mf_ofi *o, mf_ofi_op *op, const struct fi_cq_tagged_entry *e);
void mf_ofi_tagged_error(mf_ofi *o, mf_ofi_op *op, const struct fi_cq_err_entry *e,
                         const char *prov);

/* One line describing the instance (provider, domain, data path, waiting), for reports. */
void mf_ofi_describe(mf_fabric *f, char *buf, size_t len);

#endif
