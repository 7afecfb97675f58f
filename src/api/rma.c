/*
 * rma.c — one-sided operations and synchronisation entry points (MPI-4.0 sections 12.3-12.5):
 * argument checks and epoch checks here, the work in src/rma.
 */
#include <stdlib.h>

#include "api/api.h"
#include "api/rma_api.h"
#include "coll/op.h"

/* Whether an access epoch to `target` is open (MPI_ERR_RMA_SYNC otherwise). */
static bool rma_access_open(const mf_win *w, int target)
{
    if (w->w_epoch & (MF_RMA_EPOCH_FENCE | MF_RMA_EPOCH_LOCKALL) || w->w_locked[target])
        return true;
    for (int i = 0; i < w->w_nstart; i++)
        if (w->w_start_ranks[i] == target)
            return true;
    return false;
}

/* A request that is complete already (operations on MPI_PROC_NULL). */
static int rma_null_request(mf_win *w, MPI_Request *request)
{
    mf_request *r = mf_rma_request_new(w);
    if (!r)
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a request");
    int rc = mf_request_handle(r, request);
    mf_request_end(r, MPI_SUCCESS);
    return rc;
}

static int rma_type(MPI_Datatype h, MPI_Count count, mf_datatype **out, const char *fn)
{
    int rc = mf_check_datatype(h, out, fn);
    return rc ? rc : mf_check_count(count, fn);
}

/* Whether `count` elements of dt carry any byte: an accumulate where a side carries none has
 * nothing to combine, so neither its op nor its types are checked against each other (MPICH
 * accepts these too; its rma/badrma test sends every such combination, mpi4py some). */
static bool rma_moves(const mf_datatype *dt, MPI_Count count)
{
    return dt && count > 0 && mf_datatype_info(dt)->dt_size > 0;
}

/* Everything an operation's entry point does: checks, then mf_rma_op. Datatype handles that
 * the operation does not use are MPI_DATATYPE_NULL. */
static int rma_call(mf_rma_args *a, MPI_Datatype ot, MPI_Datatype rt, MPI_Datatype tt, MPI_Op op,
                    MPI_Win win, MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && ot != MPI_DATATYPE_NULL)
        rc = rma_type(ot, a->origin_count, &a->origin_dt, fn);
    if (!rc && rt != MPI_DATATYPE_NULL)
        rc = rma_type(rt, a->result_count, &a->result_dt, fn);
    if (!rc)
        rc = rma_type(tt, a->target_count, &a->target_dt, fn);
    if (!rc && op != MPI_OP_NULL) {
        if (!(a->op = mf_op_get(op)) || !a->op->op_builtin)
            rc =
                mf_error(MPI_ERR_OP, "%s: op=0x%x is not a predefined operation", fn, (unsigned)op);
        else if (op != MPI_REPLACE && op != MPI_NO_OP && rma_moves(a->target_dt, a->target_count))
            rc = mf_op_check(a->op, a->target_dt, fn); /* nothing to combine: nothing to check
                                                           (MPICH accepts these; mpi4py sends
                                                           them) */
        if (!rc && op != MPI_NO_OP && rma_moves(a->origin_dt, a->origin_count) &&
            rma_moves(a->target_dt, a->target_count) &&
            mf_datatype_basic_type(a->origin_dt) != mf_datatype_basic_type(a->target_dt))
            rc = mf_error(MPI_ERR_TYPE,
                          "%s: origin and target datatypes are not built from the same "
                          "predefined type",
                          fn);
    }
    if (!rc && a->single)
        rc = mf_op_check_atomic_type(a->target_dt, a->kind == MF_RMA_CAS, fn);
    if (!rc && a->target != MPI_PROC_NULL && (a->target < 0 || a->target >= w->w_comm->c_size))
        rc = mf_error(MPI_ERR_RANK, "%s: target_rank=%d is not in the window's group of %d", fn,
                      a->target, w->w_comm->c_size);
    if (!rc && a->target == MPI_PROC_NULL) {
        if (request)
            rc = rma_null_request(w, request);
        MF_API_EXIT();
        return mf_err_win(w, rc, fn);
    }
    if (!rc && !rma_access_open(w, a->target))
        rc = mf_error(MPI_ERR_RMA_SYNC, "%s: no access epoch to rank %d is open on win", fn,
                      a->target);
    if (!rc && request && !(w->w_epoch & (MF_RMA_EPOCH_LOCK | MF_RMA_EPOCH_LOCKALL)))
        rc = mf_error(MPI_ERR_RMA_SYNC,
                      "%s: request-based operations need a passive-target epoch (lock)", fn);
    mf_request *r = NULL;
    if (!rc) {
        w->w_ops_since_fence = true;
        rc = mf_rma_op(w, a, request ? &r : NULL, fn);
    }
    if (!rc && request)
        rc = mf_request_handle(r, request);
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}

