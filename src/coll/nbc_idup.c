/*
 * nbc_idup.c — MPI_Comm_idup's context-id agreement as a schedule (nbc.h, nbc_impl.h), so that
 * it can be pending beside other nonblocking operations and blocking creations.
 *
 * One attempt is two steps (context.c explains the protocol):
 *   1. snapshot this process's free mask; allreduce the masks with BAND over the parent (an
 *      intercommunicator: over its local communicator, then across the sides, so both sides
 *      see the AND of everyone's); pick the id(s) — two for an intercommunicator, whose local
 *      communicator needs its own — and reserve them here;
 *   2. allreduce (BAND, the same way) whether every process could reserve them. If so, commit;
 *      otherwise release what was reserved here and start another attempt with a new snapshot.
 * Every decision is a function of allreduced values, so all processes run the same rounds, and
 * all transfers use the schedule's one tag on the parent's collective context, matching in
 * order. Reserved ids are not free for any other agreement of this process, blocking or not.
 */
#include <stdlib.h>

#include "coll/nbc_impl.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "core/error.h"

typedef struct nbc_idup {
    mf_comm *i_parent, *i_new; /* both retained by the schedule */
    int i_nids;                /* 1, or 2 for an intercommunicator */
    uint32_t i_ids[2];
    bool i_held[2]; /* reserved here by the current attempt */
    unsigned i_attempt, i_seed;
    uint64_t i_mask[MF_CONTEXT_WORDS], i_remote[MF_CONTEXT_WORDS];
    uint64_t i_ok, i_ok_remote;
} nbc_idup;

static void nbc_idup_attempt(mf_nbc_sched *s, void *arg);

/* Appends the BAND of `n` words in place (both sides for an intercommunicator: `remote` gets
 * the other side's AND, to be combined by the caller). */
static void nbc_idup_band(mf_nbc_sched *s, nbc_idup *d, uint64_t *words, uint64_t *remote, int n)
{
    mf_datatype *u64 = mf_datatype_get(MPI_UINT64_T);
    mf_op *band = mf_op_get(MPI_BAND);
    if (!d->i_parent->c_is_inter) {
        mf_nbc_allreduce(s, words, words, n, u64, band, d->i_parent);
        return;
    }
    mf_nbc_allreduce(s, words, words, n, u64, band, d->i_parent->c_local_comm);
    mf_nbc_allreduce(s, words, remote, n, u64, band, d->i_parent);
}

static void nbc_idup_release(nbc_idup *d)
{
    for (int i = 0; i < d->i_nids; i++)
        if (d->i_held[i]) {
            mf_context_release(d->i_ids[i]);
            d->i_held[i] = false;
        }
}

static void nbc_idup_check(mf_nbc_sched *s, void *arg)
{
    nbc_idup *d = arg;
    if (d->i_parent->c_is_inter)
        d->i_ok &= d->i_ok_remote;
    if (!d->i_ok) {
        nbc_idup_release(d);
        d->i_attempt++;
        nbc_idup_attempt(s, d);
        return;
    }
    /* The ids are the new communicator's now: they are released when it is destroyed. */
    for (int i = 0; i < d->i_nids; i++)
        d->i_held[i] = false;
    int rc = mf_comm_idup_commit(d->i_parent, d->i_new, d->i_ids);
    if (rc && !s->s_error)
        s->s_error = rc;
}

static void nbc_idup_pick(mf_nbc_sched *s, void *arg)
{
    nbc_idup *d = arg;
    if (d->i_parent->c_is_inter)
        for (int w = 0; w < MF_CONTEXT_WORDS; w++)
            d->i_mask[w] &= d->i_remote[w];
    d->i_ok = 1;
    for (int i = 0; i < d->i_nids; i++) {
        int rc = mf_context_pick(d->i_mask, d->i_seed + (unsigned)i, d->i_attempt, &d->i_ids[i]);
        if (rc) {
            if (!s->s_error)
                s->s_error = rc;
            return;
        }
        uint32_t bit = d->i_ids[i] / MF_CONTEXT_STRIDE;
        d->i_mask[bit / 64] &= ~(UINT64_C(1) << (bit % 64)); /* the second id differs */
        d->i_held[i] = mf_context_reserve(d->i_ids[i]);
        if (!d->i_held[i])
            d->i_ok = 0;
    }
    nbc_idup_band(s, d, &d->i_ok, &d->i_ok_remote, 1);
    mf_nbc_round(s);
    mf_nbc_callback(s, nbc_idup_check, d);
}

static void nbc_idup_attempt(mf_nbc_sched *s, void *arg)
{
    nbc_idup *d = arg;
    mf_context_snapshot(d->i_mask);
    nbc_idup_band(s, d, d->i_mask, d->i_remote, MF_CONTEXT_WORDS);
    mf_nbc_round(s);
    mf_nbc_callback(s, nbc_idup_pick, d);
}

static void nbc_idup_free(void *arg)
{
    nbc_idup *d = arg;
    nbc_idup_release(d); /* a failed schedule's reservations */
    mf_comm_release(d->i_new);
    mf_comm_release(d->i_parent);
    free(d);
}

int mf_nbc_comm_idup(mf_comm *parent, mf_comm *newc, const char *fn, mf_request **out)
{
    mf_nbc_sched *s;
    nbc_idup *d = calloc(1, sizeof *d);
    if (!d)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for the context-id agreement", fn);
    int rc = mf_nbc_sched_new(parent, fn, &s);
    if (rc) {
        free(d);
        return rc;
    }
    mf_comm_retain(parent);
    mf_comm_retain(newc);
    d->i_parent = parent;
    d->i_new = newc;
    d->i_nids = parent->c_is_inter ? 2 : 1;
    /* The same at every process of both sides; differs between pending creations. */
    d->i_seed = (unsigned)s->s_tag * 31u + parent->c_context;
    s->s_cleanup = nbc_idup_free;
    s->s_cleanup_arg = d;
    nbc_idup_attempt(s, d);
    return mf_nbc_sched_launch(s, out);
}
