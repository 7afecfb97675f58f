/*
 * cma.c — cross-memory attach: the single-copy path for large messages.
 *
 * Contract: a local peer's memory is read with process_vm_readv(2) from its pid; the rkey is
 * simply the virtual address in the owner (the p2p layer keeps the length and the buffer alive
 * until FIN). Whether the kernel lets us (ptrace access rules, seccomp in containers: EPERM or
 * ENOSYS) is probed once at start-up by reading a peer's probe word, whose address every rank
 * publishes in the segment; if that fails, the fabric does not advertise MF_FABRIC_RGET and the
 * p2p layer streams large messages through the rings instead.
 *
 * The kernel counts process_vm_readv as attaching with ptrace. Where the Yama security module
 * restricts that to ancestors (ptrace_scope 1, Ubuntu's default), sibling ranks could not read
 * each other, and every large message would take the rings. So each rank first names its parent
 * as its ptracer (mf_shm_cma_allow_launcher), before it publishes its pid.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fabric/shm/shm.h"

const uint64_t mf_shm_cma_probe_word = MF_SHM_CMA_PROBE_VALUE;

void mf_shm_cma_allow_launcher(void)
{
    /* Yama then lets the parent and its descendants attach: under mpiexec, Hydra or srun that
     * is the launcher, the job's ranks on this host (all its children) and a debugger it starts
     * (mpiexec --get-stack-traces). Other processes of the user stay out, as they would not
     * with PR_SET_PTRACER_ANY. A rank whose parent is not shared (a wrapper per rank) fails the
     * probe as before. Without Yama the call fails with EINVAL and changes nothing. */
    pid_t parent = getppid();
    if (parent > 1)
        (void)prctl(PR_SET_PTRACER, (unsigned long)parent, 0, 0, 0);
}

int mf_shm_cma_ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    return scope;
}

int mf_shm_cma_probe(pid_t pid, uint64_t addr)
{
    uint64_t v = 0;
    struct iovec l = {&v, sizeof v};
    struct iovec r = {(void *)(uintptr_t)addr, sizeof v};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0)
        return errno;
    if (n != (ssize_t)sizeof v || v != MF_SHM_CMA_PROBE_VALUE)
        return EIO;
    return 0;
}

int mf_shm_cma_read(pid_t pid, uint64_t raddr, const struct iovec *iov, int niov, size_t at,
                    size_t len)
{
    /* The kernel may transfer less than asked (it stops at IOV_MAX pieces, or partway on a
     * fault); walk the local pieces and re-issue from where it stopped. (i, skip): the local
     * piece the next byte goes to, and the bytes of it already filled (or skipped: `at`). */
    int i = 0;
    size_t skip = at;
    while (i < niov && skip >= iov[i].iov_len)
        skip -= iov[i++].iov_len;
    while (len > 0) {
        struct iovec l[64];
        int nl = 0;
        size_t want = 0;
        for (int j = i; j < niov && nl < 64 && want < len; j++) {
            size_t off = j == i ? skip : 0;
            size_t n = iov[j].iov_len - off;
            if (n > len - want)
                n = len - want;
            if (n == 0)
                continue;
            l[nl].iov_base = (char *)iov[j].iov_base + off;
            l[nl].iov_len = n;
            nl++;
            want += n;
        }
        if (nl == 0)
            return EINVAL; /* the local iovecs hold fewer than at + len bytes */
        struct iovec r = {(void *)(uintptr_t)raddr, want};
        ssize_t got = process_vm_readv(pid, l, (unsigned long)nl, &r, 1, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (got == 0)
            return EFAULT;
        len -= (size_t)got;
        raddr += (uint64_t)got;
        /* Advance (i, skip) by got bytes. */
        size_t adv = (size_t)got;
        while (adv > 0 && i < niov) {
            size_t room = iov[i].iov_len - skip;
            if (adv < room) {
                skip += adv;
                adv = 0;
            } else {
                adv -= room;
                i++;
                skip = 0;
            }
        }
    }
    return 0;
}