#define RMA_ORIGIN(buf, n, k) .kind = (k), .origin = (buf), .origin_count = (n)
#define RMA_TARGET(rank, disp, n) .target = (rank), .target_disp = (disp), .target_count = (n)

/* Put and accumulate (op MPI_OP_NULL: put); int counts widen to MPI_Count. */
static int rma_put(const void *o, MPI_Count on, MPI_Datatype ot, int target, MPI_Aint disp,
                   MPI_Count tn, MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *request,
                   const char *fn)
{
    mf_rma_args a = {RMA_ORIGIN(o, on, op == MPI_OP_NULL ? MF_RMA_PUT : MF_RMA_ACC),
                     RMA_TARGET(target, disp, tn)};
    return rma_call(&a, ot, MPI_DATATYPE_NULL, tt, op, win, request, fn);
}

/* Get: the origin buffer is where the result goes. */
static int rma_get(void *o, MPI_Count on, MPI_Datatype ot, int target, MPI_Aint disp, MPI_Count tn,
                   MPI_Datatype tt, MPI_Win win, MPI_Request *request, const char *fn)
{
    mf_rma_args a = {
        .kind = MF_RMA_GET, .result = o, .result_count = on, RMA_TARGET(target, disp, tn)};
    return rma_call(&a, MPI_DATATYPE_NULL, ot, tt, MPI_OP_NULL, win, request, fn);
}

/* Put and get of contiguous data to a same-host target inside an open lock or fence epoch: the
 * case whose latency the one-sided benchmarks measure, and whose cost would otherwise be the
 * layers between the call and its one copy. Every check of rma_call and mf_rma_op is made here,
 * for the valid case only: anything out of the ordinary (an error, a target on another host, a
 * datatype with gaps, a PSCW epoch, nothing to move) returns false and takes the general path,
 * which does the work or says what is wrong. */
static bool rma_fast(bool put, void *buf, MPI_Count on, MPI_Datatype ot, int target, MPI_Aint disp,
                     MPI_Count tn, MPI_Datatype tt, MPI_Win win)
{
    MF_API_ENTER(); /* the handle tables and the window may change under other threads */
    mf_win *w = mf_g.initialized ? mf_win_get(win) : NULL;
    mf_datatype *odt = mf_datatype_get(ot), *tdt = mf_datatype_get(tt);
    bool ok = w && odt && tdt && target >= 0 && target < w->w_comm->c_size && on > 0 && tn > 0 &&
              disp >= 0;
    const struct mf_datatype_public *oi = ok ? mf_datatype_info(odt) : NULL,
                                    *ti = ok ? mf_datatype_info(tdt) : NULL;
    MPI_Aint size = ok ? w->w_sizes[target] : 0, off = 0;
    size_t bytes = ok ? (size_t)tn * ti->dt_size : 0;
    ok = ok && oi->dt_committed && ti->dt_committed && oi->dt_contig && ti->dt_contig &&
         mf_rma_direct_to(w, target) &&
         (w->w_locked[target] || w->w_epoch & (MF_RMA_EPOCH_FENCE | MF_RMA_EPOCH_LOCKALL)) &&
         tn <= size && disp <= size && bytes == (size_t)on * oi->dt_size && bytes &&
         !__builtin_mul_overflow(disp, w->w_units[target], &off) && (off += ti->dt_true_lb) >= 0 &&
         off <= size - (MPI_Aint)bytes;
    if (ok) {
        char *tgt = w->w_seg + w->w_seg_off[target] + off;
        if (put)
            mf_rma_copy(tgt, (const char *)buf + oi->dt_true_lb, bytes);
        else
            mf_rma_copy((char *)buf + oi->dt_true_lb, tgt, bytes);
        w->w_direct_dirty = true;
        w->w_ops_since_fence = true;
    }
    MF_API_EXIT();
    return ok;
}

