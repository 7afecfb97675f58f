/*
 * stream_in.c — the inbound state machine of a byte stream (see stream.h).
 *
 * Bytes are read into a staging buffer so that one read picks up many small frames; headers are
 * decoded from there and small payloads copied out. When the staging buffer is empty and a
 * payload is due, the read goes straight into the sink's iovecs, with the staging buffer as the
 * last iovec to catch whatever follows: a large message costs no copy at all, and a small one no
 * extra system call.
 *
 * Safety: every header goes through mf_wire_decode before any field is used; payload bytes land
 * only inside the sink's iovecs (the part of a payload the sink has no room for is dropped) or
 * inside the staging buffer's free space.
 */
#include "fabric/stream/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MF_STREAM_READ_IOV 64
#define MF_STREAM_READ_BUDGET 16

enum { MF_SI_HDR, MF_SI_PAYLOAD, MF_SI_BYE, MF_SI_DEAD };

int mf_stream_in_init(mf_stream_in *in, size_t staging, mf_stream_on_header on_header, void *ctx)
{
    memset(in, 0, sizeof *in);
    if (staging < 2 * MF_WIRE_HDR_SIZE)
        staging = 2 * MF_WIRE_HDR_SIZE;
    in->si_buf = malloc(staging);
    if (!in->si_buf)
        return mf_error(MPI_ERR_NO_MEM, "stream: no memory for a %zu-byte receive buffer", staging);
    in->si_cap = staging;
    in->si_on_header = on_header;
    in->si_ctx = ctx;
    in->si_state = MF_SI_HDR;
    in->si_read_budget = MF_STREAM_READ_BUDGET;
    return MPI_SUCCESS;
}

void mf_stream_in_free(mf_stream_in *in)
{
    free(in->si_buf);
    in->si_buf = NULL;
    in->si_cap = in->si_rpos = in->si_wpos = 0;
    in->si_state = MF_SI_DEAD;
}

bool mf_stream_in_mid_frame(const mf_stream_in *in)
{
    return in->si_state == MF_SI_PAYLOAD ||
           (in->si_state == MF_SI_HDR && in->si_rpos < in->si_wpos);
}

void mf_stream_in_abort(mf_stream_in *in, int status)
{
    bool live = in->si_state == MF_SI_PAYLOAD;
    in->si_state = MF_SI_DEAD;
    if (live && in->si_sink.fs_done)
        in->si_sink.fs_done(&in->si_sink, status);
}

static int mf_stream_in_fail(mf_stream_in *in, const char *why, int sys_err)
{
    in->why = why;
    in->sys_err = sys_err;
    /* The state stays as it was, so that mf_stream_in_abort still completes a live sink with
     * the owner's error code. */
    return MF_STREAM_FAILED;
}

/* The current frame's payload is complete. */
static void mf_stream_in_finish(mf_stream_in *in, int *delivered)
{
    in->si_state = MF_SI_HDR;
    (*delivered)++;
    if (in->si_sink.fs_done)
        in->si_sink.fs_done(&in->si_sink, MPI_SUCCESS);
}

/* Copies up to n bytes into the sink from its current position; returns how many it took. */
static size_t mf_stream_sink_put(mf_stream_in *in, const unsigned char *src, size_t n)
{
    mf_fabric_sink *s = &in->si_sink;
    size_t took = 0;
    while (took < n && in->si_iov_idx < s->fs_niov) {
        struct iovec *v = &s->fs_iov[in->si_iov_idx];
        size_t room = v->iov_len - in->si_iov_off;
        size_t k = n - took < room ? n - took : room;
        if (k)
            memcpy((unsigned char *)v->iov_base + in->si_iov_off, src + took, k);
        took += k;
        in->si_iov_off += k;
        if (in->si_iov_off == v->iov_len) {
            in->si_iov_idx++;
            in->si_iov_off = 0;
        }
    }
    return took;
}

/* Advances the sink position by n bytes that a read put there directly. */
static void mf_stream_sink_skip(mf_stream_in *in, size_t n)
{
    mf_fabric_sink *s = &in->si_sink;
    while (n > 0 && in->si_iov_idx < s->fs_niov) {
        size_t room = s->fs_iov[in->si_iov_idx].iov_len - in->si_iov_off;
        size_t k = n < room ? n : room;
        n -= k;
        in->si_iov_off += k;
        if (in->si_iov_off == s->fs_iov[in->si_iov_idx].iov_len) {
            in->si_iov_idx++;
            in->si_iov_off = 0;
        }
    }
}

