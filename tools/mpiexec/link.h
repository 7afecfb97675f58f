/*
 * link.h — framed messages between mpiexec and its proxies, over one TCP connection per host at
 * a time.
 *
 * Frame: five little-endian u32 (type, arg, payload length, sequence number, acknowledgement)
 * and the payload. `arg` is a rank,
 * a signal, a host index or an exit code depending on the type (below). A frame with an unknown
 * type or a payload over MX_LINK_MAX is a broken link: the peer is not ours (or not the same
 * version), and the connection is dropped with a message, never trusted.
 *
 * Resuming (the control plane surviving the loss of the network it ran over): once
 * authenticated, a link is made resumable (mx_link_resumable). Its frames other than PING then
 * carry sequence numbers 1, 2, ..., every frame carries the last number received, and each side
 * keeps what the other has not acknowledged. When the connection goes silent, the proxy
 * connects again over another of mpiexec's addresses, both authenticate as at start, and the
 * new connection replaces the old one (mx_link_adopt): everything unacknowledged is sent again
 * and the receiver drops what it already had, so no frame is lost or handled twice.
 *
 * Sending never blocks: frames are queued and written as the socket takes them (the event loop
 * polls POLLOUT while mx_link_pending() is non-zero). Receiving: mx_link_read() takes what the
 * socket has, mx_link_next() hands out complete frames (valid until the next mx_link_read).
 */
#ifndef MX_LINK_H
#define MX_LINK_H

#include <stddef.h>
#include <stdint.h>

#define MX_LINK_MAX (16u << 20)

enum mx_msg {
    /* proxy -> mpiexec */
    MX_M_HELLO = 1, /* arg: host index; payload: the proxy's nonce (link_auth.h) */
    MX_M_PMI,       /* both ways; arg: rank; payload: PMI-1 wire bytes */
    MX_M_OUT,       /* arg: rank; payload: bytes the rank wrote to stdout */
    MX_M_ERR,       /* arg: rank; payload: stderr bytes */
    MX_M_STARTED,   /* arg: rank; payload: pid in decimal */
    MX_M_EXIT,      /* arg: rank; payload: wait status in decimal (output and PMI sent before) */
    MX_M_SAY,       /* payload: a line for mpiexec's stderr */
    MX_M_FAILED,    /* arg: exit status; the ranks could not be started (a SAY told why) */
    MX_M_LAUNCHED,  /* arg: host index of a proxy this proxy started; payload: launcher's wait
                       status in decimal, sent when the launcher command exits */
    /* mpiexec -> proxy */
    MX_M_JOB,    /* payload: the job description (remote.c, proxy_main.c) */
    MX_M_STDIN,  /* payload: bytes for rank 0's stdin; empty: end of input */
    MX_M_SIGNAL, /* arg: signal to send to every rank of the host */
    MX_M_PING,   /* both ways: keeps a silent link from counting as lost */
    /* authentication (link_auth.h): mpiexec -> proxy, proxy -> mpiexec, mpiexec -> proxy */
    MX_M_CHALLENGE,
    MX_M_PROOF,
    MX_M_ACCEPT,
    /* mpiexec -> proxy */
    MX_M_STACKS, /* print every rank's stacks (stacks.c) as SAY frames */
    MX_M_LAST
};

typedef struct mx_link {
    int l_fd;
    char *l_in;
    size_t l_in_off, l_in_len, l_in_cap;
    char *l_out;
    size_t l_out_off, l_out_len, l_out_cap;
    double l_last_rx, l_last_tx;
    size_t l_max; /* largest payload accepted: MX_LINK_MAX, less while unauthenticated */
    /* Resuming (above). */
    int l_resumable;
    uint32_t l_tx_seq, l_rx_seq, l_peer_ack, l_acked_sent;
    char *l_replay; /* sent frames not acknowledged yet, in order */
    size_t l_replay_len, l_replay_cap;
} mx_link;

void mx_link_init(mx_link *l, int fd);
/* Queues a frame and writes what the socket takes. 0, or -1 (out of memory). */
int mx_link_send(mx_link *l, int type, int32_t arg, const void *data, size_t len);
/* Writes queued bytes. 0, or -1 when the connection is broken. */
int mx_link_flush(mx_link *l);
size_t mx_link_pending(const mx_link *l);
/* Reads what is available (at most 64 KiB per call while l_max is small: a stranger cannot make
 * us buffer much). 0, or -1 at EOF or error. */
int mx_link_read(mx_link *l);
/* 1 and a frame, 0 when none is complete, -1 on a malformed frame (unknown type, or a payload
 * over l_max). */
int mx_link_next(mx_link *l, int *type, int32_t *arg, const char **data, size_t *len);
void mx_link_close(mx_link *l);
/* From now on frames are numbered and kept until acknowledged (both ends, once authenticated). */
void mx_link_resumable(mx_link *l);
/* The connection of `from` (authenticated, not resumable, its own input and output pending)
 * replaces l's: l's old connection is closed, what arrived on `from` is kept, and everything
 * the peer has not acknowledged is queued again behind `from`'s pending output. `from` is left
 * closed and empty. 0, or -1 out of memory. */
int mx_link_adopt(mx_link *l, mx_link *from);

/* A frame payload that is one decimal integer in [lo, hi] (a pid, a wait status), optionally
 * NUL-terminated. 0, or -1 when it is anything else. */
int mx_frame_int(const char *data, size_t len, long lo, long hi, long *out);

/* proxy_main.c: in `mpiexec --proxy`, the link to mpiexec (mx_say writes there). */
extern mx_link *mx_proxy_link;

/* Job description helpers: a payload of NUL-terminated strings. */
typedef struct mx_strbuf {
    char *b;
    size_t len, cap;
    int failed;
} mx_strbuf;
void mx_sb_str(mx_strbuf *sb, const char *s);
void mx_sb_int(mx_strbuf *sb, long v);
/* Reader: returns the next string, or NULL past the end. */
typedef struct mx_strrd {
    const char *p, *end;
} mx_strrd;
const char *mx_rd_str(mx_strrd *rd);
int mx_rd_int(mx_strrd *rd, long lo, long hi, long *out);

#endif