#define RMA_PUT_ARGS                                                                               \
    origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,            \
        target_datatype

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    if (rma_fast(true, (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win))
        return MPI_SUCCESS;
    return rma_put(RMA_PUT_ARGS, MPI_OP_NULL, win, NULL, "MPI_Put");
}
MF_API_ALIAS(Put);

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    if (rma_fast(true, (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win))
        return MPI_SUCCESS;
    return rma_put(RMA_PUT_ARGS, MPI_OP_NULL, win, NULL, "MPI_Put_c");
}
MF_API_ALIAS(Put_c);

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    return rma_put(RMA_PUT_ARGS, MPI_OP_NULL, win, request, "MPI_Rput");
}
MF_API_ALIAS(Rput);

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rma_put(RMA_PUT_ARGS, MPI_OP_NULL, win, request, "MPI_Rput_c");
}
MF_API_ALIAS(Rput_c);

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    if (rma_fast(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win))
        return MPI_SUCCESS;
    return rma_get(RMA_PUT_ARGS, win, NULL, "MPI_Get");
}
MF_API_ALIAS(Get);

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    if (rma_fast(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win))
        return MPI_SUCCESS;
    return rma_get(RMA_PUT_ARGS, win, NULL, "MPI_Get_c");
}
MF_API_ALIAS(Get_c);

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    return rma_get(RMA_PUT_ARGS, win, request, "MPI_Rget");
}
MF_API_ALIAS(Rget);

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rma_get(RMA_PUT_ARGS, win, request, "MPI_Rget_c");
}
MF_API_ALIAS(Rget_c);

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_put(RMA_PUT_ARGS, op, win, NULL, "MPI_Accumulate");
}
MF_API_ALIAS(Accumulate);

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_put(RMA_PUT_ARGS, op, win, NULL, "MPI_Accumulate_c");
}
MF_API_ALIAS(Accumulate_c);

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return rma_put(RMA_PUT_ARGS, op, win, request, "MPI_Raccumulate");
}
MF_API_ALIAS(Raccumulate);

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    return rma_put(RMA_PUT_ARGS, op, win, request, "MPI_Raccumulate_c");
}
MF_API_ALIAS(Raccumulate_c);

/* Get_accumulate: with MPI_NO_OP the origin buffer is not read (its type is ignored). */
static int rma_gacc(const void *o, MPI_Count on, MPI_Datatype ot, void *r, MPI_Count rn,
                    MPI_Datatype rt, int target, MPI_Aint disp, MPI_Count tn, MPI_Datatype tt,
                    MPI_Op op, MPI_Win win, MPI_Request *request, const char *fn)
{
    mf_rma_args a = {RMA_ORIGIN(o, on, MF_RMA_GACC), .result = r, .result_count = rn,
                     RMA_TARGET(target, disp, tn)};
    if (op == MPI_NO_OP)
        a.origin_count = 0, ot = MPI_DATATYPE_NULL;
    return rma_call(&a, ot, rt, tt, op, win, request, fn);
}

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    win, NULL, "MPI_Get_accumulate");
}
MF_API_ALIAS(Get_accumulate);

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    return rma_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    win, NULL, "MPI_Get_accumulate_c");
}
MF_API_ALIAS(Get_accumulate_c);

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return rma_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    win, request, "MPI_Rget_accumulate");
}
MF_API_ALIAS(Rget_accumulate);

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    return rma_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    win, request, "MPI_Rget_accumulate_c");
}
MF_API_ALIAS(Rget_accumulate_c);

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    mf_rma_args a = {RMA_ORIGIN(origin_addr, 1, MF_RMA_GACC), .result = result_addr,
                     .result_count = 1, RMA_TARGET(target_rank, target_disp, 1), .single = true};
    MPI_Datatype ot = datatype;
    if (op == MPI_NO_OP)
        a.origin_count = 0, ot = MPI_DATATYPE_NULL;
    return rma_call(&a, ot, datatype, datatype, op, win, NULL, "MPI_Fetch_and_op");
}
MF_API_ALIAS(Fetch_and_op);

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    mf_rma_args a = {RMA_ORIGIN(origin_addr, 1, MF_RMA_CAS),
                     .compare = compare_addr,
                     .result = result_addr,
                     .result_count = 1,
                     RMA_TARGET(target_rank, target_disp, 1),
                     .single = true};
    return rma_call(&a, datatype, datatype, datatype, MPI_OP_NULL, win, NULL,
                    "MPI_Compare_and_swap");
}
MF_API_ALIAS(Compare_and_swap);

