/*
 * layout.c — building a type's runs (see dt_internal.h for the representation).
 *
 * Runs arrive in stream order and are merged greedily with the last one: adjacent single pieces
 * join, equal pieces at a constant distance become one strided run, and strided runs that
 * continue each other join. Merging never changes the byte sequence a list describes, so any
 * greedy choice is correct; it only affects how compact the list is.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "datatype/dt_internal.h"

static MPI_Aint mf_dt_min(MPI_Aint a, MPI_Aint b)
{
    return a < b ? a : b;
}
static MPI_Aint mf_dt_max(MPI_Aint a, MPI_Aint b)
{
    return a > b ? a : b;
}

mf_datatype *mf_dt_new(void)
{
    mf_datatype *dt = calloc(1, sizeof *dt);
    if (dt) {
        dt->dt_index = -1;
        dt->pub.dt_handle = MPI_DATATYPE_NULL;
    }
    return dt;
}

/* Start of the last piece of a run. */
static MPI_Aint mf_dt_run_last(const struct mf_dt_run *r)
{
    return r->r_off + (MPI_Aint)(r->r_n - 1) * r->r_stride;
}

static void mf_dt_normalize(struct mf_dt_run *r)
{
    if (r->r_n > 1 && r->r_stride == (MPI_Aint)r->r_len) {
        r->r_len *= r->r_n;
        r->r_n = 1;
    }
    if (r->r_n == 1)
        r->r_stride = 0;
}

/* Tries to fold b into a (b follows a in the stream). May leave a remainder in *rest (the last
 * piece of a split off and joined with b): returns 0 = not merged, 1 = merged, 2 = merged with
 * *rest to append. */
static int mf_dt_merge(struct mf_dt_run *a, const struct mf_dt_run *b, struct mf_dt_run *rest)
{
    if (a->r_n == 1 && b->r_n == 1) {
        if (a->r_off + (MPI_Aint)a->r_len == b->r_off) {
            a->r_len += b->r_len;
            return 1;
        }
        if (a->r_len == b->r_len) {
            a->r_stride = b->r_off - a->r_off;
            a->r_n = 2;
            return 1;
        }
        return 0;
    }
    if (b->r_n == 1 && a->r_len == b->r_len &&
        b->r_off == a->r_off + (MPI_Aint)a->r_n * a->r_stride) {
        a->r_n++;
        return 1;
    }
    if (b->r_n == 1 && mf_dt_run_last(a) + (MPI_Aint)a->r_len == b->r_off) {
        /* b continues a's last piece: that piece leaves the pattern and grows */
        *rest = (struct mf_dt_run){mf_dt_run_last(a), 0, a->r_len + b->r_len, 1, b->r_tag};
        a->r_n--;
        mf_dt_normalize(a);
        return 2;
    }
    if (a->r_n == 1 && a->r_len == b->r_len && a->r_off + b->r_stride == b->r_off) {
        a->r_stride = b->r_stride;
        a->r_n = b->r_n + 1;
        return 1;
    }
    if (a->r_len == b->r_len && a->r_stride == b->r_stride &&
        b->r_off == a->r_off + (MPI_Aint)a->r_n * a->r_stride) {
        a->r_n += b->r_n;
        return 1;
    }
    return 0;
}

static int mf_dt_push(struct mf_dt_run **runs, size_t *n, size_t *cap, struct mf_dt_run run,
                      bool any_tag)
{
    if (!run.r_len || !run.r_n)
        return MPI_SUCCESS;
    mf_dt_normalize(&run);
    if (*n) {
        struct mf_dt_run *a = &(*runs)[*n - 1];
        if (a->r_tag == run.r_tag || any_tag) {
            int tag = a->r_tag == run.r_tag ? run.r_tag : MF_DT_TAG_MIXED;
            struct mf_dt_run rest;
            int m = mf_dt_merge(a, &run, &rest);
            if (m == 1) {
                a->r_tag = tag;
                return MPI_SUCCESS;
            }
            if (m == 2) {
                rest.r_tag = tag;
                run = rest;
            }
        }
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        struct mf_dt_run *r = realloc(*runs, nc * sizeof *r);
        if (!r)
            return mf_error(MPI_ERR_NO_MEM, "datatype: out of memory for %zu runs", nc);
        *runs = r;
        *cap = nc;
    }
    (*runs)[(*n)++] = run;
    return MPI_SUCCESS;
}

