/* Helpers for the topology entry points: see topo_util.h. */
#include "api/topo_util.h"

#include <stdlib.h>

#include "api/api.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"

int mf_topo_check_intra(const mf_comm *c, const char *fn)
{
    return c->c_is_inter ? mf_error(MPI_ERR_COMM, "%s: comm is an intercommunicator", fn)
                         : MPI_SUCCESS;
}

int mf_topo_get(MPI_Comm comm, int kind, mf_comm **c, mf_topology **t, const char *fn)
{
    int rc = mf_check_comm(comm, c, fn);
    if (rc)
        return rc;
    *t = (*c)->c_topo;
    if (!*t)
        return mf_error(MPI_ERR_TOPOLOGY, "%s: comm has no topology", fn);
    if (kind && (*t)->t_kind != kind)
        return mf_error(MPI_ERR_TOPOLOGY, "%s: comm has a %s topology, not a %s one", fn,
                        (*t)->t_kind == MPI_CART    ? "Cartesian"
                        : (*t)->t_kind == MPI_GRAPH ? "graph"
                                                    : "distributed graph",
                        kind == MPI_CART    ? "Cartesian"
                        : kind == MPI_GRAPH ? "graph"
                                            : "distributed graph");
    return MPI_SUCCESS;
}

int mf_topo_create_prefix(mf_comm *c, int n, mf_comm **out, const char *fn)
{
    mf_group *g = NULL;
    int rc = MPI_SUCCESS;
    if (c->c_rank < n && (rc = mf_group_new(n, c->c_group->g_world_ranks, &g)))
        return rc; /* the others will fail too: out of memory is not recoverable here */
    (void)fn;
    mf_participants all = mf_participants_all(c);
    rc = mf_comm_create_over(&all, c, g, out);
    mf_group_release(g);
    return rc;
}

int mf_topo_split(mf_comm *c, int color, int key, mf_comm **out, const char *fn)
{
    (void)fn;
    return mf_comm_split(c, color, key, out);
}
