/*
 * Communicator objects: lookup, creation, reference counting, and the two predefined
 * communicators.
 *
 * Context ids: MPI_COMM_WORLD uses 0 and MPI_COMM_SELF 2 (each + MF_CTX_COLL for collectives);
 * communicators created later get ids agreed over their group (context.c). An object lives as
 * long as its references: the user's handle (dropped by MPI_Comm_free) and every pending
 * operation's. Its context id is released only when the last reference goes, so a message of
 * a freed but still busy communicator can never match a newer one.
 */
#include "comm/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/attr.h"
#include "comm/comm_internal.h"
#include "comm/info.h"
#include "comm/topo.h"
#include "fabric/fabric.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"

mf_comm mf_comm_world_obj; /* read inline by mf_comm_get (comm.h) */
static mf_comm mf_comm_self_obj;
static mf_handle_table mf_comm_table = MF_HANDLE_TABLE_INIT(MF_CLASS_COMM);

mf_comm *mf_comm_get_other(MPI_Comm handle)
{
    if (handle == MPI_COMM_SELF)
        return mf_comm_refs(&mf_comm_self_obj) ? &mf_comm_self_obj : NULL;
    return mf_handle_lookup(&mf_comm_table, handle);
}

mf_comm *mf_comm_world(void)
{
    return mf_comm_refs(&mf_comm_world_obj) ? &mf_comm_world_obj : NULL;
}

mf_comm *mf_comm_self(void)
{
    return mf_comm_refs(&mf_comm_self_obj) ? &mf_comm_self_obj : NULL;
}

int mf_comm_new(mf_group *group, mf_group *remote, uint32_t context, mf_comm **out)
{
    mf_comm *c = calloc(1, sizeof *c);
    if (!c)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a communicator");
    int h = mf_handle_alloc(&mf_comm_table, c);
    if (!h) {
        free(c);
        return mf_error(MPI_ERR_NO_MEM, "no memory for a communicator handle");
    }
    c->c_handle = h;
    c->c_refs = 1;
    c->c_context = context;
    c->c_group = group;
    c->c_remote = remote;
    c->c_is_inter = remote != NULL;
    c->c_rank = group->g_rank;
    c->c_size = group->g_size;
    c->c_errhandler = mf_errhandler_get(MPI_ERRORS_ARE_FATAL);
    c->c_fabrics = mf_fabric_picks(MF_ROUTE_P2P);
    mf_context_take(context);
    *out = c;
    return MPI_SUCCESS;
}

void mf_comm_destroy(mf_comm *c)
{
    if (c == &mf_comm_world_obj || c == &mf_comm_self_obj)
        return;
    mf_context_release(c->c_context);
    mf_group_release(c->c_group);
    mf_group_release(c->c_remote);
    if (c->c_local_comm)
        mf_comm_release(c->c_local_comm);
    mf_errhandler_release(c->c_errhandler);
    mf_topo_free(c->c_topo);
    mf_info_release(c->c_info);
    if (c->c_coll_free)
        c->c_coll_free(c);
    mf_handle_free(&mf_comm_table, c->c_handle);
    free(c);
}

static int mf_comm_builtin(mf_comm *c, MPI_Comm handle, uint32_t context, int size,
                           const int *world_ranks, const char *name)
{
    memset(c, 0, sizeof *c);
    int rc = mf_group_new(size, world_ranks, &c->c_group);
    if (rc)
        return rc;
    c->c_handle = handle;
    c->c_context = context;
    c->c_rank = c->c_group->g_rank;
    c->c_size = size;
    c->c_errhandler = mf_errhandler_initial();
    c->c_fabrics = mf_fabric_picks(MF_ROUTE_P2P);
    snprintf(c->c_name, sizeof c->c_name, "%s", name);
    mf_comm_set_refs(c, 1); /* last: whole before mf_comm_get finds it alive */
    return MPI_SUCCESS;
}

int mf_comm_init_builtin(void)
{
    int n = mf_g.size, rc;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for MPI_COMM_WORLD's group");
    for (int r = 0; r < n; r++)
        ranks[r] = r;
    mf_context_init();
    rc = mf_comm_builtin(&mf_comm_world_obj, MPI_COMM_WORLD, 0, n, ranks, "MPI_COMM_WORLD");
    if (!rc)
        rc = mf_comm_builtin(&mf_comm_self_obj, MPI_COMM_SELF, MF_CONTEXT_STRIDE, 1, &mf_g.rank,
                             "MPI_COMM_SELF");
    free(ranks);
    return rc;
}

void mf_comm_finalize_attrs(void)
{
    /* MPI-4.0 11.2.5: MPI_COMM_SELF's attributes are deleted first, while MPI still works, so
     * libraries can hook their clean-up to MPI_Finalize; then MPI_COMM_WORLD's. */
    mf_attr_delete_all(MF_ATTR_COMM, MPI_COMM_SELF, &mf_comm_self_obj.c_attrs);
    mf_attr_delete_all(MF_ATTR_COMM, MPI_COMM_WORLD, &mf_comm_world_obj.c_attrs);
}

void mf_comm_finalize_builtin(void)
{
    mf_comm_finalize_attrs();
    mf_comm *builtin[] = {&mf_comm_self_obj, &mf_comm_world_obj};
    for (int i = 0; i < 2; i++) {
        mf_group_release(builtin[i]->c_group);
        mf_errhandler_release(builtin[i]->c_errhandler);
        mf_info_release(builtin[i]->c_info);
        if (builtin[i]->c_coll_free)
            builtin[i]->c_coll_free(builtin[i]);
        builtin[i]->c_group = NULL;
        mf_comm_set_refs(builtin[i], 0);
    }
}

int mf_comm_free_user(mf_comm *c)
{
    int rc = mf_attr_delete_all(MF_ATTR_COMM, c->c_handle, &c->c_attrs);
    if (rc)
        return rc;
    mf_comm_release(c);
    return MPI_SUCCESS;
}
