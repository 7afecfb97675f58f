/*
 * sctp.c — the sctp fabric's ops table and its usrsctp stack: the stack's one-per-process set-up
 * (UDP port, sysctls), the instance's socket and published addresses, send, progress, sleeping
 * support and close. Arrivals, handshakes and ordering are in sctp_assoc.c; sctp.h has the
 * design.
 */
#include "fabric/sctp/sctp.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/iov.h"
#include "core/log.h"
#include "core/netif.h"
#include "core/progress.h"
#include "core/state.h"
#include "fabric/fabric_ifaces.h"
#include "runtime/pm.h"

/* Send remainders up to this size are copied (send returns DONE at once). */
#define MF_SCTP_COPY_LIMIT (16 * 1024)
/* Largest frame: a frame is handed up once complete, so this bounds what one frame holds in
 * memory; the p2p layer splits longer rendezvous payloads into frames of this size. (It goes out
 * as records of MF_SCTP_RECORD bytes: usrsctp's partial delivery never comes into play.) */
#define MF_SCTP_MAX_FRAME (1u << 20)
/* The SCTP receive buffer, hence the window a peer may fill: enough for a rate well beyond
 * what usrsctp moves at local round trips. Larger windows only queued packets: with 4 MiB in
 * flight the queue before usrsctp's receive thread outgrew the 20 ms retransmission timeout on
 * a busy host, and each spurious timeout restarted the sender from one packet. */
#define MF_SCTP_RCVBUF (1u << 20)
#define MF_SCTP_SNDBUF (1u << 20)
/* The receive buffer of usrsctp's UDP sockets (see mf_sctp_udp_buffers): more than a full
 * window of datagrams in kernel accounting (about twice their payload). */
#define MF_SCTP_UDP_RCVBUF (8 << 20)
/* How long close waits for queued frames, then for the associations to shut down. */
#define MF_SCTP_FLUSH_MS 10000
#define MF_SCTP_SHUTDOWN_MS 3000

static int mf_sctp_open(mf_fabric *f);
static int mf_sctp_start(mf_fabric *f);
static int mf_sctp_close(mf_fabric *f);
static bool mf_sctp_reachable(mf_fabric *f, int peer);
static int mf_sctp_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                        int niov, mf_fabric_done *done);
static int mf_sctp_progress(mf_fabric *f);
static int mf_sctp_wait_fd(mf_fabric *f);
static bool mf_sctp_sleep_prepare(mf_fabric *f);
static bool mf_sctp_tx_idle(mf_fabric *f);
static int mf_sctp_break_peer(mf_fabric *f, int peer);

static const mf_fabric_ops mf_sctp_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_sctp_open,
    .start = mf_sctp_start,
    .close = mf_sctp_close,
    .reachable = mf_sctp_reachable,
    .send = mf_sctp_send,
    .rkey_make = mf_fabric_no_rkey_make,
    .rkey_release = mf_fabric_no_rkey_release,
    .rget = mf_fabric_no_rget,
    .progress = mf_sctp_progress,
    .wait_fd = mf_sctp_wait_fd,
    .sleep_prepare = mf_sctp_sleep_prepare,
    .sleep_end = mf_fabric_no_sleep_end,
    .tx_idle = mf_sctp_tx_idle,
    .break_peer = mf_sctp_break_peer,
};

static void mf_sctp_init(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    f->flags = MF_FABRIC_NETWORK;
    f->eager_limit = 65536;
    f->max_frame = MF_SCTP_MAX_FRAME;
    s->s_rl_refused = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
    s->s_rl_path = (mf_ratelimit)MF_RATELIMIT_INIT(1.0);
}

const mf_fabric_class mf_sctp_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "sctp",
    .ops = &mf_sctp_ops,
    .caps = MF_FABRIC_CAP_RELIABLE | MF_FABRIC_CAP_ORDERED | MF_FABRIC_CAP_RAIL |
            MF_FABRIC_CAP_NETWORK | MF_FABRIC_CAP_IFACES | MF_FABRIC_CAP_MULTIHOME,
    .max_message = MF_SCTP_MAX_FRAME,
    .instance_size = sizeof(mf_sctp),
    .init = mf_sctp_init,
};

/* ---- The process's usrsctp stack ----
 * usrsctp keeps global state (its threads, its UDP socket, its sysctls): the first instance
 * starts it, the last one stops it. Guarded by mf_sctp_stack_lock, since instances open and
 * close under the library lock but the retired inboxes are written from close only. */
