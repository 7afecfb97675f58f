/*
 * doorbell.c — per-process wake-up for a rank sleeping in the progress engine, and the channel
 * over which local rank 0 hands the host's segment to the other local ranks.
 *
 * Contract: each process binds a nonblocking AF_UNIX datagram socket in the abstract namespace,
 * "\0manifold-<uid>-<jobhash>-<rank>" — nothing in the filesystem, gone when the process is.
 * The socket is the fabric's wait_fd. A sender rings a peer only if the peer's `sleeping` flag
 * (in the segment) is set, and only the sender that clears the flag sends, so a busy receiver
 * costs senders one load and never a system call. A full socket buffer (EAGAIN) already means
 * "readable", so it is ignored; so is a peer that has gone (its failure is found elsewhere).
 *
 * Who may talk to us. Abstract names are visible to every local user (/proc/net/unix), so any
 * of them can send to the socket. The socket has SO_PASSCRED: the kernel attaches the sender's
 * real uid to every datagram, and only datagrams from our own uid are acted upon (a process of
 * our uid could ptrace us anyway). Others are dropped, any descriptors they carried closed, and
 * reported at most once per MF_SHM_DOORBELL_REPORT_S seconds with a count. A foreign datagram
 * still makes a sleeping rank wake up once and go back to sleep; it cannot deliver anything.
 *
 * Handing out the segment (see segment.c). A rank that wants the segment sends MF_SHM_REQ to local
 * rank 0's doorbell; local rank 0 answers a request from our uid with MF_SHM_SEG carrying the
 * segment's descriptor (SCM_RIGHTS), addressed to the socket the request came from — so the
 * descriptor only ever goes to a socket bound by a process of our uid, even if some other user
 * bound a dead rank's name in the meantime. Wake-ups are a single byte, so the three kinds of
 * datagram cannot be mistaken for each other.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/ratelimit.h"
#include "fabric/shm/shm.h"
#include "fabric/shm/shm_name.h"

#define MF_SHM_DOORBELL_REPORT_S 10.0
static const char mf_shm_req[8] = {'M', 'F', 'S', 'H', 'M', 'R', 'E', 'Q'};
static const char mf_shm_seg[8] = {'M', 'F', 'S', 'H', 'M', 'S', 'E', 'G'};

static mf_ratelimit mf_shm_foreign_rl = MF_RATELIMIT_INIT(MF_SHM_DOORBELL_REPORT_S);
static unsigned long mf_shm_foreign_count;

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
    int one = 1;
    struct sockaddr_un sa;
    socklen_t len = mf_shm_doorbell_addr(&sa, job_hash, rank);
    /* SO_PASSCRED before bind: no datagram can arrive without its sender's credentials. */
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, len) != 0) {
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

/* One received datagram from our own uid. */
typedef struct mf_shm_dgram {
    char data[8];
    ssize_t len;
    int passed_fd; /* a descriptor it carried, or -1 */
    struct sockaddr_un from;
    socklen_t fromlen;
} mf_shm_dgram;

static void mf_shm_doorbell_foreign(uid_t uid, pid_t pid)
{
    unsigned held;
    mf_shm_foreign_count++;
    if (mf_ratelimit_pass(&mf_shm_foreign_rl, mf_clock_s(), &held)) {
        char more[64] = "";
        if (held)
            snprintf(more, sizeof more, " (and %u more since the last report)", held);
        mf_warn("shm: dropped a datagram to this rank's doorbell from uid %ld (pid %ld), not this "
                "job's user%s",
                (long)uid, (long)pid, more);
    }
}

/* Takes the next datagram off the socket. 1: one from our uid is in *d (the caller owns
 * d->passed_fd); 0: the socket is empty. Anything from another uid, or without credentials, is
 * dropped here, its descriptors closed. */
static int mf_shm_doorbell_take(int fd, mf_shm_dgram *d)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    for (;;) {
        struct iovec iov = {d->data, sizeof d->data};
        struct msghdr m = {.msg_name = &d->from,
                           .msg_namelen = sizeof d->from,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl.buf,
                           .msg_controllen = sizeof ctl.buf};
        d->len = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (d->len < 0 && errno == EINTR)
            continue;
        if (d->len < 0)
            return 0;
        d->fromlen = m.msg_namelen;
        d->passed_fd = -1;
        const struct ucred *cred = NULL;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET)
                continue;
            if (c->cmsg_type == SCM_CREDENTIALS)
                cred = (const struct ucred *)(void *)CMSG_DATA(c);
            if (c->cmsg_type == SCM_RIGHTS) {
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                    int passed;
                    memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
                    if (d->passed_fd < 0)
                        d->passed_fd = passed;
                    else
                        close(passed);
                }
            }
        }
        if (cred && cred->uid == getuid())
            return 1;
        if (d->passed_fd >= 0)
            close(d->passed_fd);
        mf_shm_doorbell_foreign(cred ? cred->uid : (uid_t)-1, cred ? cred->pid : 0);
    }
}

static bool mf_shm_dgram_is(const mf_shm_dgram *d, const char tag[8])
{
    return d->len == 8 && memcmp(d->data, tag, 8) == 0;
}

/* Drops whatever d carried. */
static void mf_shm_dgram_done(mf_shm_dgram *d)
{
    if (d->passed_fd >= 0)
        close(d->passed_fd);
    d->passed_fd = -1;
}

void mf_shm_doorbell_drain(int fd)
{
    mf_shm_dgram d;
    while (mf_shm_doorbell_take(fd, &d))
        mf_shm_dgram_done(&d); /* a late duplicate of the segment must not leak */
}

unsigned long mf_shm_doorbell_dropped(void)
{
    return mf_shm_foreign_count;
}

int mf_shm_doorbell_request(int fd, uint64_t job_hash, int rank)
{
    struct sockaddr_un sa;
    socklen_t len = mf_shm_doorbell_addr(&sa, job_hash, rank);
    if (sendto(fd, mf_shm_req, sizeof mf_shm_req, MSG_DONTWAIT | MSG_NOSIGNAL,
               (struct sockaddr *)&sa, len) == (ssize_t)sizeof mf_shm_req)
        return 0;
    return errno;
}

int mf_shm_doorbell_recv_fd(int fd)
{
    mf_shm_dgram d;
    while (mf_shm_doorbell_take(fd, &d)) {
        if (mf_shm_dgram_is(&d, mf_shm_seg) && d.passed_fd >= 0)
            return d.passed_fd;
        mf_shm_dgram_done(&d);
    }
    return -1;
}

int mf_shm_doorbell_give(int fd, const struct sockaddr *to, socklen_t len, int seg_fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {(void *)mf_shm_seg, sizeof mf_shm_seg};
    struct msghdr m = {.msg_name = (void *)to,
                       .msg_namelen = len,
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &seg_fd, sizeof seg_fd);
    return sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof mf_shm_seg ? 0 : errno;
}

void mf_shm_doorbell_serve(int fd, int seg_fd)
{
    mf_shm_dgram d;
    while (mf_shm_doorbell_take(fd, &d)) {
        mf_shm_dgram_done(&d);
        if (mf_shm_dgram_is(&d, mf_shm_req) && d.fromlen > offsetof(struct sockaddr_un, sun_path))
            /* Lost (a full queue, a requester gone): the requester asks again. */
            mf_shm_doorbell_give(fd, (const struct sockaddr *)&d.from, d.fromlen, seg_fd);
    }
}