static bool mf_stream_is_bye(const unsigned char *p)
{
    if (p[0] != 'M' || p[1] != 'F' || p[2] != MF_WIRE_VERSION || p[3] != 0)
        return false;
    for (int i = 4; i < MF_WIRE_HDR_SIZE; i++)
        if (p[i])
            return false;
    return true;
}

/* Makes room in the staging buffer for `need` bytes from the read position (need <= si_cap):
 * moves the staged bytes to the front when they would not fit. */
static void mf_stream_in_room(mf_stream_in *in, size_t need)
{
    if (in->si_rpos == in->si_wpos) {
        in->si_rpos = in->si_wpos = 0;
    } else if (in->si_cap - in->si_rpos < need) {
        size_t have = in->si_wpos - in->si_rpos;
        memmove(in->si_buf, in->si_buf + in->si_rpos, have);
        in->si_rpos = 0;
        in->si_wpos = have;
    }
}

/* Delivers what the staging buffer holds. 0, or MF_STREAM_FAILED. */
static int mf_stream_in_consume(mf_stream_in *in, int *delivered)
{
    for (;;) {
        size_t avail = in->si_wpos - in->si_rpos;
        const unsigned char *p = in->si_buf + in->si_rpos;
        switch (in->si_state) {
        case MF_SI_HDR: {
            if (avail < MF_WIRE_HDR_SIZE)
                return 0;
            in->si_rpos += MF_WIRE_HDR_SIZE;
            if (mf_stream_is_bye(p)) {
                in->si_state = MF_SI_BYE;
                continue;
            }
            const char *why;
            if (mf_wire_decode(p, &in->si_hdr, &why) != 0)
                return mf_stream_in_fail(in, why, 0);
            memset(&in->si_sink, 0, sizeof in->si_sink);
            in->si_on_header(in->si_ctx, &in->si_hdr, &in->si_sink);
            /* A sink without iovecs takes nothing: the payload is dropped. */
            if (in->si_sink.fs_niov < 0 || !in->si_sink.fs_iov)
                in->si_sink.fs_niov = 0;
            in->si_iov_idx = 0;
            in->si_iov_off = 0;
            in->si_left = in->si_hdr.len;
            in->si_state = MF_SI_PAYLOAD;
            if (in->si_left == 0)
                mf_stream_in_finish(in, delivered);
            continue;
        }
        case MF_SI_PAYLOAD: {
            if (avail == 0)
                return 0;
            size_t take = avail < in->si_left ? avail : (size_t)in->si_left;
            mf_stream_sink_put(in, p, take);
            in->si_rpos += take;
            in->si_left -= take;
            if (in->si_left == 0)
                mf_stream_in_finish(in, delivered);
            continue;
        }
        case MF_SI_BYE:
            if (avail > 0)
                return mf_stream_in_fail(in, "data after the goodbye record", 0);
            return 0;
        default:
            return mf_stream_in_fail(in, "receive on a broken stream", 0);
        }
    }
}