static pthread_mutex_t mf_sctp_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static int mf_sctp_stack_users;
static uint16_t mf_sctp_stack_udp; /* the UDP encapsulation port, host order */
static mf_sctp_inbox *mf_sctp_retired;

/* A whole number from `lo` to `hi` in variable `name`, or an error code naming it. */
static int mf_sctp_setting(const char *name, long lo, long hi, long *out)
{
    const char *v = mf_config_str(name);
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return mf_error(MPI_ERR_ARG, "sctp: %s=%s: expected a whole number from %ld to %ld", name,
                        v, lo, hi);
    *out = x;
    return MPI_SUCCESS;
}

/* A UDP port free on every address, v4 and v6 (usrsctp binds both), probed by binding. */
static int mf_sctp_probe_port(uint16_t *port)
{
    for (int tries = 0; tries < 32; tries++) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return errno;
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t al = sizeof a;
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
            int e = errno;
            close(fd);
            return e;
        }
        int fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        bool ok = true;
        if (fd6 >= 0) {
            int one = 1;
            setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
            struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = a.sin_port};
            ok = bind(fd6, (struct sockaddr *)&a6, sizeof a6) == 0 || errno == EADDRNOTAVAIL;
            close(fd6);
        }
        close(fd);
        if (ok) {
            *port = ntohs(a.sin_port);
            return 0;
        }
    }
    return EADDRINUSE;
}

/* Whether something holds UDP port `port` on IPv4 (after usrsctp_init: usrsctp, we hope). */
static bool mf_sctp_port_taken(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    bool taken = bind(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == EADDRINUSE;
    close(fd);
    return taken;
}

/* The stack's timers and switches, from the settings (after usrsctp_init, which resets them).
 * Values are those that moved traffic to the other path within ~100 ms (FABRIC-NOTES). */
static int mf_sctp_sysctls(void)
{
    long rto_min, rto_max, maxrxt, pf, hb, mtu;
    int rc = mf_sctp_setting("MANIFOLD_SCTP_RTO_MIN", 1, 60000, &rto_min);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_RTO_MAX", 1, 60000, &rto_max);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_PATH_MAXRXT", 1, 100, &maxrxt);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_PF_THRESHOLD", 0, 100, &pf);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_HEARTBEAT", 1, 600000, &hb);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_MTU", 1200, 32768, &mtu);
    if (rc)
        return rc;
    if (rto_min > rto_max)
        return mf_error(MPI_ERR_ARG,
                        "sctp: MANIFOLD_SCTP_RTO_MIN (%ld) exceeds "
                        "MANIFOLD_SCTP_RTO_MAX (%ld)",
                        rto_min, rto_max);
    usrsctp_sysctl_set_sctp_blackhole(2); /* no ABORT answers to strays */
    usrsctp_sysctl_set_sctp_rto_min_default((uint32_t)rto_min);
    usrsctp_sysctl_set_sctp_rto_max_default((uint32_t)rto_max);
    usrsctp_sysctl_set_sctp_rto_initial_default((uint32_t)rto_max);
    usrsctp_sysctl_set_sctp_init_rto_max_default((uint32_t)(rto_max > 1000 ? rto_max : 1000));
    usrsctp_sysctl_set_sctp_path_rtx_max_default((uint32_t)maxrxt);
    /* The association survives while any path does: its own limit must exceed one path's. */
    usrsctp_sysctl_set_sctp_assoc_rtx_max_default((uint32_t)(4 * maxrxt + 6));
    usrsctp_sysctl_set_sctp_path_pf_threshold((uint32_t)pf);
    usrsctp_sysctl_set_sctp_heartbeat_interval_default((uint32_t)hb);
    /* A delayed SACK must come well before the sender's retransmission timer: usrsctp's 200 ms
     * against an RTO from 20 ms made the last packet of every odd-sized flight time out, and
     * each timeout resent the flight from a congestion window of one packet. */
    usrsctp_sysctl_set_sctp_delayed_sack_time_default(
        (uint32_t)(rto_min / 4 > 1 ? rto_min / 4 : 1));
    usrsctp_sysctl_set_sctp_nr_outgoing_streams_default(MF_SCTP_STREAMS);
    usrsctp_sysctl_set_sctp_default_frag_interleave(1); /* pieces of one message stay together
                                                           within an association */
    usrsctp_sysctl_set_sctp_sendspace(MF_SCTP_SNDBUF);
    usrsctp_sysctl_set_sctp_recvspace(MF_SCTP_RCVBUF);
    /* CMT needs the stack's switch before the socket option may turn it on (mode 4, with
     * delayed ack for CMT: the combination that aggregated two rails, FABRIC-NOTES). */
    if (strcmp(mf_config_str("MANIFOLD_SCTP_CMT"), "on") == 0) {
        usrsctp_sysctl_set_sctp_cmt_on_off(4);
        usrsctp_sysctl_set_sctp_cmt_use_dac(1);
    }
    /* Checksums: usrsctp computes CRC32c in software for every packet, and the UDP checksum
     * beneath is only 16 bits: CRC32c stays on (sctp_no_csum_on_loopback keeps usrsctp's own
     * default, skipping it for loopback only). */
    (void)mtu; /* applied per socket, see mf_sctp_socket_opts */
    return MPI_SUCCESS;
}

