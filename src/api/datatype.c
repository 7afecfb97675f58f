/*
 * datatype.c — datatype constructors (MPI-4.0 §5.1.2–5.1.7): contiguous, vector, hvector,
 * indexed, hindexed, indexed_block, hindexed_block, struct and resized, with their large-count
 * (_c) variants and the deprecated MPI-1 names MPICH still exports.
 *
 * Each entry point checks its arguments, converts int arrays to the MPI_Count/MPI_Aint form the
 * builders take, builds the layout (src/datatype/construct.c), and records the arguments exactly
 * as given for MPI_Type_get_contents: int variants in the integer/address arrays, _c variants in
 * the large-count array (MPI-4.0 Table 5.1). Subarray, darray and dup are in datatype_grid.c.
 * Errors go where errors of no object go (mf_err_no_object): no communicator is involved.
 */
#include <stdlib.h>

#include "api/api.h"
#include "datatype/dt_internal.h"

/* Registers a built type with its contents and returns its handle; frees both on failure. */
static int mf_dt_publish(int rc, mf_datatype *dt, struct mf_dt_contents *ct, MPI_Datatype *newtype)
{
    if (!rc && !ct)
        rc = mf_error(MPI_ERR_NO_MEM, "datatype: out of memory for contents");
    if (rc) {
        mf_dt_destroy(dt);
        mf_dt_contents_free(ct);
        return rc;
    }
    rc = mf_dt_register(dt, ct);
    if (rc) {
        mf_dt_destroy(dt);
        return rc;
    }
    *newtype = dt->pub.dt_handle;
    return MPI_SUCCESS;
}

static int mf_dt_check_new(MPI_Datatype *newtype, const char *fn)
{
    return newtype ? MPI_SUCCESS : mf_error(MPI_ERR_ARG, "%s: newtype is NULL", fn);
}

static int mf_dt_check_array(const void *a, MPI_Count count, const char *name, const char *fn)
{
    return a || !count ? MPI_SUCCESS : mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, name);
}

static int mf_dt_check_blens(const MPI_Count *b, MPI_Count count, const char *fn)
{
    for (MPI_Count i = 0; i < count; i++)
        if (b[i] < 0)
            return mf_error(MPI_ERR_ARG, "%s: array_of_blocklengths[%ld]=%ld is negative", fn,
                            (long)i, (long)b[i]);
    return MPI_SUCCESS;
}

