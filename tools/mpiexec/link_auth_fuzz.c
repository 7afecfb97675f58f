/*
 * link_auth_fuzz.c — libFuzzer target for the link authentication (link_auth.c), the first
 * thing mpiexec runs on a stranger's bytes, and the proxy on what answers at mpiexec's address.
 *
 * The input is a stream of frames (type byte, arg byte, length byte, payload) fed to a fresh
 * responder and a fresh initiator. Neither may ever reach DONE on such input (that would take
 * the secret, which the fuzzer does not have: the key is drawn at random per run), nor send
 * anything but its protocol's next message, nor accept a frame after failing. Then the same
 * key makes a genuine exchange, which must succeed, and a peer with another key, which must
 * fail on both sides.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"
#include "link_auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_names[] = {"h0", "h1", "h2"};

/* Plays an exchange between an initiator with key ki and a responder with key kr; the result
 * of the responder (DONE only if the initiator proved ki == kr) and, through *init, of the
 * initiator. */
static int fuzz_exchange(const mf_auth_secret *ki, const mf_auth_secret *kr, int *init)
{
    mx_auth i, r;
    mx_auth_out to_r, to_i;
    mx_auth_initiator(&i, ki, 1, "h1", &to_r);
    mx_auth_responder(&r, kr, fuzz_names, 3);
    int sr = MX_AUTH_MORE, si = MX_AUTH_MORE;
    for (int round = 0; round < 4 && to_r.o_type; round++) {
        sr = mx_auth_feed(&r, to_r.o_type, to_r.o_arg, to_r.o_data, to_r.o_len, &to_i);
        to_r.o_type = 0;
        if (sr == MX_AUTH_FAIL || !to_i.o_type)
            break;
        si = mx_auth_feed(&i, to_i.o_type, to_i.o_arg, to_i.o_data, to_i.o_len, &to_r);
        if (si != MX_AUTH_MORE)
            break;
    }
    *init = si;
    return sr;
}

static void fuzz_feed(mx_auth *a, int *state, int type, int32_t arg, const uint8_t *p, size_t len)
{
    mx_auth_out out;
    if (*state == MX_AUTH_FAIL)
        return;
    *state = mx_auth_feed(a, type, arg, p, len, &out);
    if (*state == MX_AUTH_DONE)
        abort(); /* proved without the key */
    if (*state == MX_AUTH_MORE && out.o_type != MX_M_CHALLENGE && out.o_type != MX_M_PROOF)
        abort();
    if (out.o_len > sizeof out.o_data)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mf_auth_secret key;
    if (mf_auth_init() != 0)
        abort();
    mf_auth_secret_generate(&key);
    mx_auth r, i;
    mx_auth_out hello;
    mx_auth_responder(&r, &key, fuzz_names, 3);
    mx_auth_initiator(&i, &key, 0, "h0", &hello);
    int sr = MX_AUTH_MORE, si = MX_AUTH_MORE;
    size_t off = 0;
    while (off + 3 <= size) {
        int type = data[off] % (MX_M_LAST + 1);
        int32_t arg = (int8_t)data[off + 1];
        size_t len = data[off + 2];
        off += 3;
        if (len > size - off)
            len = size - off;
        fuzz_feed(&r, &sr, type, arg, data + off, len);
        fuzz_feed(&i, &si, type, arg, data + off, len);
        off += len;
    }
    int init;
    if (fuzz_exchange(&key, &key, &init) != MX_AUTH_DONE || init != MX_AUTH_DONE)
        abort();
    mf_auth_secret other = key;
    other.as_key[size % MF_AUTH_SECRET_BYTES] ^= (unsigned char)(1u << (size % 8));
    if (fuzz_exchange(&other, &key, &init) != MX_AUTH_FAIL || init == MX_AUTH_DONE)
        abort();
    if (fuzz_exchange(&key, &other, &init) != MX_AUTH_FAIL || init == MX_AUTH_DONE)
        abort();
    return 0;
}
