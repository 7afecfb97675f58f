/*
 * stream_out.c — the outbound frame queue of a byte stream (see stream.h), and the default
 * fd-based io functions.
 *
 * A queued frame is a small block holding the encoded header and a copy of the caller's iovec
 * array (the iovec array is the caller's stack more often than not; the bytes it points at are
 * what the caller keeps alive until `done`). Remainders of small sends are copied instead, so
 * the common eager send completes at once even when the socket buffer is momentarily full.
 * Frames complete strictly in order; callbacks run after the queue is consistent again, so they
 * may send more.
 */
#include "fabric/stream/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/error.h"

/* iovecs per writev: enough to coalesce many small frames, far below IOV_MAX (1024). */
#define MF_STREAM_WRITE_IOV 64
/* Frames (header included) up to this size are copied into one buffer and written with send:
 * the kernel then copies one piece instead of importing and walking an iovec array, which is a
 * measurable part of a small message's cost over loopback. */
#define MF_STREAM_GATHER 512

struct mf_stream_frame {
    mf_stream_frame *sf_next;
    mf_fabric_done *sf_done; /* NULL for copied frames (already reported DONE) */
    int sf_niov;             /* entries of sf_iov */
    int sf_cur;              /* first entry not completely written */
    size_t sf_off;           /* bytes of sf_iov[sf_cur] already written */
    unsigned char sf_hdr[MF_WIRE_HDR_SIZE];
    struct iovec sf_iov[]; /* then, for copied frames, the bytes themselves */
};

ssize_t mf_stream_fd_readv(mf_stream_io *io, const struct iovec *iov, int niov)
{
    /* recv for the common single buffer: the kernel skips importing an iovec array, a tenth of
     * the cost of a poll that finds nothing. */
    if (niov == 1)
        return recv(io->io_fd, iov[0].iov_base, iov[0].iov_len, MSG_DONTWAIT);
    return readv(io->io_fd, iov, niov);
}

