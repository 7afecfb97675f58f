/*
 * topo.h — virtual topologies attached to communicators (MPI-4.0 chapter 8): Cartesian grids,
 * graphs and distributed graphs. The collective layer reads neighbours from here for the
 * neighborhood collectives (mf_topo_neighbors gives the order MPI prescribes).
 */
#ifndef MF_COMM_TOPO_H
#define MF_COMM_TOPO_H

#include <stdbool.h>

#include "comm/comm.h"
#include "datatype/datatype.h"

typedef struct mf_topology {
    int t_kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int t_ndims;
    int *t_dims, *t_periods;
    /* MPI_GRAPH: index[] and edges[] as the user gave them */
    int t_nnodes, t_nedges;
    int *t_index, *t_edges;
    /* MPI_DIST_GRAPH: this process's adjacency */
    int t_indegree, t_outdegree;
    int *t_sources, *t_sourceweights, *t_destinations, *t_destweights;
    bool t_weighted;
} mf_topology;

void mf_topo_free(mf_topology *t); /* NULL is fine */
int mf_topo_dup(const mf_topology *t, mf_topology **out);

/* Cartesian helpers (rank <-> coordinates, row-major). */
void mf_cart_coords(const mf_topology *t, int rank, int *coords);
int mf_cart_rank(const mf_topology *t, const int *coords); /* coords already wrapped/checked */

/* Neighbours of this process for neighborhood collectives: sources (receive from) and
 * destinations (send to), in MPI's order; arrays owned by the topology or freshly allocated
 * (*owned set: the caller frees both). MPI_PROC_NULL may appear for non-periodic grids. */
int mf_topo_neighbors(const mf_comm *c, int *indegree, int **sources, int *outdegree,
                      int **destinations, bool *owned);

#endif
