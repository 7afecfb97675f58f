/*
 * construct.c — the type constructors as layout operations. Each builds a finished, unregistered
 * type from existing ones (which need not be committed); src/api/datatype.c checks arguments,
 * records the contents and registers the result.
 *
 * Bounds follow MPI-4.0 §5.1: a constructor's lb/ub are the extremes of its copies' lb/ub,
 * where explicit bounds (resized types, MPI_LB/MPI_UB) win over those of data and stay explicit
 * (see dt_lb_sticky in dt_internal.h). Struct adds the "epsilon" padding — ub rounded up to the largest alignment of its basic
 * types — unless some member carries explicit bounds (resized types, MPI_LB/MPI_UB), as the
 * C compiler does for the matching struct and as MPICH does. Subarray and darray are grids of
 * per-dimension blocks, resized to lb 0 and the extent of the whole array.
 */
#include <stdlib.h>

#include "core/error.h"
#include "datatype/dt_internal.h"

static int mf_dt_done(mf_datatype *dt, int rc, mf_datatype **out)
{
    if (!rc)
        rc = mf_dt_finish(dt);
    if (rc) {
        mf_dt_destroy(dt);
        return rc;
    }
    *out = dt;
    return MPI_SUCCESS;
}

static mf_datatype *mf_dt_alloc(int *rc)
{
    mf_datatype *dt = mf_dt_new();
    *rc = dt ? MPI_SUCCESS : mf_error(MPI_ERR_NO_MEM, "datatype: out of memory");
    return dt;
}

