/*
 * rma_sync.c — epochs over the emulated back end: fence, post/start/complete/wait and passive
 * target locks (see rma.h for how each maps onto messages).
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/progress.h"
#include "rma/rma.h"

int mf_rma_fence(mf_win *w, int assert_, const char *fn)
{
    if (assert_ & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return mf_error(MPI_ERR_ASSERT, "%s: assert=%d has bits fence does not know", fn, assert_);
    if (w->w_epoch & ~MF_RMA_EPOCH_FENCE)
        return mf_error(MPI_ERR_RMA_SYNC, "%s: another epoch (PSCW or lock) is open on win", fn);
    /* complete my operations (acknowledged = applied at the target), then wait for everyone's:
     * after the barrier every operation of the closing epoch is applied everywhere. */
    int rc = mf_rma_flush(w, -1);
    if (!rc)
        rc = mf_coll_barrier(w->w_comm);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* direct windows: others' stores seen from here */
    w->w_epoch = (assert_ & MPI_MODE_NOSUCCEED) ? MF_RMA_EPOCH_NONE : MF_RMA_EPOCH_FENCE;
    w->w_ops_since_fence = false;
    return rc;
}

int mf_rma_end_unused_fence(mf_win *w, const char *fn)
{
    if (!(w->w_epoch & MF_RMA_EPOCH_FENCE))
        return MPI_SUCCESS;
    if (w->w_ops_since_fence)
        return mf_error(MPI_ERR_RMA_SYNC,
                        "%s: the fence epoch on win has operations; end it with MPI_Win_fence "
                        "first",
                        fn);
    w->w_epoch &= ~MF_RMA_EPOCH_FENCE;
    return MPI_SUCCESS;
}

/* Ranks in w_comm of the members of g; MPI_ERR_GROUP if one is not in the window. */
static int rma_group_ranks(mf_win *w, mf_group *g, int **out, const char *fn)
{
    int *r = malloc(((size_t)g->g_size + 1) * sizeof *r);
    if (!r)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory", fn);
    for (int i = 0; i < g->g_size; i++) {
        r[i] = mf_group_rank_of(w->w_comm->c_group, g->g_world_ranks[i]);
        if (r[i] == MPI_UNDEFINED) {
            free(r);
            return mf_error(MPI_ERR_GROUP, "%s: group member %d is not in the window's group", fn,
                            i);
        }
    }
    *out = r;
    return MPI_SUCCESS;
}

int mf_rma_post(mf_win *w, mf_group *g, const char *fn)
{
    if (w->w_done_reqs)
        return mf_error(MPI_ERR_RMA_SYNC, "%s: an exposure epoch is already open on win", fn);
    int *ranks;
    int rc = rma_group_ranks(w, g, &ranks, fn);
    if (rc)
        return rc;
    if (!(w->w_done_reqs = calloc((size_t)g->g_size + 1, sizeof *w->w_done_reqs))) {
        free(ranks);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory", fn);
    }
    w->w_ndone = g->g_size;
    for (int i = 0; i < g->g_size && !rc; i++) {
        rc = mf_irecv(NULL, 0, mf_datatype_get(MPI_BYTE), ranks[i], MF_RMA_TAG_DONE, w->w_comm,
                      MF_CTX_P2P, &w->w_done_reqs[i]);
        if (!rc)
            rc = mf_send(NULL, 0, mf_datatype_get(MPI_BYTE), ranks[i], MF_RMA_TAG_POST, w->w_comm,
                         MF_CTX_P2P);
    }
    free(ranks);
    return rc;
}

int mf_rma_start(mf_win *w, mf_group *g, const char *fn)
{
    if (w->w_epoch & (MF_RMA_EPOCH_START | MF_RMA_EPOCH_LOCK | MF_RMA_EPOCH_LOCKALL))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: an access epoch is already open on win", fn);
    int rc = mf_rma_end_unused_fence(w, fn);
    if (!rc)
        rc = rma_group_ranks(w, g, &w->w_start_ranks, fn);
    if (rc)
        return rc;
    w->w_nstart = g->g_size;
    /* wait for every target's post: operations may start as soon as this returns */
    for (int i = 0; i < g->g_size && !rc; i++)
        rc = mf_recv(NULL, 0, mf_datatype_get(MPI_BYTE), w->w_start_ranks[i], MF_RMA_TAG_POST,
                     w->w_comm, MF_CTX_P2P, NULL);
    w->w_epoch |= MF_RMA_EPOCH_START;
    return rc;
}

int mf_rma_complete(mf_win *w, const char *fn)
{
    if (!(w->w_epoch & MF_RMA_EPOCH_START))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: no MPI_Win_start epoch is open on win", fn);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < w->w_nstart && !rc; i++) {
        rc = mf_rma_flush(w, w->w_start_ranks[i]);
        if (!rc)
            rc = mf_send(NULL, 0, mf_datatype_get(MPI_BYTE), w->w_start_ranks[i], MF_RMA_TAG_DONE,
                         w->w_comm, MF_CTX_P2P);
    }
    free(w->w_start_ranks);
    w->w_start_ranks = NULL;
    w->w_nstart = 0;
    w->w_epoch &= ~MF_RMA_EPOCH_START;
    return rc;
}

