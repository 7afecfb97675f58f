/*
 * Frame header codec: see wire.h. Layout (little-endian, offsets in bytes):
 *    0 magic 'M','F'   2 version   3 type   4 flags   5..7 zero
 *    8 context (u32)  12 src (i32)  16 tag (i32)  20 zero (u32)
 *   24 len (u64)      32 total (u64)  40 sreq (u64)  48 rreq (u64)  56 rkey (u64)
 */
#include "fabric/wire.h"

#include <string.h>

void mf_wire_encode(const mf_wire_hdr *h, unsigned char out[MF_WIRE_HDR_SIZE])
{
    memset(out, 0, MF_WIRE_HDR_SIZE);
    out[0] = 'M';
    out[1] = 'F';
    out[2] = MF_WIRE_VERSION;
    out[3] = h->type;
    out[4] = h->flags;
    mf_wire_put32(out + 8, h->context);
    mf_wire_put32(out + 12, (uint32_t)h->src);
    mf_wire_put32(out + 16, (uint32_t)h->tag);
    mf_wire_put64(out + 24, h->len);
    mf_wire_put64(out + 32, h->total);
    mf_wire_put64(out + 40, h->sreq);
    mf_wire_put64(out + 48, h->rreq);
    mf_wire_put64(out + 56, h->rkey);
}

int mf_wire_decode(const unsigned char in[MF_WIRE_HDR_SIZE], mf_wire_hdr *h, const char **why)
{
    if (in[0] != 'M' || in[1] != 'F') {
        *why = "bad magic (not a Manifold frame)";
        return -1;
    }
    if (in[2] != MF_WIRE_VERSION) {
        *why = "unsupported wire version";
        return -1;
    }
    h->type = in[3];
    h->flags = in[4];
    h->context = mf_wire_get32(in + 8);
    h->src = (int32_t)mf_wire_get32(in + 12);
    h->tag = (int32_t)mf_wire_get32(in + 16);
    h->len = mf_wire_get64(in + 24);
    h->total = mf_wire_get64(in + 32);
    h->sreq = mf_wire_get64(in + 40);
    h->rreq = mf_wire_get64(in + 48);
    h->rkey = mf_wire_get64(in + 56);
    return mf_wire_check(h, why);
}

int mf_wire_check(const mf_wire_hdr *h, const char **why)
{
    if (h->type < MF_MSG_EAGER || h->type > MF_MSG_TYPE_MAX) {
        *why = "unknown frame type";
        return -1;
    }
    if (h->flags & ~MF_WIRE_FLAGS_ALL) {
        *why = "unknown flags";
        return -1;
    }
    if (h->len > MF_WIRE_MAX_FRAME) {
        *why = "frame length above the maximum";
        return -1;
    }
    if (h->src < 0) {
        *why = "negative source rank";
        return -1;
    }
    switch (h->type) {
    case MF_MSG_EAGER:
        if (h->len != h->total) {
            *why = "eager frame whose length differs from the message size";
            return -1;
        }
        if (h->tag < 0) {
            *why = "negative tag";
            return -1;
        }
        break;
    case MF_MSG_RTS:
        if (h->len != 0 || h->tag < 0) {
            *why = "rendezvous request with payload or negative tag";
            return -1;
        }
        break;
    case MF_MSG_DATA:
        if (h->total > UINT64_MAX - h->len) {
            *why = "data frame offset overflows";
            return -1;
        }
        break;
    default: /* control frames carry no payload */
        if (h->len != 0) {
            *why = "control frame with payload";
            return -1;
        }
        break;
    }
    return 0;
}

int mf_wire_same(const mf_wire_hdr *a, const mf_wire_hdr *b)
{
    return a->type == b->type && a->flags == b->flags && a->context == b->context &&
           a->src == b->src && a->tag == b->tag && a->len == b->len && a->total == b->total &&
           a->sreq == b->sreq && a->rreq == b->rreq && a->rkey == b->rkey;
}
