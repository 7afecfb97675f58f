/*
 * tcp_if.c — which interfaces the tcp fabric listens on, and the published address list.
 *
 * The instance's interfaces (its setting "tcp:lo+eth0", else MANIFOLD_IF; syntax and defaults
 * in core/netif.h) select IPv4 interfaces; when they are set, exactly the matching ones
 * are used and matching none is an error (a typo must not silently move traffic elsewhere). Loopback is listened on by default too, but only peers on the same
 * host are ever given it (mf_tcp_parse_addrs), so a job on one host works without any network.
 *
 * Ports: ephemeral (the kernel picks) unless MANIFOLD_PORT_RANGE=LOW-HIGH confines them, e.g.
 * to what a firewall lets through.
 */
#include "fabric/tcp/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "fabric/fabric_ifaces.h"
#include "core/error.h"
#include "core/log.h"
#include "core/netif.h"

void mf_tcp_addr_str(const struct sockaddr_in *a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

void mf_tcp_tune(mf_tcp *t, int fd)
{
    int one = 1;
    /* Frames are written whole with one writev: Nagle would only add latency. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (t->t_sockbuf > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &t->t_sockbuf, sizeof t->t_sockbuf);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t->t_sockbuf, sizeof t->t_sockbuf);
    }
}

/* Parses MANIFOLD_PORT_RANGE. 0 with lo = hi = 0 for ephemeral ports. */
static int mf_tcp_port_range(int *lo, int *hi)
{
    const char *s = mf_config_str("MANIFOLD_PORT_RANGE");
    *lo = *hi = 0;
    if (!*s)
        return MPI_SUCCESS;
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (*end == '-')
        b = strtol(end + 1, &end, 10);
    if (*end || a < 1 || b > 65535 || a > b)
        return mf_error(MPI_ERR_ARG,
                        "tcp: MANIFOLD_PORT_RANGE='%s' is not LOW-HIGH with "
                        "1 <= LOW <= HIGH <= 65535",
                        s);
    *lo = (int)a;
    *hi = (int)b;
    return MPI_SUCCESS;
}

/* A nonblocking socket listening on addr:port (port 0: ephemeral) in *out_fd, or an errno. */
static int mf_tcp_listen_port(mf_tcp *t, struct in_addr addr, int port, int *out_fd)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* Accepted sockets inherit the buffer sizes: set them before listen. */
    mf_tcp_tune(t, fd);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_addr = addr, .sin_port = htons((uint16_t)port)};
    /* Bind and listen are two steps: with SO_REUSEADDR, two sockets that are not listening yet
     * may both bind one port, and the second to listen gets EADDRINUSE (seen in CI: two
     * programs on one port of MANIFOLD_PORT_RANGE). The caller then tries another port. */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    *out_fd = fd;
    return 0;
}

/* A nonblocking listening socket on addr (port 0: ephemeral; else tries [lo, hi], each port
 * until one both binds and listens; ports in use or privileged are passed over). */
static int mf_tcp_listen_one(mf_tcp *t, struct in_addr addr, int lo, int hi, int *out_fd,
                             struct sockaddr_in *bound)
{
    int fd = -1, err = EADDRINUSE;
    if (lo == 0) { /* the kernel's port can lose the same race; a few tries */
        for (int i = 0; i < 8 && err == EADDRINUSE; i++)
            err = mf_tcp_listen_port(t, addr, 0, &fd);
    } else {
        /* Start at a pid-dependent port so that ranks on one host rarely collide. */
        int span = hi - lo + 1, start = (int)(getpid() % span);
        err = EADDRINUSE;
        for (int i = 0; i < span && (err == EADDRINUSE || err == EACCES); i++)
            err = mf_tcp_listen_port(t, addr, lo + (start + i) % span, &fd);
    }
    if (err) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr, ip, sizeof ip);
        return mf_error(MPI_ERR_OTHER, "tcp: cannot listen on %s%s: %s", ip,
                        lo ? " in MANIFOLD_PORT_RANGE" : "", strerror(err));
    }
    socklen_t sl = sizeof *bound;
    getsockname(fd, (struct sockaddr *)bound, &sl);
    *out_fd = fd;
    return MPI_SUCCESS;
}

