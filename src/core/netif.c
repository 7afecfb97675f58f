/* Interface selection: see netif.h. */
#include "core/netif.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MF_NETIF_SEPS ",+"

bool mf_netif_cidr_parse(const char *tok, size_t len, struct in_addr *net, uint32_t *mask)
{
    char t[MF_NETIF_ENTRY_MAX + 1];
    if (len == 0 || len >= sizeof t)
        return false;
    memcpy(t, tok, len);
    t[len] = '\0';
    char *slash = strchr(t, '/');
    if (!slash || !isdigit((unsigned char)slash[1]))
        return false;
    *slash = '\0';
    char *end;
    errno = 0;
    long bits = strtol(slash + 1, &end, 10);
    if (errno || *end || bits < 0 || bits > 32 || inet_pton(AF_INET, t, net) != 1)
        return false;
    *mask = bits == 0 ? 0 : htonl(~0u << (32 - bits));
    return true;
}

static bool mf_netif_entry_ok(const char *tok, size_t len)
{
    if (len == 0 || len > MF_NETIF_ENTRY_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)tok[i]) || !isprint((unsigned char)tok[i]))
            return false;
    struct in_addr net;
    uint32_t mask;
    return !memchr(tok, '/', len) || mf_netif_cidr_parse(tok, len, &net, &mask);
}

bool mf_netif_spec_ok(const char *spec, char *bad, size_t badlen)
{
    if (!*spec)
        return true; /* the default selection */
    for (const char *s = spec;;) {
        size_t n = strcspn(s, MF_NETIF_SEPS);
        if (!mf_netif_entry_ok(s, n)) {
            if (bad && badlen)
                snprintf(bad, badlen, "%.*s", (int)n, s);
            return false;
        }
        if (!s[n])
            return true;
        s += n + 1;
    }
}

static bool mf_netif_is_bridge(const char *name)
{
    return strncmp(name, "docker", 6) == 0 || strncmp(name, "virbr", 5) == 0 ||
           strncmp(name, "br-", 3) == 0;
}

bool mf_netif_wanted(const char *spec, const char *name, struct in_addr a)
{
    if (!*spec)
        return !mf_netif_is_bridge(name);
    for (const char *s = spec;;) {
        size_t n = strcspn(s, MF_NETIF_SEPS);
        char tok[MF_NETIF_ENTRY_MAX + 1];
        struct in_addr net;
        uint32_t mask;
        if (n > 0 && n < sizeof tok) {
            memcpy(tok, s, n);
            tok[n] = '\0';
            if (strchr(tok, '/') ? mf_netif_cidr_parse(tok, n, &net, &mask) &&
                                       (a.s_addr & mask) == (net.s_addr & mask)
                                 : fnmatch(tok, name, 0) == 0)
                return true;
        }
        if (!s[n])
            return false;
        s += n + 1;
    }
}

int mf_netif_select(const char *spec, mf_netif *out, int max)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return -1;
    int n = 0;
    for (struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if (!mf_netif_wanted(spec, i->ifa_name, a))
            continue;
        bool dup = false;
        for (int k = 0; k < n; k++)
            dup |= out[k].addr.s_addr == a.s_addr;
        if (dup)
            continue;
        snprintf(out[n].name, sizeof out[n].name, "%s", i->ifa_name);
        out[n].addr = a;
        out[n].loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
        n++;
    }
    freeifaddrs(ifs);
    return n;
}
