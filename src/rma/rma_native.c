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
 * contiguous block; accumulating operations (accumulate, get_accumulate, fetch-and-op,
 * compare-and-swap) on the window's native element types, any layout (below). What falls back
 * to the emulation, counted per reason in MPI_T pvars (rma_native_*) and listed per window by
 * MANIFOLD_REPORT=fabrics at MPI_Win_free, never silently: puts and gets with non-contiguous
 * datatypes; accumulating operations on a window without native atomics or on a type that is
 * not one of its native ones; a target with no descriptor (dynamic window, empty part,
 * registration refused); every operation to a would-be native target under
 * MANIFOLD_RMA_NATIVE=0.
 *
 * Atomics and the atomicity domain. MPI makes concurrent accumulates to one location atomic
 * when they use the same basic type (and, by default, the same op or MPI_NO_OP). The fabric's
 * atomics are atomic only among themselves: not with the emulation (the target's CPU applying
 * an update under its slot lock) nor with the direct back end (a same-host origin's CPU). So a
 * location must be updated by one mechanism only, whoever the origin. The choice is therefore
 * made once per window and element type, identically on every rank, never per operation:
 *   - the window qualifies only if every rank reaches every other rank natively over the one
 *     instance, no rank has a same-host (direct) target besides itself, the fabric takes the own
 *     rank as a target too (an origin's accumulates on its own part go through the fabric), and
 *     every rank with memory registered it;
 *   - an element type (int8 .. uint64, float, double) is native only if the fabric does, plain
 *     and fetching, every predefined op MPI defines on it, MPI_REPLACE, MPI_NO_OP and
 *     compare-and-swap: then no operation on that type can be forced back to the emulation
 *     (any layout goes as one fabric atomic per contiguous piece, element-wise atomic as MPI
 *     asks), and pair types (MINLOC/MAXLOC) and the rest stay emulated as a whole;
 *   - each rank computes its mask of such types and the window ANDs them (carried in the
 *     descriptor allgather), so all origins decide alike.
 * Order: the fabric starts atomics to one peer in issue order (fabric.h, ratomic), which keeps
 * MPI's default accumulate_ordering.
 *
 * Flush and the epochs treat a native atomic like any native operation (w_pending).
 *
 * Completion: each operation counts in w_pending[target] (and w_nat_inflight) until the fabric
 * calls its `done` — remote completion for puts — so the emulation's flush, and with it fence,
 * PSCW complete and unlock, wait for native operations too. Synchronisation stays emulated
 * (the lock manager, served by the target's progress source or progress thread). Providers with
 * manual progress (tcp;ofi_rxm, shm) move the bytes of a native operation only while the target
 * polls its completion queue, i.e. inside any MPI call or with MANIFOLD_ASYNC_PROGRESS=1.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/op.h"
#include "coll/op_kernels.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "fabric/fabric.h"
#include "rma/rma.h"
#include "tool/mpit.h"

enum {
    NAT_PUT,
    NAT_GET,
    NAT_FB_LAYOUT,
    NAT_FB_ACC,
    NAT_FB_NOKEY,
    NAT_FB_OFF,
    NAT_ATOMIC,
    NAT_FB_ATYPE,
    NAT_N
};
static mf_t_counter nat_count[NAT_N];
static const mf_t_counter_def nat_def[NAT_N] = {
    [NAT_PUT] = {"rma_native_puts", "one-sided puts written by the fabric (native back end)",
                 &nat_count[NAT_PUT]},
    [NAT_GET] = {"rma_native_gets", "one-sided gets read by the fabric (native back end)",
                 &nat_count[NAT_GET]},
    [NAT_FB_LAYOUT] =
        {"rma_native_fallback_layout",
         "operations to native targets emulated: a datatype is not one contiguous block",
         &nat_count[NAT_FB_LAYOUT]},
    [NAT_FB_ACC] =
        {"rma_native_fallback_acc",
         "accumulating operations emulated: the window has no native atomics (why: MANIFOLD_REPORT="
         "fabrics)",
         &nat_count[NAT_FB_ACC]},
    [NAT_FB_NOKEY] =
        {"rma_native_fallback_nokey",
         "operations to native targets emulated: the target registered no memory (dynamic window, "
         "empty part, registration refused)",
         &nat_count[NAT_FB_NOKEY]},
    [NAT_FB_OFF] = {"rma_native_fallback_off",
                    "operations to native targets emulated: MANIFOLD_RMA_NATIVE=0",
                    &nat_count[NAT_FB_OFF]},
    [NAT_ATOMIC] =
        {"rma_native_atomics",
         "accumulate, get_accumulate, fetch-and-op and compare-and-swap done by fabric atomics",
         &nat_count[NAT_ATOMIC]},
    [NAT_FB_ATYPE] =
        {"rma_native_fallback_atomic_type",
         "accumulating operations emulated: a type the fabric lacks some atomic op for (the whole "
         "type stays emulated)",
         &nat_count[NAT_FB_ATYPE]},
};

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
    mf_t_counters_register("rma", MPI_T_VERBOSITY_USER_DETAIL, nat_def, NAT_N);
}

static bool nat_capable(const mf_fabric *f)
{
    return f && f->ops->rma_key && f->ops->rput && f->ops->rget;
}

/* Names an instance in the exchange (FNV-1a of its name; 0 is no instance). */
static uint64_t nat_tag(const mf_fabric *f)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = f->iname; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h | 1;
}

static bool nat_atomic_capable(const mf_fabric *f)
{
    return nat_capable(f) && f->ops->atomic_max && f->ops->ratomic;
}

/* The MPI ops (op_kernels.h indices) as fabric atomics; -1: none. */
static int nat_aop(int op_index)
{
    static const signed char map[MF_OP_BUILTIN_COUNT] = {
        [0] = -1,
        [MF_OP_MAX] = MF_AOP_MAX,
        [MF_OP_MIN] = MF_AOP_MIN,
        [MF_OP_SUM] = MF_AOP_SUM,
        [MF_OP_PROD] = MF_AOP_PROD,
        [MF_OP_LAND] = MF_AOP_LAND,
        [MF_OP_BAND] = MF_AOP_BAND,
        [MF_OP_LOR] = MF_AOP_LOR,
        [MF_OP_BOR] = MF_AOP_BOR,
        [MF_OP_LXOR] = MF_AOP_LXOR,
        [MF_OP_BXOR] = MF_AOP_BXOR,
        [MF_OP_MINLOC] = -1,
        [MF_OP_MAXLOC] = -1,
        [MF_OP_REPLACE] = MF_AOP_WRITE,
        [MF_OP_NO_OP] = MF_AOP_READ,
    };
    return op_index > 0 && op_index < MF_OP_BUILTIN_COUNT ? map[op_index] : -1;
}

/* The op kernels' kinds as fabric element types; -1: none. */
static int nat_atype_of_kind(int kind)
{
    switch (kind) {
    case MF_OK_I8:
        return MF_AT_I8;
    case MF_OK_U8:
        return MF_AT_U8;
    case MF_OK_I16:
        return MF_AT_I16;
    case MF_OK_U16:
        return MF_AT_U16;
    case MF_OK_I32:
        return MF_AT_I32;
    case MF_OK_U32:
        return MF_AT_U32;
    case MF_OK_I64:
        return MF_AT_I64;
    case MF_OK_U64:
        return MF_AT_U64;
    case MF_OK_FLT:
        return MF_AT_FLOAT;
    case MF_OK_DBL:
        return MF_AT_DOUBLE;
    default:
        return -1;
    }
}

/* The element types whose every atomic MPI may ask for f does (see the head of the file). */
static uint32_t nat_atomic_types(mf_fabric *f)
{
    static const int kinds[] = {MF_OK_I8,  MF_OK_U8,  MF_OK_I16, MF_OK_U16, MF_OK_I32,
                                MF_OK_U32, MF_OK_I64, MF_OK_U64, MF_OK_FLT, MF_OK_DBL};
    uint32_t mask = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int t = nat_atype_of_kind(kinds[k]);
        bool ok = f->ops->atomic_max(f, MF_AOP_READ, t, true) &&
                  f->ops->atomic_max(f, MF_AOP_CSWAP, t, true);
        for (int op = MF_OP_MAX; ok && op < MF_OP_BUILTIN_COUNT; op++) {
            int aop = nat_aop(op);
            if (aop < 0 || aop == MF_AOP_READ ||
                (op != MF_OP_REPLACE && !mf_op_kernel_get(op, (enum mf_op_kind)kinds[k])))
                continue; /* not defined on the type by MPI: cannot be asked for */
            ok = f->ops->atomic_max(f, aop, t, false) && f->ops->atomic_max(f, aop, t, true);
        }
        if (ok)
            mask |= 1u << t;
    }
    return mask;
}