/* usrsctp's UDP sockets (one per family) get a 128 KiB receive buffer from usrsctp_init, about
 * 100 datagrams: a window's burst overflowed it whenever the receive thread was a moment late
 * (kernel RcvbufErrors), and every loss cost a retransmission timeout. usrsctp offers no option
 * for it, so the sockets are found by their port (ours alone: probed free) and enlarged to
 * MF_SCTP_UDP_RCVBUF, beyond net.core.rmem_max when the process may (SO_RCVBUFFORCE). */
static void mf_sctp_udp_buffers(uint16_t port)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int want = MF_SCTP_UDP_RCVBUF, dfd = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dfd)
            continue;
        int type = 0;
        socklen_t tl = sizeof type;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM ||
            getsockname((int)fd, (struct sockaddr *)&ss, &sl) != 0)
            continue;
        uint16_t p = ss.ss_family == AF_INET    ? ((struct sockaddr_in *)&ss)->sin_port
                     : ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                : 0;
        if (ntohs(p) != port)
            continue;
        if (setsockopt((int)fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) != 0)
            (void)setsockopt((int)fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    }
    closedir(d);
}

static int mf_sctp_stack_up(void)
{
    pthread_mutex_lock(&mf_sctp_stack_lock);
    int rc = MPI_SUCCESS;
    if (mf_sctp_stack_users == 0) {
        uint16_t port = 0;
        int err = mf_sctp_probe_port(&port);
        if (err) {
            rc = mf_error(MPI_ERR_OTHER, "sctp: no free UDP port for the encapsulation: %s",
                          strerror(err));
            goto out;
        }
        usrsctp_init(port, NULL, NULL);
        /* usrsctp_init says nothing when it could not bind its port: check it holds it. */
        if (!mf_sctp_port_taken(port)) {
            usrsctp_finish();
            rc = mf_error(MPI_ERR_OTHER, "sctp: usrsctp could not bind UDP port %u", port);
            goto out;
        }
        mf_sctp_udp_buffers(port);
        rc = mf_sctp_sysctls();
        if (rc) {
            usrsctp_finish();
            goto out;
        }
        mf_sctp_stack_udp = port;
    }
    mf_sctp_stack_users++;
out:
    pthread_mutex_unlock(&mf_sctp_stack_lock);
    return rc;
}

static void mf_sctp_inbox_free(mf_sctp_inbox *ib)
{
    while (ib->ib_head) {
        mf_sctp_piece *p = ib->ib_head;
        ib->ib_head = p->pc_next;
        mf_sctp_piece_free(p);
    }
    if (ib->ib_evfd >= 0)
        close(ib->ib_evfd);
    pthread_mutex_destroy(&ib->ib_lock);
    free(ib);
}

/* Retires the instance's inbox; the last user stops the stack and frees them all. */
static void mf_sctp_stack_down(mf_sctp_inbox *ib)
{
    pthread_mutex_lock(&mf_sctp_stack_lock);
    if (ib) {
        ib->ib_next_retired = mf_sctp_retired;
        mf_sctp_retired = ib;
    }
    if (--mf_sctp_stack_users == 0) {
        /* Associations still shutting down keep sockets alive for a moment. */
        bool down = false;
        for (int i = 0; i < 300 && !down; i++) {
            down = usrsctp_finish() == 0;
            if (!down)
                usleep(10000);
        }
        if (down) {
            while (mf_sctp_retired) {
                mf_sctp_inbox *n = mf_sctp_retired->ib_next_retired;
                mf_sctp_inbox_free(mf_sctp_retired);
                mf_sctp_retired = n;
            }
        } else {
            mf_warn("sctp: usrsctp did not stop within 3 s; its threads stay until exit");
        }
    }
    pthread_mutex_unlock(&mf_sctp_stack_lock);
}

