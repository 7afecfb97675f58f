/*
 * rma_native.c — back end "native" (see rma.h): put and get written into / read from a remote
 * target's memory by the fabric itself (fabric.h: rma_key, rput, rget; ofi: fi_write with
 * FI_DELIVERY_COMPLETE, fi_read), chosen per target.
 *
 * At creation every rank registers its part with the instance that carries the window's
 * traffic to its non-direct peers (one instance that has the ops; none, or several different
 * ones, register nothing) and the descriptors (rkey and a tag naming the instance) are
 * allgathered over the window's communicator. A target is native when the origin's instance for
 * it has the ops, is the one the target registered with, and the target is not direct (same-host
 * mapping).
 *
 * What goes native: put and get whose origin (result) and target datatypes are each one
 * contiguous block. What falls back to the emulation, counted per reason in MPI_T pvars
 * (rma_native_*) and listed per window by MANIFOLD_REPORT=fabrics at MPI_Win_free, never
 * silently: non-contiguous datatypes; every accumulating operation (accumulate, get_accumulate,
 * fetch-and-op, compare-and-swap), which keeps all of a window's accumulates in the emulation's
 * one atomicity domain (atomics of the fabric next to emulated ones would not be atomic with
 * them); a target with no descriptor (dynamic window, empty part, registration refused); every
 * operation to a would-be native target under MANIFOLD_RMA_NATIVE=0.
 *
 * Completion: each operation counts in w_pending[target] (and w_nat_inflight) until the fabric
 * calls its `done` — remote completion for puts — so the emulation's flush, and with it fence,
 * PSCW complete and unlock, wait for native operations too. Synchronisation stays emulated
 * (the lock manager, served by the target's progress hook or progress thread). Providers with
 * manual progress (tcp;ofi_rxm, shm) move the bytes of a native operation only while the target
 * polls its completion queue, i.e. inside any MPI call or with MANIFOLD_ASYNC_PROGRESS=1.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "fabric/fabric.h"
#include "rma/rma.h"
#include "tool/mpit.h"

enum { NAT_PUT, NAT_GET, NAT_FB_LAYOUT, NAT_FB_ACC, NAT_FB_NOKEY, NAT_FB_OFF, NAT_N };
static mf_t_counter nat_count[NAT_N];
static const char *const nat_name[NAT_N] = {
    "rma_native_puts",         "rma_native_gets",           "rma_native_fallback_layout",
    "rma_native_fallback_acc", "rma_native_fallback_nokey", "rma_native_fallback_off"};
static const char *const nat_desc[NAT_N] = {
    "one-sided puts written by the fabric (native back end)",
    "one-sided gets read by the fabric (native back end)",
    "operations to native targets emulated: a datatype is not one contiguous block",
    "operations to native targets emulated: accumulating kinds (one atomicity domain)",
    "operations to native targets emulated: the target registered no memory (dynamic window, "
    "empty part, registration refused)",
    "operations to native targets emulated: MANIFOLD_RMA_NATIVE=0"};

/* One operation in flight. */
struct nat_op {
    mf_fabric_done n_done; /* first */
    mf_win *n_win;
    int n_target;
    mf_request *n_user;
};

static void nat_publish(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    if (mf_t_category("rma", "one-sided communication", NULL) < 0)
        return;
    for (int i = 0; i < NAT_N; i++)
        mf_t_pvar_register(&(mf_t_pvar_desc){.name = nat_name[i],
                                             .desc = nat_desc[i],
                                             .category = "rma",
                                             .var_class = MPI_T_PVAR_CLASS_COUNTER,
                                             .datatype = MPI_UNSIGNED_LONG_LONG,
                                             .verbosity = MPI_T_VERBOSITY_USER_DETAIL,
                                             .counter = &nat_count[i]});
}

static bool nat_capable(const mf_fabric *f)
{
    return f && f->ops->size >= sizeof(mf_fabric_ops) && f->ops->rma_key && f->ops->rput &&
           f->ops->rget;
}

/* Names an instance in the exchange (FNV-1a of its name; 0 is no instance). */
static uint64_t nat_tag(const mf_fabric *f)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = f->iname; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h | 1;
}

int mf_rma_native_open(mf_win *w)
{
    mf_comm *c = w->w_comm;
    int n = c->c_size;
    mf_fabric *mine = NULL;
    bool several = false;
    for (int i = 0; i < n; i++) {
        mf_fabric *f = mf_comm_fabric(c, mf_comm_peer(c, i));
        if (i == c->c_rank || mf_rma_direct_to(w, i) || !nat_capable(f))
            continue;
        several |= mine && mine != f;
        mine = f;
    }
    if (several)
        mine = NULL;
    uint64_t desc[2] = {0, 0};
    w->w_nat_off = !mf_config_bool("MANIFOLD_RMA_NATIVE");
    if (mine && !w->w_nat_off && w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC && w->w_size > 0 &&
        mine->ops->rma_key(mine, w->w_base, (size_t)w->w_size, &desc[0]) == MPI_SUCCESS) {
        desc[1] = nat_tag(mine);
        w->w_nat_mine = desc[0];
        w->w_nat_fabric = mine;
    }
    uint64_t *all = calloc(2 * (size_t)n, sizeof *all);
    w->w_nat_f = calloc((size_t)n, sizeof *w->w_nat_f);
    w->w_nat_key = calloc((size_t)n, sizeof *w->w_nat_key);
    /* every rank joins the allgather, out of memory or not, so that none is left waiting */
    int rc = mf_coll_allgather(desc, 2, mf_datatype_get(MPI_UINT64_T), all ? all : desc,
                               all ? 2 : 0, mf_datatype_get(MPI_UINT64_T), c);
    if (!rc && (!all || !w->w_nat_f || !w->w_nat_key))
        rc = mf_error(MPI_ERR_NO_MEM, "RMA: no memory for the window's descriptors");
    for (int i = 0; !rc && i < n; i++) {
        mf_fabric *f = mf_comm_fabric(c, mf_comm_peer(c, i));
        if (i == c->c_rank || mf_rma_direct_to(w, i) || !nat_capable(f))
            continue;
        w->w_nat_f[i] = f;
        w->w_nat_any = true;
        if (all[2 * i + 1] == nat_tag(f))
            w->w_nat_key[i] = all[2 * i];
    }
    free(all);
    if (w->w_nat_any)
        nat_publish();
    return rc;
}

