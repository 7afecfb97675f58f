/*
 * iov.h — copying between a flat buffer and a list of pieces (struct iovec), the one loop every
 * layer that stages payloads needs: fabrics gathering a frame to send, receivers scattering a
 * payload into the pieces a receive staged; and ranges of the byte stream a list of pieces
 * spells (byte k of the stream is in the first piece whose end passes k), for fabrics that move
 * a message in parts (rails).
 */
#ifndef MF_CORE_IOV_H
#define MF_CORE_IOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* Copies the pieces' bytes, in order, into dst, at most `max` of them; returns how many it
 * copied (less than `max` when the pieces hold fewer). */
static inline size_t mf_iov_gather(void *dst, const struct iovec *iov, int niov, size_t max)
{
    size_t off = 0;
    for (int i = 0; i < niov && off < max; i++) {
        size_t n = iov[i].iov_len < max - off ? iov[i].iov_len : max - off;
        if (n)
            memcpy((char *)dst + off, iov[i].iov_base, n);
        off += n;
    }
    return off;
}

/* Copies `len` bytes from src into the pieces, in order; what does not fit is dropped. Returns
 * how many bytes landed. */
static inline size_t mf_iov_scatter(const struct iovec *iov, int niov, const void *src, size_t len)
{
    size_t off = 0;
    for (int i = 0; i < niov && off < len; i++) {
        size_t n = iov[i].iov_len < len - off ? iov[i].iov_len : len - off;
        if (n)
            memcpy(iov[i].iov_base, (const char *)src + off, n);
        off += n;
    }
    return off;
}

/* Where a piece holding stream bytes [a, b) meets the range [off, off + len): sets [*from, *to),
 * offsets inside the piece, and returns true; false when they share no byte. A range that would
 * run past the largest offset ends there (off and len may come from a peer's header). */
static inline bool mf_iov_overlap(size_t a, size_t b, size_t off, size_t len, size_t *from,
                                  size_t *to)
{
    size_t end = len > SIZE_MAX - off ? SIZE_MAX : off + len;
    if (len == 0 || b <= off || a >= end)
        return false;
    *from = off > a ? off - a : 0;
    *to = (end < b ? end : b) - a;
    return true;
}

/* The pieces of stream bytes [off, off + len), cut to that range, into out (at most max of
 * them). Returns how many pieces the range covers, whatever max is: with out NULL (max 0) it
 * only counts them. */
static inline int mf_iov_slice(const struct iovec *iov, int niov, size_t off, size_t len,
                               struct iovec *out, int max)
{
    int n = 0;
    size_t pos = 0, from, to;
    for (int i = 0; i < niov; pos += iov[i].iov_len, i++)
        if (mf_iov_overlap(pos, pos + iov[i].iov_len, off, len, &from, &to)) {
            if (n < max)
                out[n] = (struct iovec){(char *)iov[i].iov_base + from, to - from};
            n++;
        }
    return n;
}

/* Copies `len` bytes from src into stream bytes [off, off + len) of the pieces; what lies
 * beyond their end is dropped. */
static inline void mf_iov_scatter_at(const struct iovec *iov, int niov, size_t off, const void *src,
                                     size_t len)
{
    size_t pos = 0, from, to;
    for (int i = 0; i < niov; pos += iov[i].iov_len, i++)
        if (mf_iov_overlap(pos, pos + iov[i].iov_len, off, len, &from, &to))
            memcpy((char *)iov[i].iov_base + from, (const char *)src + (pos + from - off),
                   to - from);
}

#endif