/* ---- usrsctp's threads ---- */

static void mf_sctp_inbox_push(mf_sctp_inbox *ib, mf_sctp_piece *p)
{
    pthread_mutex_lock(&ib->ib_lock);
    if (ib->ib_closed) {
        pthread_mutex_unlock(&ib->ib_lock);
        mf_sctp_piece_free(p);
        return;
    }
    if (ib->ib_tail)
        ib->ib_tail->pc_next = p;
    else
        ib->ib_head = p;
    ib->ib_tail = p;
    atomic_fetch_add(&ib->ib_count, 1);
    pthread_mutex_unlock(&ib->ib_lock);
    uint64_t one = 1;
    (void)!write(ib->ib_evfd, &one, sizeof one);
}

/* Receive callback (usrsctp's thread): queue, ring. data is ours to free. */
static int mf_sctp_rx_cb(struct socket *sock, union sctp_sockstore addr, void *data, size_t len,
                         struct sctp_rcvinfo rcv, int flags, void *ulp)
{
    (void)sock;
    (void)addr;
    mf_sctp_inbox *ib = ulp;
    if (!data) /* the socket closed */
        return 1;
    mf_sctp_piece *p = calloc(1, sizeof *p);
    if (!p) {
        free(data);
        return 1; /* the association will fail on the hole; nothing better to do here */
    }
    p->pc_assoc = rcv.rcv_assoc_id;
    p->pc_sid = rcv.rcv_sid;
    p->pc_flags = flags;
    p->pc_data = data;
    p->pc_len = len;
    if (flags & MSG_NOTIFICATION) {
        const union sctp_notification *n = data;
        if (len >= sizeof n->sn_header && n->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
            len >= sizeof n->sn_assoc_change)
            p->pc_assoc = n->sn_assoc_change.sac_assoc_id;
        else if (n->sn_header.sn_type == SCTP_SHUTDOWN_EVENT && len >= sizeof n->sn_shutdown_event)
            p->pc_assoc = n->sn_shutdown_event.sse_assoc_id;
        else if (n->sn_header.sn_type == SCTP_PEER_ADDR_CHANGE && len >= sizeof n->sn_paddr_change)
            p->pc_assoc = n->sn_paddr_change.spc_assoc_id;
    }
    mf_sctp_inbox_push(ib, p);
    return 1;
}

/* Send callback (usrsctp's thread): room freed; progress retries what waits. */
static int mf_sctp_tx_cb(struct socket *sock, uint32_t sb_free, void *ulp)
{
    (void)sock;
    (void)sb_free;
    mf_sctp_inbox *ib = ulp;
    uint64_t one = 1;
    (void)!write(ib->ib_evfd, &one, sizeof one);
    return 1;
}

/* ---- Open ---- */

static int mf_sctp_sockopt(mf_sctp *s, int opt, const void *v, socklen_t len, const char *what)
{
    if (usrsctp_setsockopt(s->s_sock, IPPROTO_SCTP, opt, v, len) == 0)
        return MPI_SUCCESS;
    return mf_error(MPI_ERR_OTHER, "%s: cannot set %s: %s", s->s_base.name, what, strerror(errno));
}

