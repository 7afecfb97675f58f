/*
 * ofi_setup.c — choosing the provider and domain, and opening the libfabric objects of one
 * ofi instance: fabric, domain, completion queue, address vector and the RDM endpoint with its
 * receive buffers posted (ofi.h has the design; docs/FABRICS.md, "ofi", the providers here).
 *
 * Contract: mf_ofi_getinfo fills o_info, o_prov, o_dom, o_rma, o_atomic, o_mr_mode and
 * o_inject, or returns an error code whose message names the provider asked for, where it was
 * asked (MANIFOLD_OFI_PROVIDER, FI_PROVIDER or the default), the domain or interfaces, and the
 * RDM providers that do exist. mf_ofi_open_ep then opens the objects in that order, leaving
 * o_wait_fd >= 0 where the CQ has a wait fd; on an error what it opened stays in the instance
 * for mf_ofi_release (ofi.c) to close.
 *
 * Coded to the libfabric 1.17 API (Debian 12); later versions accept it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/state.h"
#include "core/netif.h"
#include "fabric/ofi/ofi.h"

#define MF_OFI_API FI_VERSION(1, 17)
#define MF_OFI_DEFAULT_PROVIDER "tcp;ofi_rxm"

/* The provider asked for: MANIFOLD_OFI_PROVIDER, else NULL when FI_PROVIDER is set (libfabric
 * filters by it), else the default. */
static const char *mf_ofi_provider_wanted(void)
{
    const char *p = mf_config_str("MANIFOLD_OFI_PROVIDER");
    if (*p)
        return p;
    const char *env = getenv("FI_PROVIDER");
    return env && *env ? NULL : MF_OFI_DEFAULT_PROVIDER;
}

/* The hints: RDM, message path with send-after-send order (tagged messages too, when asked
 * for: the offload's MPI order), optionally RMA reads and writes, atomics. */
