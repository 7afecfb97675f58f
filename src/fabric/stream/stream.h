/*
 * stream.h — frames over a reliable byte stream, shared by the fabrics that carry Manifold
 * frames on one (tcp now, sctp in stream mode later). Transport-independent: the stream is
 * reached only through an mf_stream_io (readv/writev-like calls on a nonblocking fd by default).
 *
 * On the stream a frame is the 64-byte wire header (wire.h) followed by hdr.len payload bytes.
 * The one record that is not a frame is the goodbye (MF_STREAM_BYE): 64 bytes 'M','F',
 * MF_WIRE_VERSION, 0, zeros; it says "I am closing on purpose", so that the end of stream which
 * follows is not mistaken for a crash. Type 0 is never a valid wire type, so the two cannot be
 * confused.
 *
 * Outbound (mf_stream_out): a FIFO of frames per peer. A send is written at once when the queue
 * is empty and the stream takes it; what remains is queued — the payload by reference (the
 * caller keeps its buffers until `done`), except that a remainder of at most copy_limit bytes
 * is copied so that small sends complete at once. Partial writes resume where they stopped;
 * several queued frames go out in one writev. The queue may exist before the stream does
 * (connection still being set up): pass io == NULL to send to only queue.
 *
 * Inbound (mf_stream_in): a state machine that reads into a staging buffer, decodes and
 * validates each header with mf_wire_decode, asks its owner where the payload goes (a sink, as in
 * fabric.h), and copies the payload there — large payloads are read straight into the sink's
 * iovecs with readv, never through the staging buffer. Bytes beyond the sink are discarded.
 * A malformed frame stops the machine with a reason; nothing is ever written outside the
 * staging buffer or the sink's iovecs.
 *
 * Handshake (mf_stream_hs, stream_hello.c): every connection starts with the mutual
 * challenge-response of core/auth.h, in fixed 64-byte records, before either side believes
 * anything the other says or any frame is written:
 *
 *   initiator -> responder   HELLO      job hash, world size, initiator rank, responder rank, N_i
 *   responder -> initiator   CHALLENGE  N_r                        (nothing derived from the key)
 *   initiator -> responder   PROOF      MAC(K, 'I', channel, N_i, N_r, id_i, id_r)
 *   responder -> initiator   ACCEPT     MAC(K, 'R', channel "/accept", ...): frames may flow
 *                         or REJECT     MAC(K, 'R', channel "/reject", ...): both connected at
 *                                       once and this one loses (only to a proven peer)
 *                         or REFUSE     the fixed refusal (constant bytes), then close
 *
 * K is the job's 256-bit secret; an identity is (job hash, world size, rank), 16 bytes; the
 * channel names the fabric's protocol (e.g. "manifold-tcp-1"). The verdict is part of the
 * responder's MAC, so a REJECT cannot pass for an ACCEPT. A responder answers anything it
 * cannot check — garbage, another version or job, a failed proof — with REFUSE and nothing
 * else; the job hash is not secret (it only keeps strays out early), the secret never travels.
 *
 * Not thread-safe: one caller at a time (the fabric's progress, under the library lock). The
 * owner's callbacks (on_header, sink->fs_done, done->fd_fn) may call back into the same stream
 * objects to send; the machines are written so that this is safe.
 */
#ifndef MF_FABRIC_STREAM_STREAM_H
#define MF_FABRIC_STREAM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/auth.h"
#include "fabric/fabric.h"
#include "fabric/wire.h"

/* Results besides MF_FABRIC_DONE / MF_FABRIC_PENDING (fabric.h) and counts (>= 0). */
enum {
    MF_STREAM_FAILED = -10, /* the stream is broken: see *sys_err or mf_stream_in.why */
    MF_STREAM_CLOSED = -11, /* inbound: the peer said goodbye and closed its side */
};

/* ---- The byte stream ---- */

typedef struct mf_stream_io mf_stream_io;
struct mf_stream_io {
    /* Like readv(2)/writev(2) on a nonblocking stream: bytes moved, 0 at end of stream (read
     * only), or -1 with errno (EAGAIN/EWOULDBLOCK: nothing can move now; EINTR is retried by the
     * caller). Writes must never raise SIGPIPE. */
    ssize_t (*io_readv)(mf_stream_io *io, const struct iovec *iov, int niov);
    ssize_t (*io_writev)(mf_stream_io *io, const struct iovec *iov, int niov);
    int io_fd;    /* for the fd-based functions below */
    void *io_ctx; /* for other implementations */
};

