/*
 * fabric_ifaces.c — see fabric_ifaces.h.
 */
#include "fabric/fabric_ifaces.h"

#include <errno.h>
#include <mpi.h>
#include <string.h>

#include "core/error.h"

int mf_fabric_select_ifaces(mf_fabric *f, mf_netif *ifs, int max, int *count)
{
    *count = 0;
    const char *spec = f->ifaces ? f->ifaces : "";
    char bad[MF_NETIF_ENTRY_MAX + 1];
    if (!mf_netif_spec_ok(spec, bad, sizeof bad))
        return mf_error(MPI_ERR_ARG,
                        "%s: interface entry '%s' (of '%s') is neither an interface name nor an "
                        "IPv4 CIDR such as 10.1.0.0/16",
                        f->name, bad, spec);
    int n = mf_netif_select(spec, ifs, max);
    if (n < 0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot list network interfaces: %s", f->name,
                        strerror(errno));
    if (n == 0) {
        if (*spec)
            return mf_error(MPI_ERR_ARG, "%s: interfaces '%s' match no up IPv4 interface", f->name,
                            spec);
        return MF_FABRIC_UNAVAILABLE;
    }
    *count = n;
    return MPI_SUCCESS;
}
