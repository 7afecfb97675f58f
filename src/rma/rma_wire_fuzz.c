/*
 * rma_wire_fuzz.c — libFuzzer target for the RMA header decoder (rma_wire.c): any bytes, as a
 * header message to a window of any size (fixed or dynamic), either are rejected with a reason
 * or decode to a header whose payload length is what the message carries (inline) and within
 * the window's bounds; any payload then either is rejected or lists segments that all lie in
 * the window and add up to what the header says the operation moves. What the target does with
 * an accepted operation (allocate the payload, copy the segments) relies on exactly that.
 *
 * Input: 1 byte of window choice, 8 bytes of window size, then the message; when the header is
 * not inline, the bytes after it serve as the payload.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rma/rma_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    mf_rma_wire_win win = {.dynamic = data[0] & 1};
    memcpy(&win.size, data + 1, sizeof win.size);
    if (win.size < 0)
        win.size = -(win.size + 1);
    if (data[0] & 2)
        win.size %= 1 << 20; /* small windows too, where bounds bite */
    const uint8_t *msg = data + 9;
    size_t len = size - 9;
    mf_rma_hdr h;
    size_t plen = 0;
    const char *why = NULL;
    if (mf_rma_wire_decode(msg, len, &win, &h, &plen, &why) != 0) {
        if (!why || !*why)
            abort(); /* every rejection names its reason */
        return 0;
    }
    if (h.h_kind < MF_RMA_PUT || h.h_kind > MF_RMA_CLOSE || h.h_nseg < 0 || h.h_data < 0 ||
        h.h_result < 0 || h.h_reply_tag < MF_RMA_TAG_REPLY)
        abort();
    if (plen != (size_t)h.h_nseg * 2 * sizeof(int64_t) + (size_t)h.h_data)
        abort();
    if (h.h_inline && len != sizeof h + plen)
        abort();
    if (!h.h_inline && len != sizeof h)
        abort();
    if (!win.dynamic && (h.h_result > win.size || h.h_data / 2 > win.size))
        abort();
    /* the payload: inline, or whatever follows (a separate message in the protocol) */
    const uint8_t *payload = msg + sizeof h;
    size_t avail = len - sizeof h;
    uint8_t *own = NULL;
    if (!h.h_inline) {
        if (plen > 1 << 16)
            return 0; /* the target would allocate it; nothing more to check here */
        own = calloc(1, plen + 1);
        if (!own)
            return 0;
        memcpy(own, payload, avail < plen ? avail : plen);
        payload = own;
    }
    if (mf_rma_wire_check_payload(&h, payload, &win, &why) != 0) {
        free(own);
        if (!why || !*why)
            abort();
        return 0;
    }
    int64_t total = 0;
    for (int i = 0; i < h.h_nseg; i++) {
        int64_t off, slen;
        mf_rma_wire_segment(payload, i, &off, &slen);
        if (slen < 0)
            abort();
        int64_t at = h.h_disp + off; /* the check guarantees it does not overflow */
        if (!win.dynamic && (at < 0 || at + slen > win.size))
            abort();
        total += slen;
    }
    switch (h.h_kind) {
    case MF_RMA_PUT:
    case MF_RMA_ACC:
        if (h.h_data != total)
            abort();
        break;
    case MF_RMA_GET:
        if (h.h_result != total || h.h_data)
            abort();
        break;
    case MF_RMA_CAS:
        if (h.h_data != 2 * total || h.h_result != total)
            abort();
        break;
    case MF_RMA_GACC:
        if (h.h_result != total || (h.h_data && h.h_data != total))
            abort();
        break;
    default:
        if (h.h_nseg || h.h_data)
            abort();
    }
    free(own);
    return 0;
}
