/*
 * frame.c — the layout of a frame's first 64-byte line in a shm ring (see shm.h, "Frames").
 *
 * The stream fabrics send the 64-byte wire header (wire.h) before every payload; in shared
 * memory that would cost a second cache line, and a line moved between cores is the dominant
 * cost of a small message. So shm uses its own, denser header line, in host byte order (both
 * ends are on one host and run the same library):
 *
 *    0 marker (u32, written last)   4 type (u8)   5 flags (u8)   6 shm flags (u8)   7 zero (u8)
 *    8 context (u32)  12 src (i32)  16 tag (i32)  20 len (u32)   24 sreq (u64)
 *   EAGER:   32.. the payload begins here and continues over the following lines
 *   others:  32 total (u64)  40 rreq (u64)  48 rkey (u64)  56 zero (u64); payload from 64
 *
 * so an eager message of up to 32 bytes travels in one line. An eager header's total is its len.
 * The shm flags are 0, or MF_SHM_FRAME_INDIRECT: the frame is this one line and its len payload
 * bytes stay in the sender's memory at the address in bytes 56..63 (any type), for the receiver
 * to read with process_vm_readv (see shm.c, "Indirect frames").
 * The decoder applies the same checks as every other fabric (mf_wire_check) plus the ones of
 * this layout; what it rejects is reported by the caller as a broken peer.
 */
#include <string.h>

#include "fabric/shm/shm.h"

static void mf_shm_put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void mf_shm_put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static uint32_t mf_shm_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t mf_shm_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

void mf_shm_frame_encode(const mf_wire_hdr *h, unsigned char *line)
{
    line[4] = h->type;
    line[5] = h->flags;
    line[6] = line[7] = 0; /* a direct frame; mf_shm_frame_set_indirect may change it */
    mf_shm_put32(line + 8, h->context);
    mf_shm_put32(line + 12, (uint32_t)h->src);
    mf_shm_put32(line + 16, (uint32_t)h->tag);
    mf_shm_put32(line + 20, (uint32_t)h->len);
    mf_shm_put64(line + 24, h->sreq);
    if (h->type == MF_MSG_EAGER)
        return;
    mf_shm_put64(line + 32, h->total);
    mf_shm_put64(line + 40, h->rreq);
    mf_shm_put64(line + 48, h->rkey);
    mf_shm_put64(line + 56, 0);
}

void mf_shm_frame_set_indirect(unsigned char *line, uint64_t addr)
{
    line[6] = MF_SHM_FRAME_INDIRECT;
    mf_shm_put64(line + 56, addr);
}

uint64_t mf_shm_frame_indirect(const unsigned char *line)
{
    return line[6] == MF_SHM_FRAME_INDIRECT ? mf_shm_get64(line + 56) : 0;
}

int mf_shm_frame_decode(const unsigned char *line, uint32_t marker, size_t max_len, mf_wire_hdr *h,
                        const char **why)
{
    /* The common case first: a valid eager frame, checked with the same rules as mf_wire_check
     * in a few compares (anything else, valid or not, takes the full path below). */
    if (line[4] == MF_MSG_EAGER && mf_shm_get32(line) == marker &&
        !(line[5] & ~MF_WIRE_FLAGS_ALL) && line[6] == 0 && line[7] == 0) {
        h->type = MF_MSG_EAGER;
        h->flags = line[5];
        h->context = mf_shm_get32(line + 8);
        h->src = (int32_t)mf_shm_get32(line + 12);
        h->tag = (int32_t)mf_shm_get32(line + 16);
        h->len = h->total = mf_shm_get32(line + 20);
        h->sreq = mf_shm_get64(line + 24);
        h->rreq = h->rkey = 0;
        if (h->src >= 0 && h->tag >= 0 && h->len <= max_len)
            return 0;
    }
    if (mf_shm_get32(line) != marker) {
        *why = "frame out of sequence (marker mismatch)";
        return -1;
    }
    bool indirect = line[6] == MF_SHM_FRAME_INDIRECT;
    if ((line[6] != 0 && !indirect) || line[7] != 0) {
        *why = "nonzero reserved bytes";
        return -1;
    }
    if (indirect && (mf_shm_get32(line + 20) == 0 || mf_shm_get64(line + 56) == 0)) {
        *why = "indirect frame without payload or address";
        return -1;
    }
    h->type = line[4];
    h->flags = line[5];
    h->context = mf_shm_get32(line + 8);
    h->src = (int32_t)mf_shm_get32(line + 12);
    h->tag = (int32_t)mf_shm_get32(line + 16);
    h->len = mf_shm_get32(line + 20);
    h->sreq = mf_shm_get64(line + 24);
    if (h->type == MF_MSG_EAGER) {
        h->total = h->len;
        h->rreq = h->rkey = 0;
    } else {
        h->total = mf_shm_get64(line + 32);
        h->rreq = mf_shm_get64(line + 40);
        h->rkey = mf_shm_get64(line + 48);
        if (!indirect && mf_shm_get64(line + 56) != 0) {
            *why = "nonzero reserved bytes";
            return -1;
        }
    }
    if (h->len > max_len) {
        *why = "frame longer than the ring's largest frame";
        return -1;
    }
    return mf_wire_check(h, why);
}