/* readv(2) and sendmsg(2) with MSG_NOSIGNAL on io->io_fd (a socket). */
ssize_t mf_stream_fd_readv(mf_stream_io *io, const struct iovec *iov, int niov);
ssize_t mf_stream_fd_writev(mf_stream_io *io, const struct iovec *iov, int niov);
/* An io on a socket fd. */
void mf_stream_io_fd(mf_stream_io *io, int fd);

/* ---- Outbound ---- */

typedef struct mf_stream_frame mf_stream_frame;

typedef struct mf_stream_out {
    mf_stream_frame *so_head, *so_tail;
    size_t so_frames;     /* queued frames */
    size_t so_copy_limit; /* remainders up to this many bytes are copied (send returns DONE) */
} mf_stream_out;

void mf_stream_out_init(mf_stream_out *o, size_t copy_limit);
/* Sends one frame: the encoded header, then `len` bytes gathered from iov. With io == NULL, or
 * frames already queued, the frame is queued behind them. Returns MF_FABRIC_DONE (buffers free
 * again, `done` not called), MF_FABRIC_PENDING (`done` is called once, from a later flush or
 * fail), or MF_STREAM_FAILED with *sys_err: EINVAL when the iovecs do not hold `len` bytes
 * (nothing was written, the stream is intact); otherwise (a write error, or ENOMEM, possibly
 * after part of the frame went out) the stream must be treated as broken. */
int mf_stream_out_send(mf_stream_out *o, mf_stream_io *io,
                       const unsigned char hdr[MF_WIRE_HDR_SIZE], const struct iovec *iov, int niov,
                       size_t len, mf_fabric_done *done, int *sys_err);
/* Queues the goodbye record (copied). MF_FABRIC_DONE, or MF_STREAM_FAILED with ENOMEM. */
int mf_stream_out_bye(mf_stream_out *o, int *sys_err);
/* Writes what the stream takes now (until a write is short: the stream is full, flush again when
 * it has room). Returns the number of frames completed (their `done` is called with MPI_SUCCESS
 * after the writing), at least 1 when any byte was written (a large frame going out is work done,
 * not an idle pass, for whoever decides to sleep), or MF_STREAM_FAILED with *sys_err. */
int mf_stream_out_flush(mf_stream_out *o, mf_stream_io *io, int *sys_err);
static inline bool mf_stream_out_empty(const mf_stream_out *o)
{
    return o->so_head == NULL;
}
/* Drops every queued frame, calling `done` with `status` (an MPI error code) for those that
 * have one. Returns how many were dropped. */
int mf_stream_out_fail(mf_stream_out *o, int status);

/* ---- Inbound ---- */

/* Where a frame's payload goes: fills *sink (zeroed before the call) for the decoded header. */
typedef void (*mf_stream_on_header)(void *ctx, const mf_wire_hdr *hdr, mf_fabric_sink *sink);

typedef struct mf_stream_in {
    mf_stream_on_header si_on_header;
    void *si_ctx;
    int si_state;          /* private */
    unsigned char *si_buf; /* staging buffer */
    size_t si_cap, si_rpos, si_wpos;
    mf_wire_hdr si_hdr; /* frame being received */
    mf_fabric_sink si_sink;
    int si_iov_idx; /* position in the sink */
    size_t si_iov_off;
    uint64_t si_left;   /* payload bytes of the current frame still to come */
    int si_read_budget; /* reads per progress call, so one stream cannot starve others */
    const char *why;    /* after MF_STREAM_FAILED: the reason, for the error message */
    int sys_err;        /* after MF_STREAM_FAILED: errno, or 0 when not a system error */
    int si_peek_err;    /* a read error met by mf_stream_in_peek, reported by the next progress */
} mf_stream_in;

/* staging: bytes of the staging buffer (at least 2 * MF_WIRE_HDR_SIZE). MPI_SUCCESS or
 * MPI_ERR_NO_MEM (code, with message). */
int mf_stream_in_init(mf_stream_in *in, size_t staging, mf_stream_on_header on_header, void *ctx);
void mf_stream_in_free(mf_stream_in *in);
/* Reads what the stream has now and delivers complete frames (on_header, then sink->fs_done
 * once the payload is in). Returns the number of frames delivered, at least 1 when any byte was
 * read (as for flush: part of a large payload is progress), 0 when nothing came, MF_STREAM_CLOSED
 * after the goodbye and the end of the stream, or MF_STREAM_FAILED with why/sys_err (end of
 * stream without goodbye, read error, malformed frame). After a non-count result, call nothing
 * but abort and free. */
