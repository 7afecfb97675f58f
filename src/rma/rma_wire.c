/*
 * rma_wire.c — decoding and checking the emulated back end's headers (see rma_wire.h).
 */
#include "rma/rma_wire.h"

#include <string.h>

static int wire_fail(const char **why, const char *what)
{
    *why = what;
    return -1;
}

int mf_rma_wire_decode(const void *msg, size_t len, const mf_rma_wire_win *win, mf_rma_hdr *h,
                       size_t *payload_len, const char **why)
{
    if (len < sizeof *h)
        return wire_fail(why, "shorter than a header");
    memcpy(h, msg, sizeof *h);
    if (h->h_kind < MF_RMA_PUT || h->h_kind > MF_RMA_CLOSE)
        return wire_fail(why, "unknown kind");
    if (h->h_reply_tag < MF_RMA_TAG_REPLY)
        return wire_fail(why, "reply tag outside the reply range");
    if (h->h_nseg < 0 || h->h_data < 0 || h->h_result < 0)
        return wire_fail(why, "negative count");
    if (h->h_inline != 0 && h->h_inline != 1)
        return wire_fail(why, "inline flag neither 0 nor 1");
    int64_t seg_bytes = (int64_t)h->h_nseg * 2 * (int64_t)sizeof(int64_t), total;
    if (__builtin_add_overflow(seg_bytes, h->h_data, &total) || (uint64_t)total > SIZE_MAX)
        return wire_fail(why, "payload length overflows");
    if (!win->dynamic) {
        /* a segment is at least one byte and lies in the window; data at most twice that (CAS) */
        if (h->h_nseg > win->size || h->h_data / 2 > win->size || h->h_result > win->size)
            return wire_fail(why, "counts larger than the window");
    }
    if (h->h_inline ? len != sizeof *h + (size_t)total : len != sizeof *h)
        return wire_fail(why, "message length differs from the header's");
    *payload_len = (size_t)total;
    return 0;
}

int mf_rma_wire_check_payload(const mf_rma_hdr *h, const void *payload, const mf_rma_wire_win *win,
                              const char **why)
{
    int64_t total = 0;
    for (int i = 0; i < h->h_nseg; i++) {
        int64_t off, len;
        mf_rma_wire_segment(payload, i, &off, &len);
        if (len < 0 || __builtin_add_overflow(total, len, &total))
            return wire_fail(why, "segment length negative or overflowing");
        if (__builtin_add_overflow(h->h_disp, off, &off))
            return wire_fail(why, "segment offset overflows");
        if (!win->dynamic && (off < 0 || off > win->size - len))
            return wire_fail(why, "segment outside the window");
    }
    bool ok;
    switch (h->h_kind) {
    case MF_RMA_PUT:
    case MF_RMA_ACC:
        ok = h->h_data == total;
        break;
    case MF_RMA_CAS:
        ok = total <= INT64_MAX / 2 && h->h_data == 2 * total && h->h_result == total;
        break;
    case MF_RMA_GACC:
        ok = (h->h_data == total || h->h_data == 0) && h->h_result == total;
        break;
    case MF_RMA_GET:
        ok = h->h_result == total && h->h_data == 0;
        break;
    default:
        ok = h->h_nseg == 0 && h->h_data == 0;
        break;
    }
    return ok ? 0 : wire_fail(why, "segments and data or result lengths disagree");
}
