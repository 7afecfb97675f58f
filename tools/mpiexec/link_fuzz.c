/*
 * link_fuzz.c — libFuzzer target for mpiexec's link framing (link.c): the bytes a proxy or a
 * stranger sends to mpiexec's listener, and mpiexec sends to a proxy.
 *
 * Input: byte 0 picks the payload limit (small while unauthenticated, or MX_LINK_MAX) and the
 * read chunk size; the rest goes through a pipe into mx_link_read in chunks, and every frame
 * mx_link_next hands out is checked (type known, payload within the limit and inside what was
 * read) and its payload run through the decoders frames use: mx_frame_int and the string
 * reader of the job description.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link.h"
#include "link_auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_payload(const char *p, size_t len)
{
    long v;
    if (mx_frame_int(p, len, -1000, 1000, &v) == 0 && (v < -1000 || v > 1000))
        abort();
    mx_strrd rd = {p, p + len};
    for (int i = 0; i < 64; i++) {
        const char *before = rd.p;
        if (i % 2 ? mx_rd_int(&rd, 0, 100, &v) == 0 && (v < 0 || v > 100) : 0)
            abort();
        const char *s = i % 2 ? NULL : mx_rd_str(&rd);
        if (s && (s < p || s + strlen(s) >= p + len))
            abort(); /* a string must end inside the payload */
        if (rd.p == before)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fds[2] = {-1, -1};
    if (fds[0] < 0 && pipe2(fds, O_NONBLOCK) != 0)
        abort();
    if (size < 1)
        return 0;
    size_t chunk = 1 + (data[0] >> 1) * 37;
    mx_link l;
    mx_link_init(&l, fds[0]);
    l.l_max = data[0] & 1 ? MX_AUTH_FRAME_MAX : MX_LINK_MAX;
    data++;
    size--;
    int broken = 0;
    for (size_t off = 0; off < size && !broken;) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (write(fds[1], data + off, n) != (ssize_t)n)
            abort(); /* inputs are far below a pipe's capacity */
        off += n;
        if (mx_link_read(&l) != 0)
            abort();
        int type, got;
        int32_t arg;
        const char *p;
        size_t len;
        while ((got = mx_link_next(&l, &type, &arg, &p, &len)) == 1) {
            if (type <= 0 || type >= MX_M_LAST || len > l.l_max || p < l.l_in ||
                p + len > l.l_in + l.l_in_len)
                abort();
            fuzz_payload(p, len);
        }
        broken = got < 0;
    }
    char sink[4096]; /* what a broken link left in the pipe */
    while (read(fds[0], sink, sizeof sink) > 0)
        ;
    l.l_fd = -1; /* the pipe is reused by the next input */
    mx_link_close(&l);
    return 0;
}
