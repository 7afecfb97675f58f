/*
 * The self fabric: frames a process sends to itself.
 *
 * A frame is queued (header copied, payload iovecs kept) and delivered on the next progress pass,
 * because upcalls may only run inside progress; a thread asleep in the engine is kicked awake
 * for it. Rendezvous pulls are a memcpy: the rkey is the buffer's address, so large messages to
 * self are copied once, straight into the receive buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/progress.h"
#include "core/state.h"
#include "fabric/fabric.h"

typedef struct mf_self_frame {
    struct mf_self_frame *sf_next;
    mf_wire_hdr sf_hdr;
    const struct iovec *sf_iov; /* the sender's iovecs, valid until sf_done is called */
    int sf_niov;
    mf_fabric_done *sf_done;
    unsigned char *sf_copy; /* payload copied when the sender asked for MF_FABRIC_DONE */
} mf_self_frame;

typedef struct mf_self {
    mf_fabric s_fabric;
    mf_self_frame *s_head, *s_tail;
} mf_self;

static mf_self *mf_self_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_self, s_fabric);
}

/* Copies up to `len` bytes gathered from src iovecs, starting `skip` bytes in, into dst iovecs. */
static void mf_self_copy(const struct iovec *dst, int ndst, const struct iovec *src, int nsrc,
                         size_t len)
{
    int d = 0, s = 0;
    size_t doff = 0, soff = 0;
    while (len > 0 && d < ndst && s < nsrc) {
        size_t n = dst[d].iov_len - doff;
        if (src[s].iov_len - soff < n)
            n = src[s].iov_len - soff;
        if (len < n)
            n = len;
        memcpy((char *)dst[d].iov_base + doff, (const char *)src[s].iov_base + soff, n);
        len -= n;
        doff += n;
        soff += n;
        if (doff == dst[d].iov_len) {
            d++;
            doff = 0;
        }
        if (soff == src[s].iov_len) {
            s++;
            soff = 0;
        }
    }
}

static int mf_self_open(mf_fabric *f)
{
    return MPI_SUCCESS;
}

static int mf_self_start(mf_fabric *f)
{
    return MPI_SUCCESS;
}

static int mf_self_close(mf_fabric *f)
{
    mf_self *s = mf_self_of(f);
    while (s->s_head) {
        mf_self_frame *fr = s->s_head;
        s->s_head = fr->sf_next;
        free(fr->sf_copy);
        free(fr);
    }
    s->s_tail = NULL;
    return MPI_SUCCESS;
}

static bool mf_self_reachable(mf_fabric *f, int peer)
{
    return peer == mf_g.rank;
}

static int mf_self_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                        int niov, mf_fabric_done *done)
{
    mf_self *s = mf_self_of(f);
    mf_self_frame *fr = calloc(1, sizeof *fr);
    if (!fr)
        return mf_error(MPI_ERR_NO_MEM, "self: no memory to queue a frame");
    fr->sf_hdr = *hdr;
    fr->sf_iov = iov;
    fr->sf_niov = niov;
    fr->sf_done = done;
    int rc = MF_FABRIC_PENDING;
    if (!done && hdr->len > 0) {
        /* No completion wanted: the payload must be copied now. */
        fr->sf_copy = malloc(hdr->len);
        if (!fr->sf_copy) {
            free(fr);
            return mf_error(MPI_ERR_NO_MEM, "self: no memory for a %llu-byte frame",
                            (unsigned long long)hdr->len);
        }
        struct iovec whole = {fr->sf_copy, hdr->len};
        mf_self_copy(&whole, 1, iov, niov, hdr->len);
        rc = MF_FABRIC_DONE;
    } else if (!done) {
        rc = MF_FABRIC_DONE;
    }
    if (s->s_tail)
        s->s_tail->sf_next = fr;
    else
        s->s_head = fr;
    s->s_tail = fr;
    mf_fabric_count_tx(f, hdr);
    /* Another thread may sleep waiting for this frame: nothing else would wake it (the self
     * fabric has no descriptor). */
    mf_progress_kick();
    return rc;
}

static int mf_self_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    *rkey = (uint64_t)(uintptr_t)addr;
    return MPI_SUCCESS;
}

static int mf_self_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset,
                        const struct iovec *iov, int niov, size_t len, mf_fabric_done *done)
{
    struct iovec src = {(char *)(uintptr_t)rkey + offset, len};
    mf_self_copy(iov, niov, &src, 1, len);
    return MF_FABRIC_DONE;
}

static int mf_self_progress(mf_fabric *f)
{
    mf_self *s = mf_self_of(f);
    if (!s->s_head)
        return 0; /* the usual pass: nothing sent to ourselves */
    /* Deliver only what was queued before this pass: upcalls may queue more (e.g. a CTS). */
    mf_self_frame *last = s->s_tail;
    int n = 0;
    while (s->s_head) {
        mf_self_frame *fr = s->s_head;
        s->s_head = fr->sf_next;
        if (!s->s_head)
            s->s_tail = NULL;
        mf_fabric_sink sink = {0};
        mf_fabric_count_rx(f, &fr->sf_hdr);
        mf_fabric_rx_header(f, mf_g.rank, &fr->sf_hdr, &sink);
        if (fr->sf_copy) {
            struct iovec whole = {fr->sf_copy, fr->sf_hdr.len};
            mf_self_copy(sink.fs_iov, sink.fs_niov, &whole, 1, fr->sf_hdr.len);
        } else {
            mf_self_copy(sink.fs_iov, sink.fs_niov, fr->sf_iov, fr->sf_niov, fr->sf_hdr.len);
        }
        if (sink.fs_done)
            sink.fs_done(&sink, MPI_SUCCESS);
        if (fr->sf_done)
            fr->sf_done->fd_fn(fr->sf_done, MPI_SUCCESS);
        free(fr->sf_copy);
        n++;
        bool was_last = fr == last;
        free(fr);
        if (was_last)
            break;
    }
    return n;
}

static bool mf_self_sleep_prepare(mf_fabric *f)
{
    return (mf_self_of(f))->s_head == NULL;
}

static bool mf_self_tx_idle(mf_fabric *f)
{
    return (mf_self_of(f))->s_head == NULL;
}

static const mf_fabric_ops mf_self_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_self_open,
    .start = mf_self_start,
    .close = mf_self_close,
    .reachable = mf_self_reachable,
    .send = mf_self_send,
    .rkey_make = mf_self_rkey_make,
    .rkey_release = mf_fabric_no_rkey_release,
    .rget = mf_self_rget,
    .progress = mf_self_progress,
    .wait_fd = mf_fabric_no_wait_fd,
    .sleep_prepare = mf_self_sleep_prepare,
    .sleep_end = mf_fabric_no_sleep_end,
    .tx_idle = mf_self_tx_idle,
    .break_peer = mf_fabric_no_break_peer,
};

static void mf_self_init(mf_fabric *f)
{
    f->flags = MF_FABRIC_RGET | MF_FABRIC_INJECT;
    f->eager_limit = 65536;
    f->max_frame = MF_WIRE_MAX_FRAME;
    f->poll_interval_us = 0; /* nothing arrives while asleep: frames to self are queued by send */
}

const mf_fabric_class mf_self_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "self",
    .ops = &mf_self_ops,
    .caps = MF_FABRIC_CAP_RELIABLE | MF_FABRIC_CAP_ORDERED | MF_FABRIC_CAP_RMA_READ,
    .max_message = MF_WIRE_MAX_FRAME,
    .instance_size = sizeof(mf_self),
    .init = mf_self_init,
};