static int mf_sctp_socket_opts(mf_sctp *s)
{
    int one = 1;
    int rc = mf_sctp_sockopt(s, SCTP_NODELAY, &one, sizeof one, "SCTP_NODELAY");
    if (!rc)
        rc = mf_sctp_sockopt(s, SCTP_EXPLICIT_EOR, &one, sizeof one, "SCTP_EXPLICIT_EOR");
    if (!rc)
        rc = mf_sctp_sockopt(s, SCTP_RECVRCVINFO, &one, sizeof one, "SCTP_RECVRCVINFO");
    struct sctp_initmsg im = {.sinit_num_ostreams = MF_SCTP_STREAMS,
                              .sinit_max_instreams = MF_SCTP_STREAMS};
    if (!rc)
        rc = mf_sctp_sockopt(s, SCTP_INITMSG, &im, sizeof im, "SCTP_INITMSG");
    static const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_PEER_ADDR_CHANGE,
                                      SCTP_SHUTDOWN_EVENT};
    for (size_t i = 0; i < sizeof events / sizeof events[0] && !rc; i++) {
        struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i], .se_on = 1};
        rc = mf_sctp_sockopt(s, SCTP_EVENT, &ev, sizeof ev, "SCTP_EVENT");
    }
    /* Path MTU, fixed (discovery off). 1452 keeps every UDP datagram within an Ethernet frame.
     * Larger values move more data per packet processed (16 KiB: about twice the bandwidth here,
     * FABRIC-NOTES) but IP then fragments the datagrams, and under load associations stalled
     * for good with data outstanding (usrsctp 0.9.5, two namespace hosts, 1 MiB stream: 16 KiB
     * stalled 1 run in 3-6, 8 KiB 1 in 10, 1452 none in 15); a user on a clean network may
     * raise it with MANIFOLD_SCTP_MTU. */
    long mtu = 1452;
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_SCTP_MTU", 1200, 32768, &mtu);
    struct sctp_paddrparams pp = {.spp_assoc_id = SCTP_FUTURE_ASSOC,
                                  .spp_pathmtu = (uint32_t)mtu,
                                  .spp_flags = SPP_PMTUD_DISABLE};
    if (!rc)
        rc = mf_sctp_sockopt(s, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp, "the path MTU");
    s->s_cmt = strcmp(mf_config_str("MANIFOLD_SCTP_CMT"), "on") == 0;
    if (!rc && s->s_cmt) {
        struct sctp_assoc_value av = {.assoc_id = SCTP_FUTURE_ASSOC,
                                      .assoc_value = MF_SCTP_CMT_MODE};
        rc = mf_sctp_sockopt(s, MF_SCTP_CMT_ON_OFF, &av, sizeof av, "CMT (MANIFOLD_SCTP_CMT=on)");
    }
    if (!rc && usrsctp_set_non_blocking(s->s_sock, 1) != 0)
        rc = mf_error(MPI_ERR_OTHER, "%s: cannot make the socket nonblocking", s->s_base.name);
    return rc;
}

/* Binds the instance's interfaces (all on one SCTP port) and writes the published value. */
static int mf_sctp_bind(mf_sctp *s, char *pub, size_t publen)
{
    mf_netif ifs[MF_SCTP_MAX_ADDRS];
    int n, rc = mf_fabric_select_ifaces(&s->s_base, ifs, MF_SCTP_MAX_ADDRS, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The first address gets a port from the stack; the others join on the same port. */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = ifs[0].addr};
    if (usrsctp_bind(s->s_sock, (struct sockaddr *)&a, sizeof a) != 0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot bind %s: %s", s->s_base.name, ifs[0].name,
                        strerror(errno));
    struct sockaddr *got = NULL;
    int ng = usrsctp_getladdrs(s->s_sock, 0, &got);
    if (ng <= 0 || !got)
        return mf_error(MPI_ERR_OTHER, "%s: cannot read the bound port", s->s_base.name);
    s->s_port = ntohs(((struct sockaddr_in *)got)->sin_port);
    usrsctp_freeladdrs(got);
    size_t used = (size_t)snprintf(pub, publen, "%u:%u:", mf_sctp_stack_udp, s->s_port);
    size_t aused = 0;
    for (int i = 0; i < n; i++) {
        a = (struct sockaddr_in){
            .sin_family = AF_INET, .sin_port = htons(s->s_port), .sin_addr = ifs[i].addr};
        if (i > 0 && usrsctp_bindx(s->s_sock, (struct sockaddr *)&a, 1, SCTP_BINDX_ADD_ADDR) != 0)
            return mf_error(MPI_ERR_OTHER, "%s: cannot add %s to the association's addresses: %s",
                            s->s_base.name, ifs[i].name, strerror(errno));
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &ifs[i].addr, ip, sizeof ip);
        int k = snprintf(pub + used, publen - used, "%s%s", i ? "," : "", ip);
        if (k > 0 && (size_t)k < publen - used)
            used += (size_t)k;
        k = snprintf(s->s_addrs + aused, sizeof s->s_addrs - aused, "%s%s(%s)", i ? "," : "", ip,
                     ifs[i].name);
        if (k > 0 && (size_t)k < sizeof s->s_addrs - aused)
            aused += (size_t)k;
    }
    return MPI_SUCCESS;
}

static void mf_sctp_release(mf_sctp *s)
{
    if (s->s_sock) {
        usrsctp_close(s->s_sock);
        s->s_sock = NULL;
    }
    if (s->s_inbox) {
        pthread_mutex_lock(&s->s_inbox->ib_lock);
        s->s_inbox->ib_closed = true;
        pthread_mutex_unlock(&s->s_inbox->ib_lock);
        mf_sctp_stack_down(s->s_inbox);
        s->s_inbox = NULL;
    }
    mf_sctp_assoc_free_all(s);
    for (int r = 0; r < s->s_npeers; r++) {
        mf_sctp_peer *p = &s->s_peers[r];
        mf_sctp_peer_drop(p, MPI_ERR_OTHER);
        free(p->p_ctx);
    }
    free(s->s_peers);
    s->s_peers = NULL;
    s->s_npeers = 0;
    mf_fabric_failures_free(&s->s_fails);
}

