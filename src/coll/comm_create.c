/*
 * Building communicators: the collective steps shared by MPI_Comm_dup, split, create,
 * create_group, Intercomm_create and merge (see comm_build.h). The API files decide who
 * takes part and which group each process ends in; this file agrees the context ids and makes
 * the objects.
 */
#include "coll/comm_build.h"

#include <stdlib.h>

#include "comm/attr.h"
#include "comm/info.h"
#include "comm/topo.h"
#include "core/error.h"
#include "core/state.h"
#include "p2p/p2p.h"

void mf_comm_inherit(mf_comm *c, const mf_comm *from)
{
    if (!from)
        return;
    c->c_session = from->c_session;
    mf_errhandler_release(c->c_errhandler);
    c->c_errhandler = from->c_errhandler;
    mf_errhandler_retain(c->c_errhandler);
}

int mf_comm_create_over(const mf_participants *p, mf_comm *parent, mf_group *group, mf_comm **out)
{
    uint32_t context;
    *out = NULL;
    int rc = mf_context_agree(p, &context);
    if (rc)
        return rc;
    if (!group) {
        mf_context_release(context); /* reserved by the agreement, not ours to keep */
        return MPI_SUCCESS;
    }
    mf_group_retain(group);
    mf_comm *c;
    if ((rc = mf_comm_new(group, NULL, context, &c))) {
        mf_group_release(group);
        mf_context_release(context);
        return rc;
    }
    mf_comm_inherit(c, parent);
    *out = c;
    return MPI_SUCCESS;
}

int mf_comm_create_inter(const mf_participants *local, mf_group *local_group,
                         mf_group *remote_group, mf_comm *bridge, int remote_leader, int tag,
                         mf_comm *errh_from, mf_comm **out)
{
    mf_comm *lc = NULL, *ic = NULL;
    uint32_t context;
    *out = NULL;
    /* First the local intracomm the intercomm's collectives run on, then (with that id now
     * taken on this side) the intercomm's own id, agreed with the other side. */
    int rc = mf_comm_create_over(local, errh_from, local_group, &lc);
    if (rc)
        return rc;
    if ((rc = mf_context_agree_inter(local, bridge, remote_leader, tag, &context)))
        goto fail;
    mf_group_retain(local_group);
    mf_group_retain(remote_group);
    if ((rc = mf_comm_new(local_group, remote_group, context, &ic))) {
        mf_group_release(local_group);
        mf_group_release(remote_group);
        mf_context_release(context);
        goto fail;
    }
    ic->c_local_comm = lc;
    mf_comm_inherit(ic, errh_from);
    *out = ic;
    return MPI_SUCCESS;
fail:
    mf_comm_release(lc);
    return rc;
}

/* What a duplicate takes from its parent besides groups, error handler and attributes. */
static int mf_comm_dup_extras(const mf_comm *parent, mf_comm *c)
{
    int rc = MPI_SUCCESS;
    if (parent->c_topo && (rc = mf_topo_dup(parent->c_topo, &c->c_topo)))
        return rc;
    if (parent->c_info)
        rc = mf_info_dup(parent->c_info, &c->c_info);
    return rc;
}