int mf_tcp_listen(mf_tcp *t, char *pub, size_t publen)
{
    int lo, hi;
    int rc = mf_tcp_port_range(&lo, &hi);
    if (rc)
        return rc;
    mf_netif ifs[MF_TCP_MAX_ADDRS];
    int nifs;
    rc = mf_fabric_select_ifaces(&t->t_base, ifs, MF_TCP_MAX_ADDRS, &nifs);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t used = 0;
    pub[0] = '\0';
    for (int i = 0; i < nifs; i++) {
        mf_tcp_listener *l = &t->t_listeners[t->t_nlisteners];
        rc = mf_tcp_listen_one(t, ifs[i].addr, lo, hi, &l->l_fd, &l->l_addr);
        if (rc)
            return rc;
        l->l_kind = MF_TCP_LISTENER;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
        if (epoll_ctl(t->t_epfd, EPOLL_CTL_ADD, l->l_fd, &ev) != 0) {
            close(l->l_fd);
            return mf_error(MPI_ERR_OTHER, "tcp: epoll_ctl failed: %s", strerror(errno));
        }
        t->t_nlisteners++;
        char s[64];
        mf_tcp_addr_str(&l->l_addr, s, sizeof s);
        int n = snprintf(pub + used, publen - used, "%s%s", used ? "," : "", s);
        if (n > 0 && (size_t)n < publen - used)
            used += (size_t)n;
        mf_debug("%s: listening on %s (%s)", t->t_base.name, s, ifs[i].name);
    }
    return MPI_SUCCESS;
}

int mf_tcp_parse_addrs(const char *pub, bool same_host, struct sockaddr_in *out, int max)
{
    struct sockaddr_in loop[MF_TCP_MAX_ADDRS], other[MF_TCP_MAX_ADDRS];
    int nloop = 0, nother = 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", pub);
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *end;
        long port = strtol(colon + 1, &end, 10);
        struct sockaddr_in a = {.sin_family = AF_INET};
        if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, tok, &a.sin_addr) != 1)
            continue;
        a.sin_port = htons((uint16_t)port);
        bool is_loop = (ntohl(a.sin_addr.s_addr) >> 24) == 127;
        if (is_loop && nloop < MF_TCP_MAX_ADDRS)
            loop[nloop++] = a;
        else if (!is_loop && nother < MF_TCP_MAX_ADDRS)
            other[nother++] = a;
    }
    int n = 0;
    if (same_host) /* loopback first: shortest path, and it needs no network at all */
        for (int i = 0; i < nloop && n < max; i++)
            out[n++] = loop[i];
    for (int i = 0; i < nother && n < max; i++)
        out[n++] = other[i];
    return n;
}

/* Rails (fabric.h): one rail's connections must stay on that rail's network, or two rails
 * would share one wire (a peer address outside every local subnet is reached through whatever
 * route the kernel picks). Keeps the addresses that share a subnet with one of this instance's
 * listeners; when none does, says so. */
int mf_tcp_rail_pair(mf_tcp *t, int peer, struct sockaddr_in *addrs, int *n)
{
    uint32_t net[MF_TCP_MAX_ADDRS], mask[MF_TCP_MAX_ADDRS];
    int nnet = 0;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return MPI_SUCCESS; /* cannot tell: leave the choice to the kernel */
    for (int i = 0; i < t->t_nlisteners; i++)
        for (struct ifaddrs *a = all; a && nnet < MF_TCP_MAX_ADDRS; a = a->ifa_next)
            if (a->ifa_addr && a->ifa_netmask && a->ifa_addr->sa_family == AF_INET &&
                ((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr.s_addr ==
                    t->t_listeners[i].l_addr.sin_addr.s_addr) {
                mask[nnet] = ((struct sockaddr_in *)(void *)a->ifa_netmask)->sin_addr.s_addr;
                net[nnet] = t->t_listeners[i].l_addr.sin_addr.s_addr & mask[nnet];
                nnet++;
                break;
            }
    freeifaddrs(all);
    int kept = 0;
    for (int k = 0; k < *n; k++) {
        bool same = false;
        for (int j = 0; j < nnet && !same; j++)
            same = (addrs[k].sin_addr.s_addr & mask[j]) == net[j];
        if (same)
            addrs[kept++] = addrs[k];
    }
    if (kept == 0 && nnet > 0) {
        char theirs[64], ours[64];
        mf_tcp_addr_str(&addrs[0], theirs, sizeof theirs);
        mf_tcp_addr_str(&t->t_listeners[0].l_addr, ours, sizeof ours);
        return mf_error(MPI_ERR_OTHER,
                        "%s: rank %d's address on this rail (%s) shares no subnet with this "
                        "host's (%s): rails pair interfaces by subnet, so both hosts need an "
                        "address in the same network on every rail (MANIFOLD_FABRIC)",
                        t->t_base.name, peer, theirs, ours);
    }
    *n = kept;
    return MPI_SUCCESS;
}
