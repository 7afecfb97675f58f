/*
 * sctp.h — internals of the sctp fabric: MPI frames over SCTP associations, in user space
 * through usrsctp over UDP encapsulation (the kernel here has no SCTP). The contract it
 * implements is fabric.h.
 *
 * Progress mode: usrsctp's threaded mode. Its own threads receive the UDP packets and run the
 * timers; they hand every arrival (a piece of a message or a notification) to the instance's
 * inbox (a mutex-protected list) through the receive callback and ring an eventfd, which is
 * the instance's wait fd. The engine never calls into usrsctp to look for work: progress takes
 * the inbox when its counter says something is there. The threaded mode is the one that binds
 * several addresses (usrsctp_bindx) and runs CMT; AF_CONN cannot multihome (see
 * docs/FABRICS.md for the measurements behind the choice).
 *
 * usrsctp is one stack per process: usrsctp_init is called once for all sctp instances (a
 * reference count, the one piece of file-scope state, mirrors usrsctp's own global state), on a
 * free UDP port probed for this process (usrsctp fails silently on a taken one), with its
 * sysctls (timers, CMT, buffers) set after it, since init resets them.
 *
 * Shape: one one-to-many socket (SOCK_SEQPACKET) per instance, bound to every address of the
 * instance's interfaces on one SCTP port; published as "mf.<instance>.<rank>" =
 * "udpport:sctpport:ip,ip,...". An association to a peer is set up by the first frame sent to
 * it (usrsctp_connectx to all its addresses: multihoming), or by the peer's.
 *
 * Authentication (per association, before anything else is believed): the records of
 * stream.h on channel MF_SCTP_CHANNEL, each an SCTP message on stream 0 — the dialing side sends
 * HELLO, the other CHALLENGE, then PROOF and ACCEPT (or REFUSE and an ABORT). When both ranks
 * dial at once, SCTP merges the two INITs into one association, on which both handshakes run,
 * each side being initiator of one; the association is trusted (mapped to a rank) as soon as
 * the peer proved itself in either. Frames may overtake the ACCEPT (they travel on other
 * streams): they are held, unparsed, up to MF_SCTP_HOLD_MAX bytes, but only on an association
 * we dialed ourselves; anything else before the proof aborts the association. Unauthenticated
 * associations are bounded in number and time; refusals are logged through a rate limiter.
 *
 * Messages: an 8-byte prefix (kind, flags, sequence number) then a 64-byte handshake record or
 * a wire header and its payload. Frames use the streams 1..n-1 chosen from (context, tag), so a
 * loss on one does not hold back unrelated traffic inside SCTP; SCTP delivers messages of
 * different streams in any order, so every frame carries a sequence number per (peer,
 * context) and the fabric hands frames up in that order, holding those that came early. The
 * p2p layer thus sees, per source and communicator, exactly the order of the sends — which is
 * what MPI_ANY_TAG matching needs: a receive with ANY_TAG must match the first message sent,
 * whatever its tag, so no frame may pass another of the same (source, context) before the
 * upcall, and the fabric cannot know which receives are posted. A frame is handed up once
 * complete (the receive callback gives us buffers we own, so keeping the pieces costs no copy);
 * max_frame bounds that buffering, and the p2p layer streams larger payloads as several frames.
 *
 * Records: a frame goes out as SCTP messages ("records") of at most MF_SCTP_RECORD bytes, each
 * ended with SCTP_EOR (SCTP_EXPLICIT_EOR: never limited by SO_SNDBUF), the last ending with the
 * frame; the receiver rebuilds the frame by its header's length (sctp_record.c). So usrsctp
 * never holds a message as large as its partial-delivery point (half the receive buffer):
 * partial delivery through the receive callback is the least trodden path of usrsctp 0.9.5
 * (pieces went missing with 2 MiB messages), and the fabric's correctness must not hang on
 * the relation between max_frame and usrsctp's buffer sizes.
 *
 * Sending: the socket is nonblocking and a one-to-many socket does not signal writability
 * reliably: what does not fit stays in the peer's queue and is retried by progress (the send
 * callback rings the eventfd when room frees, and poll_interval_us bounds sleeps while anything
 * waits); a retry that moved no byte is no work, so the engine sleeps instead of spinning on
 * usrsctp's locks. One frame at a time per peer (its records follow each other on its stream).
 *
 * Failures: an association lost (COMM_LOST, CANT_STR_ASSOC) fails its peer through
 * mf_fabric_peer_failed with a message naming the rank; a graceful SHUTDOWN is the peer
 * finalizing, silent unless frames were still queued for it.
 */
#ifndef MF_FABRIC_SCTP_SCTP_H
#define MF_FABRIC_SCTP_SCTP_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <usrsctp.h>

#include "core/ratelimit.h"
#include "fabric/fabric.h"
#include "fabric/stream/stream.h"