static struct fi_info *mf_ofi_hints(const mf_ofi_lib *lib, const char *prov, bool rma, bool atomic,
                                    bool tagged)
{
    struct fi_info *h = lib->dupinfo(NULL);
    if (!h)
        return NULL;
    h->caps = FI_MSG | (tagged ? FI_TAGGED : 0) |
              (rma ? FI_RMA | FI_READ | FI_REMOTE_READ | FI_WRITE | FI_REMOTE_WRITE : 0) |
              (atomic ? FI_ATOMIC : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
    h->ep_attr->type = FI_EP_RDM;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    h->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    h->addr_format = FI_FORMAT_UNSPEC;
    if (prov) {
        h->fabric_attr->prov_name = strdup(prov);
        if (!h->fabric_attr->prov_name) {
            lib->freeinfo(h);
            return NULL;
        }
    }
    return h;
}

/* The providers libfabric offers here at all, for a message saying what exists. */
static void mf_ofi_list_providers(const mf_ofi_lib *lib, char *buf, size_t len)
{
    struct fi_info *h = lib->dupinfo(NULL), *all = NULL;
    size_t n = 0;
    buf[0] = '\0';
    if (!h)
        return;
    h->ep_attr->type = FI_EP_RDM;
    if (lib->getinfo(MF_OFI_API, NULL, NULL, 0, h, &all) == 0) {
        for (struct fi_info *i = all; i && n < len; i = i->next) {
            const char *name = i->fabric_attr->prov_name;
            if (!strstr(buf, name))
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
        }
        lib->freeinfo(all);
    }
    lib->freeinfo(h);
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* Whether entry i runs over an IPv4 interface the instance's interfaces select (MANIFOLD_IF
 * syntax, fabric.h: "ofi:eth1"); *loop says whether it is a loopback one. */
static bool mf_ofi_ip_wanted(const struct fi_info *i, const char *ifaces, bool *loop)
{
    if (i->addr_format != FI_SOCKADDR_IN || !i->src_addr ||
        i->src_addrlen < sizeof(struct sockaddr_in))
        return false;
    struct in_addr a = ((const struct sockaddr_in *)i->src_addr)->sin_addr;
    *loop = (ntohl(a.s_addr) >> 24) == 127;
    return mf_netif_wanted(ifaces, i->domain_attr->name, a);
}

/* The entry for our domain: the one MANIFOLD_OFI_DOMAIN names; else, for IP providers, the
 * first IPv4 domain on an interface the instance's interfaces select, loopback last; else the
 * first entry (shm and other providers without IP domains). */
static struct fi_info *mf_ofi_pick(struct fi_info *list, const char *domain, const char *ifaces)
{
    if (*domain) {
        for (struct fi_info *i = list; i; i = i->next)
            if (strcmp(i->domain_attr->name, domain) == 0 &&
                (i->addr_format == FI_SOCKADDR_IN || !i->next ||
                 strcmp(i->next->domain_attr->name, domain) != 0))
                return i;
        return NULL;
    }
    struct fi_info *loopback = NULL;
    bool any_ip = false;
    for (struct fi_info *i = list; i; i = i->next) {
        bool loop = false;
        any_ip |= i->addr_format == FI_SOCKADDR_IN || i->addr_format == FI_SOCKADDR_IN6;
        if (!mf_ofi_ip_wanted(i, ifaces, &loop))
            continue;
        if (!loop)
            return i;
        if (!loopback)
            loopback = i;
    }
    return any_ip ? loopback : list;
}

/* Finds the provider and domain: with RMA and atomics if possible, else with RMA, else with
 * messages only; each with FI_TAGGED first (unless MANIFOLD_OFI_TAGGED=off), then without. */
int mf_ofi_getinfo(mf_ofi *o)
{
    const char *prov = mf_ofi_provider_wanted();
    const char *domain = mf_config_str("MANIFOLD_OFI_DOMAIN");
    snprintf(o->o_prov, sizeof o->o_prov, "%s", prov ? prov : "(FI_PROVIDER)");
    int rc = -FI_ENODATA;
    bool tagged = strcmp(mf_config_str("MANIFOLD_OFI_TAGGED"), "off") != 0;
    for (int step = tagged ? 5 : 2; step >= 0 && !o->o_info; step--) {
        int level = step % 3;
        struct fi_info *h = mf_ofi_hints(o->o_lib, prov, level >= 1, level == 2, step >= 3),
                       *list = NULL;
        if (!h)
            return mf_error(MPI_ERR_NO_MEM, "%s: no memory for fi_getinfo hints", o->o_base.name);
        rc = o->o_lib->getinfo(MF_OFI_API, NULL, NULL, 0, h, &list);
        o->o_lib->freeinfo(h);
        if (rc)
            continue;
        struct fi_info *pick = mf_ofi_pick(list, domain, o->o_base.ifaces);
        if (pick) {
            o->o_info = o->o_lib->dupinfo(pick);
            o->o_rma = level >= 1;
            o->o_atomic = level == 2;
        }
        o->o_lib->freeinfo(list);
        if (!o->o_info && *domain)
            return mf_error(MPI_ERR_OTHER,
                            "%s (libfabric provider %s): MANIFOLD_OFI_DOMAIN=%s: the provider "
                            "has no such domain",
                            o->o_base.name, o->o_prov, domain);
        if (!o->o_info)
            return mf_error(MPI_ERR_OTHER,
                            "%s (libfabric provider %s): no IPv4 domain on the interfaces '%s' "
                            "(MANIFOLD_IF or %s:IFACE)",
                            o->o_base.name, o->o_prov, o->o_base.ifaces, o->o_base.cls->name);
    }
    if (!o->o_info) {
        char have[512];
        mf_ofi_list_providers(o->o_lib, have, sizeof have);
        return mf_error(MPI_ERR_OTHER,
                        "%s (libfabric provider %s%s): fi_getinfo found no reliable datagram "
                        "endpoint with ordered messages: %s (RDM providers here: %s)",
                        o->o_base.name, o->o_prov,
                        prov && mf_config_str("MANIFOLD_OFI_PROVIDER")[0]
                            ? ", from MANIFOLD_OFI_PROVIDER"
                            : (prov ? ", the default" : ", from FI_PROVIDER"),
                        o->o_lib->strerror(-rc), have);
    }
    snprintf(o->o_prov, sizeof o->o_prov, "%s", o->o_info->fabric_attr->prov_name);
    snprintf(o->o_dom, sizeof o->o_dom, "%s", o->o_info->domain_attr->name);
    if (o->o_info->domain_attr->cq_data_size < 8)
        return mf_error(MPI_ERR_OTHER,
                        "%s (libfabric provider %s): remote CQ data of %zu bytes; the ofi "
                        "fabric needs 8 (source rank and sequence number)",
                        o->o_base.name, o->o_prov, o->o_info->domain_attr->cq_data_size);
    o->o_mr_mode = o->o_info->domain_attr->mr_mode;
    o->o_inject = o->o_info->tx_attr->inject_size;
    mf_ofi_tagged_setup(o);
    return MPI_SUCCESS;
}

/* Whether the CQ gets a wait fd (MANIFOLD_OFI_CQ_WAIT). A CQ with one costs every message:
 * the provider signals the fd at each completion and its progress goes through the fd's epoll
 * set (tcp;ofi_rxm, measured with bench/raw_ofi: 1.2-2 us more per one-way 8 B message, a
 * quarter of it). Without one a sleeping rank polls on a timer (MANIFOLD_OFI_POLL_US), which
 * costs a rank that has its own core little, but takes the core from the ranks with work when
 * ranks outnumber cores: auto asks for the fd only then. Oversubscription is known here only
 * from the launcher (mf_g.oversubscribed is set after the fabrics open). */
static bool mf_ofi_want_wait_fd(void)
{
    const char *mode = mf_config_str("MANIFOLD_OFI_CQ_WAIT");
    if (strcmp(mode, "auto") != 0)
        return strcmp(mode, "fd") == 0;
    return mf_host_oversubscribed(
        *mf_config_str("MANIFOLD_LOCAL_SIZE") ? mf_config_long("MANIFOLD_LOCAL_SIZE") : 0);
}

/* The completion queue: with a wait fd where wanted and the provider has one, else polled. */
static int mf_ofi_open_cq(mf_ofi *o)
{
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_TAGGED,
                              .size = o->o_info->tx_attr->size + o->o_info->rx_attr->size,
                              .wait_obj = FI_WAIT_FD};
    o->o_wait_fd = -1;
    if (mf_ofi_want_wait_fd()) {
        int rc = fi_cq_open(o->o_domain, &attr, &o->o_cq, NULL);
        if (rc == 0 && fi_control(&o->o_cq->fid, FI_GETWAIT, &o->o_wait_fd) == 0)
            return MPI_SUCCESS;
        if (rc == 0)
            fi_close(&o->o_cq->fid);
        o->o_cq = NULL;
        o->o_wait_fd = -1;
    }
    attr.wait_obj = FI_WAIT_NONE;
    int rc = fi_cq_open(o->o_domain, &attr, &o->o_cq, NULL);
    if (rc)
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_cq_open");
    return MPI_SUCCESS;
}

