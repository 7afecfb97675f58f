/*
 * ofi_msg_fuzz.c — libFuzzer target for the ofi fabric's frame decoder (mf_ofi_parse in
 * ofi_msg.c), which reads every message a peer's libfabric endpoint delivers: the first input
 * byte chooses the full or the short header form (ofi.h), the rest is the message. A message is
 * either refused with a reason or gives a header whose payload lies exactly within the message
 * (header length + payload = message length), an eager frame if it came in the short form.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fabric/ofi/ofi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool short_form = data[0] & 1;
    const unsigned char *m = data + 1, *payload = NULL;
    size_t len = size - 1;
    mf_wire_hdr h;
    const char *why = mf_ofi_parse(m, len, short_form, &h, &payload);
    if (why) {
        if (!why[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    size_t hl = short_form ? MF_OFI_SHORT_HDR : MF_WIRE_HDR_SIZE;
    if (payload != m + hl || hl + h.len != len)
        abort();
    if (short_form && h.type != MF_MSG_EAGER)
        abort();
    /* every payload byte is readable (ASan checks the bounds) */
    volatile unsigned sum = 0;
    for (size_t i = 0; i < h.len; i++)
        sum += payload[i];
    (void)sum;
    return 0;
}
