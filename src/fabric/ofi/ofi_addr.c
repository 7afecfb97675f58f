/*
 * ofi_addr.c — address exchange of the ofi fabric through the runtime's key-value store.
 *
 * Contract: mf_ofi_addr_publish (from open, once the endpoint is enabled) puts the endpoint's
 * fi_getname address, in hex, under "mf.<instance>.<rank>". mf_ofi_start (the start op, after
 * every rank published) reads each reachable peer's value back and inserts it into the AV, so
 * o_addr[rank] is what sends go to; peers the provider cannot reach (shm: other hosts) stay
 * FI_ADDR_NOTAVAIL and reachable() says false. A malformed value or an address the provider
 * refuses is an error naming the rank. Our own address goes into the AV too (o_self), for
 * atomics on our own window part; without it those fall back to emulation. start also settles
 * the sleep bound while a window is exposed (MANIFOLD_OFI_RMA_POLL_US; none when oversubscribed,
 * known only from start on).
 */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/ofi/ofi.h"
#include "runtime/pm.h"

/* Our address, published in hex under the instance's key. */
int mf_ofi_addr_publish(mf_ofi *o)
{
    mf_fabric *f = &o->o_base;
    int rc = MPI_SUCCESS;
    unsigned char addr[256];
    size_t alen = sizeof addr;
    int frc = fi_getname(&o->o_ep->fid, addr, &alen);
    if (frc)
        rc = mf_ofi_err(o, MPI_ERR_OTHER, frc, "fi_getname");
    if (rc == MPI_SUCCESS) {
        char pub[2 * sizeof addr + 1];
        for (size_t i = 0; i < alen; i++)
            snprintf(pub + 2 * i, 3, "%02x", addr[i]);
        mf_debug("%s: %s domain %s", f->name, o->o_prov, o->o_dom);
        rc = mf_fabric_addr_publish(f, pub);
    }
    return rc;
}

/* shm-like providers reach only the ranks of this host. */
static bool mf_ofi_host_only(const mf_ofi *o)
{
    return strcmp(o->o_prov, "shm") == 0;
}

bool mf_ofi_reachable(mf_fabric *f, int peer)
{
    mf_ofi *o = mf_ofi_of(f);
    return peer >= 0 && peer < o->o_npeers && o->o_addr[peer] != FI_ADDR_NOTAVAIL;
}

/* Every reachable peer's address goes into the AV now: its fi_addr_t is what we send to. Our
 * own goes in too (o_self), for atomics on our own window part; without it they fall back. */
int mf_ofi_start(mf_fabric *f)
{
    mf_ofi *o = mf_ofi_of(f);
    /* While a window is exposed: by default no sleep at all (-1), since a sleeping target,
     * even one polling every 2 us, made a put over the shm provider 2.6-3.3 us where its round
     * trip is 0.6 (polling: 0.59-0.63); no bound when oversubscribed (known from start on),
     * where ranks polling would take the cores from the ranks with work (a set value is kept) */
    o->o_rma_poll_us = *mf_config_str("MANIFOLD_OFI_RMA_POLL_US")
                           ? (int)mf_config_long("MANIFOLD_OFI_RMA_POLL_US")
                           : (mf_g.oversubscribed ? 0 : -1);
    /* Without a CQ fd a sleeping rank learns of its completions only at its next poll: a rank
     * with its own core polls every 2 us by default (with 50, every wait longer than the spin,
     * a 1 MiB rendezvous for one, ended up to 50 us late: 1 MiB over the shm provider took
     * 137 us against raw libfabric's 100), one that shares a core every 50 */
    o->o_poll_us = *mf_config_str("MANIFOLD_OFI_POLL_US")
                       ? (int)mf_config_long("MANIFOLD_OFI_POLL_US")
                       : (mf_g.oversubscribed ? 50 : MF_OFI_POLL_US_DEFAULT);
    mf_ofi_sleep_bound(o);
    for (int r = 0; r < o->o_npeers; r++) {
        if (r == mf_g.rank || (mf_ofi_host_only(o) && mf_g.node_of[r] != mf_g.node_of[mf_g.rank]))
            continue;
        char val[MF_PM_VAL_MAX];
        unsigned char addr[MF_PM_VAL_MAX / 2];
        int rc = mf_fabric_addr_lookup(f, r, val, sizeof val);
        if (rc)
            return rc;
        size_t alen = strlen(val) / 2;
        for (size_t i = 0; i < alen; i++) {
            unsigned v;
            if (sscanf(val + 2 * i, "%2x", &v) != 1)
                return mf_error(MPI_ERR_OTHER, "%s: rank %d published a malformed address '%s'",
                                f->name, r, val);
            addr[i] = (unsigned char)v;
        }
        int n = fi_av_insert(o->o_av, addr, 1, &o->o_addr[r], 0, NULL);
        if (n != 1) {
            o->o_addr[r] = FI_ADDR_NOTAVAIL;
            return mf_ofi_err(o, MPI_ERR_OTHER, n < 0 ? n : -FI_EADDRNOTAVAIL,
                              "fi_av_insert of rank %d's address %s", r, val);
        }
    }
    /* after the peers': the shm provider takes AV indexes for peer ids */
    unsigned char self[256];
    size_t slen = sizeof self;
    if ((!o->o_awhy || o->o_tcap) && fi_getname(&o->o_ep->fid, self, &slen) == 0 &&
        fi_av_insert(o->o_av, self, 1, &o->o_self, 0, NULL) != 1)
        o->o_self = FI_ADDR_NOTAVAIL;
    return MPI_SUCCESS;
}
