/*
 * relayout.c — a type's layout in another data representation, for file views whose data the
 * file holds converted (MPI-4.0 §14.5.1, "external32" and registered representations).
 *
 * In such a file every basic element takes its size in the representation (MPI_LONG is 4 bytes
 * in external32), and the standard rebuilds the etype and filetype accordingly: the constructors
 * that count in elements (contiguous, vector, indexed, indexed_block, subarray, darray) scale
 * with the new extents, while the displacements given in bytes (hvector, hindexed,
 * hindexed_block, struct, resized) are kept as given. mf_datatype_relayout replays a type's
 * recorded constructor arguments (its contents) that way, bottom up, with every predefined type
 * replaced by that many bytes; the result is an unregistered type of bytes whose typemap is the
 * file's.
 */
#include <stdlib.h>

#include "core/error.h"
#include "datatype/dt_internal.h"

int mf_datatype_rep_size(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx, size_t *size)
{
    size_t total = 0;
    for (size_t i = 0; i < dt->dt_nruns; i++) {
        const struct mf_dt_run *r = &dt->dt_runs[i];
        const struct mf_dt_builtin_info *bi = mf_dt_builtin_info(r->r_tag);
        if (!bi || !bi->bi_size)
            continue;
        MPI_Aint one = 0;
        int rc = rep(bi->bi_handle, &one, ctx);
        if (rc)
            return rc;
        total += r->r_len / bi->bi_size * r->r_n * (size_t)one;
    }
    *size = total;
    return MPI_SUCCESS;
}

int mf_datatype_rep_prefix(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx,
                           size_t rep_bytes, size_t *mem_bytes, MPI_Count *items)
{
    size_t rsize = 0;
    int rc = mf_datatype_rep_size(dt, rep, ctx, &rsize);
    if (rc)
        return rc;
    size_t whole = rsize ? rep_bytes / rsize : 0, left = rsize ? rep_bytes % rsize : 0;
    size_t mem = whole * dt->pub.dt_size;
    MPI_Count n = (MPI_Count)whole * dt->dt_nbasic;
    /* The basic elements of the next element that the rest holds whole, in stream order. */
    for (size_t i = 0; left && i < dt->dt_nruns; i++) {
        const struct mf_dt_run *r = &dt->dt_runs[i];
        const struct mf_dt_builtin_info *bi = mf_dt_builtin_info(r->r_tag);
        if (!bi || !bi->bi_size)
            continue;
        MPI_Aint one = 0;
        if ((rc = rep(bi->bi_handle, &one, ctx)))
            return rc;
        size_t have = r->r_len / bi->bi_size * r->r_n, fit = one ? left / (size_t)one : have;
        size_t take = fit < have ? fit : have;
        mem += take * bi->bi_size;
        n += (MPI_Count)take;
        left -= take * (size_t)one;
        if (take < have)
            break;
    }
    *mem_bytes = mem;
    *items = n;
    return MPI_SUCCESS;
}

/* Argument i of the contents as a number: the integers, then the addresses, then the large
 * counts, which is MPI_Type_get_contents' order for every combiner but subarray and darray (a
 * large-count constructor records all its numbers as counts, in the same order). */
static MPI_Count relayout_arg(const struct mf_dt_contents *ct, MPI_Count i)
{
    if (i < ct->ct_ni)
        return ct->ct_ints[i];
    i -= ct->ct_ni;
    if (i < ct->ct_na)
        return ct->ct_aints[i];
    return ct->ct_counts[i - ct->ct_na];
}

static int relayout(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx, mf_datatype **out);

/* A predefined type (or one that stands for one, as the F90 types do): its size in bytes. */
static int relayout_basic(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx,
                          mf_datatype **out)
{
    size_t size = 0;
    int rc = mf_datatype_rep_size(dt, rep, ctx, &size);
    return rc ? rc : mf_dt_build_contiguous(mf_datatype_get(MPI_BYTE), size, out);
}

/* Subarray and darray: the grid again, over the relaid element type. */
static int relayout_grid(const struct mf_dt_contents *ct, const mf_datatype *old, mf_datatype **out)
{
    bool darray = ct->ct_combiner == MPI_COMBINER_DARRAY;
    bool large = ct->ct_nc > 0;
    int ndims = ct->ct_ints[darray ? 2 : 0];
    struct mf_dt_dim *dims = calloc((size_t)ndims, sizeof *dims);
    MPI_Count *nums = calloc(3 * (size_t)ndims, sizeof *nums);
    int rc = dims && nums ? MPI_SUCCESS : mf_error(MPI_ERR_NO_MEM, "datatype: out of memory");
    int order = MPI_ORDER_C;
    if (!rc && !darray) {
        /* ints: ndims, sizes, subsizes, starts, order; or ndims, order and the arrays as counts */
        for (int i = 0; i < 3 * ndims; i++)
            nums[i] = large ? ct->ct_counts[i] : ct->ct_ints[1 + i];
        order = ct->ct_ints[large ? 1 : 1 + 3 * ndims];
        for (int i = 0; i < ndims; i++)
            dims[i] = (struct mf_dt_dim){nums[i], 1, &nums[2 * ndims + i], &nums[ndims + i]};
    } else if (!rc) {
        /* ints: size, rank, ndims, [gsizes,] distribs, dargs, psizes, order */
        const int *p = ct->ct_ints + 3 + (large ? 0 : ndims);
        const int *distribs = p, *dargs = p + ndims, *psizes = p + 2 * ndims;
        order = p[3 * ndims];
        int r = ct->ct_ints[1];
        for (int i = ndims - 1; i >= 0 && !rc; i--) {
            MPI_Count gsize = large ? ct->ct_counts[i] : ct->ct_ints[3 + i];
            rc = mf_dt_darray_dim(gsize, distribs[i], dargs[i], psizes[i], r % psizes[i], &dims[i],
                                  "datatype", i);
            r /= psizes[i];
        }
    }
    if (!rc)
        rc = mf_dt_build_grid(old, ndims, dims, order, out);
    for (int i = 0; darray && dims && i < ndims; i++) {
        free(dims[i].d_starts);
        free(dims[i].d_lens);
    }
    free(dims);
    free(nums);
    return rc;
}