/* Common checks: count, blocklength, oldtype, newtype. */
static int mf_dt_check_common(MPI_Count count, MPI_Count blen, MPI_Datatype oldtype,
                              mf_datatype **old, MPI_Datatype *newtype, const char *fn)
{
    int rc = mf_check_count(count, fn);
    if (!rc && blen < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: blocklength=%ld is negative", fn, (long)blen);
    if (!rc)
        rc = mf_dt_check_any(oldtype, old, fn, "oldtype");
    if (!rc)
        rc = mf_dt_check_new(newtype, fn);
    return rc;
}

/* ---- contiguous ---- */
static int mf_dt_contiguous(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                            bool large, const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = mf_dt_check_common(count, 0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    rc = mf_dt_build_contiguous(old, (size_t)count, &dt);
    struct mf_dt_contents *ct =
        mf_dt_contents_new(MPI_COMBINER_CONTIGUOUS, large ? 0 : 1, 0, large ? 1 : 0, 1);
    if (ct) {
        if (large)
            ct->ct_counts[0] = count;
        else
            ct->ct_ints[0] = (int)count;
        mf_dt_contents_type(ct, 0, old);
    }
    return mf_dt_publish(rc, dt, ct, newtype);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_contiguous(count, oldtype, newtype, false, "MPI_Type_contiguous");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_contiguous");
}
MF_API_ALIAS(Type_contiguous);

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_contiguous(count, oldtype, newtype, true, "MPI_Type_contiguous_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_contiguous_c");
}
MF_API_ALIAS(Type_contiguous_c);

/* ---- vector and hvector: stride in elements (vector) or bytes (hvector) ---- */
static int mf_dt_vector(MPI_Count count, MPI_Count blen, MPI_Count stride, bool bytes,
                        MPI_Datatype oldtype, MPI_Datatype *newtype, bool large, const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = mf_dt_check_common(count, blen, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    MPI_Aint bstride = bytes ? (MPI_Aint)stride : (MPI_Aint)stride * old->pub.dt_extent;
    rc = mf_dt_build_hvector(old, (size_t)count, (size_t)blen, bstride, &dt);
    int comb = bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR;
    struct mf_dt_contents *ct;
    if (large) {
        ct = mf_dt_contents_new(comb, 0, 0, 3, 1);
        if (ct) {
            ct->ct_counts[0] = count;
            ct->ct_counts[1] = blen;
            ct->ct_counts[2] = stride;
        }
    } else {
        ct = mf_dt_contents_new(comb, bytes ? 2 : 3, bytes ? 1 : 0, 0, 1);
        if (ct) {
            ct->ct_ints[0] = (int)count;
            ct->ct_ints[1] = (int)blen;
            if (bytes)
                ct->ct_aints[0] = (MPI_Aint)stride;
            else
                ct->ct_ints[2] = (int)stride;
        }
    }
    if (ct)
        mf_dt_contents_type(ct, 0, old);
    return mf_dt_publish(rc, dt, ct, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc =
        mf_dt_vector(count, blocklength, stride, false, oldtype, newtype, false, "MPI_Type_vector");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_vector");
}
MF_API_ALIAS(Type_vector);

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_vector(count, blocklength, stride, false, oldtype, newtype, true,
                          "MPI_Type_vector_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_vector_c");
}
MF_API_ALIAS(Type_vector_c);

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_vector(count, blocklength, stride, true, oldtype, newtype, false,
                          "MPI_Type_create_hvector");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_create_hvector");
}
MF_API_ALIAS(Type_create_hvector);

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_vector(count, blocklength, stride, true, oldtype, newtype, true,
                          "MPI_Type_create_hvector_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_create_hvector_c");
}
MF_API_ALIAS(Type_create_hvector_c);

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc =
        mf_dt_vector(count, blocklength, stride, true, oldtype, newtype, false, "MPI_Type_hvector");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_hvector");
}
MF_API_ALIAS(Type_hvector);

/* ---- the indexed family ----
 * One core for indexed, hindexed, indexed_block and hindexed_block in both widths. The caller
 * passes blocklengths (NULL for the block variants, which use `blen`) and displacements as
 * MPI_Count, in elements (`bytes` false) or bytes, plus the original arrays for the contents. */
struct mf_dt_idx_args {
    int combiner;
    bool bytes, block, large;
    MPI_Count count, blen;
    const MPI_Count *blens, *disps;
    const int *iblens, *idisps; /* int variants: as given */
    const MPI_Aint *adisps;     /* h-variants: as given */
};

static struct mf_dt_contents *mf_dt_idx_contents(const struct mf_dt_idx_args *a)
{
    MPI_Count n = a->count;
    struct mf_dt_contents *ct;
    if (a->large) {
        /* [count, blocklength(s), displacements] all in the large-count array */
        ct = mf_dt_contents_new(a->combiner, 0, 0, 1 + (a->block ? 1 : n) + n, 1);
        if (!ct)
            return NULL;
        MPI_Count *c = ct->ct_counts;
        *c++ = n;
        if (a->block)
            *c++ = a->blen;
        for (MPI_Count i = 0; !a->block && i < n; i++)
            *c++ = a->blens[i];
        for (MPI_Count i = 0; i < n; i++)
            *c++ = a->disps[i];
        return ct;
    }
    MPI_Count ni = 1 + (a->block ? 1 : n) + (a->bytes ? 0 : n);
    ct = mf_dt_contents_new(a->combiner, ni, a->bytes ? n : 0, 0, 1);
    if (!ct)
        return NULL;
    int *p = ct->ct_ints;
    *p++ = (int)n;
    if (a->block)
        *p++ = (int)a->blen;
    for (MPI_Count i = 0; !a->block && i < n; i++)
        *p++ = a->iblens[i];
    for (MPI_Count i = 0; i < n; i++) {
        if (a->bytes)
            ct->ct_aints[i] = a->adisps[i];
        else
            *p++ = a->idisps[i];
    }
    return ct;
}