static int mf_sctp_open(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    long timeout, pending;
    int rc = mf_sctp_setting("MANIFOLD_TCP_AUTH_TIMEOUT", 1, 3600, &timeout);
    if (!rc)
        rc = mf_sctp_setting("MANIFOLD_TCP_AUTH_PENDING", 1, 1 << 20, &pending);
    if (rc)
        return rc;
    s->s_auth_timeout = (double)timeout;
    s->s_pending_max = (int)pending;
    f->eager_limit = mf_config_size("MANIFOLD_SCTP_EAGER_LIMIT");
    if (f->eager_limit > f->max_frame)
        f->eager_limit = f->max_frame;
    s->s_npeers = mf_g.size;
    s->s_peers = calloc((size_t)mf_g.size, sizeof *s->s_peers);
    mf_sctp_inbox *ib = calloc(1, sizeof *ib);
    if (!s->s_peers || !ib) {
        free(ib);
        free(s->s_peers);
        s->s_peers = NULL;
        return mf_error(MPI_ERR_NO_MEM, "sctp: no memory for %d peers", mf_g.size);
    }
    pthread_mutex_init(&ib->ib_lock, NULL);
    ib->ib_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ib->ib_evfd < 0) {
        rc = mf_error(MPI_ERR_OTHER, "sctp: eventfd failed: %s", strerror(errno));
        mf_sctp_inbox_free(ib);
        free(s->s_peers);
        s->s_peers = NULL;
        return rc;
    }
    rc = mf_sctp_stack_up();
    if (rc) {
        mf_sctp_inbox_free(ib);
        free(s->s_peers);
        s->s_peers = NULL;
        return rc;
    }
    /* Every arrival comes through usrsctp's receive thread: spinning would keep it off the core
     * it may share with this rank (54 us per 8 B message across hosts, 15-20 us yielding). */
    mf_progress_helper_threads();
    s->s_inbox = ib;
    rc = mf_fabric_failures_init(&s->s_fails, mf_g.size, "sctp");
    if (rc)
        goto fail;
    s->s_sock = usrsctp_socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, mf_sctp_rx_cb, mf_sctp_tx_cb,
                               64 * 1024, ib);
    if (!s->s_sock) {
        rc = mf_error(MPI_ERR_OTHER, "sctp: usrsctp_socket failed: %s", strerror(errno));
        goto fail;
    }
    rc = mf_sctp_socket_opts(s);
    char pub[MF_PM_VAL_MAX];
    if (!rc)
        rc = mf_sctp_bind(s, pub, sizeof pub);
    if (rc)
        goto fail;
    /* A one-to-many socket accepts associations only once listening. */
    if (usrsctp_listen(s->s_sock, 1) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "%s: cannot listen: %s", f->name, strerror(errno));
        goto fail;
    }
    rc = mf_fabric_addr_publish(f, pub);
    if (rc)
        goto fail;
    return MPI_SUCCESS;
fail:
    mf_sctp_release(s);
    return rc;
}

static int mf_sctp_start(mf_fabric *f)
{
    return MPI_SUCCESS;
}

static bool mf_sctp_reachable(mf_fabric *f, int peer)
{
    return peer != mf_g.rank && peer >= 0 && peer < mf_g.size;
}

/* ---- Sending ---- */

/* Writability is not signalled reliably: while frames wait, sleeps are short. While
 * associations are unproven, their deadline needs a pass now and then. Called wherever either
 * count may have grown (send as well as progress: a frame queued by send must not wait for the
 * next arrival to be retried). */
static void mf_sctp_bound_sleep(mf_sctp *s)
{
    s->s_base.poll_interval_us = s->s_nqueued || s->s_hs_waiting ? 1000
                                 : s->s_npending                 ? 100000
                                                                 : 0;
}

