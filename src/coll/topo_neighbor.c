/*
 * The exchange behind the blocking neighborhood collectives (see comm_build.h): every receive is
 * posted, then every send, then all are awaited, so no ordering between neighbours can
 * deadlock. Traffic uses the communicator's collective context with tags of the communicator
 * module's reserved range (MF_TAG_NEIGHBOR + slot), never a user's.
 */
#include <stdlib.h>

#include "coll/comm_build.h"
#include "comm/topo.h"
#include "core/error.h"
#include "p2p/p2p.h"

int mf_topo_neighbor_exchange(mf_comm *c, const mf_nb_block *sends, const mf_nb_block *recvs)
{
    int indeg, outdeg, *src, *dst, rc, n = 0;
    bool owned;
    if ((rc = mf_topo_neighbors(c, &indeg, &src, &outdeg, &dst, &owned)))
        return rc;
    bool cart = c->c_topo->t_kind == MPI_CART;
    mf_request **reqs = malloc(((size_t)indeg + (size_t)outdeg + 1) * sizeof *reqs);
    if (!reqs) {
        rc = mf_error(MPI_ERR_NO_MEM, "neighborhood collective: out of memory");
        goto out;
    }
    /* Cartesian: receive slot i (2d: from the negative side, 2d+1: from the positive side)
     * takes what the neighbour sent in the opposite direction, i.e. from its slot i ^ 1. */
    for (int i = 0; i < indeg && !rc; i++)
        if (src[i] != MPI_PROC_NULL)
            rc = mf_irecv((void *)recvs[i].buf, recvs[i].count, recvs[i].dt, src[i],
                          MF_TAG_NEIGHBOR + (cart ? i : 0), c, MF_CTX_COLL, &reqs[n++]);
    for (int j = 0; j < outdeg && !rc; j++)
        if (dst[j] != MPI_PROC_NULL)
            rc = mf_isend(sends[j].buf, sends[j].count, sends[j].dt, dst[j],
                          MF_TAG_NEIGHBOR + (cart ? (j ^ 1) : 0), c, MF_CTX_COLL, MF_SEND_STANDARD,
                          &reqs[n++]);
    /* Requests already started must complete even after a failed start. */
    int wrc = mf_request_waitall(n, reqs);
    if (!rc)
        rc = wrc;
    for (int k = 0; k < n; k++)
        mf_request_free(reqs[k]);
out:
    free(reqs);
    if (owned) {
        free(src);
        free(dst);
    }
    return rc;
}