#define MF_SCTP_CHANNEL "manifold-sctp-1"
#define MF_SCTP_MAX_ADDRS 16
#define MF_SCTP_PREFIX 8 /* kind, flags, 2 zero bytes, sequence (u32 LE) */
#define MF_SCTP_HEAD (MF_SCTP_PREFIX + MF_WIRE_HDR_SIZE) /* also holds a handshake record */
#define MF_SCTP_RECORD (64 * 1024) /* largest SCTP message: well below the PD point */
#define MF_SCTP_STREAMS 32         /* streams per association and direction; 0 is the handshake's */
#define MF_SCTP_HOLD_MAX (16u << 20) /* bytes held on a dialed association before the proof */
#define MF_SCTP_CMT_ON_OFF 0x1200    /* the socket option, not in usrsctp.h */
#define MF_SCTP_CMT_MODE 4           /* CMT with DAC: aggregated two rails (FABRIC-NOTES) */

enum { MF_SCTP_MSG_HS = 1, MF_SCTP_MSG_FRAME = 2 };

/* One arrival from usrsctp's thread: a piece of a message (data owned, free()) or a
 * notification (flags has MSG_NOTIFICATION). */
typedef struct mf_sctp_piece {
    struct mf_sctp_piece *pc_next;
    sctp_assoc_t pc_assoc;
    uint16_t pc_sid; /* stream */
    int pc_flags;
    unsigned char *pc_data;
    size_t pc_len, pc_off; /* pc_off: bytes already consumed */
} mf_sctp_piece;

/* The inbox usrsctp's threads fill; separate from the instance so that a callback racing the
 * close never touches freed memory (retired inboxes are freed after usrsctp_finish). */
typedef struct mf_sctp_inbox {
    pthread_mutex_t ib_lock;
    mf_sctp_piece *ib_head, *ib_tail;
    atomic_int ib_count; /* pieces in the list: progress looks here first, without the lock */
    int ib_evfd;         /* rung after every push: the instance's wait fd */
    bool ib_closed;      /* the instance closed: arrivals are dropped */
    struct mf_sctp_inbox *ib_next_retired;
} mf_sctp_inbox;

/* A complete message (all its pieces), held until its turn or its association's proof. */
typedef struct mf_sctp_msg {
    struct mf_sctp_msg *m_next;
    int m_kind;
    uint32_t m_seq;
    mf_wire_hdr m_hdr;                       /* frames */
    unsigned char m_rec[MF_STREAM_HS_SIZE];  /* handshake records */
    mf_sctp_piece *m_pieces, *m_pieces_tail; /* the payload, from pieces' pc_off on */
    size_t m_bytes;                          /* payload bytes */
} mf_sctp_msg;

/* A message being assembled on one stream of an association. */
typedef struct mf_sctp_asm {
    mf_sctp_msg *as_cur; /* NULL until the head is complete */
    unsigned char as_head[MF_SCTP_HEAD];
    size_t as_head_got;
} mf_sctp_asm;

typedef struct mf_sctp_assoc {
    struct mf_sctp_assoc *a_next;
    sctp_assoc_t a_id;
    int a_peer;      /* the rank it is trusted to be, -1 before a proof */
    int a_dial_peer; /* the rank we dialed it for, -1 when the peer dialed */
    int a_istate;    /* our handshake as initiator: 0 none, 1 CHALLENGE awaited, 2 verdict
                        awaited, 3 accepted */
    int a_rstate;    /* the peer's as initiator: 0 HELLO awaited, 1 PROOF awaited, 2 done */
    int a_claim;     /* the rank its HELLO claims */
    mf_stream_auth a_iauth, a_rauth;
    int a_nout;     /* outbound streams */
    bool a_counted; /* counted in s_npending */
    /* The peer sent SHUTDOWN: the rank no longer uses it, but the record stays until usrsctp
     * reports the association gone (SHUTDOWN_COMP or a loss), so that close waits for it. */
    bool a_draining;
    double a_since;
    /* the message being assembled from pieces, per stream: pieces of messages on different
     * streams may interleave (partial delivery) */
    mf_sctp_asm *a_asm[MF_SCTP_STREAMS];
    /* messages held until the proof */
    mf_sctp_msg *a_held, *a_held_tail;
    size_t a_held_bytes;
    /* handshake records that did not fit yet */
    unsigned char a_hs_out[3][MF_SCTP_PREFIX + MF_STREAM_HS_SIZE];
    int a_hs_n;
    /* peer addresses reported unreachable or potentially failed (CMT pauses while any is) */
    struct in_addr a_down[MF_SCTP_MAX_ADDRS];
    int a_ndown;
} mf_sctp_assoc;

/* A frame queued for a peer. */
typedef struct mf_sctp_out {
    struct mf_sctp_out *o_next;
    unsigned char o_head[MF_SCTP_HEAD];
    uint16_t o_sid;
    struct iovec *o_iov; /* the payload: the caller's, or o_copy */
    int o_niov;
    size_t o_len;  /* payload bytes */
    size_t o_sent; /* bytes of head + payload accepted by usrsctp */
    unsigned char *o_copy;
    mf_fabric_done *o_done; /* NULL when copied (send returned DONE) */
    struct iovec o_iov_inline[4];
} mf_sctp_out;