int mf_comm_dup_internal(mf_comm *parent, mf_comm **out)
{
    int rc;
    mf_comm *c = NULL;
    if (parent->c_is_inter) {
        mf_participants local = mf_participants_all(parent->c_local_comm);
        rc = mf_comm_create_inter(&local, parent->c_group, parent->c_remote, parent, 0,
                                  MF_TAG_COMM_INTER, parent, &c);
    } else {
        mf_participants all = mf_participants_all(parent);
        rc = mf_comm_create_over(&all, parent, parent->c_group, &c);
    }
    if (rc)
        return rc;
    if ((rc = mf_comm_dup_extras(parent, c))) {
        mf_comm_release(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

int mf_comm_idup_prepare(mf_comm *parent, mf_comm **out)
{
    mf_comm *c = NULL, *lc = NULL;
    mf_group_retain(parent->c_group);
    if (parent->c_remote)
        mf_group_retain(parent->c_remote);
    int rc = mf_comm_new(parent->c_group, parent->c_remote, MF_CONTEXT_NONE, &c);
    if (rc) {
        mf_group_release(parent->c_group);
        mf_group_release(parent->c_remote);
        return rc;
    }
    mf_comm_inherit(c, parent);
    if (parent->c_is_inter) {
        mf_group_retain(parent->c_group);
        if ((rc = mf_comm_new(parent->c_group, NULL, MF_CONTEXT_NONE, &lc))) {
            mf_group_release(parent->c_group);
            goto fail;
        }
        mf_comm_inherit(lc, parent);
        c->c_local_comm = lc;
    }
    if ((rc = mf_comm_dup_extras(parent, c)))
        goto fail;
    *out = c;
    return MPI_SUCCESS;
fail:
    mf_comm_release(c);
    return rc;
}

int mf_comm_idup_commit(mf_comm *parent, mf_comm *c, const uint32_t *ids)
{
    c->c_context = ids[0];
    if (c->c_local_comm)
        c->c_local_comm->c_context = ids[1];
    int rc =
        mf_attr_copy_all(MF_ATTR_COMM, parent->c_handle, parent->c_attrs, c->c_handle, &c->c_attrs);
    if (rc)
        mf_attr_delete_all(MF_ATTR_COMM, c->c_handle, &c->c_attrs);
    return rc;
}

/* Orders the members of one color by (key, rank in the parent): MPI_Comm_split's rule. */
typedef struct mf_split_entry {
    int color, key, rank;
} mf_split_entry;

static int mf_split_cmp(const void *a, const void *b)
{
    const mf_split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int mf_comm_split(mf_comm *c, int color, int key, mf_comm **out)
{
    int n = c->c_size, rc;
    mf_participants all = mf_participants_all(c);
    int mine[2] = {color, key};
    int *table = malloc((size_t)n * sizeof mine);
    mf_split_entry *members = malloc((size_t)n * sizeof *members);
    int *world = malloc((size_t)n * sizeof *world);
    mf_group *g = NULL;
    if (!table || !members || !world) {
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Comm_split: out of memory");
        goto out;
    }
    if ((rc = mf_pcoll_allgather(&all, mine, sizeof mine, table)))
        goto out;
    int m = 0;
    if (color != MPI_UNDEFINED) {
        for (int r = 0; r < n; r++)
            if (table[2 * r] == color)
                members[m++] = (mf_split_entry){color, table[2 * r + 1], r};
        qsort(members, (size_t)m, sizeof *members, mf_split_cmp);
        for (int i = 0; i < m; i++)
            world[i] = c->c_group->g_world_ranks[members[i].rank];
        if ((rc = mf_group_new(m, world, &g)))
            goto out;
    }
    /* Every process joins the agreement, even with MPI_UNDEFINED: one id for all colors is
     * fine because the new communicators have disjoint members. */
    rc = mf_comm_create_over(&all, c, g, out);
out:
    mf_group_release(g);
    free(table);
    free(members);
    free(world);
    return rc;
}

/*
 * MPI_Comm_split on an intercommunicator: each side splits its own group by color; the new
 * intercommunicator of a color joins the two sides' members of that color, and a process gets
 * MPI_COMM_NULL when either side has none. The leaders (local rank 0 on each side) swap their
 * sides' (color, key) tables. One context id for every local intracomm (agreed over the local
 * group), one for every intercomm (agreed over both): colors have disjoint members.
 */
static int mf_split_members(const int *table, int n, int color, const mf_group *g, int *world)
{
    mf_split_entry *m = malloc(((size_t)n + 1) * sizeof *m);
    if (!m)
        return -1;
    int k = 0;
    for (int r = 0; r < n; r++)
        if (table[2 * r] == color)
            m[k++] = (mf_split_entry){color, table[2 * r + 1], r};
    qsort(m, (size_t)k, sizeof *m, mf_split_cmp);
    for (int i = 0; i < k; i++)
        world[i] = g->g_world_ranks[m[i].rank];
    free(m);
    return k;
}

/* The collective tail of the intercommunicator constructors: every process of intercomm c
 * takes part (`local` covers its side); those with non-empty lists on both sides (lw: this
 * side's new members, rw: the other side's, as world ranks) get the new intercommunicator. */
static int mf_comm_inter_from_lists(mf_comm *c, const mf_participants *local, const int *lw, int kl,
                                    const int *rw, int kr, mf_comm **out)
{
    mf_group *lg = NULL, *rg = NULL;
    mf_comm *lc = NULL, *ic = NULL;
    uint32_t lctx = MF_CONTEXT_NONE, ictx = MF_CONTEXT_NONE;
    bool member = kl > 0 && kr > 0;
    /* The agreements reserve lctx and ictx here; what no communicator takes is released. */
    int rc = mf_context_agree(local, &lctx);
    if (rc)
        goto out;
    if (member) {
        if ((rc = mf_group_new(kl, lw, &lg)) || (rc = mf_comm_new(lg, NULL, lctx, &lc)))
            goto out;
        lg = NULL;
        lctx = MF_CONTEXT_NONE;
        mf_comm_inherit(lc, c);
    }
    /* With the local id taken by the members, agree the intercomm's id across both sides. */
    if ((rc = mf_context_agree_inter(local, c, 0, MF_TAG_COMM_INTER, &ictx)) || !member)
        goto out;
    if ((rc = mf_group_new(kl, lw, &lg)) || (rc = mf_group_new(kr, rw, &rg)) ||
        (rc = mf_comm_new(lg, rg, ictx, &ic)))
        goto out;
    lg = rg = NULL;
    ictx = MF_CONTEXT_NONE;
    ic->c_local_comm = lc;
    lc = NULL;
    mf_comm_inherit(ic, c);
    *out = ic;
out:
    mf_context_release(lctx); /* no-op for MF_CONTEXT_NONE */
    mf_context_release(ictx);
    if (lc)
        mf_comm_release(lc);
    mf_group_release(lg);
    mf_group_release(rg);
    return rc;
}

int mf_comm_split_inter(mf_comm *c, int color, int key, mf_comm **out)
{
    int nl = c->c_size, nr = c->c_remote->g_size, rc;
    mf_participants local = mf_participants_all(c->c_local_comm);
    local.p_tag = MF_TAG_COMM_INTER;
    int mine[2] = {color, key};
    int *lt = malloc((size_t)nl * sizeof mine), *rt = malloc((size_t)nr * sizeof mine);
    int *lw = malloc((size_t)nl * sizeof(int)), *rw = malloc((size_t)nr * sizeof(int));
    *out = NULL;
    if (!lt || !rt || !lw || !rw) {
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Comm_split: out of memory");
        goto out;
    }
    if ((rc = mf_pcoll_allgather(&local, mine, sizeof mine, lt)))
        goto out;
    if (c->c_rank == 0) {
        mf_datatype *int_t = mf_datatype_get(MPI_INT);
        rc = mf_sendrecv(lt, 2 * nl, int_t, 0, MF_TAG_COMM_INTER, rt, 2 * nr, int_t, 0,
                         MF_TAG_COMM_INTER, c, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, rt, (size_t)nr * sizeof mine);
    if (rc)
        goto out;
    int kl = color == MPI_UNDEFINED ? 0 : mf_split_members(lt, nl, color, c->c_group, lw);
    int kr = color == MPI_UNDEFINED ? 0 : mf_split_members(rt, nr, color, c->c_remote, rw);
    if (kl < 0 || kr < 0) {
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Comm_split: out of memory");
        goto out;
    }
    rc = mf_comm_inter_from_lists(c, &local, lw, kl, rw, kr, out);
out:
    free(lt);
    free(rt);
    free(lw);
    free(rw);
    return rc;
}

int mf_comm_create_inter_group(mf_comm *c, mf_group *g, mf_comm **out)
{
    mf_participants local = mf_participants_all(c->c_local_comm);
    local.p_tag = MF_TAG_COMM_INTER;
    mf_datatype *int_t = mf_datatype_get(MPI_INT);
    int nr = 0, rc = MPI_SUCCESS, *rw = NULL;
    *out = NULL;
    /* The leaders swap their sides' groups (size, then members); each broadcasts locally. */
    if (c->c_rank == 0)
        rc = mf_sendrecv(&g->g_size, 1, int_t, 0, MF_TAG_COMM_INTER, &nr, 1, int_t, 0,
                         MF_TAG_COMM_INTER, c, MF_CTX_COLL, MPI_STATUS_IGNORE);
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, &nr, sizeof nr);
    if (!rc && !(rw = malloc(((size_t)nr + 1) * sizeof *rw)))
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Comm_create: out of memory");
    if (!rc && c->c_rank == 0)
        rc = mf_sendrecv(g->g_world_ranks, g->g_size, int_t, 0, MF_TAG_COMM_INTER, rw, nr, int_t, 0,
                         MF_TAG_COMM_INTER, c, MF_CTX_COLL, MPI_STATUS_IGNORE);
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, rw, (size_t)nr * sizeof *rw);
    if (!rc)
        rc = mf_comm_inter_from_lists(c, &local, g->g_world_ranks,
                                      g->g_rank != MPI_UNDEFINED ? g->g_size : 0, rw, nr, out);
    free(rw);
    return rc;
}

/* FNV-1a of the string tag, folded into the reserved range: the same at every member. */
static int mf_from_group_tag(const char *stringtag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p; p++)
        h = (h ^ *p) * 16777619u;
    return MF_TAG_FROM_GROUP + (int)((h ^ h >> 15) & MF_TAG_FROM_GROUP_MASK);
}

/* Participants = the members of g over MPI_COMM_WORLD's object, with member `first` moved to
 * the front (the leader of an intercommunicator's side is participant 0). */
static int mf_from_group_participants(mf_group *g, int first, const char *stringtag,
                                      mf_participants *p, int **members)
{
    int n = g->g_size;
    int *m = malloc((size_t)n * sizeof *m);
    if (!m)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a group of %d processes", n);
    m[0] = g->g_world_ranks[first];
    for (int i = 0, k = 1; i < n; i++)
        if (i != first)
            m[k++] = g->g_world_ranks[i];
    int me = 0;
    while (me < n && m[me] != mf_g.rank)
        me++;
    *p = (mf_participants){.p_comm = mf_comm_world(),
                           .p_members = m,
                           .p_n = n,
                           .p_me = me,
                           .p_tag = mf_from_group_tag(stringtag)};
    *members = m;
    return MPI_SUCCESS;
}

int mf_comm_from_group(mf_group *group, const char *stringtag, mf_comm **out)
{
    mf_participants p;
    int *members = NULL;
    int rc = mf_from_group_participants(group, 0, stringtag, &p, &members);
    if (!rc)
        rc = mf_comm_create_over(&p, NULL, group, out);
    free(members);
    return rc;
}

int mf_intercomm_from_groups(mf_group *local, int local_leader, mf_group *remote, int remote_leader,
                             const char *stringtag, mf_comm **out)
{
    mf_participants p;
    int *members = NULL;
    int rc = mf_from_group_participants(local, local_leader, stringtag, &p, &members);
    if (!rc)
        rc = mf_comm_create_inter(&p, local, remote, mf_comm_world(),
                                  remote->g_world_ranks[remote_leader], p.p_tag, NULL, out);
    free(members);
    return rc;
}