/* ---- synchronisation ------------------------------------------------------------------ */

/* Resolves win, runs op(w) under the lock, dispatches to the window's handler. */
#define RMA_SYNC(fn_name, call)                                                                    \
    do {                                                                                           \
        MF_API_ENTER();                                                                            \
        mf_win *w = NULL;                                                                          \
        int rc = mf_check_win(win, &w, fn_name);                                                   \
        if (!rc)                                                                                   \
            rc = (call);                                                                           \
        MF_API_EXIT();                                                                             \
        return mf_err_win(w, rc, fn_name);                                                         \
    } while (0)

static int rma_rank(const mf_win *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->w_comm->c_size)
        return mf_error(MPI_ERR_RANK, "%s: rank=%d is not in the window's group of %d", fn, rank,
                        w->w_comm->c_size);
    return MPI_SUCCESS;
}

static int rma_group(MPI_Group h, mf_group **g, const char *fn)
{
    if (!(*g = mf_group_get(h)))
        return mf_error(MPI_ERR_GROUP, "%s: group=0x%x is not a valid group", fn, (unsigned)h);
    return MPI_SUCCESS;
}

static int rma_assert(int a, const char *fn)
{
    if (a & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
              MPI_MODE_NOSUCCEED))
        return mf_error(MPI_ERR_ASSERT, "%s: assert=%d has unknown bits", fn, a);
    return MPI_SUCCESS;
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
    RMA_SYNC("MPI_Win_fence", mf_rma_fence(w, assert, "MPI_Win_fence"));
}
MF_API_ALIAS(Win_fence);

static int rma_post_or_start(mf_win *w, MPI_Group group, int assert_, bool post, const char *fn)
{
    mf_group *g;
    int rc = rma_assert(assert_, fn);
    if (!rc)
        rc = rma_group(group, &g, fn);
    if (!rc)
        rc = post ? mf_rma_post(w, g, fn) : mf_rma_start(w, g, fn);
    return rc;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    RMA_SYNC("MPI_Win_post", rma_post_or_start(w, group, assert, true, "MPI_Win_post"));
}
MF_API_ALIAS(Win_post);

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    RMA_SYNC("MPI_Win_start", rma_post_or_start(w, group, assert, false, "MPI_Win_start"));
}
MF_API_ALIAS(Win_start);

int PMPI_Win_complete(MPI_Win win)
{
    RMA_SYNC("MPI_Win_complete", mf_rma_complete(w, "MPI_Win_complete"));
}
MF_API_ALIAS(Win_complete);

static int rma_wait_or_test(mf_win *w, int *flag, bool test, const char *fn)
{
    bool done = false;
    if (test && !flag)
        return mf_error(MPI_ERR_ARG, "%s: flag is NULL", fn);
    int rc = mf_rma_wait(w, test, &done, fn);
    if (flag)
        *flag = done;
    return rc;
}

int PMPI_Win_wait(MPI_Win win)
{
    RMA_SYNC("MPI_Win_wait", rma_wait_or_test(w, NULL, false, "MPI_Win_wait"));
}
MF_API_ALIAS(Win_wait);

int PMPI_Win_test(MPI_Win win, int *flag)
{
    RMA_SYNC("MPI_Win_test", rma_wait_or_test(w, flag, true, "MPI_Win_test"));
}
MF_API_ALIAS(Win_test);