int mf_stream_in_progress(mf_stream_in *in, mf_stream_io *io)
{
    int delivered = 0;
    bool moved = false; /* any byte read: the result is then at least 1 (see stream.h) */
    for (int reads = 0;; reads++) {
        if (mf_stream_in_consume(in, &delivered) != 0)
            return MF_STREAM_FAILED;
        if (reads >= in->si_read_budget)
            return delivered ? delivered : moved;

        /* Make room: all staged bytes are consumed except an incomplete header. */
        mf_stream_in_room(in, in->si_wpos - in->si_rpos + MF_WIRE_HDR_SIZE);

        struct iovec v[MF_STREAM_READ_IOV];
        int nv = 0;
        size_t direct = 0;
        if (in->si_state == MF_SI_PAYLOAD && in->si_rpos == in->si_wpos) {
            mf_fabric_sink *s = &in->si_sink;
            for (int i = in->si_iov_idx;
                 i < s->fs_niov && nv < MF_STREAM_READ_IOV - 1 && direct < in->si_left; i++) {
                size_t off = i == in->si_iov_idx ? in->si_iov_off : 0;
                size_t l = s->fs_iov[i].iov_len - off;
                if (l > in->si_left - direct)
                    l = (size_t)(in->si_left - direct);
                if (!l)
                    continue;
                v[nv].iov_base = (unsigned char *)s->fs_iov[i].iov_base + off;
                v[nv].iov_len = l;
                direct += l;
                nv++;
            }
        }
        v[nv].iov_base = in->si_buf + in->si_wpos;
        v[nv].iov_len = in->si_cap - in->si_wpos;
        nv++;

        if (in->si_peek_err) /* met by mf_stream_in_peek, after what was staged before it */
            return mf_stream_in_fail(in, "read failed", in->si_peek_err);
        ssize_t n = io->io_readv(io, v, nv);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return delivered ? delivered : moved;
            return mf_stream_in_fail(in, "read failed", errno);
        }
        if (n == 0) {
            if (in->si_state == MF_SI_BYE)
                return MF_STREAM_CLOSED;
            return mf_stream_in_fail(in,
                                     mf_stream_in_mid_frame(in)
                                         ? "connection closed by the peer in the middle of a frame"
                                         : "connection closed by the peer",
                                     0);
        }
        moved = true;
        size_t d = (size_t)n < direct ? (size_t)n : direct;
        if (d) {
            mf_stream_sink_skip(in, d);
            in->si_left -= d;
            if (in->si_left == 0)
                mf_stream_in_finish(in, &delivered);
        }
        in->si_wpos += (size_t)n - d;
        if ((size_t)n < direct + v[nv - 1].iov_len) {
            /* A short read drained the socket: deliver what came and stop here rather than pay
             * a system call for the EAGAIN (the fd stays readable if more arrived meanwhile). */
            if (mf_stream_in_consume(in, &delivered) != 0)
                return MF_STREAM_FAILED;
            return delivered ? delivered : 1;
        }
    }
}

int mf_stream_in_peek(mf_stream_in *in, mf_stream_io *io, mf_wire_hdr *hdr)
{
    if (in->si_state != MF_SI_HDR || in->si_peek_err)
        return -1;
    for (bool read = false;; read = true) {
        size_t avail = in->si_wpos - in->si_rpos;
        size_t need = avail + MF_WIRE_HDR_SIZE; /* room for the header at least */
        if (avail >= MF_WIRE_HDR_SIZE) {
            const unsigned char *p = in->si_buf + in->si_rpos;
            const char *why;
            /* A goodbye or a bad header is progress's to handle (and report). */
            if (mf_stream_is_bye(p) || mf_wire_decode(p, hdr, &why) != 0 ||
                hdr->type != MF_MSG_EAGER)
                return -1;
            if (hdr->len <= avail - MF_WIRE_HDR_SIZE)
                return 1;
            /* A frame the staging buffer cannot hold whole is read by progress, whose reads
             * go straight into the receiver's buffer. */
            if (hdr->len > in->si_cap - MF_WIRE_HDR_SIZE)
                return -1;
            need = MF_WIRE_HDR_SIZE + (size_t)hdr->len;
        }
        if (read)
            return 0;
        mf_stream_in_room(in, need);
        struct iovec v = {in->si_buf + in->si_wpos, in->si_cap - in->si_wpos};
        ssize_t n = io->io_readv(io, &v, 1);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                in->si_peek_err = errno;
            return in->si_peek_err ? -1 : 0;
        }
        if (n == 0)
            return -1; /* the end of the stream: progress reads it again and decides */
        in->si_wpos += (size_t)n;
    }
}

void mf_stream_in_take(mf_stream_in *in, const mf_wire_hdr *hdr, const struct iovec *iov, int niov)
{
    /* The payload goes through the sink copy as progress would, the caller's iovecs as the
     * sink for the duration of the call only. */
    memset(&in->si_sink, 0, sizeof in->si_sink);
    in->si_sink.fs_iov = (struct iovec *)iov;
    in->si_sink.fs_niov = niov > 0 && iov ? niov : 0;
    in->si_iov_idx = 0;
    in->si_iov_off = 0;
    mf_stream_sink_put(in, in->si_buf + in->si_rpos + MF_WIRE_HDR_SIZE, (size_t)hdr->len);
    memset(&in->si_sink, 0, sizeof in->si_sink);
    in->si_rpos += MF_WIRE_HDR_SIZE + (size_t)hdr->len;
    if (in->si_rpos == in->si_wpos)
        in->si_rpos = in->si_wpos = 0;
}