int mf_dt_build_contiguous(const mf_datatype *old, size_t count, mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    rc = mf_dt_append(dt, old, 0, 1, 0, count, old->pub.dt_extent);
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_hvector(const mf_datatype *old, size_t count, size_t blen, MPI_Aint stride,
                        mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    rc = mf_dt_append(dt, old, 0, count, stride, blen, old->pub.dt_extent);
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_hindexed(const mf_datatype *old, size_t count, const MPI_Count *blens, size_t blen,
                         const MPI_Aint *disps, mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    for (size_t i = 0; i < count && !rc; i++)
        rc = mf_dt_append(dt, old, disps[i], 1, 0, blens ? (size_t)blens[i] : blen,
                          old->pub.dt_extent);
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_struct(size_t count, const MPI_Count *blens, const MPI_Aint *disps,
                       mf_datatype *const *types, mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    for (size_t i = 0; i < count && !rc; i++) {
        MPI_Datatype h = types[i]->pub.dt_handle;
        if (h == MPI_LB || h == MPI_UB) {
            /* deprecated markers: explicit bounds at this displacement */
            if (blens[i] && h == MPI_LB)
                mf_dt_bound_lb(dt, disps[i], true);
            else if (blens[i])
                mf_dt_bound_ub(dt, disps[i], true);
            continue;
        }
        rc = mf_dt_append(dt, types[i], disps[i], 1, 0, (size_t)blens[i], types[i]->pub.dt_extent);
    }
    if (rc)
        return mf_dt_done(dt, rc, out);
    if (!dt->dt_lb_sticky && !dt->dt_ub_sticky && dt->dt_align > 1 && dt->dt_have_bounds) {
        MPI_Aint a = (MPI_Aint)dt->dt_align, ext = dt->dt_ub - dt->pub.dt_lb;
        if (ext % a)
            dt->dt_ub += a - ext % a;
    }
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_resized(const mf_datatype *old, MPI_Aint lb, MPI_Aint extent, mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    rc = mf_dt_append(dt, old, 0, 1, 0, 1, 0);
    mf_dt_set_bounds(dt, lb, lb + extent);
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_dup(const mf_datatype *old, mf_datatype **out)
{
    int rc;
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (!dt)
        return rc;
    rc = mf_dt_append(dt, old, 0, 1, 0, 1, 0); /* same bounds, as explicit as old's */
    return mf_dt_done(dt, rc, out);
}

int mf_dt_build_grid(const mf_datatype *old, int ndims, const struct mf_dt_dim *dims, int order,
                     mf_datatype **out)
{
    const mf_datatype *inner = old;
    MPI_Aint stride = old->pub.dt_extent;
    int rc = MPI_SUCCESS;
    mf_datatype *t = NULL;
    for (int k = 0; k < ndims; k++) {
        /* fastest-varying dimension first */
        const struct mf_dt_dim *d = &dims[order == MPI_ORDER_C ? ndims - 1 - k : k];
        t = mf_dt_alloc(&rc);
        if (!t)
            break;
        for (size_t b = 0; b < d->d_nblocks && !rc; b++)
            rc = mf_dt_append(t, inner, (MPI_Aint)d->d_starts[b] * stride, 1, 0,
                              (size_t)d->d_lens[b], stride);
        if (!rc)
            rc = mf_dt_finish(t);
        if (inner != old)
            mf_dt_destroy((mf_datatype *)inner);
        inner = t;
        if (rc)
            break;
        stride *= (MPI_Aint)d->d_gsize;
    }
    if (rc) {
        if (inner != old)
            mf_dt_destroy((mf_datatype *)inner);
        return rc;
    }
    /* resize the grid to the whole array */
    mf_datatype *dt = mf_dt_alloc(&rc);
    if (dt) {
        rc = mf_dt_append(dt, inner, 0, 1, 0, 1, 0);
        mf_dt_set_bounds(dt, 0, stride);
    }
    if (inner != old)
        mf_dt_destroy((mf_datatype *)inner);
    if (!dt)
        return rc;
    return mf_dt_done(dt, rc, out);
}

int mf_dt_darray_dim(MPI_Count gsize, int distrib, int darg, int psize, int coord,
                     struct mf_dt_dim *d, const char *fn, int i)
{
    d->d_gsize = gsize;
    MPI_Count b, nblocks;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1)
            return mf_error(MPI_ERR_ARG,
                            "%s: dimension %d is MPI_DISTRIBUTE_NONE but "
                            "array_of_psizes[%d]=%d is not 1",
                            fn, i, i, psize);
        b = gsize;
        nblocks = 1;
        break;
    case MPI_DISTRIBUTE_BLOCK:
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (b <= 0 || b * psize < gsize)
            return mf_error(MPI_ERR_ARG,
                            "%s: array_of_dargs[%d]=%d is too small to cover "
                            "array_of_gsizes[%d]=%ld with %d processes",
                            fn, i, darg, i, (long)gsize, psize);
        nblocks = 1;
        break;
    case MPI_DISTRIBUTE_CYCLIC:
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (b <= 0)
            return mf_error(MPI_ERR_ARG, "%s: array_of_dargs[%d]=%d must be positive", fn, i, darg);
        nblocks = (gsize + b * psize - 1) / (b * psize);
        break;
    default:
        return mf_error(MPI_ERR_ARG, "%s: array_of_distribs[%d]=%d is not a distribution", fn, i,
                        distrib);
    }
    d->d_starts = malloc((size_t)(nblocks + 1) * sizeof *d->d_starts);
    d->d_lens = malloc((size_t)(nblocks + 1) * sizeof *d->d_lens);
    if (!d->d_starts || !d->d_lens)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    d->d_nblocks = 0;
    MPI_Count step = distrib == MPI_DISTRIBUTE_CYCLIC ? b * psize : 0;
    for (MPI_Count k = 0; k < nblocks; k++) {
        MPI_Count s = (MPI_Count)coord * b + k * step;
        if (s >= gsize)
            break;
        d->d_starts[d->d_nblocks] = s;
        d->d_lens[d->d_nblocks] = gsize - s < b ? gsize - s : b;
        d->d_nblocks++;
    }
    return MPI_SUCCESS;
}
