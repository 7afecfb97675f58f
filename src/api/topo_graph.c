/*
 * Graph and distributed-graph topologies (MPI-4.0 sections 8.5.3-8.5.5 and 8.5.8). As for
 * Cartesian grids, ranks are not reordered.
 *
 * MPI_Dist_graph_create lets any process name any edge, so each process must learn the edges
 * that touch it: every process's edge list is gathered by all (padded to the longest list) and
 * each keeps its own. Simple and proportional to the total edge count, which suits the sizes
 * programs use; a sparse exchange would scale better.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/topo_util.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "comm/info.h"

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    const char *fn = "MPI_Graph_create";
    (void)reorder;
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_topology *t = NULL;
    int rc = mf_check_comm(comm_old, &c, fn);
    if (!rc)
        rc = mf_topo_check_intra(c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(comm_graph, MPI_COMM_NULL, fn, "comm_graph");
    if (!rc && (nnodes < 0 || nnodes > c->c_size))
        rc = mf_error(MPI_ERR_ARG, "%s: nnodes=%d is not in 0..%d (comm's size)", fn, nnodes,
                      c->c_size);
    if (!rc && nnodes > 0 && (!index || (index[nnodes - 1] > 0 && !edges)))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !index ? "index" : "edges");
    for (int i = 0; !rc && i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            rc = mf_error(MPI_ERR_ARG, "%s: index[%d]=%d decreases", fn, i, index[i]);
    int nedges = !rc && nnodes > 0 ? index[nnodes - 1] : 0;
    for (int e = 0; !rc && e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            rc = mf_error(MPI_ERR_RANK, "%s: edges[%d]=%d is not a node (0..%d)", fn, e, edges[e],
                          nnodes - 1);
    int alloc_rc = MPI_SUCCESS;
    if (!rc && c->c_rank < nnodes) {
        if (!(t = calloc(1, sizeof *t)) || !(t->t_index = malloc((size_t)nnodes * sizeof(int))) ||
            !(t->t_edges = malloc(((size_t)nedges + 1) * sizeof(int))))
            alloc_rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        else {
            t->t_kind = MPI_GRAPH;
            t->t_nnodes = nnodes;
            t->t_nedges = nedges;
            memcpy(t->t_index, index, (size_t)nnodes * sizeof(int));
            if (nedges)
                memcpy(t->t_edges, edges, (size_t)nedges * sizeof(int));
        }
    }
    if (!rc)
        rc = mf_topo_create_prefix(c, nnodes, &nc, fn);
    if (!rc && alloc_rc) {
        mf_comm_release(nc);
        nc = NULL;
        rc = alloc_rc;
    }
    if (!rc && nc) {
        nc->c_topo = t;
        t = NULL;
    }
    if (!rc)
        *comm_graph = nc ? nc->c_handle : MPI_COMM_NULL;
    mf_topo_free(t);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Graph_create);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    MF_API_ENTER();
    const char *fn = "MPI_Graph_map";
    mf_comm *c = NULL;
    (void)index;
    (void)edges;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && (nnodes < 1 || nnodes > c->c_size))
        rc = mf_error(MPI_ERR_ARG, "%s: nnodes=%d is not in 1..%d", fn, nnodes, c->c_size);
    if (!rc && !newrank)
        rc = mf_error(MPI_ERR_ARG, "%s: newrank is NULL", fn);
    if (!rc)
        *newrank = c->c_rank < nnodes ? c->c_rank : MPI_UNDEFINED;
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Graph_map);

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_GRAPH, &c, &t, "MPI_Graphdims_get");
    if (!rc && (!nnodes || !nedges))
        rc = mf_error(MPI_ERR_ARG, "MPI_Graphdims_get: %s is NULL", !nnodes ? "nnodes" : "nedges");
    if (!rc) {
        *nnodes = t->t_nnodes;
        *nedges = t->t_nedges;
    }
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Graphdims_get"));
}
MF_API_ALIAS(Graphdims_get);

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Graph_get";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_GRAPH, &c, &t, fn);
    if (!rc && (maxindex < 0 || maxedges < 0))
        rc = mf_error(MPI_ERR_ARG, "%s: maxindex=%d / maxedges=%d is negative", fn, maxindex,
                      maxedges);
    if (!rc && ((maxindex > 0 && !index) || (maxedges > 0 && !edges)))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !index ? "index" : "edges");
    if (!rc) {
        for (int i = 0; i < maxindex && i < t->t_nnodes; i++)
            index[i] = t->t_index[i];
        for (int e = 0; e < maxedges && e < t->t_nedges; e++)
            edges[e] = t->t_edges[e];
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Graph_get);

static int mf_graph_node(const mf_comm *c, const mf_topology *t, int rank, const char *fn)
{
    if (rank < 0 || rank >= t->t_nnodes)
        return mf_error(MPI_ERR_RANK, "%s: rank=%d is not a node of the graph (0..%d)", fn, rank,
                        t->t_nnodes - 1);
    (void)c;
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    MF_API_ENTER();
    const char *fn = "MPI_Graph_neighbors_count";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_GRAPH, &c, &t, fn);
    if (!rc)
        rc = mf_graph_node(c, t, rank, fn);
    if (!rc && !nneighbors)
        rc = mf_error(MPI_ERR_ARG, "%s: nneighbors is NULL", fn);
    if (!rc)
        *nneighbors = t->t_index[rank] - (rank ? t->t_index[rank - 1] : 0);
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Graph_neighbors";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_GRAPH, &c, &t, fn);
    if (!rc)
        rc = mf_graph_node(c, t, rank, fn);
    if (!rc && maxneighbors > 0 && !neighbors)
        rc = mf_error(MPI_ERR_ARG, "%s: neighbors is NULL", fn);
    if (!rc) {
        int first = rank ? t->t_index[rank - 1] : 0, n = t->t_index[rank] - first;
        for (int i = 0; i < n && i < maxneighbors; i++)
            neighbors[i] = t->t_edges[first + i];
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Graph_neighbors);

/* ---- Distributed graphs -------------------------------------------------------------------- */