int mf_stream_in_progress(mf_stream_in *in, mf_stream_io *io);
/* Calls the current sink's fs_done with `status` if a payload was being received (the stream
 * broke under it). Idempotent. */
void mf_stream_in_abort(mf_stream_in *in, int status);
/* Whether a frame is partly received (an end of stream here is never clean). */
bool mf_stream_in_mid_frame(const mf_stream_in *in);
/* Direct receive (fabric.h rx_peek/rx_take) on the same staging buffer progress reads into, so
 * that either may take the next frame. peek: 1 with *hdr when the next frame is an EAGER one
 * whose whole payload is staged, 0 when none is (yet), -1 when the next frame is anything else
 * or the stream is mid-payload, broken or ended (progress delivers or reports it). It reads the
 * socket at most once, and only when no whole frame is staged. take (right after peek returned
 * 1 with hdr) copies the payload into iov, dropping what does not fit, and consumes the frame.
 * Bytes either leaves staged (mf_stream_in_staged) are for progress to deliver: the socket no
 * longer says they are there. */
int mf_stream_in_peek(mf_stream_in *in, mf_stream_io *io, mf_wire_hdr *hdr);
void mf_stream_in_take(mf_stream_in *in, const mf_wire_hdr *hdr, const struct iovec *iov, int niov);
static inline bool mf_stream_in_staged(const mf_stream_in *in)
{
    return in->si_rpos < in->si_wpos;
}

/* ---- Handshake ---- */

#define MF_STREAM_HS_SIZE 64 /* every handshake record */
#define MF_STREAM_HS_ID_SIZE 16
#define MF_STREAM_HS_BLOB 32 /* a nonce or a MAC */

enum mf_stream_hs_kind {
    MF_STREAM_HS_HELLO = 1,     /* initiator: who I am, whom I want, N_i */
    MF_STREAM_HS_CHALLENGE = 2, /* responder: N_r */
    MF_STREAM_HS_PROOF = 3,     /* initiator: its MAC */
    MF_STREAM_HS_ACCEPT = 4,    /* responder: its MAC; frames may flow */
    MF_STREAM_HS_REJECT = 5,    /* responder: its MAC; both connected at once and yours loses,
                                   mine is used instead (not an error) */
    MF_STREAM_HS_REFUSE = 6,    /* responder: the fixed refusal, all fields zero */
};

typedef struct mf_stream_hs {
    uint8_t kind;
    int32_t from, to, size; /* HELLO only: initiator rank, responder rank, world size */
    uint64_t job_hash;      /* HELLO only */
    unsigned char blob[MF_STREAM_HS_BLOB]; /* N_i, N_r or a MAC; zero in REFUSE */
} mf_stream_hs;

/* Fields a kind does not use must be zero (they are encoded as zeros). */
void mf_stream_hs_encode(const mf_stream_hs *h, unsigned char out[MF_STREAM_HS_SIZE]);
/* Decodes a record's structure: magic, version, a known kind, zeros wherever the kind has no
 * field. 0, or -1 with *why. Says nothing about whether the content fits this job. */
int mf_stream_hs_decode(const unsigned char in[MF_STREAM_HS_SIZE], mf_stream_hs *h,
                        const char **why);
/* Checks a decoded HELLO against this job, as the responder `me`: 0, or -1 with *why. */
int mf_stream_hs_check_hello(const mf_stream_hs *h, uint64_t job_hash, int size, int me,
                             const char **why);

/* One handshake's transcript, kept by both sides between the records. */
typedef struct mf_stream_auth {
    unsigned char sa_nonce_i[MF_AUTH_NONCE_BYTES], sa_nonce_r[MF_AUTH_NONCE_BYTES];
    unsigned char sa_id_i[MF_STREAM_HS_ID_SIZE], sa_id_r[MF_STREAM_HS_ID_SIZE];
} mf_stream_auth;

/* Sets the identities: initiator rank `from`, responder rank `to`, in the job (job_hash, size). */
void mf_stream_auth_ids(mf_stream_auth *a, uint64_t job_hash, int size, int from, int to);
/* The MAC record `kind` (PROOF, ACCEPT or REJECT) carries on `channel`. */
void mf_stream_auth_mac(const mf_auth_secret *k, const char *channel, int kind,
                        const mf_stream_auth *a, unsigned char mac[MF_AUTH_MAC_BYTES]);
/* Whether `h` (PROOF, ACCEPT or REJECT) carries the right MAC (constant time). */
bool mf_stream_auth_check(const mf_auth_secret *k, const char *channel, const mf_stream_hs *h,
                          const mf_stream_auth *a);

#endif