static int mf_sctp_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                        int niov, mf_fabric_done *done)
{
    mf_sctp *s = mf_sctp_of(f);
    if (peer < 0 || peer >= s->s_npeers || peer == mf_g.rank)
        return mf_error(MPI_ERR_INTERN, "sctp: send to invalid rank %d", peer);
    if (hdr->len > f->max_frame)
        return mf_error(MPI_ERR_INTERN, "sctp: frame of %llu bytes exceeds max_frame",
                        (unsigned long long)hdr->len);
    mf_sctp_peer *p = &s->s_peers[peer];
    if (s->s_fails.code[peer])
        return s->s_fails.code[peer];
    if (p->p_closed)
        return mf_error(MPI_ERR_OTHER, "%s: rank %d has closed its association (finalized)",
                        f->name, peer);
    size_t have = 0;
    for (int i = 0; i < niov; i++)
        have += iov[i].iov_len;
    if (have < hdr->len)
        return mf_error(MPI_ERR_INTERN,
                        "sctp: send to rank %d: the iovecs do not hold the "
                        "header's %llu bytes",
                        peer, (unsigned long long)hdr->len);
    mf_sctp_ctx *c = mf_sctp_ctx_of(p, hdr->context);
    mf_sctp_out *o = calloc(1, sizeof *o);
    if (!c || !o) {
        free(o);
        return mf_error(MPI_ERR_NO_MEM, "sctp: no memory to queue a frame for rank %d", peer);
    }
    o->o_head[0] = MF_SCTP_MSG_FRAME;
    uint32_t seq = htole32(c->c_tx);
    memcpy(o->o_head + 4, &seq, 4);
    mf_wire_encode(hdr, o->o_head + MF_SCTP_PREFIX);
    o->o_len = (size_t)hdr->len;
    o->o_sid = 0; /* chosen when the association (and its stream count) is known */
    /* Small payloads are copied so that the send completes at once; larger ones are kept by
     * reference (the caller keeps them until done). */
    if (o->o_len <= MF_SCTP_COPY_LIMIT ||
        niov > (int)(sizeof o->o_iov_inline / sizeof o->o_iov_inline[0])) {
        if (o->o_len > MF_SCTP_COPY_LIMIT && !done)
            goto busy;
        o->o_copy = o->o_len ? malloc(o->o_len) : NULL;
        if (o->o_len && !o->o_copy) {
            free(o);
            return mf_error(MPI_ERR_NO_MEM, "sctp: no memory to queue a frame for rank %d", peer);
        }
        mf_iov_gather(o->o_copy, iov, niov, o->o_len);
        o->o_iov_inline[0] = (struct iovec){o->o_copy, o->o_len};
        o->o_iov = o->o_iov_inline;
        o->o_niov = 1;
        o->o_done = o->o_len > MF_SCTP_COPY_LIMIT ? done : NULL;
    } else {
        if (!done)
            goto busy;
        memcpy(o->o_iov_inline, iov, (size_t)niov * sizeof *iov);
        o->o_iov = o->o_iov_inline;
        o->o_niov = niov;
        o->o_done = done;
    }
    c->c_tx++;
    mf_fabric_count_tx(f, hdr);
    if (!p->p_assoc && !p->p_dialed) {
        int rc = mf_sctp_dial(s, peer);
        if (rc) {
            mf_sctp_out_free(o);
            mf_sctp_peer_fail(s, peer, rc);
            return rc;
        }
    }
    /* Straight out when nothing waits before it; else behind the others. */
    if (p->p_assoc && !p->p_head) {
        int w = mf_sctp_out_write(s, p, o);
        if (w < 0) {
            mf_sctp_out_free(o);
            return s->s_fails.code[peer];
        }
        if (w > 0) {
            mf_sctp_out_free(o);
            return MF_FABRIC_DONE;
        }
    }
    mf_fabric_done *mine = o->o_done;
    if (!p->p_head)
        s->s_nqueued++;
    if (p->p_tail)
        p->p_tail->o_next = o;
    else
        p->p_head = o;
    p->p_tail = o;
    mf_sctp_bound_sleep(s);
    return mine ? MF_FABRIC_PENDING : MF_FABRIC_DONE;
busy:
    free(o);
    return MF_FABRIC_BUSY;
}

/* ---- Progress and sleeping ---- */

static int mf_sctp_progress(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    int n = mf_sctp_report_failures(s);
    mf_sctp_inbox *ib = s->s_inbox;
    if (ib && atomic_load_explicit(&ib->ib_count, memory_order_acquire) > 0) {
        pthread_mutex_lock(&ib->ib_lock);
        mf_sctp_piece *list = ib->ib_head;
        ib->ib_head = ib->ib_tail = NULL;
        atomic_store(&ib->ib_count, 0);
        pthread_mutex_unlock(&ib->ib_lock);
        while (list) {
            mf_sctp_piece *next = list->pc_next;
            list->pc_next = NULL;
            n += mf_sctp_piece_in(s, list);
            list = next;
        }
    }
    if (s->s_nqueued || s->s_hs_waiting)
        n += mf_sctp_flush_all(s);
    if (s->s_npending)
        n += mf_sctp_housekeeping(s);
    n += mf_sctp_report_failures(s);
    mf_sctp_bound_sleep(s);
    return n;
}

