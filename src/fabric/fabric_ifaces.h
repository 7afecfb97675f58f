/*
 * fabric_ifaces.h — the interfaces an IP fabric instance runs over (classes with
 * MF_FABRIC_CAP_IFACES: tcp, sctp), chosen from its `ifaces` setting (MANIFOLD_IF syntax) the
 * same way for every such class, with the same messages.
 */
#ifndef MF_FABRIC_FABRIC_IFACES_H
#define MF_FABRIC_FABRIC_IFACES_H

#include "core/netif.h"
#include "fabric/fabric.h"

/* The up IPv4 interfaces instance f's setting selects, at most max, into ifs, in the host's
 * order, and their number into *count (> 0): MPI_SUCCESS; MF_FABRIC_UNAVAILABLE when the setting is empty ("all") and the
 * host has none (the instance cannot run here, not an error); or an MPI error code naming the
 * instance: a malformed setting (MPI_ERR_ARG, naming the bad entry), an unreadable interface
 * list, or a setting that names interfaces none of which is up (MPI_ERR_ARG). */
int mf_fabric_select_ifaces(mf_fabric *f, mf_netif *ifs, int max, int *count);

#endif
