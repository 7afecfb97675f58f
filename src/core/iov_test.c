/*
 * iov_test.c — the stream ranges of iov.h against a plain byte array: every range [off, off + len)
 * of a stream cut into pieces of awkward sizes (empty pieces included) is sliced and scattered
 * into, and the result compared byte by byte with what the flat stream says. Exits 0 on success.
 */
#include <stdio.h>
#include <string.h>

#include "core/iov.h"

#define TOTAL 40

static int fails;

static void check(int ok, const char *what, size_t off, size_t len)
{
    if (!ok && fails++ < 10)
        fprintf(stderr, "iov_test: %s wrong for off %zu len %zu\n", what, off, len);
}

int main(void)
{
    static const size_t cuts[] = {0, 3, 0, 7, 1, 13, 0, 16}; /* sums to TOTAL */
    enum { N = (int)(sizeof cuts / sizeof cuts[0]) };
    unsigned char mem[TOTAL];
    struct iovec iov[N];
    for (size_t i = 0, at = 0; i < N; at += cuts[i], i++)
        iov[i] = (struct iovec){mem + at, cuts[i]};

    for (size_t off = 0; off <= TOTAL + 2; off++)
        for (size_t len = 0; off + len <= TOTAL + 4; len++) {
            /* Slice: the pieces, in order, spell exactly the range's bytes of the stream. */
            for (size_t k = 0; k < TOTAL; k++)
                mem[k] = (unsigned char)k;
            struct iovec out[N];
            int n = mf_iov_slice(iov, N, off, len, out, N);
            check(n == mf_iov_slice(iov, N, off, len, NULL, 0), "count", off, len);
            size_t got = 0, end = off + len < TOTAL ? off + len : TOTAL,
                   want = end > off ? end - off : 0;
            for (int i = 0; i < n && i < N; i++) {
                for (size_t b = 0; b < out[i].iov_len; b++)
                    check(((unsigned char *)out[i].iov_base)[b] == (unsigned char)(off + got + b),
                          "slice bytes", off, len);
                got += out[i].iov_len;
            }
            check(got == want, "slice length", off, len);
            /* A smaller max stores fewer pieces but counts them all. */
            if (n > 1)
                check(mf_iov_slice(iov, N, off, len, out, 1) == n && out[0].iov_len > 0,
                      "capped slice", off, len);

            /* Scatter at off: exactly the range changes, with src's bytes in order. */
            unsigned char src[TOTAL + 8];
            for (size_t k = 0; k < sizeof src; k++)
                src[k] = (unsigned char)(200 + k);
            memset(mem, 0xee, sizeof mem);
            mf_iov_scatter_at(iov, N, off, src, len);
            for (size_t k = 0; k < TOTAL; k++) {
                unsigned char expect =
                    k >= off && k < off + len ? (unsigned char)(200 + k - off) : 0xee;
                check(mem[k] == expect, "scatter_at", off, len);
            }
        }

    /* gather / scatter of the whole list, with a short limit. */
    for (size_t k = 0; k < TOTAL; k++)
        mem[k] = (unsigned char)(k * 7);
    unsigned char flat[TOTAL];
    check(mf_iov_gather(flat, iov, N, 25) == 25 && memcmp(flat, mem, 25) == 0, "gather", 0, 25);
    memset(mem, 0, sizeof mem);
    check(mf_iov_scatter(iov, N, flat, 25) == 25 && memcmp(flat, mem, 25) == 0 && mem[25] == 0,
          "scatter", 0, 25);

    printf("iov_test: %s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
