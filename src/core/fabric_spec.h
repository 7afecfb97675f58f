/*
 * fabric_spec.h — the grammar of the fabric settings (MANIFOLD_FABRIC, MANIFOLD_RMA_FABRIC),
 * shared by the registry (fabric.c), the setting checks (core/config_spec.h) and so mpiexec,
 * which refuses a bad value before any rank starts. Pure: no logging, no MPI, no allocation.
 *
 *   spec    := entry ("," entry)*
 *   entry   := CLASS [":" ifaces]
 *   ifaces  := iface ("+" iface)*        iface: an interface name (shell patterns) or an IPv4
 *                                        CIDR, as in MANIFOLD_IF (core/netif.h)
 *
 * Each entry is one instance of the class; without ":ifaces" it runs over MANIFOLD_IF. Several
 * entries make several rails of one route: "tcp:lo,tcp:eth0" is tcp0 over lo and tcp1 over eth0.
 * Entries equal in class and interfaces (also across the two settings) are one instance.
 */
#ifndef MF_FABRIC_FABRIC_SPEC_H
#define MF_FABRIC_FABRIC_SPEC_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/netif.h"

#define MF_FABRIC_SPEC_MAX 8      /* entries (rails) in one setting */
#define MF_FABRIC_SPEC_IFACES 256 /* text of one entry's interfaces, with its NUL */

typedef struct mf_fabric_spec_entry {
    char cls[16];
    char ifaces[MF_FABRIC_SPEC_IFACES]; /* as MANIFOLD_IF: ',' separated; "" when not given */
} mf_fabric_spec_entry;

/* Parses `spec`, whose classes must be among `classes` ("tcp|sctp"). Returns the number of
 * entries, or -1 with `why` saying what is wrong (always filled on error). */
static inline int mf_fabric_spec_parse(const char *spec, const char *classes,
                                       mf_fabric_spec_entry *out, int max, char *why, size_t whylen)
{
    int n = 0;
    for (const char *s = spec;;) {
        size_t len = strcspn(s, ",");
        size_t clen = strcspn(s, ":,");
        if (n == max || n == MF_FABRIC_SPEC_MAX) {
            snprintf(why, whylen, "more than %d entries", n);
            return -1;
        }
        mf_fabric_spec_entry *e = &out[n];
        bool known = false;
        for (const char *w = classes; *w && clen > 0;) {
            size_t wl = strcspn(w, "|");
            known |= wl == clen && strncmp(w, s, wl) == 0;
            w += wl + (w[wl] == '|');
        }
        if (!known || clen >= sizeof e->cls) {
            snprintf(why, whylen, "'%.*s' is not a fabric (known: %s)", (int)clen, s, classes);
            return -1;
        }
        memcpy(e->cls, s, clen);
        e->cls[clen] = '\0';
        e->ifaces[0] = '\0';
        if (clen < len) {
            size_t ilen = len - clen - 1;
            char bad[MF_NETIF_ENTRY_MAX + 1];
            if (ilen == 0 || ilen >= sizeof e->ifaces) {
                snprintf(why, whylen, "'%.*s': expected interfaces after ':'", (int)len, s);
                return -1;
            }
            for (size_t i = 0; i < ilen; i++) /* '+' inside a setting, ',' as in MANIFOLD_IF */
                e->ifaces[i] = s[clen + 1 + i] == '+' ? ',' : s[clen + 1 + i];
            e->ifaces[ilen] = '\0';
            if (!mf_netif_spec_ok(e->ifaces, bad, sizeof bad)) {
                snprintf(why, whylen,
                         "'%s' in '%.*s' is neither an interface name nor an IPv4 CIDR", bad,
                         (int)len, s);
                return -1;
            }
        }
        n++;
        if (!s[len])
            return n;
        s += len + 1;
    }
}

#endif
