/*
 * stream_hello.c — the handshake record that opens every stream connection (see stream.h).
 *
 * Layout (little-endian, 32 bytes):
 *    0 magic 'M','F','H','S'   4 version   5 kind   6..7 zero
 *    8 rank (i32)   12 size (i32)   16 job hash (u64)   24 job secret (u64)
 * The decoder checks every field against this job before the caller believes any of it.
 */
#include "fabric/stream/stream.h"

#include <endian.h>
#include <string.h>

#define MF_STREAM_HELLO_VERSION 1

void mf_stream_hello_encode(const mf_stream_hello *h, unsigned char out[MF_STREAM_HELLO_SIZE])
{
    memset(out, 0, MF_STREAM_HELLO_SIZE);
    memcpy(out, "MFHS", 4);
    out[4] = MF_STREAM_HELLO_VERSION;
    out[5] = h->kind;
    uint32_t r = htole32((uint32_t)h->rank), s = htole32((uint32_t)h->size);
    uint64_t j = htole64(h->job_hash), k = htole64(h->secret);
    memcpy(out + 8, &r, 4);
    memcpy(out + 12, &s, 4);
    memcpy(out + 16, &j, 8);
    memcpy(out + 24, &k, 8);
}

int mf_stream_hello_decode(const unsigned char in[MF_STREAM_HELLO_SIZE], mf_stream_hello *h,
                           uint64_t job_hash, uint64_t secret, int size, const char **why)
{
    if (memcmp(in, "MFHS", 4) != 0) {
        *why = "not a Manifold handshake";
        return -1;
    }
    if (in[4] != MF_STREAM_HELLO_VERSION) {
        *why = "unsupported handshake version";
        return -1;
    }
    if (in[5] < MF_STREAM_HELLO || in[5] > MF_STREAM_REFUSE || in[6] || in[7]) {
        *why = "unknown handshake kind";
        return -1;
    }
    uint32_t r, s;
    uint64_t j, k;
    memcpy(&r, in + 8, 4);
    memcpy(&s, in + 12, 4);
    memcpy(&j, in + 16, 8);
    memcpy(&k, in + 24, 8);
    h->kind = in[5];
    h->rank = (int32_t)le32toh(r);
    h->size = (int32_t)le32toh(s);
    h->job_hash = le64toh(j);
    h->secret = le64toh(k);
    if (h->kind == MF_STREAM_REFUSE)
        return 0; /* a refusal carries nothing we could check: the peer did not trust us */
    if (h->job_hash != job_hash) {
        *why = "peer belongs to another job (job id differs)";
        return -1;
    }
    if (h->secret != secret) {
        *why = "peer presented a wrong job secret";
        return -1;
    }
    if (h->size != size) {
        *why = "peer has a different world size";
        return -1;
    }
    if (h->rank < 0 || h->rank >= size) {
        *why = "peer rank out of range";
        return -1;
    }
    return 0;
}
