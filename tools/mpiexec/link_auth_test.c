/*
 * link_auth_test.c — the link authentication (link_auth.c) between a proxy and mpiexec: the
 * genuine exchange succeeds; a wrong key on either side, a proxy told another host name, a
 * replayed proof, a forged ACCEPT and frames out of order all fail, and mpiexec never sends
 * anything but a challenge before the proof checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"
#include "link_auth.h"
#include "unit_check.h"

static const char *const names[] = {"node0", "node1"};

/* One exchange; *proof gets the PROOF the initiator sent (for replays). Returns the responder's
 * last result and sets *ir to the initiator's. */
static int exchange(const mf_auth_secret *ki, const mf_auth_secret *kr, const char *claimed,
                    mx_auth_out *proof, int *ir)
{
    mx_auth i, r;
    mx_auth_out to_r, to_i;
    mx_auth_initiator(&i, ki, 1, claimed, &to_r);
    mx_auth_responder(&r, kr, names, 2);
    CHECK(to_r.o_type == MX_M_HELLO && to_r.o_len == MF_AUTH_NONCE_BYTES);
    int rr = mx_auth_feed(&r, to_r.o_type, to_r.o_arg, to_r.o_data, to_r.o_len, &to_i);
    CHECK(rr == MX_AUTH_MORE && to_i.o_type == MX_M_CHALLENGE);
    *ir = mx_auth_feed(&i, to_i.o_type, to_i.o_arg, to_i.o_data, to_i.o_len, &to_r);
    CHECK(*ir == MX_AUTH_MORE && to_r.o_type == MX_M_PROOF);
    *proof = to_r;
    rr = mx_auth_feed(&r, to_r.o_type, to_r.o_arg, to_r.o_data, to_r.o_len, &to_i);
    if (rr != MX_AUTH_DONE) {
        CHECK(to_i.o_type == 0); /* a refusal sends nothing */
        return rr;
    }
    CHECK(to_i.o_type == MX_M_ACCEPT && r.a_index == 1);
    *ir = mx_auth_feed(&i, to_i.o_type, to_i.o_arg, to_i.o_data, to_i.o_len, &to_r);
    return rr;
}

int main(void)
{
    if (mf_auth_init() != 0)
        return 1;
    mf_auth_secret k, other;
    mf_auth_secret_generate(&k);
    other = k;
    other.as_key[5] ^= 0x10;
    mx_auth_out proof;
    int ir;

    CHECK(exchange(&k, &k, "node1", &proof, &ir) == MX_AUTH_DONE && ir == MX_AUTH_DONE);
    CHECK(exchange(&other, &k, "node1", &proof, &ir) == MX_AUTH_FAIL);
    CHECK(exchange(&k, &other, "node1", &proof, &ir) == MX_AUTH_FAIL);
    CHECK(exchange(&k, &k, "node0", &proof, &ir) == MX_AUTH_FAIL); /* identity is bound */

    /* Replay: a recorded HELLO and PROOF against a new challenge. */
    mx_auth i, r;
    mx_auth_out hello, out, challenge;
    mx_auth_initiator(&i, &k, 1, "node1", &hello);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, hello.o_type, hello.o_arg, hello.o_data, hello.o_len, &challenge) ==
          MX_AUTH_MORE);
    CHECK(mx_auth_feed(&i, challenge.o_type, 0, challenge.o_data, challenge.o_len, &proof) ==
          MX_AUTH_MORE);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, hello.o_type, hello.o_arg, hello.o_data, hello.o_len, &out) ==
          MX_AUTH_MORE);
    CHECK(memcmp(out.o_data, challenge.o_data, MF_AUTH_NONCE_BYTES) != 0); /* fresh nonce */
    CHECK(mx_auth_feed(&r, proof.o_type, 0, proof.o_data, proof.o_len, &out) == MX_AUTH_FAIL);
    CHECK(out.o_type == 0);

    /* A forged ACCEPT: the initiator refuses it. */
    mx_auth_responder(&r, &k, names, 2);
    mx_auth_initiator(&i, &k, 1, "node1", &hello);
    (void)mx_auth_feed(&r, hello.o_type, hello.o_arg, hello.o_data, hello.o_len, &challenge);
    (void)mx_auth_feed(&i, challenge.o_type, 0, challenge.o_data, challenge.o_len, &proof);
    CHECK(mx_auth_feed(&r, proof.o_type, 0, proof.o_data, proof.o_len, &out) == MX_AUTH_DONE);
    out.o_data[0] ^= 1;
    CHECK(mx_auth_feed(&i, out.o_type, 0, out.o_data, out.o_len, &hello) == MX_AUTH_FAIL);

    /* Out of order, wrong sizes, unknown hosts. */
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, MX_M_PROOF, 0, proof.o_data, MF_AUTH_MAC_BYTES, &out) == MX_AUTH_FAIL);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, MX_M_HELLO, 2, proof.o_data, MF_AUTH_NONCE_BYTES, &out) == MX_AUTH_FAIL);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, MX_M_HELLO, -1, proof.o_data, MF_AUTH_NONCE_BYTES, &out) ==
          MX_AUTH_FAIL);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, MX_M_HELLO, 0, proof.o_data, MF_AUTH_NONCE_BYTES - 1, &out) ==
          MX_AUTH_FAIL);
    mx_auth_responder(&r, &k, names, 2);
    CHECK(mx_auth_feed(&r, MX_M_JOB, 0, "", 0, &out) == MX_AUTH_FAIL && out.o_type == 0);

    if (unit_check_failures)
        fprintf(stderr, "link_auth_test: %d checks failed\n", unit_check_failures);
    return unit_check_failures != 0;
}