static int mf_dt_indexed(const struct mf_dt_idx_args *a, MPI_Datatype oldtype,
                         MPI_Datatype *newtype, const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = mf_dt_check_common(a->count, a->block ? a->blen : 0, oldtype, &old, newtype, fn);
    if (!rc && !a->block)
        rc = mf_dt_check_array(a->blens, a->count, "array_of_blocklengths", fn);
    if (!rc)
        rc = mf_dt_check_array(a->disps, a->count, "array_of_displacements", fn);
    if (!rc && !a->block)
        rc = mf_dt_check_blens(a->blens, a->count, fn);
    if (rc)
        return rc;
    MPI_Aint *bd = malloc(((size_t)a->count + 1) * sizeof *bd);
    if (!bd)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (MPI_Count i = 0; i < a->count; i++)
        bd[i] = a->bytes ? (MPI_Aint)a->disps[i] : (MPI_Aint)a->disps[i] * old->pub.dt_extent;
    rc = mf_dt_build_hindexed(old, (size_t)a->count, a->block ? NULL : a->blens, (size_t)a->blen,
                              bd, &dt);
    free(bd);
    struct mf_dt_contents *ct = mf_dt_idx_contents(a);
    if (ct)
        mf_dt_contents_type(ct, 0, old);
    return mf_dt_publish(rc, dt, ct, newtype);
}

/* int arrays widened to MPI_Count (NULL stays NULL). */
static MPI_Count *mf_dt_widen_int(const int *a, int n, int *rc, const char *fn)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Count *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        *rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

static MPI_Count *mf_dt_widen_aint(const MPI_Aint *a, int n, int *rc, const char *fn)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Count *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        *rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

/* Int-width entry: widens, runs the core, frees. */
static int mf_dt_indexed_int(int combiner, bool bytes, bool block, int count, int blen,
                             const int *blens, const int *idisps, const MPI_Aint *adisps,
                             MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    int rc = MPI_SUCCESS;
    MPI_Count *wb = block ? NULL : mf_dt_widen_int(blens, count, &rc, fn);
    MPI_Count *wd =
        bytes ? mf_dt_widen_aint(adisps, count, &rc, fn) : mf_dt_widen_int(idisps, count, &rc, fn);
    if (!rc) {
        /* NULL arrays widen to NULL and are reported by the core */
        struct mf_dt_idx_args a = {combiner, bytes, block, false,  count, blen,
                                   wb,       wd,    blens, idisps, adisps};
        rc = mf_dt_indexed(&a, oldtype, newtype, fn);
    }
    free(wb);
    free(wd);
    return rc;
}

#define MF_DT_ENTRY(Name, call)                                                                    \
    {                                                                                              \
        MF_API_ENTER();                                                                            \
        int rc = call;                                                                             \
        MF_API_EXIT();                                                                             \
        return mf_err_no_object(rc, "MPI_" #Name);                                                 \
    }

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_indexed, mf_dt_indexed_int(MPI_COMBINER_INDEXED, false, false, count, 0,
                                                array_of_blocklengths, array_of_displacements, NULL,
                                                oldtype, newtype, "MPI_Type_indexed"))
        MF_API_ALIAS(Type_indexed);

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_hindexed,
                mf_dt_indexed_int(MPI_COMBINER_HINDEXED, true, false, count, 0,
                                  array_of_blocklengths, NULL, array_of_displacements, oldtype,
                                  newtype, "MPI_Type_create_hindexed"))
        MF_API_ALIAS(Type_create_hindexed);

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_hindexed,
                mf_dt_indexed_int(MPI_COMBINER_HINDEXED, true, false, count, 0,
                                  array_of_blocklengths, NULL, array_of_displacements, oldtype,
                                  newtype, "MPI_Type_hindexed")) MF_API_ALIAS(Type_hindexed);

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_indexed_block,
                mf_dt_indexed_int(MPI_COMBINER_INDEXED_BLOCK, false, true, count, blocklength, NULL,
                                  array_of_displacements, NULL, oldtype, newtype,
                                  "MPI_Type_create_indexed_block"))
        MF_API_ALIAS(Type_create_indexed_block);

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_hindexed_block,
                mf_dt_indexed_int(MPI_COMBINER_HINDEXED_BLOCK, true, true, count, blocklength, NULL,
                                  NULL, array_of_displacements, oldtype, newtype,
                                  "MPI_Type_create_hindexed_block"))
        MF_API_ALIAS(Type_create_hindexed_block);

