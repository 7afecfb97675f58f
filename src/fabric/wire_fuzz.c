/*
 * wire_fuzz.c — libFuzzer target for the frame header decoder: any 64 bytes either decode to a
 * header that satisfies every invariant the receivers rely on, or are rejected with a reason;
 * an accepted header survives encode/decode unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char in[MF_WIRE_HDR_SIZE] = {0};
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    mf_wire_hdr h, again;
    const char *why = NULL;
    if (mf_wire_decode(in, &h, &why) != 0) {
        if (!why || !*why)
            abort(); /* every rejection names its reason */
        return 0;
    }
    /* Invariants the stream receiver and the p2p layer rely on. */
    if (h.len > MF_WIRE_MAX_FRAME || h.src < 0 || h.type < MF_MSG_EAGER ||
        h.type > MF_MSG_TYPE_MAX || (h.flags & ~MF_WIRE_FLAGS_ALL))
        abort();
    if (h.type == MF_MSG_EAGER && (h.len != h.total || h.tag < 0))
        abort();
    if (h.type != MF_MSG_EAGER && h.type != MF_MSG_DATA && h.len != 0)
        abort();
    if (h.type == MF_MSG_DATA && h.total + h.len < h.total)
        abort();
    unsigned char out[MF_WIRE_HDR_SIZE];
    mf_wire_encode(&h, out);
    if (mf_wire_decode(out, &again, &why) != 0)
        abort();
    if (!mf_wire_same(&h, &again))
        abort();
    return 0;
}