/* Sequence numbers of one (peer, context). */
typedef struct mf_sctp_ctx {
    uint32_t c_ctx, c_tx, c_rx;
} mf_sctp_ctx;

typedef struct mf_sctp_peer {
    mf_sctp_out *p_head, *p_tail;
    sctp_assoc_t p_assoc; /* the trusted association frames go on; 0: none */
    int p_nout;
    bool p_dialed; /* our association is being set up */
    bool p_closed; /* the peer shut its side down (finalized) */
    mf_sctp_ctx *p_ctx;
    int p_nctx, p_ctx_cap;
    mf_sctp_msg *p_wait; /* frames that came before their turn */
} mf_sctp_peer;

typedef struct mf_sctp {
    mf_fabric s_base; /* first */
    struct socket *s_sock;
    mf_sctp_inbox *s_inbox;
    uint16_t s_port; /* SCTP port */
    mf_sctp_peer *s_peers;
    int s_npeers;
    mf_sctp_assoc *s_assocs;
    int s_npending;             /* associations that have not proved themselves */
    int s_nqueued;              /* peers with frames queued */
    mf_fabric_failures s_fails; /* failed peers; their reports wait for progress */
    bool s_hs_waiting;          /* some association has handshake records that did not fit yet */
    bool s_closing;             /* close: arrivals are no longer handed up */
    bool s_cmt;                 /* MANIFOLD_SCTP_CMT=on */
    unsigned long s_partial;    /* pieces handed up without their record's end: partial delivery,
                                which records keep from happening (sctp_test checks) */
    double s_next_sweep;
    double s_auth_timeout;
    int s_pending_max;
    mf_ratelimit s_rl_refused;
    mf_ratelimit s_rl_path;
    char s_addrs[256]; /* our addresses, for messages */
} mf_sctp;

static inline mf_sctp *mf_sctp_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_sctp, s_base);
}

/* sctp_record.c: frames from the pieces of records usrsctp hands up (no usrsctp calls). */
/* Feeds piece pc (consumed) to its stream's assembly `as`. Returns 1 with *out when a message
 * is complete (the caller's to free), 0 when more is needed, -1 with *why when the bytes are not
 * a Manifold frame of at most max_frame payload bytes (the assembly is reset then). */
int mf_sctp_asm_feed(mf_sctp_asm *as, mf_sctp_piece *pc, size_t max_frame, mf_sctp_msg **out,
                     const char **why);
/* Drops the message being assembled. */
void mf_sctp_asm_reset(mf_sctp_asm *as);
void mf_sctp_msg_free(mf_sctp_msg *m);
void mf_sctp_piece_free(mf_sctp_piece *pc);

/* sctp_assoc.c: the arrivals, handshakes, ordering and failures. */
/* Handles one piece taken from the inbox (consumes it). Returns events handled. */
int mf_sctp_piece_in(mf_sctp *s, mf_sctp_piece *pc);
/* Sets up an association to `peer` and sends our HELLO on it. */
int mf_sctp_dial(mf_sctp *s, int peer);
/* Writes what fits of the handshake records and the peers' queues. Returns events handled. */
int mf_sctp_flush_all(mf_sctp *s);
int mf_sctp_flush_peer(mf_sctp *s, int peer);
/* Writes what fits of frame `o` to peer p's association: 1 when it is all out, 0 when some
 * waits for room, -1 when the association failed (the peer is failed then). */
int mf_sctp_out_write(mf_sctp *s, mf_sctp_peer *p, mf_sctp_out *o);
/* Aborts unauthenticated associations past their deadline. */
int mf_sctp_housekeeping(mf_sctp *s);
/* Completes every frame queued for peer `p` with `code` and frees the frames that waited for
 * their turn (the caller keeps s_nqueued). */
void mf_sctp_peer_drop(mf_sctp_peer *p, int code);
/* Marks `peer` failed with `code` (first failure wins); reported from progress. */
void mf_sctp_peer_fail(mf_sctp *s, int peer, int code);
int mf_sctp_report_failures(mf_sctp *s);
void mf_sctp_assoc_free_all(mf_sctp *s);
/* The stream a frame travels on: from (context, tag), never 0 (the handshake's). */
uint16_t mf_sctp_stream_of(const mf_wire_hdr *h, int nout);
/* The sequence state of (peer, context), created on first use; NULL without memory. */
mf_sctp_ctx *mf_sctp_ctx_of(mf_sctp_peer *p, uint32_t ctx);
/* Prints the instance's order and association state on stderr (debugging). */
void mf_sctp_dump(mf_fabric *f);
/* Frees an out frame (its copy), not calling done. */
void mf_sctp_out_free(mf_sctp_out *o);

#endif
