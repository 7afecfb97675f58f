/*
 * Unit test of cross-memory attach (cma.c): the probe on our own pid and on a child, a read
 * scattered over many local iovecs at an offset, and the errors a caller must tell apart
 * (ESRCH for a vanished process, EFAULT for a bad address). Skips (exit 0 with a note) where
 * the kernel forbids process_vm_readv altogether, since the fabric then runs without it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric/shm/shm.h"
#define UNIT_CHECK_FATAL
#include "unit_check.h"

#define BIG (3 << 20)

int main(void)
{
    int e = mf_shm_cma_probe(getpid(), (uint64_t)(uintptr_t)&mf_shm_cma_probe_word);
    if (e == EPERM || e == ENOSYS) {
        printf("cma_test: process_vm_readv not permitted here (%s): skipped\n", strerror(e));
        return 0;
    }
    CHECK(e == 0);
    CHECK(mf_shm_cma_probe(getpid(), 8) == EFAULT);

    /* The child fills a buffer, then waits; addresses are the same after fork. */
    unsigned char *src = malloc(BIG);
    CHECK(src);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (size_t i = 0; i < BIG; i++)
            src[i] = (unsigned char)(i * 13 + (i >> 12));
        char c = 1;
        if (write(go[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c;
    CHECK(read(go[0], &c, 1) == 1);
    memset(src, 0, BIG); /* our copy differs from the child's: reads must come from it */
    CHECK(mf_shm_cma_probe(child, (uint64_t)(uintptr_t)&mf_shm_cma_probe_word) == 0);

    /* 200 uneven pieces (more than one batch of 64) covering BIG - 1000 bytes at offset 1000. */
    size_t len = BIG - 1000;
    unsigned char *dst = malloc(len);
    CHECK(dst);
    struct iovec iov[200];
    size_t off = 0;
    for (int i = 0; i < 200; i++) {
        size_t n = i == 199 ? len - off : (size_t)(i % 7 + 1) * 1500;
        iov[i].iov_base = dst + off;
        iov[i].iov_len = n;
        off += n;
    }
    CHECK(mf_shm_cma_read(child, (uint64_t)(uintptr_t)src + 1000, iov, 200, 0, len) == 0);
    for (size_t i = 0; i < len; i++)
        CHECK(dst[i] == (unsigned char)((i + 1000) * 13 + ((i + 1000) >> 12)));
    /* In chunks that start inside a local piece (as shm's rget reads, a chunk per pass), the
     * first chunk ending exactly at a piece's end: the same bytes. */
    memset(dst, 0, len);
    size_t chunks[] = {1500, 4999, 65536, 1};
    for (size_t at = 0, k = 0; at < len; k++) {
        size_t n = chunks[k % 4] < len - at ? chunks[k % 4] : len - at;
        CHECK(mf_shm_cma_read(child, (uint64_t)(uintptr_t)src + 1000 + at, iov, 200, at, n) == 0);
        at += n;
    }
    for (size_t i = 0; i < len; i++)
        CHECK(dst[i] == (unsigned char)((i + 1000) * 13 + ((i + 1000) >> 12)));
    /* Fewer local bytes than asked is the caller's bug: EINVAL, not an overrun. */
    CHECK(mf_shm_cma_read(child, (uint64_t)(uintptr_t)src, iov, 1, 0, iov[0].iov_len + 1) ==
          EINVAL);
    CHECK(mf_shm_cma_read(child, (uint64_t)(uintptr_t)src, iov, 2, iov[0].iov_len,
                          iov[1].iov_len + 1) == EINVAL);

    kill(child, SIGKILL);
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(mf_shm_cma_read(child, (uint64_t)(uintptr_t)src, iov, 1, 0, 16) == ESRCH);
    free(dst);
    free(src);
    printf("cma_test: ok\n");
    return 0;
}
