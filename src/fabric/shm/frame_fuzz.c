/*
 * frame_fuzz.c — libFuzzer target for the shm frame line decoder (frame.c): any 64 bytes either
 * decode to a header that satisfies every invariant the shm receiver and the p2p layer rely on,
 * or are rejected with a reason; an accepted header survives encode/decode unchanged, and so does
 * an indirect frame's address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_LEN 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char line[MF_SHM_CACHELINE] = {0};
    memcpy(line, data, size < sizeof line ? size : sizeof line);
    uint32_t marker;
    memcpy(&marker, line, 4);
    mf_wire_hdr h, again;
    const char *why = NULL;
    if (mf_shm_frame_decode(line, marker, FUZZ_MAX_LEN, &h, &why) != 0) {
        if (!why || !*why)
            abort(); /* every rejection names its reason */
        return 0;
    }
    /* What the receiver relies on: a bounded length (copies stay inside the ring) and the
     * invariants every fabric's decoder guarantees. */
    if (h.len > FUZZ_MAX_LEN || mf_wire_check(&h, &why) != 0)
        abort();
    if (mf_shm_frame_size(h.type, (size_t)h.len) >
        FUZZ_MAX_LEN + MF_SHM_FULL_HDR + MF_SHM_CACHELINE)
        abort();
    /* A wrong marker is always refused. */
    if (mf_shm_frame_decode(line, marker + 1, FUZZ_MAX_LEN, &again, &why) == 0)
        abort();
    /* An indirect frame (its payload left in the sender) names an address and a payload. */
    uint64_t addr = mf_shm_frame_indirect(line);
    if (addr != 0 && h.len == 0)
        abort();
    unsigned char out[MF_SHM_CACHELINE];
    memset(out, 0x5a, sizeof out);
    memcpy(out, &marker, 4);
    mf_shm_frame_encode(&h, out);
    if (addr != 0)
        mf_shm_frame_set_indirect(out, addr);
    if (mf_shm_frame_decode(out, marker, FUZZ_MAX_LEN, &again, &why) != 0)
        abort();
    if (!mf_wire_same(&h, &again) || mf_shm_frame_indirect(out) != addr)
        abort();
    return 0;
}