static int *mf_dg_copy(const int *src, int n, int *rc)
{
    int *d = malloc(((size_t)n + 1) * sizeof *d);
    if (!d)
        *rc = mf_error(MPI_ERR_NO_MEM, "out of memory for a distributed graph");
    else if (n > 0 && src)
        memcpy(d, src, (size_t)n * sizeof *d);
    return d;
}

/* Duplicates c (collectively) and attaches topology t (owned on success). */
static int mf_dg_attach(mf_comm *c, mf_topology *t, MPI_Comm *out)
{
    mf_comm *nc = NULL;
    mf_participants all = mf_participants_all(c);
    int rc = mf_comm_create_over(&all, c, c->c_group, &nc);
    if (rc)
        return rc;
    nc->c_topo = t;
    *out = nc->c_handle;
    return MPI_SUCCESS;
}

static int mf_dg_check_ranks(const int *r, int n, int size, const char *what, const char *fn)
{
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return mf_error(MPI_ERR_RANK, "%s: %s[%d]=%d is not a rank of comm (size %d)", fn, what,
                            i, r[i], size);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create_adjacent";
    (void)reorder;
    (void)info; /* no hints are used */
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_check_comm(comm_old, &c, fn);
    if (!rc)
        rc = mf_topo_check_intra(c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(comm_dist_graph, MPI_COMM_NULL, fn, "comm_dist_graph");
    if (!rc && (indegree < 0 || outdegree < 0))
        rc = mf_error(MPI_ERR_ARG, "%s: %s=%d is negative", fn,
                      indegree < 0 ? "indegree" : "outdegree", indegree < 0 ? indegree : outdegree);
    if (!rc && ((indegree > 0 && !sources) || (outdegree > 0 && !destinations)))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !sources ? "sources" : "destinations");
    if (!rc)
        rc = mf_dg_check_ranks(sources, indegree, c->c_size, "sources", fn);
    if (!rc)
        rc = mf_dg_check_ranks(destinations, outdegree, c->c_size, "destinations", fn);
    bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    if (!rc && weighted && ((indegree > 0 && !sourceweights) || (outdegree > 0 && !destweights)))
        rc = mf_error(MPI_ERR_ARG, "%s: weights are NULL", fn);
    if (rc)
        goto out;
    if (!(t = calloc(1, sizeof *t))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    t->t_kind = MPI_DIST_GRAPH;
    t->t_weighted = weighted;
    t->t_indegree = indegree;
    t->t_outdegree = outdegree;
    t->t_sources = mf_dg_copy(sources, indegree, &rc);
    t->t_destinations = mf_dg_copy(destinations, outdegree, &rc);
    if (weighted) {
        t->t_sourceweights = mf_dg_copy(sourceweights, indegree, &rc);
        t->t_destweights = mf_dg_copy(destweights, outdegree, &rc);
    }
    int rc2 = mf_dg_attach(c, rc ? NULL : t, comm_dist_graph);
    if (!rc && !rc2)
        t = NULL;
    if (!rc)
        rc = rc2;
out:
    mf_topo_free(t);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Dist_graph_create_adjacent);

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create";
    (void)reorder;
    (void)info;
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int *mine = NULL, *all = NULL, nedges = 0;
    int rc = mf_check_comm(comm_old, &c, fn);
    if (!rc)
        rc = mf_topo_check_intra(c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(comm_dist_graph, MPI_COMM_NULL, fn, "comm_dist_graph");
    if (!rc && n < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: n=%d is negative", fn, n);
    if (!rc && n > 0 && (!sources || !degrees))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !sources ? "sources" : "degrees");
    for (int i = 0; !rc && i < n; i++) {
        if (degrees[i] < 0)
            rc = mf_error(MPI_ERR_ARG, "%s: degrees[%d]=%d is negative", fn, i, degrees[i]);
        nedges += degrees[i];
    }
    if (!rc)
        rc = mf_dg_check_ranks(sources, n, c->c_size, "sources", fn);
    if (!rc && nedges > 0 && !destinations)
        rc = mf_error(MPI_ERR_ARG, "%s: destinations is NULL", fn);
    if (!rc)
        rc = mf_dg_check_ranks(destinations, nedges, c->c_size, "destinations", fn);
    /* Weighted unless MPI_UNWEIGHTED; every process must agree, so it is read locally and
     * also gathered (a process with no edges may pass MPI_WEIGHTS_EMPTY). */
    int weighted = weights != MPI_UNWEIGHTED;
    if (!rc && weighted && nedges > 0 && (!weights || weights == MPI_WEIGHTS_EMPTY))
        rc = mf_error(MPI_ERR_ARG, "%s: weights is NULL", fn);
    if (rc)
        goto out;

    /* Gather every process's edge count, then the padded (src, dst, weight) triples. */
    mf_participants p = mf_participants_all(c);
    int np = c->c_size, *counts = NULL;
    if (!(counts = malloc((size_t)np * sizeof *counts))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    rc = mf_pcoll_allgather(&p, &nedges, sizeof nedges, counts);
    int maxe = 0;
    for (int r = 0; !rc && r < np; r++)
        maxe = counts[r] > maxe ? counts[r] : maxe;
    size_t block = (size_t)maxe * 3 * sizeof(int);
    if (!rc && maxe > 0) {
        mine = calloc((size_t)maxe * 3, sizeof *mine);
        all = malloc(block * (size_t)np);
        if (!mine || !all)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        for (int i = 0, e = 0; !rc && i < n; i++)
            for (int d = 0; d < degrees[i]; d++, e++) {
                mine[3 * e] = sources[i];
                mine[3 * e + 1] = destinations[e];
                mine[3 * e + 2] = weighted ? weights[e] : 1;
            }
        if (!rc)
            rc = mf_pcoll_allgather(&p, mine, block, all);
    }
    if (rc) {
        free(counts);
        goto out;
    }
    /* Keep the edges that touch this process, in (process, edge) order. */
    int indeg = 0, outdeg = 0, me = c->c_rank;
    for (int r = 0; r < np; r++)
        for (int e = 0; e < counts[r]; e++) {
            const int *tr = all + (size_t)r * maxe * 3 + 3 * e;
            indeg += tr[1] == me;
            outdeg += tr[0] == me;
        }
    if (!(t = calloc(1, sizeof *t)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc) {
        t->t_kind = MPI_DIST_GRAPH;
        t->t_weighted = weighted;
        t->t_sources = mf_dg_copy(NULL, indeg, &rc);
        t->t_destinations = mf_dg_copy(NULL, outdeg, &rc);
        t->t_sourceweights = mf_dg_copy(NULL, indeg, &rc);
        t->t_destweights = mf_dg_copy(NULL, outdeg, &rc);
    }
    for (int r = 0; !rc && r < np; r++)
        for (int e = 0; e < counts[r]; e++) {
            const int *tr = all + (size_t)r * maxe * 3 + 3 * e;
            if (tr[1] == me) {
                t->t_sourceweights[t->t_indegree] = tr[2];
                t->t_sources[t->t_indegree++] = tr[0];
            }
            if (tr[0] == me) {
                t->t_destweights[t->t_outdegree] = tr[2];
                t->t_destinations[t->t_outdegree++] = tr[1];
            }
        }
    free(counts);
    int rc2 = mf_dg_attach(c, rc ? NULL : t, comm_dist_graph);
    if (!rc && !rc2)
        t = NULL;
    if (!rc)
        rc = rc2;
out:
    free(mine);
    free(all);
    mf_topo_free(t);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    MF_API_ENTER();
    const char *fn = "MPI_Dist_graph_neighbors_count";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_DIST_GRAPH, &c, &t, fn);
    if (!rc && (!indegree || !outdegree || !weighted))
        rc = mf_error(MPI_ERR_ARG, "%s: an output argument is NULL", fn);
    if (!rc) {
        *indegree = t->t_indegree;
        *outdegree = t->t_outdegree;
        *weighted = t->t_weighted;
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Dist_graph_neighbors_count);

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Dist_graph_neighbors";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_DIST_GRAPH, &c, &t, fn);
    if (!rc && (maxindegree < t->t_indegree || maxoutdegree < t->t_outdegree))
        rc = mf_error(MPI_ERR_ARG,
                      "%s: maxindegree=%d / maxoutdegree=%d are below the degrees "
                      "%d / %d",
                      fn, maxindegree, maxoutdegree, t->t_indegree, t->t_outdegree);
    if (!rc && ((t->t_indegree > 0 && !sources) || (t->t_outdegree > 0 && !destinations)))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !sources ? "sources" : "destinations");
    if (!rc) {
        for (int i = 0; i < t->t_indegree; i++) {
            sources[i] = t->t_sources[i];
            if (t->t_weighted && sourceweights && sourceweights != MPI_UNWEIGHTED)
                sourceweights[i] = t->t_sourceweights[i];
        }
        for (int i = 0; i < t->t_outdegree; i++) {
            destinations[i] = t->t_destinations[i];
            if (t->t_weighted && destweights && destweights != MPI_UNWEIGHTED)
                destweights[i] = t->t_destweights[i];
        }
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Dist_graph_neighbors);
