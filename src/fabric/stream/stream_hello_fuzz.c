/*
 * stream_hello_fuzz.c — libFuzzer target for the handshake decoders (stream_hello.c): any 64
 * bytes either decode to a record that satisfies what the tcp state machine relies on, or are
 * rejected with a reason; an accepted record survives encode/decode byte for byte (one encoding
 * per record, so the refusal is a constant); a HELLO passes the job check only when every field
 * matches; and no record whose MAC was not made with the key passes the proof check.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/stream/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char in[MF_STREAM_HS_SIZE] = {0};
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    mf_stream_hs h;
    const char *why = NULL;
    if (mf_stream_hs_decode(in, &h, &why) != 0) {
        if (!why || !*why)
            abort(); /* every rejection names its reason */
        return 0;
    }
    if (h.kind < MF_STREAM_HS_HELLO || h.kind > MF_STREAM_HS_REFUSE)
        abort();
    if (h.kind != MF_STREAM_HS_HELLO && (h.from || h.to || h.size || h.job_hash))
        abort();
    unsigned char out[MF_STREAM_HS_SIZE];
    mf_stream_hs_encode(&h, out);
    if (memcmp(in, out, sizeof in) != 0)
        abort();
    /* The job check, against a job built from the input's own bytes when there are more. */
    uint64_t job = 0x1234;
    int world = 4, me = 1;
    if (size >= sizeof in + 9) {
        memcpy(&job, data + sizeof in, 8);
        world = 1 + data[sizeof in + 8] % 64;
        me = data[sizeof in + 8] / 64 % world;
    }
    if (mf_stream_hs_check_hello(&h, job, world, me, &why) == 0 &&
        (h.kind != MF_STREAM_HS_HELLO || h.job_hash != job || h.size != world || h.to != me ||
         h.from < 0 || h.from >= world || h.from == me))
        abort();
    /* A MAC chosen by the input never proves knowledge of a key it does not know. */
    static mf_auth_secret k;
    static int ready;
    if (!ready) {
        if (mf_auth_init() != 0)
            abort();
        mf_auth_secret_generate(&k);
        ready = 1;
    }
    mf_stream_auth a;
    memset(&a, 0, sizeof a);
    mf_stream_auth_ids(&a, job, world, me, 0);
    if (mf_stream_auth_check(&k, "manifold-tcp-1", &h, &a))
        abort();
    return 0;
}