void mf_rma_native_free(mf_win *w)
{
    uint64_t any = 0;
    for (int i = 0; i < NAT_N; i++)
        any |= w->w_nat_n[i];
    if (any && strcmp(mf_config_str("MANIFOLD_REPORT"), "fabrics") == 0)
        mf_info(
            "rma: window \"%s\" rank %d: %llu native puts, %llu native gets; fell back to "
            "emulation: %llu non-contiguous, %llu accumulating, %llu without registration, %llu "
            "turned off (MANIFOLD_RMA_NATIVE=0)",
            w->w_name, w->w_comm ? w->w_comm->c_rank : -1, (unsigned long long)w->w_nat_n[NAT_PUT],
            (unsigned long long)w->w_nat_n[NAT_GET], (unsigned long long)w->w_nat_n[NAT_FB_LAYOUT],
            (unsigned long long)w->w_nat_n[NAT_FB_ACC],
            (unsigned long long)w->w_nat_n[NAT_FB_NOKEY],
            (unsigned long long)w->w_nat_n[NAT_FB_OFF]);
    if (w->w_nat_fabric)
        w->w_nat_fabric->ops->rkey_release(w->w_nat_fabric, w->w_nat_mine);
    free(w->w_nat_f);
    free(w->w_nat_key);
}

static void nat_count_one(mf_win *w, int what)
{
    mf_t_count_serial(&nat_count[what], 1);
    w->w_nat_n[what]++;
}

static void nat_done(mf_fabric_done *d, int status)
{
    struct nat_op *op = (struct nat_op *)d;
    mf_win *w = op->n_win;
    w->w_pending[op->n_target]--;
    w->w_nat_inflight--;
    if (status && !w->w_nat_err)
        w->w_nat_err = status;
    if (op->n_user)
        mf_request_end(op->n_user, status);
    free(op);
}

int mf_rma_native_op(mf_win *w, const mf_rma_args *a, size_t bytes, mf_request **req)
{
    mf_fabric *f = w->w_nat_f[a->target];
    bool put = a->kind == MF_RMA_PUT;
    if (w->w_nat_off) {
        nat_count_one(w, NAT_FB_OFF);
        return MF_RMA_NATIVE_NO;
    }
    if (a->kind != MF_RMA_PUT && a->kind != MF_RMA_GET) {
        nat_count_one(w, NAT_FB_ACC);
        return MF_RMA_NATIVE_NO;
    }
    mf_datatype *ldt = put ? a->origin_dt : a->result_dt;
    const struct mf_datatype_public *li = mf_datatype_info(ldt),
                                    *ti = mf_datatype_info(a->target_dt);
    /* one block: contiguous, and its size is its true extent (no holes at the ends) */
    bool ok =
        ti->dt_contig && li->dt_contig &&
        (bytes == 0 ||
         ((MPI_Aint)(bytes / (size_t)a->target_count) == ti->dt_extent &&
          (MPI_Aint)(bytes / (size_t)(put ? a->origin_count : a->result_count)) == li->dt_extent));
    if (!ok) {
        nat_count_one(w, NAT_FB_LAYOUT);
        return MF_RMA_NATIVE_NO;
    }
    if (!w->w_nat_key[a->target]) {
        nat_count_one(w, NAT_FB_NOKEY);
        return MF_RMA_NATIVE_NO;
    }
    struct nat_op *op = calloc(1, sizeof *op);
    if (!op)
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for an operation");
    op->n_done.fd_fn = nat_done;
    op->n_win = w;
    op->n_target = a->target;
    if (req) {
        if (!(op->n_user = mf_request_new(MF_REQ_COLL, w->w_comm))) {
            free(op);
            return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a request");
        }
        mf_request_hold(op->n_user);
        *req = op->n_user;
    }
    char *local = (char *)(put ? (void *)(uintptr_t)a->origin : a->result) + li->dt_true_lb;
    struct iovec v = {local, bytes};
    size_t off = (size_t)(a->target_disp * w->w_units[a->target] + ti->dt_true_lb);
    int peer = mf_comm_peer(w->w_comm, a->target);
    uint64_t key = w->w_nat_key[a->target];
    w->w_pending[a->target]++;
    w->w_nat_inflight++;
    int rc = put ? f->ops->rput(f, peer, key, off, &v, 1, bytes, &op->n_done)
                 : f->ops->rget(f, peer, key, off, &v, 1, bytes, &op->n_done);
    nat_count_one(w, put ? NAT_PUT : NAT_GET);
    if (rc == MF_FABRIC_PENDING)
        return MPI_SUCCESS;
    /* done at once, or failed: nothing will call done */
    int err = rc == MF_FABRIC_DONE ? MPI_SUCCESS : rc;
    nat_done(&op->n_done, err);
    return err;
}