/* Struct: every member relaid (the MPI_LB and MPI_UB markers stay), displacements as given. */
static int relayout_struct(const struct mf_dt_contents *ct, mf_datatype_rep_fn rep, void *ctx,
                           mf_datatype **out)
{
    MPI_Count n = relayout_arg(ct, 0);
    MPI_Count *blens = calloc((size_t)n + 1, sizeof *blens);
    MPI_Aint *disps = calloc((size_t)n + 1, sizeof *disps);
    mf_datatype **types = calloc((size_t)n + 1, sizeof *types);
    int rc =
        blens && disps && types ? MPI_SUCCESS : mf_error(MPI_ERR_NO_MEM, "datatype: out of memory");
    MPI_Count made = 0;
    for (; !rc && made < n; made++) {
        blens[made] = relayout_arg(ct, 1 + made);
        disps[made] = (MPI_Aint)relayout_arg(ct, 1 + n + made);
        MPI_Datatype h = ct->ct_types[made];
        if (h == MPI_LB || h == MPI_UB)
            types[made] = mf_datatype_get(h);
        else
            rc = relayout(mf_datatype_get(h), rep, ctx, &types[made]);
        if (rc)
            break;
    }
    if (!rc)
        rc = mf_dt_build_struct((size_t)n, blens, disps, types, out);
    for (MPI_Count i = 0; types && i < made; i++)
        if (types[i]->pub.dt_handle != MPI_LB && types[i]->pub.dt_handle != MPI_UB)
            mf_dt_destroy(types[i]);
    free(blens);
    free(disps);
    free(types);
    return rc;
}

/* Indexed forms: n, blocklength(s), displacements (in elements, scaled; or in bytes). */
static int relayout_indexed(const struct mf_dt_contents *ct, const mf_datatype *old, bool block,
                            bool bytes, mf_datatype **out)
{
    MPI_Count n = relayout_arg(ct, 0), first = block ? 2 : 1 + n;
    MPI_Count *blens = block ? NULL : calloc((size_t)n + 1, sizeof *blens);
    MPI_Aint *disps = calloc((size_t)n + 1, sizeof *disps);
    if ((!block && !blens) || !disps) {
        free(blens);
        free(disps);
        return mf_error(MPI_ERR_NO_MEM, "datatype: out of memory");
    }
    for (MPI_Count i = 0; i < n; i++) {
        if (!block)
            blens[i] = relayout_arg(ct, 1 + i);
        MPI_Aint d = (MPI_Aint)relayout_arg(ct, first + i);
        disps[i] = bytes ? d : d * old->pub.dt_extent;
    }
    int rc = mf_dt_build_hindexed(old, (size_t)n, blens, block ? (size_t)relayout_arg(ct, 1) : 0,
                                  disps, out);
    free(blens);
    free(disps);
    return rc;
}

static int relayout(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx, mf_datatype **out)
{
    const struct mf_dt_contents *ct = dt->dt_contents;
    if (!ct)
        return relayout_basic(dt, rep, ctx, out);
    int comb = ct->ct_combiner;
    if (comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
        comb == MPI_COMBINER_F90_INTEGER)
        return relayout_basic(dt, rep, ctx, out);
    if (comb == MPI_COMBINER_STRUCT)
        return relayout_struct(ct, rep, ctx, out);
    mf_datatype *old = NULL;
    int rc = relayout(mf_datatype_get(ct->ct_types[0]), rep, ctx, &old);
    if (rc)
        return rc;
    MPI_Aint ext = old->pub.dt_extent;
    switch (comb) {
    case MPI_COMBINER_DUP:
        rc = mf_dt_build_dup(old, out);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = mf_dt_build_contiguous(old, (size_t)relayout_arg(ct, 0), out);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = (MPI_Aint)relayout_arg(ct, 2);
        rc = mf_dt_build_hvector(old, (size_t)relayout_arg(ct, 0), (size_t)relayout_arg(ct, 1),
                                 comb == MPI_COMBINER_VECTOR ? stride * ext : stride, out);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        rc = relayout_indexed(
            ct, old, comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK,
            comb == MPI_COMBINER_HINDEXED || comb == MPI_COMBINER_HINDEXED_BLOCK, out);
        break;
    case MPI_COMBINER_RESIZED:
        rc = mf_dt_build_resized(old, (MPI_Aint)relayout_arg(ct, 0), (MPI_Aint)relayout_arg(ct, 1),
                                 out);
        break;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        rc = relayout_grid(ct, old, out);
        break;
    default:
        rc = mf_error(MPI_ERR_TYPE, "datatype: a type of combiner %d cannot be relaid", comb);
        break;
    }
    mf_dt_destroy(old);
    return rc;
}

int mf_datatype_relayout(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx,
                         mf_datatype **out)
{
    *out = NULL;
    return relayout(dt, rep, ctx, out);
}

void mf_datatype_relayout_free(mf_datatype *dt)
{
    if (dt)
        mf_dt_destroy(dt);
}