static int mf_dt_indexed_c(int combiner, bool bytes, bool block, MPI_Count count, MPI_Count blen,
                           const MPI_Count *blens, const MPI_Count *disps, MPI_Datatype oldtype,
                           MPI_Datatype *newtype, const char *fn)
{
    struct mf_dt_idx_args a = {combiner, bytes, block, true, count, blen,
                               blens,    disps, NULL,  NULL, NULL};
    return mf_dt_indexed(&a, oldtype, newtype, fn);
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_indexed_c,
                mf_dt_indexed_c(MPI_COMBINER_INDEXED, false, false, count, 0, array_of_blocklengths,
                                array_of_displacements, oldtype, newtype, "MPI_Type_indexed_c"))
        MF_API_ALIAS(Type_indexed_c);

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_hindexed_c,
                mf_dt_indexed_c(MPI_COMBINER_HINDEXED, true, false, count, 0, array_of_blocklengths,
                                array_of_displacements, oldtype, newtype,
                                "MPI_Type_create_hindexed_c")) MF_API_ALIAS(Type_create_hindexed_c);

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_indexed_block_c,
                mf_dt_indexed_c(MPI_COMBINER_INDEXED_BLOCK, false, true, count, blocklength, NULL,
                                array_of_displacements, oldtype, newtype,
                                "MPI_Type_create_indexed_block_c"))
        MF_API_ALIAS(Type_create_indexed_block_c);

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_hindexed_block_c,
                mf_dt_indexed_c(MPI_COMBINER_HINDEXED_BLOCK, true, true, count, blocklength, NULL,
                                array_of_displacements, oldtype, newtype,
                                "MPI_Type_create_hindexed_block_c"))
        MF_API_ALIAS(Type_create_hindexed_block_c);

