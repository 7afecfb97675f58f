/*
 * Context ids. MPI_COMM_WORLD has 0 and MPI_COMM_SELF 2 (collectives: +1 each). Every other
 * communicator gets an even id that no participant of its creation uses: each process keeps a
 * bitmask of free ids (bit i <-> id 2i), the participants AND their masks and pick the lowest
 * common free id. Because an id is free only where no live communicator holds it, ids never
 * collide however communicators are created and freed, and a process that did not take part
 * (MPI_UNDEFINED color) is unaffected.
 *
 * Reservations. Between a process's snapshot of its mask and the end of the agreement, another
 * creation may take the chosen id here: a nonblocking MPI_Comm_idup progressing while a
 * blocking creation waits, or the other way round, or several idups pending at once. So the
 * chosen id is reserved (taken if still free) at every participant, and a second AND of one
 * word tells whether all could; if one could not, all release it and try again. A reserved id
 * is simply not free, so no other agreement here can choose it; the creation commits it
 * (mf_comm_new takes it again, harmlessly, or it is assigned to a communicator built with
 * MF_CONTEXT_NONE) or releases it. Retries pick pseudo-randomly among the lowest common free
 * ids, seeded differently per creation, so two creations that keep colliding drift apart.
 *
 * Threads: callers hold the library lock.
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
    if (bit / 64 < MF_CONTEXT_WORDS)
        mf_context_free[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
}

void mf_context_release(uint32_t context)
{
    uint32_t bit = context / MF_CONTEXT_STRIDE;
    if (bit / 64 < MF_CONTEXT_WORDS)
        mf_context_free[bit / 64] |= UINT64_C(1) << (bit % 64);
}

void mf_context_snapshot(uint64_t *mask)
{
    memcpy(mask, mf_context_free, sizeof mf_context_free);
}

bool mf_context_reserve(uint32_t context)
{
    uint32_t bit = context / MF_CONTEXT_STRIDE;
    if (bit / 64 >= MF_CONTEXT_WORDS || !(mf_context_free[bit / 64] & (UINT64_C(1) << (bit % 64))))
        return false;
    mf_context_take(context);
    return true;
}

int mf_context_pick(const uint64_t *mask, unsigned seed, unsigned attempt, uint32_t *context)
{
    /* First attempt: the lowest. Retries: one of the lowest 8, chosen by a hash of both. */
    unsigned nth = 0;
    if (attempt > 0) {
        uint32_t h = seed * 2654435761u ^ attempt * 40503u;
        h ^= h >> 15;
        nth = (h * 2246822519u >> 16) % 8;
    }
    bool found = false;
    for (int w = 0; w < MF_CONTEXT_WORDS; w++)
        for (uint64_t bits = mask[w]; bits; bits &= bits - 1) {
            *context = ((uint32_t)w * 64 + (uint32_t)__builtin_ctzll(bits)) * MF_CONTEXT_STRIDE;
            found = true;
            if (nth-- == 0)
                return MPI_SUCCESS;
        }
    if (found)
        return MPI_SUCCESS; /* fewer than nth+1 free: the highest one */
    return mf_error(MPI_ERR_OTHER,
                    "no context id is free at every process (%d communicators in use): free "
                    "some communicators",
                    MF_CONTEXT_WORDS * 64);
}

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
