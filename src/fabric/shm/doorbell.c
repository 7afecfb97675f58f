/*
 * doorbell.c — per-process wake-up for a rank sleeping in the progress engine.
 *
 * Contract: each process binds a nonblocking AF_UNIX datagram socket in the abstract namespace,
 * "\0manifold-<uid>-<jobhash>-<rank>" — nothing in the filesystem, gone when the process is.
 * The socket is the fabric's wait_fd. A sender rings a peer only if the peer's `sleeping` flag
 * (in the segment) is set, and only the sender that clears the flag sends, so a busy receiver
 * costs senders one load and never a system call. A full socket buffer (EAGAIN) already means
 * "readable", so it is ignored; so is a peer that has gone (its failure is found elsewhere).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fabric/shm/shm.h"
#include "fabric/shm/shm_name.h"

static socklen_t mf_shm_doorbell_addr(struct sockaddr_un *sa, uint64_t job_hash, int rank)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    /* sun_path[0] stays NUL: abstract namespace. */
    char prefix[64];
    mf_shm_job_prefix(prefix, sizeof prefix, (unsigned)getuid(), job_hash);
    int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "%s%d", prefix, rank);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int mf_shm_doorbell_open(uint64_t job_hash, int rank)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un sa;
    socklen_t len = mf_shm_doorbell_addr(&sa, job_hash, rank);
    if (bind(fd, (struct sockaddr *)&sa, len) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

void mf_shm_doorbell_ring(int fd, mf_shm_rank_info *info, uint64_t job_hash, int rank)
{
    /* seq_cst: this load follows our seq_cst publication of a ring counter (see shm.h). */
    if (atomic_load_explicit(&info->sleeping, memory_order_seq_cst) == 0)
        return;
    if (atomic_exchange_explicit(&info->sleeping, 0, memory_order_seq_cst) == 0)
        return; /* another sender rang it */
    struct sockaddr_un sa;
    socklen_t len = mf_shm_doorbell_addr(&sa, job_hash, rank);
    char b = 1;
    ssize_t n = sendto(fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    (void)n;
}

int mf_shm_doorbell_check(uint64_t job_hash, int rank)
{
    /* connect() on a datagram socket resolves the address without sending anything. */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct sockaddr_un sa;
    socklen_t len = mf_shm_doorbell_addr(&sa, job_hash, rank);
    int e = connect(fd, (struct sockaddr *)&sa, len) == 0 ? 0 : errno;
    close(fd);
    return e;
}

void mf_shm_doorbell_drain(int fd)
{
    char buf[64];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
}
