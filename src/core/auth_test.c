/* Unit test of the authentication proofs (auth.c) and the rate limiter (ratelimit.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/ratelimit.h"
#define UNIT_CHECK_FATAL
#include "unit_check.h"

int main(void)
{
    CHECK(mf_auth_init() == 0);
    const char *why = NULL;
    mf_auth_secret s, s2;
    /* Parsing: exactly 64 hex digits, all 256 bits kept (the old strtoull kept 64 and saturated). */
    const char *hex = "00112233445566778899aabbccddeeffFFEEDDCCBBAA99887766554433221100";
    CHECK(mf_auth_secret_parse(hex, &s, &why) == 0);
    CHECK(s.as_key[0] == 0x00 && s.as_key[1] == 0x11 && s.as_key[15] == 0xff && s.as_key[31] == 0);
    char out[MF_AUTH_SECRET_HEX + 1];
    mf_auth_secret_format(&s, out);
    CHECK(strcasecmp(out, hex) == 0 && strlen(out) == 64);
    CHECK(mf_auth_secret_parse("abc", &s2, &why) != 0 && why);
    CHECK(mf_auth_secret_parse("", &s2, &why) != 0);
    char bad[65];
    memcpy(bad, hex, 65);
    bad[10] = 'g';
    CHECK(mf_auth_secret_parse(bad, &s2, &why) != 0);
    bad[10] = ' ';
    CHECK(mf_auth_secret_parse(bad, &s2, &why) != 0);
    char longer[70];
    snprintf(longer, sizeof longer, "%s00", hex);
    CHECK(mf_auth_secret_parse(longer, &s2, &why) != 0);

    /* Two drawn secrets differ (a fixed or truncated generator would not). */
    mf_auth_secret_generate(&s2);
    mf_auth_secret g3;
    mf_auth_secret_generate(&g3);
    CHECK(memcmp(s2.as_key, g3.as_key, sizeof g3.as_key) != 0);

    unsigned char ni[MF_AUTH_NONCE_BYTES], nr[MF_AUTH_NONCE_BYTES], mac[MF_AUTH_MAC_BYTES];
    mf_auth_nonce(ni);
    mf_auth_nonce(nr);
    CHECK(memcmp(ni, nr, sizeof ni) != 0);
    int idi = 3, idr = 5;
    mf_auth_transcript t = {.at_channel = "test-1",
                            .at_nonce_i = ni,
                            .at_nonce_r = nr,
                            .at_id_i = &idi,
                            .at_id_i_len = sizeof idi,
                            .at_id_r = &idr,
                            .at_id_r_len = sizeof idr};
    mf_auth_prove(&s, MF_AUTH_INITIATOR, &t, mac);
    CHECK(mf_auth_check(&s, MF_AUTH_INITIATOR, &t, mac));
    /* The other role, another secret, another nonce, identity or channel: all refused. */
    CHECK(!mf_auth_check(&s, MF_AUTH_RESPONDER, &t, mac));
    CHECK(!mf_auth_check(&s2, MF_AUTH_INITIATOR, &t, mac));
    unsigned char nr2[MF_AUTH_NONCE_BYTES];
    mf_auth_nonce(nr2);
    mf_auth_transcript t2 = t;
    t2.at_nonce_r = nr2; /* a replayed proof against a fresh challenge */
    CHECK(!mf_auth_check(&s, MF_AUTH_INITIATOR, &t2, mac));
    int other = 4;
    t2 = t;
    t2.at_id_i = &other;
    CHECK(!mf_auth_check(&s, MF_AUTH_INITIATOR, &t2, mac));
    t2 = t;
    t2.at_channel = "test-2";
    CHECK(!mf_auth_check(&s, MF_AUTH_INITIATOR, &t2, mac));
    /* Moving bytes between the identities changes the proof (fields are length-prefixed). */
    unsigned char ab[2] = {1, 2};
    mf_auth_transcript ta = t, tb = t;
    ta.at_id_i = ab, ta.at_id_i_len = 1, ta.at_id_r = ab + 1, ta.at_id_r_len = 1;
    tb.at_id_i = ab, tb.at_id_i_len = 2, tb.at_id_r = ab, tb.at_id_r_len = 0;
    unsigned char ma[MF_AUTH_MAC_BYTES];
    mf_auth_prove(&s, MF_AUTH_INITIATOR, &ta, ma);
    CHECK(!mf_auth_check(&s, MF_AUTH_INITIATOR, &tb, ma));
    mac[0] ^= 1;
    CHECK(!mf_auth_check(&s, MF_AUTH_INITIATOR, &t, mac));

    /* Rate limiter: first event passes, the next within the interval are held and counted. */
    mf_ratelimit rl = MF_RATELIMIT_INIT(5.0);
    unsigned held = 99;
    CHECK(mf_ratelimit_pass(&rl, 100.0, &held) && held == 0);
    for (int i = 0; i < 1000; i++)
        CHECK(!mf_ratelimit_pass(&rl, 100.0 + i * 0.004, &held));
    CHECK(mf_ratelimit_pass(&rl, 105.5, &held) && held == 1000);
    CHECK(!mf_ratelimit_pass(&rl, 106.0, &held));
    CHECK(mf_ratelimit_pass(&rl, 111.0, &held) && held == 1);
    puts("auth_test: ok");
    return 0;
}