/* ---- struct ---- */
static int mf_dt_struct(MPI_Count count, const MPI_Count *blens, const MPI_Aint *disps,
                        const MPI_Datatype *types, MPI_Datatype *newtype, struct mf_dt_contents *ct,
                        const char *fn)
{
    mf_datatype **olds = NULL, *dt = NULL;
    int rc = mf_check_count(count, fn);
    if (!rc)
        rc = mf_dt_check_array(blens, count, "array_of_blocklengths", fn);
    if (!rc)
        rc = mf_dt_check_array(disps, count, "array_of_displacements", fn);
    if (!rc)
        rc = mf_dt_check_array(types, count, "array_of_types", fn);
    if (!rc)
        rc = mf_dt_check_new(newtype, fn);
    if (!rc)
        rc = mf_dt_check_blens(blens, count, fn);
    if (!rc && !(olds = malloc(((size_t)count + 1) * sizeof *olds)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (MPI_Count i = 0; !rc && i < count; i++) {
        rc = mf_dt_check_any(types[i], &olds[i], fn, "array_of_types[i]");
        if (rc)
            rc = mf_error(MPI_ERR_TYPE, "%s: array_of_types[%ld]=0x%x is not a valid datatype", fn,
                          (long)i, (unsigned)types[i]);
    }
    if (rc) {
        free(olds);
        mf_dt_contents_free(ct);
        return rc;
    }
    rc = mf_dt_build_struct((size_t)count, blens, disps, olds, &dt);
    for (MPI_Count i = 0; ct && i < count; i++)
        mf_dt_contents_type(ct, i, olds[i]);
    free(olds);
    return mf_dt_publish(rc, dt, ct, newtype);
}

static int mf_dt_struct_int(int count, const int *blens, const MPI_Aint *disps,
                            const MPI_Datatype *types, MPI_Datatype *newtype, const char *fn)
{
    int rc = MPI_SUCCESS;
    MPI_Count *wb = mf_dt_widen_int(blens, count, &rc, fn);
    if (rc)
        return rc;
    struct mf_dt_contents *ct = NULL;
    if (count == 0 || (count > 0 && blens && disps && types)) { /* arrays may be NULL if empty */
        ct = mf_dt_contents_new(MPI_COMBINER_STRUCT, 1 + (MPI_Count)count, count, 0, count);
        if (ct) {
            ct->ct_ints[0] = count;
            for (int i = 0; i < count; i++) {
                ct->ct_ints[1 + i] = blens[i];
                ct->ct_aints[i] = disps[i];
            }
        }
    }
    rc = mf_dt_struct(count, wb, disps, types, newtype, ct, fn);
    free(wb);
    return rc;
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_struct,
                mf_dt_struct_int(count, array_of_blocklengths, array_of_displacements,
                                 array_of_types, newtype, "MPI_Type_create_struct"))
        MF_API_ALIAS(Type_create_struct);

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_struct, mf_dt_struct_int(count, array_of_blocklengths, array_of_displacements,
                                              array_of_types, newtype, "MPI_Type_struct"))
        MF_API_ALIAS(Type_struct);

static int mf_dt_struct_c(MPI_Count count, const MPI_Count *blens, const MPI_Count *disps,
                          const MPI_Datatype *types, MPI_Datatype *newtype, const char *fn)
{
    struct mf_dt_contents *ct = NULL;
    if (count == 0 || (count > 0 && blens && disps && types)) { /* arrays may be NULL if empty */
        ct = mf_dt_contents_new(MPI_COMBINER_STRUCT, 0, 0, 1 + 2 * count, count);
        if (ct) {
            ct->ct_counts[0] = count;
            for (MPI_Count i = 0; i < count; i++) {
                ct->ct_counts[1 + i] = blens[i];
                ct->ct_counts[1 + count + i] = disps[i];
            }
        }
    }
    /* MPI_Count and MPI_Aint are both long in this ABI */
    return mf_dt_struct(count, blens, (const MPI_Aint *)disps, types, newtype, ct, fn);
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_struct_c,
                mf_dt_struct_c(count, array_of_blocklengths, array_of_displacements, array_of_types,
                               newtype, "MPI_Type_create_struct_c"))
        MF_API_ALIAS(Type_create_struct_c);

/* ---- resized ---- */
static int mf_dt_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype,
                         bool large, const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = mf_dt_check_any(oldtype, &old, fn, "oldtype");
    if (!rc)
        rc = mf_dt_check_new(newtype, fn);
    if (rc)
        return rc;
    rc = mf_dt_build_resized(old, lb, extent, &dt);
    struct mf_dt_contents *ct =
        mf_dt_contents_new(MPI_COMBINER_RESIZED, 0, large ? 0 : 2, large ? 2 : 0, 1);
    if (ct) {
        MPI_Aint *a = large ? (MPI_Aint *)ct->ct_counts : ct->ct_aints;
        a[0] = lb;
        a[1] = extent;
        mf_dt_contents_type(ct, 0, old);
    }
    return mf_dt_publish(rc, dt, ct, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_resized,
                mf_dt_resized(oldtype, lb, extent, newtype, false, "MPI_Type_create_resized"))
        MF_API_ALIAS(Type_create_resized);

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
    MF_DT_ENTRY(Type_create_resized_c,
                mf_dt_resized(oldtype, lb, extent, newtype, true, "MPI_Type_create_resized_c"))
        MF_API_ALIAS(Type_create_resized_c);