int mf_rma_native_open(mf_win *w)
{
    mf_comm *c = w->w_comm;
    int n = c->c_size;
    mf_fabric *mine = NULL;
    bool several = false, all_native = true;
    for (int i = 0; i < n; i++) {
        mf_fabric *f = mf_comm_fabric(c, mf_comm_peer(c, i));
        if (i == c->c_rank)
            continue;
        if (mf_rma_direct_to(w, i) || !nat_capable(f)) {
            all_native = false;
            continue;
        }
        several |= mine && mine != f;
        mine = f;
    }
    if (several)
        mine = NULL;
    /* per rank: rkey, instance tag, native atomic types (see the head of the file) */
    uint64_t desc[3] = {0, 0, 0};
    w->w_nat_off = !mf_config_bool("MANIFOLD_RMA_NATIVE");
    bool keyed = false;
    if (mine && !w->w_nat_off && w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC && w->w_size > 0 &&
        mine->ops->rma_key(mine, w->w_base, (size_t)w->w_size, &desc[0]) == MPI_SUCCESS) {
        w->w_nat_mine = desc[0];
        w->w_nat_fabric = mine;
        keyed = true;
    }
    if (mine)
        desc[1] = nat_tag(mine);
    w->w_nat_awhy = w->w_nat_off                ? "MANIFOLD_RMA_NATIVE=0"
                    : !all_native || !mine      ? "not every rank reaches every other natively"
                    : !nat_atomic_capable(mine) ? "the fabric has no atomics"
                    : w->w_flavor == MPI_WIN_FLAVOR_DYNAMIC ? "a dynamic window"
                    : w->w_size > 0 && !keyed               ? "a rank could not register its part"
                                                            : NULL;
    if (!w->w_nat_awhy && !(desc[2] = nat_atomic_types(mine)))
        w->w_nat_awhy = "the fabric has no type with every atomic (its report says why)";
    if (w->w_nat_awhy)
        desc[2] = 0;
    uint64_t *all = calloc(3 * (size_t)n, sizeof *all);
    w->w_nat_f = calloc((size_t)n, sizeof *w->w_nat_f);
    w->w_nat_key = calloc((size_t)n, sizeof *w->w_nat_key);
    /* every rank joins the allgather, out of memory or not, so that none is left waiting */
    int rc = mf_coll_allgather(desc, 3, mf_datatype_get(MPI_UINT64_T), all ? all : desc,
                               all ? 3 : 0, mf_datatype_get(MPI_UINT64_T), c);
    if (!rc && (!all || !w->w_nat_f || !w->w_nat_key))
        rc = mf_error(MPI_ERR_NO_MEM, "RMA: no memory for the window's descriptors");
    uint64_t amask = rc ? 0 : UINT64_MAX;
    for (int i = 0; !rc && i < n; i++) {
        /* the same on every rank: computed from the gathered descriptors only */
        amask &= all[3 * i + 2];
        if (all[3 * i + 1] != all[1])
            amask = 0;
        mf_fabric *f = mf_comm_fabric(c, mf_comm_peer(c, i));
        if (i == c->c_rank || mf_rma_direct_to(w, i) || !nat_capable(f))
            continue;
        w->w_nat_f[i] = f;
        w->w_nat_any = true;
        if (all[3 * i + 1] == nat_tag(f))
            w->w_nat_key[i] = all[3 * i];
    }
    w->w_nat_amask = (uint32_t)amask;
    if (!w->w_nat_amask && !w->w_nat_awhy)
        w->w_nat_awhy = "another rank cannot take part (its report says why)";
    if (w->w_nat_amask) { /* this rank's desc[2] was not 0: it has `mine` */
        w->w_nat_key[c->c_rank] = w->w_nat_mine;
        w->w_nat_fabric = mine;
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
            "rma: window \"%s\" rank %d: %llu native puts, %llu native gets, %llu native "
            "atomics; fell back to emulation: %llu non-contiguous, %llu accumulating (%s), %llu "
            "accumulating on a type without every atomic, %llu without registration, %llu "
            "turned off (MANIFOLD_RMA_NATIVE=0)",
            w->w_name, w->w_comm ? w->w_comm->c_rank : -1, (unsigned long long)w->w_nat_n[NAT_PUT],
            (unsigned long long)w->w_nat_n[NAT_GET], (unsigned long long)w->w_nat_n[NAT_ATOMIC],
            (unsigned long long)w->w_nat_n[NAT_FB_LAYOUT],
            (unsigned long long)w->w_nat_n[NAT_FB_ACC],
            w->w_nat_amask ? "native atomics on" : w->w_nat_awhy,
            (unsigned long long)w->w_nat_n[NAT_FB_ATYPE],
            (unsigned long long)w->w_nat_n[NAT_FB_NOKEY],
            (unsigned long long)w->w_nat_n[NAT_FB_OFF]);
    if (w->w_nat_fabric && w->w_nat_mine)
        w->w_nat_fabric->ops->rkey_release(w->w_nat_fabric, w->w_nat_mine);
    free(w->w_nat_f);
    free(w->w_nat_key);
}