/* MPI_PROC_NULL as the rank of a lock, unlock or flush: nothing to synchronise, a no-op. MPI
 * names MPI_PROC_NULL a valid target of every RMA communication call; MPICH also accepts it in
 * these (its rma/rmanull test locks it around each operation to MPI_PROC_NULL). */
static int rma_lock(mf_win *w, int type, int rank, int assert_, const char *fn)
{
    int rc = rank == MPI_PROC_NULL ? MPI_SUCCESS : rma_rank(w, rank, fn);
    if (!rc)
        rc = rma_assert(assert_, fn);
    if (!rc && rank == MPI_PROC_NULL)
        return mf_rma_check_lock_type(type, fn);
    return rc ? rc : mf_rma_lock(w, type, rank, fn);
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    RMA_SYNC("MPI_Win_lock", rma_lock(w, lock_type, rank, assert, "MPI_Win_lock"));
}
MF_API_ALIAS(Win_lock);

static int rma_unlock(mf_win *w, int rank, const char *fn)
{
    if (rank == MPI_PROC_NULL) /* see rma_lock */
        return MPI_SUCCESS;
    int rc = rma_rank(w, rank, fn);
    return rc ? rc : mf_rma_unlock(w, rank, fn);
}

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    RMA_SYNC("MPI_Win_unlock", rma_unlock(w, rank, "MPI_Win_unlock"));
}
MF_API_ALIAS(Win_unlock);

static int rma_lock_all(mf_win *w, int assert_, const char *fn)
{
    int rc = rma_assert(assert_, fn);
    return rc ? rc : mf_rma_lock_all(w, fn);
}

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    RMA_SYNC("MPI_Win_lock_all", rma_lock_all(w, assert, "MPI_Win_lock_all"));
}
MF_API_ALIAS(Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win)
{
    RMA_SYNC("MPI_Win_unlock_all", mf_rma_unlock_all(w, "MPI_Win_unlock_all"));
}
MF_API_ALIAS(Win_unlock_all);

/* Flushes need a passive-target epoch to that rank. Local completion is remote completion
 * here (every operation is acknowledged once applied), so the _local forms are the same. */
static int rma_flush(mf_win *w, int rank, bool all, const char *fn)
{
    if (!all && rank == MPI_PROC_NULL) /* see rma_lock: its lock opened no epoch */
        return MPI_SUCCESS;
    if (!(w->w_epoch & (MF_RMA_EPOCH_LOCK | MF_RMA_EPOCH_LOCKALL)))
        return mf_error(MPI_ERR_RMA_SYNC, "%s: no passive-target epoch is open on win", fn);
    if (!all) {
        int rc = rma_rank(w, rank, fn);
        if (rc)
            return rc;
        if (!w->w_locked[rank])
            return mf_error(MPI_ERR_RMA_SYNC, "%s: rank %d is not locked", fn, rank);
    }
    return mf_rma_flush(w, all ? -1 : rank);
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    RMA_SYNC("MPI_Win_flush", rma_flush(w, rank, false, "MPI_Win_flush"));
}
MF_API_ALIAS(Win_flush);

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    RMA_SYNC("MPI_Win_flush_local", rma_flush(w, rank, false, "MPI_Win_flush_local"));
}
MF_API_ALIAS(Win_flush_local);

int PMPI_Win_flush_all(MPI_Win win)
{
    RMA_SYNC("MPI_Win_flush_all", rma_flush(w, -1, true, "MPI_Win_flush_all"));
}
MF_API_ALIAS(Win_flush_all);

int PMPI_Win_flush_local_all(MPI_Win win)
{
    RMA_SYNC("MPI_Win_flush_local_all", rma_flush(w, -1, true, "MPI_Win_flush_local_all"));
}
MF_API_ALIAS(Win_flush_local_all);

/* The unified model: public and private copies are one memory; a full barrier is all. */
int PMPI_Win_sync(MPI_Win win)
{
    RMA_SYNC("MPI_Win_sync", (__atomic_thread_fence(__ATOMIC_SEQ_CST), MPI_SUCCESS));
}
MF_API_ALIAS(Win_sync);