int mf_dt_emit(mf_datatype *dt, struct mf_dt_run run)
{
    return mf_dt_push(&dt->dt_runs, &dt->dt_nruns, &dt->dt_cap, run, false);
}

/* The builder's lb/ub from what it has seen: an explicit bound wins over the data's; a side
 * with neither takes the other side's value (a type of one marker has extent 0). */
static void mf_dt_settle_bounds(mf_datatype *dt)
{
    bool have_lb = dt->dt_lb_sticky || dt->dt_have_nat_lb;
    bool have_ub = dt->dt_ub_sticky || dt->dt_have_nat_ub;
    MPI_Aint lb = dt->dt_lb_sticky ? dt->pub.dt_lb : dt->dt_nat_lb;
    MPI_Aint ub = dt->dt_ub_sticky ? dt->dt_ub : dt->dt_nat_ub;
    dt->pub.dt_lb = have_lb ? lb : ub;
    dt->dt_ub = have_ub ? ub : lb;
    dt->dt_have_bounds = have_lb || have_ub;
}

void mf_dt_bound_lb(mf_datatype *dt, MPI_Aint at, bool sticky)
{
    if (sticky) {
        dt->pub.dt_lb = dt->dt_lb_sticky ? mf_dt_min(dt->pub.dt_lb, at) : at;
        dt->dt_lb_sticky = true;
    } else {
        dt->dt_nat_lb = dt->dt_have_nat_lb ? mf_dt_min(dt->dt_nat_lb, at) : at;
        dt->dt_have_nat_lb = true;
    }
    mf_dt_settle_bounds(dt);
}

void mf_dt_bound_ub(mf_datatype *dt, MPI_Aint at, bool sticky)
{
    if (sticky) {
        dt->dt_ub = dt->dt_ub_sticky ? mf_dt_max(dt->dt_ub, at) : at;
        dt->dt_ub_sticky = true;
    } else {
        dt->dt_nat_ub = dt->dt_have_nat_ub ? mf_dt_max(dt->dt_nat_ub, at) : at;
        dt->dt_have_nat_ub = true;
    }
    mf_dt_settle_bounds(dt);
}

void mf_dt_set_bounds(mf_datatype *dt, MPI_Aint lb, MPI_Aint ub)
{
    dt->dt_lb_sticky = dt->dt_ub_sticky = false;
    mf_dt_bound_lb(dt, lb, true);
    mf_dt_bound_ub(dt, ub, true);
}

int mf_dt_append(mf_datatype *dt, const mf_datatype *old, MPI_Aint disp, size_t count,
                 MPI_Aint block_stride, size_t blen, MPI_Aint elem_stride)
{
    if (!count || !blen)
        return MPI_SUCCESS;
    const struct mf_datatype_public *o = &old->pub;

    /* bounds: the extremes of the copies' lb/ub, explicit ones apart (see dt_lb_sticky) */
    MPI_Aint span_b = (MPI_Aint)(blen - 1) * elem_stride;
    MPI_Aint span_c = (MPI_Aint)(count - 1) * block_stride;
    mf_dt_bound_lb(dt, disp + mf_dt_min(0, span_c) + mf_dt_min(0, span_b) + o->dt_lb,
                   old->dt_lb_sticky);
    mf_dt_bound_ub(dt, disp + mf_dt_max(0, span_c) + mf_dt_max(0, span_b) + o->dt_lb + o->dt_extent,
                   old->dt_ub_sticky);
    if (old->dt_align > dt->dt_align)
        dt->dt_align = old->dt_align;
    dt->pub.dt_size += count * blen * o->dt_size;
    dt->dt_nbasic += (MPI_Count)(count * blen) * old->dt_nbasic;
    if (o->dt_size) {
        if (!dt->dt_basic)
            dt->dt_basic = old->dt_basic;
        else if (dt->dt_basic != old->dt_basic)
            dt->dt_basic = MPI_DATATYPE_NULL;
    }

    if (!old->dt_nruns)
        return MPI_SUCCESS;
    const struct mf_dt_run *r = old->dt_runs;
    if (old->dt_nruns == 1 && r->r_n == 1) {
        /* one piece per copy: a block is one run, and blocks of one piece are one run */
        if (blen == 1 || elem_stride == (MPI_Aint)r->r_len)
            return mf_dt_emit(dt, (struct mf_dt_run){disp + r->r_off, block_stride, r->r_len * blen,
                                                     count, r->r_tag});
        if (count == 1)
            return mf_dt_emit(
                dt, (struct mf_dt_run){disp + r->r_off, elem_stride, r->r_len, blen, r->r_tag});
    }
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < blen; j++) {
            MPI_Aint shift = disp + (MPI_Aint)i * block_stride + (MPI_Aint)j * elem_stride;
            for (size_t k = 0; k < old->dt_nruns; k++) {
                struct mf_dt_run run = r[k];
                run.r_off += shift;
                int rc = mf_dt_emit(dt, run);
                if (rc)
                    return rc;
            }
        }
    }
    return MPI_SUCCESS;
}

