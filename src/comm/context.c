/*
 * Context ids. MPI_COMM_WORLD has 0 and MPI_COMM_SELF 2 (collectives: +1 each). Every other
 * communicator gets the lowest even id that no participant of its creation uses: each process
 * keeps a bitmask of free ids (bit i <-> id 2i), the participants AND their masks, and the new
 * members mark the winner used. Because an id is free only where no live communicator holds it,
 * ids never collide however communicators are created and freed, and a process that did not
 * take part (MPI_UNDEFINED color) is unaffected.
 *
 * Limitation: two threads creating communicators at once could agree on the same id; callers
 * hold the library lock, and MPI requires creations on one communicator to be ordered.
 */
#include <string.h>

#include "comm/comm_internal.h"
#include "core/error.h"
#include "p2p/p2p.h"

static uint64_t mf_context_free[MF_CONTEXT_WORDS];

void mf_context_init(void)
{
    memset(mf_context_free, 0xff, sizeof mf_context_free);
    mf_context_take(0);                 /* MPI_COMM_WORLD */
    mf_context_take(MF_CONTEXT_STRIDE); /* MPI_COMM_SELF */
}

void mf_context_take(uint32_t context)
{
    uint32_t bit = context / MF_CONTEXT_STRIDE;
    mf_context_free[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
}

void mf_context_release(uint32_t context)
{
    uint32_t bit = context / MF_CONTEXT_STRIDE;
    if (bit / 64 < MF_CONTEXT_WORDS)
        mf_context_free[bit / 64] |= UINT64_C(1) << (bit % 64);
}

static int mf_context_lowest(const uint64_t *mask, uint32_t *context)
{
    for (int w = 0; w < MF_CONTEXT_WORDS; w++)
        if (mask[w]) {
            uint32_t bit = (uint32_t)w * 64 + (uint32_t)__builtin_ctzll(mask[w]);
            *context = bit * MF_CONTEXT_STRIDE;
            return MPI_SUCCESS;
        }
    return mf_error(MPI_ERR_OTHER, "no context id is free at every process (%d communicators "
                    "in use): free some communicators", MF_CONTEXT_WORDS * 64);
}

int mf_context_agree(const mf_participants *p, uint32_t *context)
{
    uint64_t mask[MF_CONTEXT_WORDS];
    memcpy(mask, mf_context_free, sizeof mask);
    int rc = mf_pcoll_allreduce_band(p, mask, MF_CONTEXT_WORDS);
    return rc ? rc : mf_context_lowest(mask, context);
}

int mf_context_agree_inter(const mf_participants *local, mf_comm *bridge, int remote_leader,
                           int tag, uint32_t *context)
{
    uint64_t mask[MF_CONTEXT_WORDS], theirs[MF_CONTEXT_WORDS];
    memcpy(mask, mf_context_free, sizeof mask);
    mf_participants reduce = *local;
    int rc = mf_pcoll_allreduce_band(&reduce, mask, MF_CONTEXT_WORDS);
    if (rc)
        return rc;
    if (local->p_me == 0) {
        mf_datatype *byte = mf_datatype_get(MPI_BYTE);
        rc = mf_sendrecv(mask, sizeof mask, byte, remote_leader, tag, theirs, sizeof theirs, byte,
                         remote_leader, tag, bridge, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            return rc;
        for (int i = 0; i < MF_CONTEXT_WORDS; i++)
            mask[i] &= theirs[i];
    }
    rc = mf_pcoll_bcast(local, 0, mask, sizeof mask);
    return rc ? rc : mf_context_lowest(mask, context);
}
