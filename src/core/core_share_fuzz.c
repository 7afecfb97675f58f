/*
 * core_share_fuzz.c — libFuzzer target for the schedstat line parser (core_share.c): any bytes
 * either give two numbers or are refused, without reading past the string; an accepted line
 * printed back from its two numbers parses to the same two.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_share.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[128];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    uint64_t run, delay;
    if (!mf_core_share_parse(text, &run, &delay))
        return 0;
    char again[64];
    snprintf(again, sizeof again, "%" PRIu64 " %" PRIu64 " 0\n", run, delay);
    uint64_t run2, delay2;
    if (!mf_core_share_parse(again, &run2, &delay2) || run2 != run || delay2 != delay)
        abort();
    return 0;
}
