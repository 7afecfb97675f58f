/*
 * topo_util.h — helpers shared by the topology entry points (topo_cart.c, topo_graph.c).
 */
#ifndef MF_API_TOPO_UTIL_H
#define MF_API_TOPO_UTIL_H

#include "comm/comm.h"
#include "comm/topo.h"

/* MPI_ERR_COMM for an intercommunicator (topologies live on intracommunicators). */
int mf_topo_check_intra(const mf_comm *c, const char *fn);
/* Resolves comm and its topology, which must be of `kind` (MPI_ERR_TOPOLOGY otherwise).
 * kind 0 accepts any topology. */
int mf_topo_get(MPI_Comm comm, int kind, mf_comm **c, mf_topology **t, const char *fn);
/* Collective over c: ranks 0..n-1 form a new communicator (same order); others get NULL. */
int mf_topo_create_prefix(mf_comm *c, int n, mf_comm **out, const char *fn);
/* Collective over c: MPI_Comm_split. */
int mf_topo_split(mf_comm *c, int color, int key, mf_comm **out, const char *fn);

#endif
