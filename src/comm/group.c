/*
 * Group objects: an ordered list of world ranks, reference counted, with a user handle once the
 * user sees the group (MPI_Comm_group, MPI_Group_incl...). Communicators hold their groups by
 * reference, so MPI_Group_free of a communicator's group never frees what the communicator uses.
 *
 * MPI_GROUP_EMPTY is a static object with a permanent reference; every operation that produces
 * an empty group may hand it out instead of allocating.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"

static mf_handle_table mf_group_table = MF_HANDLE_TABLE_INIT(MF_CLASS_GROUP);
static mf_group mf_group_empty_obj = {MPI_GROUP_EMPTY, 1, 0, MPI_UNDEFINED, NULL};

mf_group *mf_group_get(MPI_Group handle)
{
    if (handle == MPI_GROUP_EMPTY)
        return &mf_group_empty_obj;
    return mf_handle_lookup(&mf_group_table, handle);
}

int mf_group_rank_of(const mf_group *g, int world_rank)
{
    for (int i = 0; i < g->g_size; i++)
        if (g->g_world_ranks[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}

int mf_group_new(int size, const int *world_ranks, mf_group **out)
{
    if (size == 0) {
        mf_group_retain(&mf_group_empty_obj);
        *out = &mf_group_empty_obj;
        return MPI_SUCCESS;
    }
    mf_group *g = calloc(1, sizeof *g);
    int *ranks = malloc((size_t)size * sizeof *ranks);
    if (!g || !ranks) {
        free(g);
        free(ranks);
        return mf_error(MPI_ERR_NO_MEM, "no memory for a group of %d processes", size);
    }
    memcpy(ranks, world_ranks, (size_t)size * sizeof *ranks);
    g->g_handle = MPI_GROUP_NULL;
    g->g_refs = 1;
    g->g_size = size;
    g->g_world_ranks = ranks;
    g->g_rank = mf_group_rank_of(g, mf_g.rank);
    *out = g;
    return MPI_SUCCESS;
}

int mf_group_to_handle(mf_group *g, MPI_Group *out)
{
    if (g->g_handle == MPI_GROUP_NULL) {
        int h = mf_handle_alloc(&mf_group_table, g);
        if (!h)
            return mf_error(MPI_ERR_NO_MEM, "no memory for a group handle");
        g->g_handle = h;
    }
    mf_group_retain(g);
    *out = g->g_handle;
    return MPI_SUCCESS;
}

void mf_group_retain(mf_group *g)
{
    g->g_refs++;
}

void mf_group_release(mf_group *g)
{
    if (!g || g == &mf_group_empty_obj) /* the empty group is permanent */
        return;
    if (--g->g_refs > 0)
        return;
    if (g->g_handle != MPI_GROUP_NULL)
        mf_handle_free(&mf_group_table, g->g_handle);
    free(g->g_world_ranks);
    free(g);
}

static int mf_group_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int mf_group_compare(const mf_group *a, const mf_group *b)
{
    if (a->g_size != b->g_size)
        return MPI_UNEQUAL;
    if (a->g_size == 0 ||
        !memcmp(a->g_world_ranks, b->g_world_ranks, (size_t)a->g_size * sizeof(int)))
        return MPI_IDENT;
    /* Same members in another order? Compare sorted copies (members are distinct). */
    size_t bytes = (size_t)a->g_size * sizeof(int);
    int *sa = malloc(bytes), *sb = malloc(bytes), result = MPI_UNEQUAL;
    if (sa && sb) {
        memcpy(sa, a->g_world_ranks, bytes);
        memcpy(sb, b->g_world_ranks, bytes);
        qsort(sa, (size_t)a->g_size, sizeof(int), mf_group_cmp_int);
        qsort(sb, (size_t)b->g_size, sizeof(int), mf_group_cmp_int);
        result = memcmp(sa, sb, bytes) ? MPI_UNEQUAL : MPI_SIMILAR;
    }
    free(sa);
    free(sb);
    return result;
}
