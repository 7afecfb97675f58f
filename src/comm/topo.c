/*
 * Topology objects: see topo.h. Arrays are owned by the object; dup copies them all so that a
 * communicator and its duplicate never share a topology.
 */
#include "comm/topo.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void mf_topo_free(mf_topology *t)
{
    if (!t)
        return;
    free(t->t_dims);
    free(t->t_periods);
    free(t->t_index);
    free(t->t_edges);
    free(t->t_sources);
    free(t->t_sourceweights);
    free(t->t_destinations);
    free(t->t_destweights);
    free(t);
}

/* A copy of n ints, or NULL for n == 0 / src NULL; *ok cleared on allocation failure. */
static int *mf_topo_copy(const int *src, int n, bool *ok)
{
    if (!src || n <= 0)
        return NULL;
    int *d = malloc((size_t)n * sizeof *d);
    if (!d)
        *ok = false;
    else
        memcpy(d, src, (size_t)n * sizeof *d);
    return d;
}

int mf_topo_dup(const mf_topology *t, mf_topology **out)
{
    mf_topology *n = malloc(sizeof *n);
    if (!n)
        return mf_error(MPI_ERR_NO_MEM, "no memory to copy a topology");
    *n = *t;
    bool ok = true;
    n->t_dims = mf_topo_copy(t->t_dims, t->t_ndims, &ok);
    n->t_periods = mf_topo_copy(t->t_periods, t->t_ndims, &ok);
    n->t_index = mf_topo_copy(t->t_index, t->t_nnodes, &ok);
    n->t_edges = mf_topo_copy(t->t_edges, t->t_nedges, &ok);
    n->t_sources = mf_topo_copy(t->t_sources, t->t_indegree, &ok);
    n->t_sourceweights = mf_topo_copy(t->t_sourceweights, t->t_indegree, &ok);
    n->t_destinations = mf_topo_copy(t->t_destinations, t->t_outdegree, &ok);
    n->t_destweights = mf_topo_copy(t->t_destweights, t->t_outdegree, &ok);
    if (!ok) {
        mf_topo_free(n);
        return mf_error(MPI_ERR_NO_MEM, "no memory to copy a topology");
    }
    *out = n;
    return MPI_SUCCESS;
}

void mf_cart_coords(const mf_topology *t, int rank, int *coords)
{
    for (int d = t->t_ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->t_dims[d];
        rank /= t->t_dims[d];
    }
}

int mf_cart_rank(const mf_topology *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->t_ndims; d++)
        rank = rank * t->t_dims[d] + coords[d];
    return rank;
}

int mf_topo_neighbors(const mf_comm *c, int *indegree, int **sources, int *outdegree,
                      int **destinations, bool *owned)
{
    const mf_topology *t = c->c_topo;
    *owned = false;
    if (!t)
        return mf_error(MPI_ERR_TOPOLOGY, "communicator has no topology");
    if (t->t_kind == MPI_DIST_GRAPH) {
        *indegree = t->t_indegree;
        *outdegree = t->t_outdegree;
        *sources = t->t_sources;
        *destinations = t->t_destinations;
        return MPI_SUCCESS;
    }
    if (t->t_kind == MPI_GRAPH) {
        int r = c->c_rank, first = r ? t->t_index[r - 1] : 0;
        *indegree = *outdegree = t->t_index[r] - first;
        *sources = *destinations = t->t_edges + first;
        return MPI_SUCCESS;
    }
    /* Cartesian: for each dimension, the negative then the positive neighbour (MPI-4.0 8.6). */
    int n = 2 * t->t_ndims;
    int *nb = malloc(((size_t)n + 1) * sizeof *nb),
        *coords = malloc(((size_t)t->t_ndims + 1) * sizeof *coords);
    if (!nb || !coords) {
        free(nb);
        free(coords);
        return mf_error(MPI_ERR_NO_MEM, "no memory for Cartesian neighbours");
    }
    for (int d = 0; d < t->t_ndims; d++)
        for (int s = 0; s < 2; s++) {
            mf_cart_coords(t, c->c_rank, coords);
            int x = coords[d] + (s ? 1 : -1);
            if (x < 0 || x >= t->t_dims[d]) {
                if (!t->t_periods[d]) {
                    nb[2 * d + s] = MPI_PROC_NULL;
                    continue;
                }
                x = (x + t->t_dims[d]) % t->t_dims[d];
            }
            coords[d] = x;
            nb[2 * d + s] = mf_cart_rank(t, coords);
        }
    free(coords);
    *indegree = *outdegree = n;
    *sources = nb;
    /* Same list for both directions; the caller frees *sources only... make a second copy so
     * that freeing both arrays is always right. */
    *destinations = malloc(((size_t)n + 1) * sizeof(int));
    if (!*destinations) {
        free(nb);
        return mf_error(MPI_ERR_NO_MEM, "no memory for Cartesian neighbours");
    }
    memcpy(*destinations, nb, (size_t)n * sizeof(int));
    *owned = true;
    return MPI_SUCCESS;
}