ssize_t mf_stream_fd_writev(mf_stream_io *io, const struct iovec *iov, int niov)
{
    /* send for a single buffer, as recv above: no iovec array to import (small frames are
     * gathered into one, see mf_stream_out_send). */
    if (niov == 1)
        return send(io->io_fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    /* sendmsg rather than writev: MSG_NOSIGNAL turns a dead peer into EPIPE, not SIGPIPE. */
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)niov};
    return sendmsg(io->io_fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void mf_stream_io_fd(mf_stream_io *io, int fd)
{
    io->io_readv = mf_stream_fd_readv;
    io->io_writev = mf_stream_fd_writev;
    io->io_fd = fd;
    io->io_ctx = NULL;
}

void mf_stream_out_init(mf_stream_out *o, size_t copy_limit)
{
    o->so_head = o->so_tail = NULL;
    o->so_frames = 0;
    o->so_copy_limit = copy_limit;
}

static void mf_stream_out_append(mf_stream_out *o, mf_stream_frame *fr)
{
    fr->sf_next = NULL;
    if (o->so_tail)
        o->so_tail->sf_next = fr;
    else
        o->so_head = fr;
    o->so_tail = fr;
    o->so_frames++;
}

/* Writes once, retrying EINTR. Returns bytes written, 0 when the stream takes nothing now, or
 * -1 with *sys_err. */
static ssize_t mf_stream_write(mf_stream_io *io, const struct iovec *iov, int niov, int *sys_err)
{
    for (;;) {
        ssize_t n = io->io_writev(io, iov, niov);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        *sys_err = errno;
        return -1;
    }
}

/* Copies `n` bytes of the piece [base, base + l) that start `*skip` bytes in, consuming skip. */
static size_t mf_stream_copy_piece(unsigned char *to, const void *base, size_t l, size_t *skip)
{
    if (*skip >= l) {
        *skip -= l;
        return 0;
    }
    memcpy(to, (const unsigned char *)base + *skip, l - *skip);
    size_t n = l - *skip;
    *skip = 0;
    return n;
}

/* Copies what is left of header + payload after `skip` bytes into `to`; returns its length. */
static size_t mf_stream_gather(unsigned char *to, const unsigned char *hdr, const struct iovec *iov,
                               int niov, size_t skip)
{
    size_t at = mf_stream_copy_piece(to, hdr, MF_WIRE_HDR_SIZE, &skip);
    for (int i = 0; i < niov; i++)
        at += mf_stream_copy_piece(to + at, iov[i].iov_base, iov[i].iov_len, &skip);
    return at;
}

/* A frame holding a copy of what is left of header + payload after `skip` bytes went out. */
static mf_stream_frame *mf_stream_frame_copy(const unsigned char *hdr, const struct iovec *iov,
                                             int niov, size_t skip, size_t rest)
{
    mf_stream_frame *fr = malloc(sizeof *fr + sizeof(struct iovec) + rest);
    if (!fr)
        return NULL;
    unsigned char *data = (unsigned char *)(fr->sf_iov + 1);
    size_t at = mf_stream_gather(data, hdr, iov, niov, skip);
    fr->sf_done = NULL;
    fr->sf_niov = 1;
    fr->sf_cur = 0;
    fr->sf_off = 0;
    fr->sf_iov[0].iov_base = data;
    fr->sf_iov[0].iov_len = at;
    return fr;
}

/* A frame referring to the caller's payload, `skip` bytes of header + payload already sent. */
static mf_stream_frame *mf_stream_frame_ref(const unsigned char *hdr, const struct iovec *iov,
                                            int niov, size_t skip, mf_fabric_done *done)
{
    mf_stream_frame *fr = malloc(sizeof *fr + (size_t)(niov + 1) * sizeof(struct iovec));
    if (!fr)
        return NULL;
    memcpy(fr->sf_hdr, hdr, MF_WIRE_HDR_SIZE);
    fr->sf_iov[0].iov_base = fr->sf_hdr;
    fr->sf_iov[0].iov_len = MF_WIRE_HDR_SIZE;
    int n = 1;
    for (int i = 0; i < niov; i++) {
        if (iov[i].iov_len)
            fr->sf_iov[n++] = iov[i];
    }
    fr->sf_niov = n;
    fr->sf_cur = 0;
    fr->sf_off = 0;
    fr->sf_done = done;
    while (skip > 0) { /* never past the end: skip < header + payload */
        size_t l = fr->sf_iov[fr->sf_cur].iov_len;
        if (skip >= l) {
            skip -= l;
            fr->sf_cur++;
        } else {
            fr->sf_off = skip;
            skip = 0;
        }
    }
    return fr;
}

int mf_stream_out_send(mf_stream_out *o, mf_stream_io *io,
                       const unsigned char hdr[MF_WIRE_HDR_SIZE], const struct iovec *iov, int niov,
                       size_t len, mf_fabric_done *done, int *sys_err)
{
    size_t sum = 0;
    for (int i = 0; i < niov; i++)
        sum += iov[i].iov_len;
    if (niov < 0 || sum != len) {
        *sys_err = EINVAL; /* the caller's iovecs disagree with its header: never send that */
        return MF_STREAM_FAILED;
    }
    size_t total = MF_WIRE_HDR_SIZE + len;
    size_t sent = 0;

    /* Fast path: nothing queued, the stream is up, and the vector fits one writev. A short
     * write means the socket buffer is full: the rest is queued and continued by flush. */
    if (io && !o->so_head && niov < MF_STREAM_WRITE_IOV) {
        struct iovec v[MF_STREAM_WRITE_IOV];
        int nv = niov + 1;
        unsigned char small[MF_STREAM_GATHER];
        if (total <= sizeof small) {
            v[0] = (struct iovec){small, mf_stream_gather(small, hdr, iov, niov, 0)};
            nv = 1;
        } else {
            v[0].iov_base = (void *)hdr;
            v[0].iov_len = MF_WIRE_HDR_SIZE;
            memcpy(v + 1, iov, (size_t)niov * sizeof *iov); /* niov > 0: total > the header */
        }
        ssize_t n = mf_stream_write(io, v, nv, sys_err);
        if (n < 0)
            return MF_STREAM_FAILED;
        sent = (size_t)n;
        if (sent == total)
            return MF_FABRIC_DONE;
    }

    size_t rest = total - sent;
    bool copy = rest <= o->so_copy_limit;
    mf_stream_frame *fr = copy ? mf_stream_frame_copy(hdr, iov, niov, sent, rest)
                               : mf_stream_frame_ref(hdr, iov, niov, sent, done);
    if (!fr) {
        *sys_err = ENOMEM;
        return MF_STREAM_FAILED;
    }
    mf_stream_out_append(o, fr);
    return copy ? MF_FABRIC_DONE : MF_FABRIC_PENDING;
}

int mf_stream_out_bye(mf_stream_out *o, int *sys_err)
{
    mf_stream_frame *fr = malloc(sizeof *fr + sizeof(struct iovec));
    if (!fr) {
        *sys_err = ENOMEM;
        return MF_STREAM_FAILED;
    }
    memset(fr->sf_hdr, 0, sizeof fr->sf_hdr);
    fr->sf_hdr[0] = 'M';
    fr->sf_hdr[1] = 'F';
    fr->sf_hdr[2] = MF_WIRE_VERSION;
    fr->sf_hdr[3] = 0; /* type 0: the goodbye record, never a frame */
    fr->sf_iov[0].iov_base = fr->sf_hdr;
    fr->sf_iov[0].iov_len = MF_WIRE_HDR_SIZE;
    fr->sf_niov = 1;
    fr->sf_cur = 0;
    fr->sf_off = 0;
    fr->sf_done = NULL;
    mf_stream_out_append(o, fr);
    return MF_FABRIC_DONE;
}

int mf_stream_out_flush(mf_stream_out *o, mf_stream_io *io, int *sys_err)
{
    mf_stream_frame *finished = NULL, **finished_tail = &finished;
    int nfinished = 0, rc = 0;
    bool moved = false; /* any byte written: the result is then at least 1 (see stream.h) */
    while (o->so_head) {
        struct iovec v[MF_STREAM_WRITE_IOV];
        int nv = 0;
        size_t want = 0;
        for (mf_stream_frame *fr = o->so_head; fr && nv < MF_STREAM_WRITE_IOV; fr = fr->sf_next) {
            for (int i = fr->sf_cur; i < fr->sf_niov && nv < MF_STREAM_WRITE_IOV; i++) {
                v[nv] = fr->sf_iov[i];
                if (i == fr->sf_cur) {
                    v[nv].iov_base = (unsigned char *)v[nv].iov_base + fr->sf_off;
                    v[nv].iov_len -= fr->sf_off;
                }
                want += v[nv].iov_len;
                nv++;
            }
        }
        ssize_t n = mf_stream_write(io, v, nv, sys_err);
        if (n < 0) {
            rc = MF_STREAM_FAILED;
            break;
        }
        if (n == 0)
            break;
        moved = true;
        size_t left = (size_t)n;
        while (left > 0 || (o->so_head && o->so_head->sf_cur == o->so_head->sf_niov)) {
            mf_stream_frame *fr = o->so_head;
            if (fr->sf_cur < fr->sf_niov) {
                size_t avail = fr->sf_iov[fr->sf_cur].iov_len - fr->sf_off;
                if (left < avail) {
                    fr->sf_off += left;
                    left = 0;
                    break;
                }
                left -= avail;
                fr->sf_cur++;
                fr->sf_off = 0;
                continue;
            }
            /* Frame complete: move it to the finished list. */
            o->so_head = fr->sf_next;
            if (!o->so_head)
                o->so_tail = NULL;
            o->so_frames--;
            fr->sf_next = NULL;
            *finished_tail = fr;
            finished_tail = &fr->sf_next;
            nfinished++;
        }
        /* A short write filled the stream: stop rather than pay a system call for the EAGAIN
         * (the owner flushes again when the stream has room). */
        if ((size_t)n < want)
            break;
    }
    /* Callbacks last: they may send on this very queue. */
    while (finished) {
        mf_stream_frame *fr = finished;
        finished = fr->sf_next;
        mf_fabric_done *done = fr->sf_done;
        free(fr);
        if (done)
            done->fd_fn(done, MPI_SUCCESS);
    }
    return rc ? rc : nfinished ? nfinished : moved;
}

int mf_stream_out_fail(mf_stream_out *o, int status)
{
    mf_stream_frame *fr = o->so_head;
    o->so_head = o->so_tail = NULL;
    o->so_frames = 0;
    int n = 0;
    while (fr) {
        mf_stream_frame *next = fr->sf_next;
        mf_fabric_done *done = fr->sf_done;
        free(fr);
        if (done)
            done->fd_fn(done, status);
        fr = next;
        n++;
    }
    return n;
}
