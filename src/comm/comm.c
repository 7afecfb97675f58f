/*
 * Communicator objects: lookup, reference counting, and the two predefined communicators.
 *
 * Context ids: MPI_COMM_WORLD uses 0 and MPI_COMM_SELF 2 (each + MF_CTX_COLL for collectives);
 * communicators created later get ids agreed over their group (see comm.h).
 */
#include "comm/comm.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"

static mf_comm mf_comm_world_obj, mf_comm_self_obj;
static mf_group mf_group_world_obj, mf_group_self_obj;
mf_handle_table mf_comm_table = MF_HANDLE_TABLE_INIT(MF_CLASS_COMM);

mf_comm *mf_comm_get(MPI_Comm handle)
{
    if (handle == MPI_COMM_WORLD)
        return mf_comm_world_obj.c_refs ? &mf_comm_world_obj : NULL;
    if (handle == MPI_COMM_SELF)
        return mf_comm_self_obj.c_refs ? &mf_comm_self_obj : NULL;
    return mf_handle_lookup(&mf_comm_table, handle);
}

mf_comm *mf_comm_world(void)
{
    return mf_comm_world_obj.c_refs ? &mf_comm_world_obj : NULL;
}

mf_comm *mf_comm_self(void)
{
    return mf_comm_self_obj.c_refs ? &mf_comm_self_obj : NULL;
}

void mf_group_retain(mf_group *g)
{
    g->g_refs++;
}

void mf_group_release(mf_group *g)
{
    if (--g->g_refs > 0 || g == &mf_group_world_obj || g == &mf_group_self_obj)
        return;
    free(g->g_world_ranks);
    free(g);
}

void mf_comm_retain(mf_comm *c)
{
    c->c_refs++;
}

void mf_comm_release(mf_comm *c)
{
    if (--c->c_refs > 0 || c == &mf_comm_world_obj || c == &mf_comm_self_obj)
        return;
    mf_group_release(c->c_group);
    if (c->c_remote)
        mf_group_release(c->c_remote);
    mf_errhandler_release(c->c_errhandler);
    mf_handle_free(&mf_comm_table, c->c_handle);
    free(c);
}

static void mf_comm_builtin(mf_comm *c, MPI_Comm handle, uint32_t context, mf_group *g,
                            const char *name)
{
    memset(c, 0, sizeof *c);
    c->c_handle = handle;
    c->c_refs = 1;
    c->c_context = context;
    c->c_group = g;
    c->c_rank = g->g_rank;
    c->c_size = g->g_size;
    c->c_errhandler = mf_errhandler_get(MPI_ERRORS_ARE_FATAL);
    strncpy(c->c_name, name, sizeof c->c_name - 1);
}

int mf_comm_init_builtin(void)
{
    int n = mf_g.size;
    mf_group_world_obj = (mf_group){.g_refs = 1, .g_size = n, .g_rank = mf_g.rank};
    mf_group_self_obj = (mf_group){.g_refs = 1, .g_size = 1, .g_rank = 0};
    mf_group_world_obj.g_world_ranks = malloc((size_t)n * sizeof(int));
    mf_group_self_obj.g_world_ranks = malloc(sizeof(int));
    if (!mf_group_world_obj.g_world_ranks || !mf_group_self_obj.g_world_ranks)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for MPI_COMM_WORLD's group");
    for (int r = 0; r < n; r++)
        mf_group_world_obj.g_world_ranks[r] = r;
    mf_group_self_obj.g_world_ranks[0] = mf_g.rank;
    mf_comm_builtin(&mf_comm_world_obj, MPI_COMM_WORLD, 0, &mf_group_world_obj, "MPI_COMM_WORLD");
    mf_comm_builtin(&mf_comm_self_obj, MPI_COMM_SELF, MF_CONTEXT_STRIDE, &mf_group_self_obj,
                    "MPI_COMM_SELF");
    return MPI_SUCCESS;
}

void mf_comm_finalize_builtin(void)
{
    free(mf_group_world_obj.g_world_ranks);
    free(mf_group_self_obj.g_world_ranks);
    mf_comm_world_obj.c_refs = mf_comm_self_obj.c_refs = 0;
    mf_group_world_obj.g_world_ranks = mf_group_self_obj.g_world_ranks = NULL;
}
