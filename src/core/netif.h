/*
 * netif.h — which IPv4 interfaces a setting selects: the one module the library (the tcp fabric,
 * every IP fabric after it), mpiexec (the address it listens on for its proxies) and the setting
 * checks (core/config_spec.h) share, so that they cannot disagree on what a value means.
 * Pure functions of their arguments and the host's interface list: no logging, no MPI, no
 * allocation kept.
 *
 * A selection ("spec", the syntax of MANIFOLD_IF) is a list of entries separated by ',' (or '+',
 * the separator inside a fabric setting such as "tcp:lo+eth0"); an entry is an interface name
 * with shell patterns ("eth*") or an IPv4 CIDR ("10.1.0.0/16"). Empty selects every up
 * interface except container and VM bridges (docker*, virbr*, br-*), whose addresses other hosts
 * cannot reach (an empty spec is well formed). A malformed entry (a CIDR that does not parse, blanks, over 63 characters) makes
 * the whole spec invalid: it never silently matches nothing.
 */
#ifndef MF_FABRIC_NETIF_NETIF_H
#define MF_FABRIC_NETIF_NETIF_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest entry accepted. */
#define MF_NETIF_ENTRY_MAX 63

typedef struct mf_netif {
    char name[IF_NAMESIZE];
    struct in_addr addr;
    bool loopback;
} mf_netif;

/* Parses one entry "a.b.c.d/bits" of length len: true with the network and mask. */
bool mf_netif_cidr_parse(const char *tok, size_t len, struct in_addr *net, uint32_t *mask);
/* Whether every entry of spec is well formed; if not, the first bad one is copied into bad. */
bool mf_netif_spec_ok(const char *spec, char *bad, size_t badlen);
/* Whether interface `name` with address `a` is selected by a well-formed spec. */
bool mf_netif_wanted(const char *spec, const char *name, struct in_addr a);
/* The up IPv4 interfaces a well-formed spec selects, in the host's order, one per address:
 * the count (at most max; more are left out), or -1 with errno when the host's list could not
 * be read. */
int mf_netif_select(const char *spec, mf_netif *out, int max);

#endif
