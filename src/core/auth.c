/* Challenge–response proofs with the job secret: see auth.h. */
#include "core/auth.h"

#include <sodium.h>
#include <stdint.h>
#include <string.h>

int mf_auth_init(void)
{
    /* sodium_init returns 1 when already initialised: both are fine. */
    return sodium_init() < 0 ? -1 : 0;
}

int mf_auth_secret_parse(const char *hex, mf_auth_secret *out, const char **why)
{
    size_t n = strlen(hex);
    if (n != MF_AUTH_SECRET_HEX) {
        *why = "a job secret is exactly 64 hexadecimal digits";
        return -1;
    }
    size_t got = 0;
    const char *end = NULL;
    if (sodium_hex2bin(out->as_key, sizeof out->as_key, hex, n, NULL, &got, &end) != 0 ||
        got != sizeof out->as_key || end != hex + n) {
        sodium_memzero(out, sizeof *out);
        *why = "a job secret has only the digits 0-9 and a-f";
        return -1;
    }
    return 0;
}

void mf_auth_secret_format(const mf_auth_secret *s, char out[MF_AUTH_SECRET_HEX + 1])
{
    sodium_bin2hex(out, MF_AUTH_SECRET_HEX + 1, s->as_key, sizeof s->as_key);
}

void mf_auth_secret_generate(mf_auth_secret *out)
{
    randombytes_buf(out->as_key, sizeof out->as_key);
}

void mf_auth_wipe(void *p, size_t n)
{
    sodium_memzero(p, n);
}

void mf_auth_nonce(unsigned char out[MF_AUTH_NONCE_BYTES])
{
    randombytes_buf(out, MF_AUTH_NONCE_BYTES);
}

/* Feeds one field as a 4-byte little-endian length and its bytes, so that field boundaries are
 * part of what is authenticated. */
static void mf_auth_field(crypto_auth_hmacsha256_state *st, const void *p, size_t n)
{
    unsigned char len[4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 24)};
    crypto_auth_hmacsha256_update(st, len, sizeof len);
    if (n)
        crypto_auth_hmacsha256_update(st, p, n);
}

void mf_auth_prove(const mf_auth_secret *s, mf_auth_role role, const mf_auth_transcript *t,
                   unsigned char mac[MF_AUTH_MAC_BYTES])
{
    crypto_auth_hmacsha256_state st;
    unsigned char r = (unsigned char)role;
    crypto_auth_hmacsha256_init(&st, s->as_key, sizeof s->as_key);
    mf_auth_field(&st, "manifold-auth-1", 15);
    mf_auth_field(&st, &r, 1);
    mf_auth_field(&st, t->at_channel, strlen(t->at_channel));
    mf_auth_field(&st, t->at_nonce_i, MF_AUTH_NONCE_BYTES);
    mf_auth_field(&st, t->at_nonce_r, MF_AUTH_NONCE_BYTES);
    mf_auth_field(&st, t->at_id_i, t->at_id_i_len);
    mf_auth_field(&st, t->at_id_r, t->at_id_r_len);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

bool mf_auth_check(const mf_auth_secret *s, mf_auth_role role, const mf_auth_transcript *t,
                   const unsigned char mac[MF_AUTH_MAC_BYTES])
{
    unsigned char want[MF_AUTH_MAC_BYTES];
    mf_auth_prove(s, role, t, want);
    bool ok = sodium_memcmp(want, mac, sizeof want) == 0;
    sodium_memzero(want, sizeof want);
    return ok;
}
