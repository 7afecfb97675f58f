/*
 * Context-id agreement (the protocol; the bitmask it works on and the rules of the id space are
 * context.c's): the participants AND their free-id masks with mini-collectives (comm_coll.c),
 * pick an id, reserve it everywhere and AND once more to learn whether all could, retrying
 * otherwise. Threads: callers hold the library lock.
 */
#include <string.h>

#include "coll/comm_build.h"
#include "core/error.h"
#include "p2p/p2p.h"

/* AND of `n` words over both sides of an intercommunicator creation (local reduce, leaders
 * swap, local broadcast; bridge is significant at the leader only); without `inter`, over the
 * local participants only. */
static int mf_context_band(const mf_participants *local, bool inter, mf_comm *bridge,
                           int remote_leader, int tag, uint64_t *words, int n)
{
    int rc = mf_pcoll_allreduce_band(local, words, n);
    if (rc || !inter)
        return rc;
    if (local->p_me == 0) {
        uint64_t theirs[MF_CONTEXT_WORDS];
        size_t bytes = (size_t)n * sizeof *words;
        mf_datatype *byte = mf_datatype_get(MPI_BYTE);
        rc =
            mf_sendrecv(words, (MPI_Count)bytes, byte, remote_leader, tag, theirs, (MPI_Count)bytes,
                        byte, remote_leader, tag, bridge, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            return rc;
        for (int i = 0; i < n; i++)
            words[i] &= theirs[i];
    }
    return mf_pcoll_bcast(local, 0, words, (size_t)n * sizeof *words);
}

static int mf_context_agree_any(const mf_participants *local, bool inter, mf_comm *bridge,
                                int remote_leader, int tag, uint32_t *context)
{
    /* The seed must be the same at every participant: both sides share only the tag. */
    unsigned seed = (unsigned)tag ^ (inter ? 0u : local->p_comm->c_context << 8);
    for (unsigned attempt = 0;; attempt++) {
        uint64_t mask[MF_CONTEXT_WORDS], ok;
        uint32_t id;
        mf_context_snapshot(mask);
        int rc = mf_context_band(local, inter, bridge, remote_leader, tag, mask, MF_CONTEXT_WORDS);
        if (!rc)
            rc = mf_context_pick(mask, seed, attempt, &id);
        if (rc)
            return rc;
        bool mine = mf_context_reserve(id);
        ok = mine;
        if ((rc = mf_context_band(local, inter, bridge, remote_leader, tag, &ok, 1)) || !ok) {
            if (mine)
                mf_context_release(id);
            if (rc)
                return rc;
            continue;
        }
        *context = id;
        return MPI_SUCCESS;
    }
}

int mf_context_agree(const mf_participants *p, uint32_t *context)
{
    return mf_context_agree_any(p, false, NULL, 0, p->p_tag, context);
}

int mf_context_agree_inter(const mf_participants *local, mf_comm *bridge, int remote_leader,
                           int tag, uint32_t *context)
{
    return mf_context_agree_any(local, true, bridge, remote_leader, tag, context);
}