int mf_dt_finish(mf_datatype *dt)
{
    struct mf_datatype_public *p = &dt->pub;
    if (!dt->dt_have_bounds)
        p->dt_lb = dt->dt_ub = 0;
    p->dt_extent = dt->dt_ub - p->dt_lb;
    if (!dt->dt_basic)
        dt->dt_basic = MPI_DATATYPE_NULL;

    MPI_Aint tlo = 0, thi = 0;
    dt->dt_ext32_size = 0;
    for (size_t i = 0; i < dt->dt_nruns; i++) {
        const struct mf_dt_run *r = &dt->dt_runs[i];
        MPI_Aint span = (MPI_Aint)(r->r_n - 1) * r->r_stride;
        MPI_Aint lo = r->r_off + mf_dt_min(0, span),
                 hi = r->r_off + mf_dt_max(0, span) + (MPI_Aint)r->r_len;
        tlo = i ? mf_dt_min(tlo, lo) : lo;
        thi = i ? mf_dt_max(thi, hi) : hi;
        const struct mf_dt_builtin_info *bi = mf_dt_builtin_info(r->r_tag);
        if (bi && bi->bi_size)
            dt->dt_ext32_size += r->r_len / bi->bi_size * r->r_n * bi->bi_ext32;
    }
    p->dt_true_lb = tlo;
    p->dt_true_extent = thi - tlo;

    /* fast runs: merge across basic types; keep a separate list only if that helps */
    dt->dt_fast = dt->dt_runs;
    dt->dt_nfast = dt->dt_nruns;
    if (dt->dt_nruns > 1) {
        struct mf_dt_run *f = NULL;
        size_t n = 0, cap = 0;
        for (size_t i = 0; i < dt->dt_nruns; i++) {
            int rc = mf_dt_push(&f, &n, &cap, dt->dt_runs[i], true);
            if (rc) {
                free(f);
                return rc;
            }
        }
        if (n < dt->dt_nruns) {
            dt->dt_fast = f;
            dt->dt_nfast = n;
        } else {
            free(f);
        }
    }
    free(dt->dt_prefix);
    dt->dt_prefix = malloc((dt->dt_nfast + 1) * sizeof *dt->dt_prefix);
    if (!dt->dt_prefix)
        return mf_error(MPI_ERR_NO_MEM, "datatype: out of memory");
    dt->dt_prefix[0] = 0;
    size_t pieces = 0;
    for (size_t i = 0; i < dt->dt_nfast; i++) {
        dt->dt_prefix[i + 1] = dt->dt_prefix[i] + dt->dt_fast[i].r_len * dt->dt_fast[i].r_n;
        pieces += dt->dt_fast[i].r_n;
    }
    p->dt_piece_avg = pieces ? p->dt_size / pieces : 0;

    p->dt_contig = dt->dt_nfast == 1 && dt->dt_fast[0].r_n == 1 &&
                   (MPI_Aint)p->dt_size == p->dt_extent && dt->dt_fast[0].r_off == p->dt_true_lb;
    return MPI_SUCCESS;
}

void mf_dt_destroy(mf_datatype *dt)
{
    if (!dt)
        return;
    if (dt->dt_fast != dt->dt_runs)
        free(dt->dt_fast);
    free(dt->dt_runs);
    free(dt->dt_prefix);
    mf_dt_contents_free(dt->dt_contents);
    free(dt);
}
