/*
 * iov.h — copying between a flat buffer and a list of pieces (struct iovec), the one loop every
 * layer that stages payloads needs: fabrics gathering a frame to send, receivers scattering a
 * payload into the pieces a receive staged.
 */
#ifndef MF_CORE_IOV_H
#define MF_CORE_IOV_H

#include <stddef.h>
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

#endif
