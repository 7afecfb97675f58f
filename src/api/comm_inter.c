/*
 * Intercommunicators (MPI-4.0 section 7.6): MPI_Intercomm_create and MPI_Intercomm_merge.
 *
 * Creation: the two leaders swap their groups (as world ranks) over the peer communicator,
 * each leader broadcasts the other side's group to its own side, then both sides agree the
 * context ids (comm_create.c: a local intracomm for the intercomm's collectives, then the
 * intercomm's own id through the leaders). All leader traffic uses the collective context of
 * the communicator it crosses, so it never matches user messages with the same tag.
 */
#include <stdlib.h>

#include "api/api.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "p2p/p2p.h"

/* Participants over local comm c with `leader` first (the agreement's leader is index 0). */
static int *mf_inter_leader_first(mf_comm *c, int leader, mf_participants *p)
{
    int *members = malloc((size_t)c->c_size * sizeof *members);
    if (!members)
        return NULL;
    members[0] = leader;
    for (int r = 0, i = 1; r < c->c_size; r++)
        if (r != leader)
            members[i++] = r;
    int me = 0;
    for (int i = 0; i < c->c_size; i++)
        if (members[i] == c->c_rank)
            me = i;
    *p = (mf_participants){c, members, c->c_size, me, MF_TAG_COMM_INTER};
    return members;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    MF_API_ENTER();
    mf_comm *c = NULL, *peer = NULL, *ic = NULL;
    mf_group *remote = NULL;
    int *members = NULL, *ranks = NULL, nremote = 0;
    mf_datatype *int_t = mf_datatype_get(MPI_INT);
    int rc = mf_check_comm(local_comm, &c, fn);
    if (!rc && c->c_is_inter)
        rc = mf_error(MPI_ERR_COMM, "%s: local_comm is an intercommunicator", fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newintercomm, MPI_COMM_NULL, fn, "newintercomm");
    if (!rc && (local_leader < 0 || local_leader >= c->c_size))
        rc = mf_error(MPI_ERR_RANK, "%s: local_leader=%d is not in local_comm (size %d)", fn,
                      local_leader, c->c_size);
    if (!rc && (tag < 0 || tag > MF_TAG_UB))
        rc = mf_error(MPI_ERR_TAG, "%s: tag=%d is not in 0..MPI_TAG_UB", fn, tag);
    bool leader = !rc && c->c_rank == local_leader;
    if (leader) {
        /* peer_comm and remote_leader are significant only at the leaders. */
        rc = mf_check_comm(peer_comm, &peer, fn);
        if (!rc && (remote_leader < 0 || remote_leader >= mf_comm_peer_size(peer)))
            rc = mf_error(MPI_ERR_RANK, "%s: remote_leader=%d is not in peer_comm (size %d)", fn,
                          remote_leader, mf_comm_peer_size(peer));
        if (!rc && mf_comm_peer(peer, remote_leader) == mf_g.rank)
            rc = mf_error(MPI_ERR_RANK, "%s: remote_leader=%d is the local leader itself", fn,
                          remote_leader);
    }
    if (rc)
        goto out;
    mf_participants local;
    if (!(members = mf_inter_leader_first(c, local_leader, &local))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    if (leader) {
        int mine = c->c_size;
        rc = mf_sendrecv(&mine, 1, int_t, remote_leader, tag, &nremote, 1, int_t, remote_leader,
                         tag, peer, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, &nremote, sizeof nremote);
    if (!rc && nremote <= 0)
        rc = mf_error(MPI_ERR_INTERN, "%s: remote group size %d", fn, nremote);
    if (!rc && !(ranks = malloc((size_t)nremote * sizeof *ranks)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc && leader)
        rc = mf_sendrecv(c->c_group->g_world_ranks, c->c_size, int_t, remote_leader, tag, ranks,
                         nremote, int_t, remote_leader, tag, peer, MF_CTX_COLL, MPI_STATUS_IGNORE);
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, ranks, (size_t)nremote * sizeof *ranks);
    if (!rc)
        for (int i = 0; i < nremote && !rc; i++)
            if (mf_group_rank_of(c->c_group, ranks[i]) != MPI_UNDEFINED)
                rc = mf_error(MPI_ERR_COMM, "%s: world rank %d is in both groups", fn, ranks[i]);
    if (!rc)
        rc = mf_group_new(nremote, ranks, &remote);
    if (!rc)
        rc = mf_comm_create_inter(&local, c->c_group, remote, peer, remote_leader, tag, c, &ic);
    if (!rc)
        *newintercomm = ic->c_handle;
out:
    mf_group_release(remote);
    free(members);
    free(ranks);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Intercomm_create);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_group *g = NULL;
    int *world = NULL;
    int rc = mf_check_comm(intercomm, &c, fn);
    if (!rc && !c->c_is_inter)
        rc = mf_error(MPI_ERR_COMM, "%s: intercomm is not an intercommunicator", fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newintracomm, MPI_COMM_NULL, fn, "newintracomm");
    if (rc)
        goto out;
    mf_participants local = mf_participants_all(c->c_local_comm);
    local.p_tag = MF_TAG_COMM_INTER;
    int mine = high != 0, theirs = 0;
    if (c->c_rank == 0) {
        mf_datatype *int_t = mf_datatype_get(MPI_INT);
        rc = mf_sendrecv(&mine, 1, int_t, 0, MF_TAG_COMM_INTER, &theirs, 1, int_t, 0,
                         MF_TAG_COMM_INTER, c, MF_CTX_COLL, MPI_STATUS_IGNORE);
    }
    if (!rc)
        rc = mf_pcoll_bcast(&local, 0, &theirs, sizeof theirs);
    if (rc)
        goto out;
    /* The "low" side comes first; on a tie, the side whose leader has the lower world rank. */
    bool first =
        mine != theirs ? !mine : c->c_group->g_world_ranks[0] < c->c_remote->g_world_ranks[0];
    const mf_group *a = first ? c->c_group : c->c_remote, *b = first ? c->c_remote : c->c_group;
    int n = a->g_size + b->g_size;
    if (!(world = malloc((size_t)n * sizeof *world))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    for (int i = 0; i < a->g_size; i++)
        world[i] = a->g_world_ranks[i];
    for (int i = 0; i < b->g_size; i++)
        world[a->g_size + i] = b->g_world_ranks[i];
    uint32_t context;
    if ((rc = mf_group_new(n, world, &g)) ||
        (rc = mf_context_agree_inter(&local, c, 0, MF_TAG_COMM_INTER, &context)))
        goto out;
    if ((rc = mf_comm_new(g, NULL, context, &nc))) {
        mf_context_release(context); /* the agreement's reservation */
        goto out;
    }
    g = NULL; /* the communicator holds it now */
    mf_comm_inherit(nc, c);
    *newintracomm = nc->c_handle;
out:
    mf_group_release(g);
    free(world);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Intercomm_merge);