/* Endpoint, bound to the CQ and the AV, enabled, with its receives posted. */
int mf_ofi_open_ep(mf_ofi *o)
{
    struct fi_av_attr av = {.type = FI_AV_TABLE, .count = (size_t)o->o_npeers};
    int rc;
    if ((rc = o->o_lib->fabric(o->o_info->fabric_attr, &o->o_fabric, NULL)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_fabric");
    if ((rc = fi_domain(o->o_fabric, o->o_info, &o->o_domain, NULL)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_domain %s", o->o_dom);
    if ((rc = mf_ofi_open_cq(o)))
        return rc;
    if ((rc = fi_av_open(o->o_domain, &av, &o->o_av, NULL)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_av_open");
    if ((rc = fi_endpoint(o->o_domain, o->o_info, &o->o_ep, NULL)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_endpoint");
    if ((rc = fi_ep_bind(o->o_ep, &o->o_cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (rc = fi_ep_bind(o->o_ep, &o->o_av->fid, 0)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_ep_bind");
    if ((rc = fi_enable(o->o_ep)))
        return mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_enable");
    for (int i = 0; i < MF_OFI_RX_BUFS; i++) {
        o->o_rx[i] = mf_ofi_buf_new(o, MF_OFI_RECV);
        if (!o->o_rx[i])
            return mf_error(MPI_ERR_NO_MEM, "%s: no memory for receive buffers", o->o_base.name);
        if (!mf_ofi_rx_post(o, o->o_rx[i]))
            o->o_rx_unposted++;
    }
    return MPI_SUCCESS;
}
