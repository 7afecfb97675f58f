/*
 * coll_hier.c — host-leader (topology-aware) barrier, bcast, reduce and allreduce for
 * communicators whose ranks span several hosts (coll_impl.h: struct mf_coll_hier).
 *
 * Each operation is a phase inside every host (on h->node, which takes the shared segment
 * there), a phase among the hosts' leaders (h->leaders: one rank per host, so the network
 * carries each host's data once instead of once per rank), and a phase inside every host again:
 *   barrier    node barrier, leaders barrier, node barrier;
 *   bcast      on the root's host from the root, then among the leaders from the root's host's
 *              leader, then on every other host from its leader;
 *   allreduce  node reduce to the leader, leaders allreduce, node bcast;
 *   reduce     node reduce to the leader, leaders reduce to the root's host's leader, which
 *              sends the result to the root if it is another rank.
 * Reductions combine whole hosts, so the op must be commutative (the callers check).
 */
#include <stdlib.h>

#include "coll/coll_impl.h"
#include "core/state.h"

int mf_coll_hier_barrier(const struct mf_coll_hier *h)
{
    int rc = mf_coll_barrier(h->node);
    if (!rc && h->leaders)
        rc = mf_coll_barrier(h->leaders);
    return rc ? rc : mf_coll_barrier(h->node);
}

/* The host index of comm's rank r. */
static int host_of(const mf_comm *comm, int r)
{
    return mf_g.node_of[mf_comm_peer(comm, r)];
}

int mf_coll_hier_bcast(const struct mf_coll_hier *h, void *buf, MPI_Count count, mf_datatype *dt,
                       int root, mf_comm *comm)
{
    int rhost = host_of(comm, root), rc = MPI_SUCCESS;
    bool here = rhost == mf_g.node;
    if (here)
        rc = mf_coll_bcast_intra(
            buf, count, dt, mf_group_rank_of(h->node->c_group, mf_comm_peer(comm, root)), h->node);
    if (!rc && h->leaders)
        rc = mf_coll_bcast_intra(buf, count, dt, h->leader_of_node[rhost], h->leaders);
    if (!rc && !here)
        rc = mf_coll_bcast_intra(buf, count, dt, 0, h->node);
    return rc;
}

int mf_coll_hier_reduce(const struct mf_coll_hier *h, const void *sbuf, void *rbuf, MPI_Count count,
                        mf_datatype *dt, mf_op *op, int root, mf_comm *comm)
{
    int r = comm->c_rank, rc = MPI_SUCCESS;
    bool leader = h->leaders != NULL, all = root < 0;
    int rhost = all ? mf_g.node : host_of(comm, root);
    /* the leaders' partial result: the user's buffer where it ends there, else scratch */
    void *raw = NULL, *acc = rbuf;
    if (leader && !all && r != root && !(acc = mf_coll_tmp(count, dt, &raw, &rc)))
        return rc;
    /* node phase: MPI_IN_PLACE only where the node's root is the user's root too */
    const void *in = sbuf;
    if (sbuf == MPI_IN_PLACE && !(leader && (all || r == root)))
        in = rbuf;
    rc = mf_coll_reduce_intra(in, acc, count, dt, op, 0, h->node);
    if (!rc && leader) {
        if (all)
            rc = mf_coll_allreduce(MPI_IN_PLACE, acc, count, dt, op, h->leaders);
        else if (rhost == mf_g.node)
            rc = mf_coll_reduce_intra(MPI_IN_PLACE, acc, count, dt, op, h->leader_of_node[rhost],
                                      h->leaders);
        else
            rc = mf_coll_reduce_intra(acc, NULL, count, dt, op, h->leader_of_node[rhost],
                                      h->leaders);
    }
    if (!rc && all)
        rc = mf_coll_bcast_intra(rbuf, count, dt, 0, h->node);
    else if (!rc && rhost == mf_g.node && root != h->leader) {
        if (leader)
            rc = mf_send(acc, count, dt, root, MF_TAG_REDUCE, comm, MF_CTX_COLL);
        else if (r == root)
            rc = mf_recv(rbuf, count, dt, h->leader, MF_TAG_REDUCE, comm, MF_CTX_COLL,
                         MPI_STATUS_IGNORE);
    }
    free(raw);
    return rc;
}