static bool rma_all_done(void *arg)
{
    mf_win *w = arg;
    for (int i = 0; i < w->w_ndone; i++)
        if (!mf_request_info(w->w_done_reqs[i])->r_complete)
            return false;
    return true;
}

int mf_rma_wait(mf_win *w, bool test_only, bool *done, const char *fn)
{
    if (!w->w_done_reqs)
        return mf_error(MPI_ERR_RMA_SYNC, "%s: no MPI_Win_post epoch is open on win", fn);
    int rc = MPI_SUCCESS;
    if (test_only) {
        mf_progress_poll();
        *done = rma_all_done(w);
    } else {
        rc = mf_progress_wait(rma_all_done, w);
        *done = !rc;
    }
    if (*done) {
        for (int i = 0; i < w->w_ndone; i++)
            mf_request_free(w->w_done_reqs[i]);
        free(w->w_done_reqs);
        w->w_done_reqs = NULL;
        w->w_ndone = 0;
    }
    return rc;
}

/* Asks for rank's lock (granted when acknowledged) or takes it in the shared slot. */
static int rma_lock_one(mf_win *w, int type, int rank)
{
    if (mf_rma_direct_to(w, rank))
        return mf_rma_direct_lock(w, rank, type);
    int rc =
        mf_rma_control(w, type == MPI_LOCK_SHARED ? MF_RMA_LOCK_SHARED : MF_RMA_LOCK_EXCL, rank);
    return rc ? rc : mf_rma_flush(w, rank);
}

/* Releases rank's lock once every operation to it completed. */
static int rma_unlock_one(mf_win *w, int rank)
{
    int rc = mf_rma_flush(w, rank);
    if (mf_rma_direct_to(w, rank)) {
        mf_rma_direct_unlock(w, rank);
        return rc;
    }
    if (!rc)
        rc = mf_rma_control(w, MF_RMA_UNLOCK, rank);
    return rc ? rc : mf_rma_flush(w, rank);
}

int mf_rma_check_lock_type(int type, const char *fn)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return mf_error(MPI_ERR_LOCKTYPE,
                        "%s: lock_type=%d is neither MPI_LOCK_SHARED nor "
                        "MPI_LOCK_EXCLUSIVE",
                        fn, type);
    return MPI_SUCCESS;
}

int mf_rma_lock(mf_win *w, int type, int rank, const char *fn)
{
    int rc = mf_rma_check_lock_type(type, fn);
    if (rc)
        return rc;
    if (w->w_locked[rank] || (w->w_epoch & (MF_RMA_EPOCH_START | MF_RMA_EPOCH_LOCKALL)))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: an access epoch to rank %d is already open", fn,
                        rank);
    rc = mf_rma_end_unused_fence(w, fn);
    if (!rc)
        rc = rma_lock_one(w, type, rank);
    if (!rc) {
        w->w_locked[rank] = type;
        w->w_nlocked++;
        w->w_epoch |= MF_RMA_EPOCH_LOCK;
    }
    return rc;
}

int mf_rma_unlock(mf_win *w, int rank, const char *fn)
{
    if (!w->w_locked[rank] || (w->w_epoch & MF_RMA_EPOCH_LOCKALL))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: rank %d is not locked by MPI_Win_lock", fn, rank);
    int rc = rma_unlock_one(w, rank);
    w->w_locked[rank] = 0;
    if (--w->w_nlocked == 0)
        w->w_epoch &= ~MF_RMA_EPOCH_LOCK;
    return rc;
}

int mf_rma_lock_all(mf_win *w, const char *fn)
{
    if (w->w_epoch & (MF_RMA_EPOCH_START | MF_RMA_EPOCH_LOCK | MF_RMA_EPOCH_LOCKALL))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: an access epoch is already open on win", fn);
    int rc = mf_rma_end_unused_fence(w, fn);
    if (rc)
        return rc;
    for (int i = 0; i < w->w_comm->c_size && !rc; i++)
        rc = mf_rma_direct_to(w, i) ? mf_rma_direct_lock(w, i, MPI_LOCK_SHARED)
                                    : mf_rma_control(w, MF_RMA_LOCK_SHARED, i);
    if (!rc)
        rc = mf_rma_flush(w, -1); /* emulated: all granted */
    for (int i = 0; i < w->w_comm->c_size; i++)
        w->w_locked[i] = MPI_LOCK_SHARED;
    w->w_epoch |= MF_RMA_EPOCH_LOCKALL;
    return rc;
}

int mf_rma_unlock_all(mf_win *w, const char *fn)
{
    if (!(w->w_epoch & MF_RMA_EPOCH_LOCKALL))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: no MPI_Win_lock_all epoch is open on win", fn);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < w->w_comm->c_size && !rc; i++)
        rc = rma_unlock_one(w, i);
    for (int i = 0; i < w->w_comm->c_size; i++)
        w->w_locked[i] = 0;
    w->w_epoch &= ~MF_RMA_EPOCH_LOCKALL;
    return rc;
}
