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
 * This file keeps the bitmask (take, release, snapshot, reserve, pick) and touches no message;
 * the agreement that ANDs masks over the participants is context_agree.c.
 *
 * Threads: callers hold the library lock.
 */
#include <string.h>

#include "comm/comm_internal.h"
#include "core/error.h"

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