static int mf_sctp_wait_fd(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    return s->s_inbox ? s->s_inbox->ib_evfd : -1;
}

/* Resets the eventfd, then looks at the inbox: a piece pushed after the reset rings it again,
 * so the engine cannot sleep past an arrival. */
static bool mf_sctp_sleep_prepare(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    if (!s->s_inbox)
        return true;
    uint64_t v;
    (void)!read(s->s_inbox->ib_evfd, &v, sizeof v);
    return atomic_load(&s->s_inbox->ib_count) == 0 && s->s_fails.npending == 0;
}

static bool mf_sctp_tx_idle(mf_fabric *f)
{
    return mf_sctp_of(f)->s_nqueued == 0;
}

/* Waits up to ms for the inbox, then runs one progress pass. */
static void mf_sctp_wait_progress(mf_sctp *s, int ms)
{
    struct pollfd pfd = {.fd = s->s_inbox->ib_evfd, .events = POLLIN};
    if (mf_sctp_sleep_prepare(&s->s_base))
        poll(&pfd, 1, ms);
    mf_sctp_progress(&s->s_base);
}

static int mf_sctp_close(mf_fabric *f)
{
    mf_sctp *s = mf_sctp_of(f);
    if (!s->s_peers)
        return MPI_SUCCESS;
    /* 1. Let queued frames go to usrsctp, for a bounded time (the peers must be progressing). */
    double deadline = mf_clock_s() + MF_SCTP_FLUSH_MS / 1000.0;
    while (s->s_nqueued && mf_clock_s() < deadline)
        mf_sctp_wait_progress(s, 10);
    int rc = MPI_SUCCESS;
    if (s->s_nqueued) {
        rc = mf_error(MPI_ERR_OTHER, "sctp: frames still queued after %d s at finalize",
                      MF_SCTP_FLUSH_MS / 1000);
        mf_warn("sctp: frames still queued after %d s at finalize; dropping them",
                MF_SCTP_FLUSH_MS / 1000);
    }
    /* 2. Shut every association down gracefully: SCTP delivers what usrsctp holds first, and
     *    the peer sees a SHUTDOWN (a finalize), not a loss. Arrivals are no longer handed up. */
    s->s_closing = true;
    for (mf_sctp_assoc *a = s->s_assocs; a; a = a->a_next) {
        struct sctp_sndinfo si = {.snd_flags = SCTP_EOF, .snd_assoc_id = a->a_id};
        /* (usrsctp wants a buffer even for no data) */
        usrsctp_sendv(s->s_sock, "", 0, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
    }
    deadline = mf_clock_s() + MF_SCTP_SHUTDOWN_MS / 1000.0;
    while (s->s_assocs && mf_clock_s() < deadline)
        mf_sctp_wait_progress(s, 10);
    int left = 0;
    for (mf_sctp_assoc *a = s->s_assocs; a; a = a->a_next)
        left++;
    if (left)
        mf_verbose("%s: %d association%s not shut down within %d s; closing anyway", s->s_base.name,
                   left, left == 1 ? "" : "s", MF_SCTP_SHUTDOWN_MS / 1000);
    mf_sctp_release(s);
    return rc;
}

/* Fault injection: the association is aborted as a network failure would end it; both sides
 * fail the peer. */
static int mf_sctp_break_peer(mf_fabric *f, int peer)
{
    mf_sctp *s = mf_sctp_of(f);
    if (peer < 0 || peer >= s->s_npeers || peer == mf_g.rank)
        return mf_error(MPI_ERR_INTERN, "%s: cannot break the association with rank %d", f->name,
                        peer);
    mf_sctp_peer *p = &s->s_peers[peer];
    if (p->p_assoc) {
        struct sctp_sndinfo si = {.snd_flags = SCTP_ABORT, .snd_assoc_id = p->p_assoc};
        usrsctp_sendv(s->s_sock, "", 0, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
    }
    mf_sctp_peer_fail(s, peer,
                      mf_error(MPI_ERR_OTHER,
                               "%s: association with rank %d broken (fault injection, "
                               "MANIFOLD_FAULT)",
                               f->name, peer));
    return MPI_SUCCESS;
}