static void nat_count_one(mf_win *w, int what)
{
    mf_t_count_serial(&nat_count[what], 1);
    w->w_nat_n[what]++;
}

_Static_assert(sizeof(((mf_win *)0)->w_nat_n) / sizeof(uint64_t) >= NAT_N, "w_nat_n too small");

/* An operation to `target` counted in flight (flush waits for it); with `req`, its request. */
static int nat_begin(mf_win *w, int target, mf_request **req, mf_request **user)
{
    *user = NULL;
    if (req) {
        if (!(*user = mf_rma_request_new(w)))
            return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for a request");
        *req = *user;
    }
    w->w_pending[target]++;
    w->w_nat_inflight++;
    return MPI_SUCCESS;
}

static void nat_finish(mf_win *w, int target, mf_request *user, int status)
{
    w->w_pending[target]--;
    w->w_nat_inflight--;
    if (status && !w->w_nat_err)
        w->w_nat_err = status;
    if (user)
        mf_request_end(user, status);
}

static void nat_done(mf_fabric_done *d, int status)
{
    struct nat_op *op = (struct nat_op *)d;
    nat_finish(op->n_win, op->n_target, op->n_user, status);
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
        if (!w->w_nat_amask) /* else mf_rma_native_atomic counted it (NAT_FB_ATYPE) */
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
    int brc = nat_begin(w, a->target, req, &op->n_user);
    if (brc) {
        free(op);
        return brc;
    }
    char *local = (char *)(put ? (void *)(uintptr_t)a->origin : a->result) + li->dt_true_lb;
    struct iovec v = {local, bytes};
    size_t off = (size_t)(a->target_disp * w->w_units[a->target] + ti->dt_true_lb);
    int peer = mf_comm_peer(w->w_comm, a->target);
    uint64_t key = w->w_nat_key[a->target];
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

/* ---- atomics ---- */

/* One accumulating operation: one fabric atomic per contiguous piece of the target layout. */
struct nat_atom {
    mf_win *t_win;
    int t_target;
    mf_request *t_user;
    int t_left;   /* pieces in flight, + 1 while they are being issued */
    int t_status; /* first error */
    void *t_src;  /* the origin data packed here (NULL: used in place) */
    void *t_res;  /* fetched data lands here; unpacked into the user's result when t_res_dt */
    mf_datatype *t_res_dt;
    void *t_res_user;
    MPI_Count t_res_count;
    size_t t_bytes;
};

struct nat_piece {
    mf_fabric_done p_done; /* first */
    struct nat_atom *p_atom;
};

static void nat_atom_end(struct nat_atom *t, int status)
{
    if (status && !t->t_status)
        t->t_status = status;
    if (--t->t_left > 0)
        return;
    if (t->t_res_dt) {
        if (!t->t_status)
            mf_datatype_unpack(t->t_res_dt, t->t_res_user, (size_t)t->t_res_count, 0, t->t_res,
                               t->t_bytes);
        mf_datatype_release(t->t_res_dt);
        free(t->t_res);
    }
    free(t->t_src);
    nat_finish(t->t_win, t->t_target, t->t_user, t->t_status);
    free(t);
}

static void nat_piece_done(mf_fabric_done *d, int status)
{
    struct nat_piece *p = (struct nat_piece *)d;
    struct nat_atom *t = p->p_atom;
    free(p);
    nat_atom_end(t, status);
}

/* Whether count elements of dt are one block of bytes starting at its true lower bound. */
static bool nat_one_block(const mf_datatype *dt, MPI_Count count)
{
    const struct mf_datatype_public *i = mf_datatype_info(dt);
    return i->dt_contig && (count <= 1 || i->dt_extent == (MPI_Aint)i->dt_size);
}

/* Issues the atomic on `bytes` bytes at `off` in the target's part; src/res advance with it. */
static void nat_atom_piece(mf_fabric *f, struct nat_atom *t, int peer, uint64_t key, size_t off,
                           mf_fabric_atomic *x, size_t esz, size_t at, size_t bytes)
{
    struct nat_piece *p = malloc(sizeof *p);
    if (!p) {
        if (!t->t_status)
            t->t_status = mf_error(MPI_ERR_NO_MEM, "RMA: no memory for an atomic");
        return;
    }
    p->p_done.fd_fn = nat_piece_done;
    p->p_atom = t;
    mf_fabric_atomic y = *x;
    y.fa_count = bytes / esz;
    if (y.fa_src)
        y.fa_src = (const char *)y.fa_src + at;
    if (y.fa_result)
        y.fa_result = (char *)y.fa_result + at;
    t->t_left++;
    int rc = f->ops->ratomic(f, peer, key, off, &y, &p->p_done);
    if (rc != MF_FABRIC_PENDING)
        nat_piece_done(&p->p_done, rc == MF_FABRIC_DONE ? MPI_SUCCESS : rc);
}

int mf_rma_native_atomic(mf_win *w, const mf_rma_args *a, size_t bytes, mf_request **req)
{
    mf_fabric *f = w->w_nat_fabric;
    int at = nat_atype_of_kind(mf_op_kind_of(a->target_dt));
    int aop = a->kind == MF_RMA_CAS        ? MF_AOP_CSWAP
              : a->op && a->op->op_builtin ? nat_aop(a->op->op_index)
                                           : -1;
    if (at < 0 || !(w->w_nat_amask & (1u << at)) || aop < 0) {
        nat_count_one(w, NAT_FB_ATYPE);
        return MF_RMA_NATIVE_NO;
    }
    bool fetch = a->kind != MF_RMA_ACC;
    size_t esz = mf_datatype_info(mf_datatype_get(mf_datatype_basic_type(a->target_dt)))->dt_size;
    struct nat_atom *t = calloc(1, sizeof *t);
    if (!t)
        return mf_error(MPI_ERR_NO_MEM, "RMA: no memory for an atomic");
    int rc = nat_begin(w, a->target, req, &t->t_user);
    if (rc) {
        free(t);
        return rc;
    }
    nat_count_one(w, NAT_ATOMIC);
    t->t_win = w;
    t->t_target = a->target;
    t->t_left = 1; /* held while the pieces are issued */
    t->t_bytes = bytes;
    /* accumulate with MPI_NO_OP changes nothing: complete as it is */
    if ((a->kind == MF_RMA_ACC && aop == MF_AOP_READ) || bytes == 0) {
        nat_atom_end(t, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    mf_fabric_atomic x = {.fa_op = aop, .fa_type = at};
    if (aop != MF_AOP_READ) { /* the origin's data, packed unless it is one block already */
        const struct mf_datatype_public *oi = mf_datatype_info(a->origin_dt);
        if (nat_one_block(a->origin_dt, a->origin_count)) {
            x.fa_src = (const char *)a->origin + oi->dt_true_lb;
        } else if ((t->t_src = malloc(bytes))) {
            mf_datatype_pack(a->origin_dt, a->origin, (size_t)a->origin_count, 0, t->t_src, bytes);
            x.fa_src = t->t_src;
        }
    }
    if (aop == MF_AOP_CSWAP) /* one element of a predefined type */
        x.fa_cmp = (const char *)a->compare + mf_datatype_info(a->origin_dt)->dt_true_lb;
    if (fetch) {
        if (nat_one_block(a->result_dt, a->result_count)) {
            x.fa_result = (char *)a->result + mf_datatype_info(a->result_dt)->dt_true_lb;
        } else if ((t->t_res = malloc(bytes))) {
            t->t_res_dt = a->result_dt;
            mf_datatype_retain(a->result_dt);
            t->t_res_user = a->result;
            t->t_res_count = a->result_count;
            x.fa_result = t->t_res;
        }
    }
    if ((aop != MF_AOP_READ && !x.fa_src) || (fetch && !x.fa_result)) {
        nat_atom_end(t,
                     mf_error(MPI_ERR_NO_MEM, "RMA: no memory for %zu bytes of an atomic", bytes));
        return MPI_SUCCESS; /* the flush reports it */
    }
    int peer = mf_comm_peer(w->w_comm, a->target);
    uint64_t key = w->w_nat_key[a->target];
    const struct mf_datatype_public *ti = mf_datatype_info(a->target_dt);
    size_t base = (size_t)(a->target_disp * w->w_units[a->target]);
    if (nat_one_block(a->target_dt, a->target_count)) {
        nat_atom_piece(f, t, peer, key, base + (size_t)ti->dt_true_lb, &x, esz, 0, bytes);
    } else {
        /* element by element atomic, as MPI asks: one atomic per contiguous run */
        static char ref[1];
        for (size_t done = 0; done < bytes && !t->t_status;) {
            struct iovec iov[64];
            size_t got = 0;
            int k =
                mf_datatype_iov(a->target_dt, ref, (size_t)a->target_count, done, iov, 64, &got);
            for (int i = 0; i < k; i++) {
                size_t off = (size_t)((intptr_t)iov[i].iov_base - (intptr_t)ref);
                nat_atom_piece(f, t, peer, key, base + off, &x, esz, done, iov[i].iov_len);
                done += iov[i].iov_len;
            }
            if (!got)
                break;
        }
    }
    nat_atom_end(t, MPI_SUCCESS);
    return MPI_SUCCESS;
}
