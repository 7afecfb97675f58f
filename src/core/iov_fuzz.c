/*
 * iov_fuzz.c — libFuzzer target for the stream ranges of iov.h, whose offset and length can come
 * from a peer (a rail chunk's header names the part of a message it carries). The input gives
 * the piece lengths (a count byte, then one byte each) and a 64-bit offset and length, any
 * values, overflowing sums included. mf_iov_slice must cut out only bytes inside the pieces, in
 * stream order, its count must not depend on whether it stores, and mf_iov_scatter_at must write
 * only inside the pieces (ASan) exactly the bytes the slice names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/iov.h"

#define FUZZ_PIECES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 17)
        return 0;
    uint64_t off64, len64;
    memcpy(&off64, data, 8);
    memcpy(&len64, data + 8, 8);
    int n = data[16] % (FUZZ_PIECES + 1);
    data += 17;
    size -= 17;
    if (size < (size_t)n)
        return 0;
    size_t off = (size_t)off64, len = (size_t)len64, total = 0;
    struct iovec iov[FUZZ_PIECES];
    unsigned char *mem[FUZZ_PIECES];
    for (int i = 0; i < n; i++) {
        size_t l = data[i];
        mem[i] = malloc(l ? l : 1); /* each piece its own block: a stray write is ASan's */
        iov[i] = (struct iovec){mem[i], l};
        total += l;
    }
    struct iovec out[FUZZ_PIECES];
    int k = mf_iov_slice(iov, n, off, len, out, FUZZ_PIECES);
    if (k != mf_iov_slice(iov, n, off, len, NULL, 0) || k > n)
        abort();
    size_t got = 0;
    for (int j = 0; j < k; j++)
        got += out[j].iov_len;
    /* The slice holds the range's bytes that exist, no more. */
    size_t want = off >= total ? 0 : (len < total - off ? len : total - off);
    if (got != want)
        abort();
    unsigned char src[256 * FUZZ_PIECES];
    memset(src, 0xab, sizeof src);
    mf_iov_scatter_at(iov, n, off, src, len); /* reads src only within the range that exists */
    for (int i = 0; i < n; i++)
        free(mem[i]);
    return 0;
}
