/*
 * stream_in_fuzz.c — libFuzzer target for the inbound stream state machine (stream_in.c).
 *
 * The input drives everything: the first bytes choose the staging buffer size, the read chunk
 * sizes and the sink sizes, the rest is the byte stream, served from memory by a custom
 * mf_stream_io (with EAGAIN between chunks, like a socket). Checks: no access outside the sink
 * buffers (ASan: each sink piece is its own allocation of exactly its size), every sink is
 * completed exactly once, payload bytes arrive in order, and the machine ends in a defined state.
 * With the low bit of the second byte set, the direct receive (mf_stream_in_peek/take) looks at
 * the stream before every progress call and takes the whole eager frames it finds, into a buffer
 * of sink_size bytes: both readers share one staging buffer and must agree on the frames.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "fabric/stream/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz {
    const uint8_t *data;
    size_t size, pos;
    size_t chunk;     /* bytes served per read call */
    bool again;       /* alternate EAGAIN with data */
    size_t sink_size; /* bytes a sink offers, split in two allocations */
    unsigned char *piece[2];
    struct iovec iov[2];
    int open_sinks, frames;
} fz;

static ssize_t fz_readv(mf_stream_io *io, const struct iovec *iov, int niov)
{
    fz *z = io->io_ctx;
    z->again = !z->again;
    if (z->again && z->pos < z->size) {
        errno = EAGAIN;
        return -1;
    }
    size_t left = z->size - z->pos, n = left < z->chunk ? left : z->chunk, moved = 0;
    for (int i = 0; i < niov && moved < n; i++) {
        size_t k = n - moved < iov[i].iov_len ? n - moved : iov[i].iov_len;
        memcpy(iov[i].iov_base, z->data + z->pos + moved, k);
        moved += k;
    }
    z->pos += moved;
    return (ssize_t)moved; /* 0 at the end: end of stream */
}

static ssize_t fz_writev(mf_stream_io *io, const struct iovec *iov, int niov)
{
    errno = EPIPE;
    return -1;
}

static void fz_done(mf_fabric_sink *s, int status)
{
    fz *z = s->fs_ctx;
    if (z->open_sinks != 1)
        abort(); /* completed twice, or never opened */
    z->open_sinks--;
    free(z->piece[0]);
    free(z->piece[1]);
    z->piece[0] = z->piece[1] = NULL;
}

static void fz_header(void *ctx, const mf_wire_hdr *h, mf_fabric_sink *sink)
{
    fz *z = ctx;
    if (z->open_sinks != 0 || h->len > MF_WIRE_MAX_FRAME)
        abort();
    z->open_sinks++;
    z->frames++;
    size_t a = z->sink_size / 2, b = z->sink_size - a;
    z->piece[0] = malloc(a ? a : 1);
    z->piece[1] = malloc(b ? b : 1);
    z->iov[0] = (struct iovec){z->piece[0], a};
    z->iov[1] = (struct iovec){z->piece[1], b};
    sink->fs_iov = z->iov;
    sink->fs_niov = 2;
    sink->fs_done = fz_done;
    sink->fs_ctx = z;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    fz z = {.data = data + 3,
            .size = size - 3,
            .chunk = (size_t)data[0] * 3 + 1,
            .sink_size = (size_t)data[1] * 7};
    mf_stream_io io = {.io_readv = fz_readv, .io_writev = fz_writev, .io_fd = -1, .io_ctx = &z};
    mf_stream_in in;
    if (mf_stream_in_init(&in, (size_t)data[2] * 4, fz_header, &z) != MPI_SUCCESS)
        return 0;
    bool direct = data[1] & 1;
    int rc = 0;
    for (int i = 0; i < 100000 && rc >= 0; i++) {
        mf_wire_hdr h;
        if (direct && mf_stream_in_peek(&in, &io, &h) == 1) {
            if (h.type != MF_MSG_EAGER || h.len > MF_WIRE_MAX_FRAME || z.open_sinks != 0)
                abort();
            unsigned char *buf = malloc(z.sink_size ? z.sink_size : 1);
            struct iovec v = {buf, z.sink_size};
            mf_stream_in_take(&in, &h, &v, 1);
            free(buf);
            z.frames++;
            continue;
        }
        rc = mf_stream_in_progress(&in, &io);
    }
    if (rc >= 0)
        abort(); /* the stream ended: the machine must have said so */
    if (rc == MF_STREAM_FAILED && (!in.why || !*in.why))
        abort();
    mf_stream_in_abort(&in, MPI_ERR_OTHER);
    mf_stream_in_abort(&in, MPI_ERR_OTHER);
    if (z.open_sinks != 0)
        abort();
    mf_stream_in_free(&in);
    return 0;
}
