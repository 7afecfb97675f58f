/*
 * stream_hello.c — the handshake records that open every stream connection, and the proofs
 * they carry (see stream.h for the exchange, core/auth.h for why it is built so).
 *
 * Record layout (little-endian, 64 bytes):
 *    0 magic 'M','F','H','S'   4 version   5 kind   6..7 zero
 *    8 from (i32)   12 to (i32)   16 size (i32)   20..23 zero   24 job hash (u64)   (HELLO only)
 *   32 nonce or MAC (32 bytes)                                  (all but REFUSE)
 * A field a kind does not use is zero, and the decoder insists on it, so every record has one
 * encoding and the refusal is a constant.
 *
 * Identity (16 bytes, the same on both sides): job hash (u64), world size (i32), rank (i32).
 */
#include "fabric/stream/stream.h"

#include <endian.h>
#include <stdio.h>
#include <string.h>

/* 1 was the old 32-byte record that carried the secret in clear. */
#define MF_STREAM_HS_VERSION 2

_Static_assert(MF_STREAM_HS_BLOB == MF_AUTH_NONCE_BYTES && MF_STREAM_HS_BLOB == MF_AUTH_MAC_BYTES,
               "a record's blob holds a nonce or a MAC");

void mf_stream_hs_encode(const mf_stream_hs *h, unsigned char out[MF_STREAM_HS_SIZE])
{
    memset(out, 0, MF_STREAM_HS_SIZE);
    memcpy(out, "MFHS", 4);
    out[4] = MF_STREAM_HS_VERSION;
    out[5] = h->kind;
    if (h->kind == MF_STREAM_HS_HELLO) {
        uint32_t f = htole32((uint32_t)h->from), t = htole32((uint32_t)h->to),
                 s = htole32((uint32_t)h->size);
        uint64_t j = htole64(h->job_hash);
        memcpy(out + 8, &f, 4);
        memcpy(out + 12, &t, 4);
        memcpy(out + 16, &s, 4);
        memcpy(out + 24, &j, 8);
    }
    if (h->kind != MF_STREAM_HS_REFUSE)
        memcpy(out + 32, h->blob, MF_STREAM_HS_BLOB);
}

static bool mf_stream_hs_zero(const unsigned char *p, size_t n)
{
    unsigned char acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

int mf_stream_hs_decode(const unsigned char in[MF_STREAM_HS_SIZE], mf_stream_hs *h,
                        const char **why)
{
    memset(h, 0, sizeof *h);
    if (memcmp(in, "MFHS", 4) != 0) {
        *why = "not a Manifold handshake";
        return -1;
    }
    if (in[4] != MF_STREAM_HS_VERSION) {
        *why = "unsupported handshake version";
        return -1;
    }
    if (in[5] < MF_STREAM_HS_HELLO || in[5] > MF_STREAM_HS_REFUSE || in[6] || in[7]) {
        *why = "unknown handshake kind";
        return -1;
    }
    h->kind = in[5];
    bool hello = h->kind == MF_STREAM_HS_HELLO;
    if (hello ? !mf_stream_hs_zero(in + 20, 4) : !mf_stream_hs_zero(in + 8, 24)) {
        *why = "nonzero unused handshake field";
        return -1;
    }
    if (h->kind == MF_STREAM_HS_REFUSE) {
        if (!mf_stream_hs_zero(in + 32, MF_STREAM_HS_BLOB)) {
            *why = "nonzero unused handshake field";
            return -1;
        }
        return 0;
    }
    if (hello) {
        uint32_t f, t, s;
        uint64_t j;
        memcpy(&f, in + 8, 4);
        memcpy(&t, in + 12, 4);
        memcpy(&s, in + 16, 4);
        memcpy(&j, in + 24, 8);
        h->from = (int32_t)le32toh(f);
        h->to = (int32_t)le32toh(t);
        h->size = (int32_t)le32toh(s);
        h->job_hash = le64toh(j);
    }
    memcpy(h->blob, in + 32, MF_STREAM_HS_BLOB);
    return 0;
}

int mf_stream_hs_check_hello(const mf_stream_hs *h, uint64_t job_hash, int size, int me,
                             const char **why)
{
    if (h->kind != MF_STREAM_HS_HELLO)
        *why = "the connection did not start with a HELLO";
    else if (h->job_hash != job_hash)
        *why = "it belongs to another job (job id differs)";
    else if (h->size != size)
        *why = "it has a different world size";
    else if (h->to != me)
        *why = "it wants another rank";
    else if (h->from < 0 || h->from >= size)
        *why = "its rank is out of range";
    else if (h->from == me)
        *why = "it claims to be this very rank";
    else
        return 0;
    return -1;
}

static void mf_stream_auth_id(unsigned char out[MF_STREAM_HS_ID_SIZE], uint64_t job_hash, int size,
                              int rank)
{
    uint64_t j = htole64(job_hash);
    uint32_t s = htole32((uint32_t)size), r = htole32((uint32_t)rank);
    memcpy(out, &j, 8);
    memcpy(out + 8, &s, 4);
    memcpy(out + 12, &r, 4);
}

void mf_stream_auth_ids(mf_stream_auth *a, uint64_t job_hash, int size, int from, int to)
{
    mf_stream_auth_id(a->sa_id_i, job_hash, size, from);
    mf_stream_auth_id(a->sa_id_r, job_hash, size, to);
}

/* The transcript of a record's MAC: the responder's verdict is appended to the channel. */
static mf_auth_role mf_stream_auth_transcript(const char *channel, int kind,
                                              const mf_stream_auth *a, char *chan, size_t len,
                                              mf_auth_transcript *t)
{
    snprintf(chan, len, "%s%s", channel,
             kind == MF_STREAM_HS_ACCEPT   ? "/accept"
             : kind == MF_STREAM_HS_REJECT ? "/reject"
                                           : "");
    *t = (mf_auth_transcript){.at_channel = chan,
                              .at_nonce_i = a->sa_nonce_i,
                              .at_nonce_r = a->sa_nonce_r,
                              .at_id_i = a->sa_id_i,
                              .at_id_i_len = sizeof a->sa_id_i,
                              .at_id_r = a->sa_id_r,
                              .at_id_r_len = sizeof a->sa_id_r};
    return kind == MF_STREAM_HS_PROOF ? MF_AUTH_INITIATOR : MF_AUTH_RESPONDER;
}

void mf_stream_auth_mac(const mf_auth_secret *k, const char *channel, int kind,
                        const mf_stream_auth *a, unsigned char mac[MF_AUTH_MAC_BYTES])
{
    char chan[96];
    mf_auth_transcript t;
    mf_auth_role role = mf_stream_auth_transcript(channel, kind, a, chan, sizeof chan, &t);
    mf_auth_prove(k, role, &t, mac);
}

bool mf_stream_auth_check(const mf_auth_secret *k, const char *channel, const mf_stream_hs *h,
                          const mf_stream_auth *a)
{
    if (h->kind != MF_STREAM_HS_PROOF && h->kind != MF_STREAM_HS_ACCEPT &&
        h->kind != MF_STREAM_HS_REJECT)
        return false;
    char chan[96];
    mf_auth_transcript t;
    mf_auth_role role = mf_stream_auth_transcript(channel, h->kind, a, chan, sizeof chan, &t);
    return mf_auth_check(k, role, &t, h->blob);
}
