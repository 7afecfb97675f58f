/*
 * datatype_grid.c — MPI_Type_create_subarray, MPI_Type_create_darray (MPI-4.0 §5.1.3, §5.1.4)
 * and MPI_Type_dup.
 *
 * Both array constructors reduce to a grid: per dimension, a list of (start, length) blocks of
 * the global index range this process owns; the grid builder nests them with the strides of the
 * global array and resizes the result to lb 0 and the extent of the whole array. Darray computes
 * the blocks from the distribution: BLOCK gives one block of ceil(gsize/psize) (or darg)
 * elements, CYCLIC(b) every psize-th block of b, NONE the whole dimension. Processes form a
 * row-major grid whatever the array order.
 */
#include <stdlib.h>

#include "api/api.h"
#include "comm/attr.h"
#include "datatype/dt_internal.h"

static int mf_dt_grid_publish(int rc, mf_datatype *dt, struct mf_dt_contents *ct, mf_datatype *old,
                              MPI_Datatype *newtype)
{
    if (!rc && !ct)
        rc = mf_error(MPI_ERR_NO_MEM, "datatype: out of memory for contents");
    if (!rc) {
        mf_dt_contents_type(ct, 0, old);
        rc = mf_dt_register(dt, ct);
        ct = NULL;
        if (!rc)
            *newtype = dt->pub.dt_handle;
        else
            mf_dt_destroy(dt);
        return rc;
    }
    mf_dt_destroy(dt);
    mf_dt_contents_free(ct);
    return rc;
}

static int mf_dt_check_order(int order, const char *fn)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return mf_error(MPI_ERR_ARG, "%s: order=%d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
                        fn, order);
    return MPI_SUCCESS;
}

/* ---- subarray ---- */
static int mf_dt_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                          const MPI_Count *starts, int order, MPI_Datatype oldtype,
                          MPI_Datatype *newtype, const int *isz, const int *isub, const int *ist,
                          const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = MPI_SUCCESS;
    if (ndims <= 0)
        rc = mf_error(MPI_ERR_ARG, "%s: ndims=%d must be positive", fn, ndims);
    else if (!sizes || !subsizes || !starts)
        rc = mf_error(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    for (int i = 0; !rc && i < ndims; i++) {
        if (sizes[i] <= 0)
            rc = mf_error(MPI_ERR_ARG, "%s: array_of_sizes[%d]=%ld must be positive", fn, i,
                          (long)sizes[i]);
        else if (subsizes[i] < 0 || subsizes[i] > sizes[i])
            rc = mf_error(MPI_ERR_ARG, "%s: array_of_subsizes[%d]=%ld is outside [0, %ld]", fn, i,
                          (long)subsizes[i], (long)sizes[i]);
        else if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            rc = mf_error(MPI_ERR_ARG,
                          "%s: array_of_starts[%d]=%ld puts the subarray outside "
                          "the array",
                          fn, i, (long)starts[i]);
    }
    if (!rc)
        rc = mf_dt_check_order(order, fn);
    if (!rc)
        rc = mf_dt_check_any(oldtype, &old, fn, "oldtype");
    if (!rc && !newtype)
        rc = mf_error(MPI_ERR_ARG, "%s: newtype is NULL", fn);
    if (rc)
        return rc;

    struct mf_dt_dim *dims = calloc((size_t)ndims, sizeof *dims);
    if (!dims)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < ndims; i++)
        dims[i] =
            (struct mf_dt_dim){sizes[i], 1, (MPI_Count *)&starts[i], (MPI_Count *)&subsizes[i]};
    rc = mf_dt_build_grid(old, ndims, dims, order, &dt);
    free(dims);

    struct mf_dt_contents *ct;
    if (isz) {
        ct = mf_dt_contents_new(MPI_COMBINER_SUBARRAY, 3 * (MPI_Count)ndims + 2, 0, 0, 1);
        if (ct) {
            ct->ct_ints[0] = ndims;
            for (int i = 0; i < ndims; i++) {
                ct->ct_ints[1 + i] = isz[i];
                ct->ct_ints[1 + ndims + i] = isub[i];
                ct->ct_ints[1 + 2 * ndims + i] = ist[i];
            }
            ct->ct_ints[1 + 3 * ndims] = order;
        }
    } else {
        ct = mf_dt_contents_new(MPI_COMBINER_SUBARRAY, 2, 0, 3 * (MPI_Count)ndims, 1);
        if (ct) {
            ct->ct_ints[0] = ndims;
            ct->ct_ints[1] = order;
            for (int i = 0; i < ndims; i++) {
                ct->ct_counts[i] = sizes[i];
                ct->ct_counts[ndims + i] = subsizes[i];
                ct->ct_counts[2 * ndims + i] = starts[i];
            }
        }
    }
    return mf_dt_grid_publish(rc, dt, ct, old, newtype);
}

static MPI_Count *mf_dt_widen(const int *a, int n)
{
    MPI_Count *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    for (int i = 0; w && i < n; i++)
        w[i] = a[i];
    return w;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    MPI_Count *sz = NULL, *sub = NULL, *st = NULL;
    if (ndims > 0 && (!array_of_sizes || !array_of_subsizes || !array_of_starts))
        rc = mf_error(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    else if (ndims > 0 && (!(sz = mf_dt_widen(array_of_sizes, ndims)) ||
                           !(sub = mf_dt_widen(array_of_subsizes, ndims)) ||
                           !(st = mf_dt_widen(array_of_starts, ndims))))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc)
        rc = mf_dt_subarray(ndims, sz, sub, st, order, oldtype, newtype, array_of_sizes,
                            array_of_subsizes, array_of_starts, fn);
    free(sz);
    free(sub);
    free(st);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_create_subarray);

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc = mf_dt_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                            oldtype, newtype, NULL, NULL, NULL, "MPI_Type_create_subarray_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_create_subarray_c");
}
MF_API_ALIAS(Type_create_subarray_c);

/* ---- darray ---- */

static int mf_dt_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                        const int *dargs, const int *psizes, int order, MPI_Datatype oldtype,
                        MPI_Datatype *newtype, const int *igsizes, const char *fn)
{
    mf_datatype *old = NULL, *dt = NULL;
    int rc = MPI_SUCCESS;
    if (size <= 0)
        rc = mf_error(MPI_ERR_ARG, "%s: size=%d must be positive", fn, size);
    else if (rank < 0 || rank >= size)
        rc = mf_error(MPI_ERR_ARG, "%s: rank=%d is outside [0, %d)", fn, rank, size);
    else if (ndims <= 0)
        rc = mf_error(MPI_ERR_ARG, "%s: ndims=%d must be positive", fn, ndims);
    else if (!gsizes || !distribs || !dargs || !psizes)
        rc = mf_error(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    long procs = 1;
    for (int i = 0; !rc && i < ndims; i++) {
        if (gsizes[i] <= 0 || psizes[i] <= 0)
            rc = mf_error(MPI_ERR_ARG,
                          "%s: dimension %d has gsize=%ld psize=%d; both must be "
                          "positive",
                          fn, i, (long)gsizes[i], psizes[i]);
        procs *= psizes[i];
    }
    if (!rc && procs != size)
        rc = mf_error(MPI_ERR_ARG, "%s: the product of array_of_psizes is %ld, not size=%d", fn,
                      procs, size);
    if (!rc)
        rc = mf_dt_check_order(order, fn);
    if (!rc)
        rc = mf_dt_check_any(oldtype, &old, fn, "oldtype");
    if (!rc && !newtype)
        rc = mf_error(MPI_ERR_ARG, "%s: newtype is NULL", fn);
    if (rc)
        return rc;

    struct mf_dt_dim *dims = calloc((size_t)ndims, sizeof *dims);
    if (!dims)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int r = rank;
    for (int i = ndims - 1; i >= 0 && !rc; i--) {
        int coord = r % psizes[i]; /* row-major process grid */
        r /= psizes[i];
        rc = mf_dt_darray_dim(gsizes[i], distribs[i], dargs[i], psizes[i], coord, &dims[i], fn, i);
    }
    if (!rc)
        rc = mf_dt_build_grid(old, ndims, dims, order, &dt);
    for (int i = 0; i < ndims; i++) {
        free(dims[i].d_starts);
        free(dims[i].d_lens);
    }
    free(dims);
    if (rc)
        return rc;

    struct mf_dt_contents *ct;
    int *p;
    if (igsizes) {
        ct = mf_dt_contents_new(MPI_COMBINER_DARRAY, 4 * (MPI_Count)ndims + 4, 0, 0, 1);
    } else {
        ct = mf_dt_contents_new(MPI_COMBINER_DARRAY, 3 * (MPI_Count)ndims + 4, 0, ndims, 1);
    }
    if (ct) {
        p = ct->ct_ints;
        *p++ = size;
        *p++ = rank;
        *p++ = ndims;
        for (int i = 0; i < ndims; i++) {
            if (igsizes)
                *p++ = igsizes[i];
            else
                ct->ct_counts[i] = gsizes[i];
        }
        for (int i = 0; i < ndims; i++)
            *p++ = distribs[i];
        for (int i = 0; i < ndims; i++)
            *p++ = dargs[i];
        for (int i = 0; i < ndims; i++)
            *p++ = psizes[i];
        *p = order;
    }
    return mf_dt_grid_publish(rc, dt, ct, old, newtype);
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    MPI_Count *gs = NULL;
    if (ndims > 0 && array_of_gsizes && !(gs = mf_dt_widen(array_of_gsizes, ndims)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc)
        rc = mf_dt_darray(size, rank, ndims, gs, array_of_distribs, array_of_dargs, array_of_psizes,
                          order, oldtype, newtype, array_of_gsizes, fn);
    free(gs);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_create_darray);

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    MF_API_ENTER();
    int rc =
        mf_dt_darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                     array_of_psizes, order, oldtype, newtype, NULL, "MPI_Type_create_darray_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Type_create_darray_c");
}
MF_API_ALIAS(Type_create_darray_c);

/* ---- dup ---- */
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_dup";
    MF_API_ENTER();
    mf_datatype *old = NULL, *dt = NULL;
    int rc = mf_dt_check_any(oldtype, &old, fn, "oldtype");
    if (!rc && !newtype)
        rc = mf_error(MPI_ERR_ARG, "%s: newtype is NULL", fn);
    if (!rc)
        rc = mf_dt_build_dup(old, &dt);
    if (!rc) {
        dt->pub.dt_committed = old->pub.dt_committed;
        struct mf_dt_contents *ct = mf_dt_contents_new(MPI_COMBINER_DUP, 0, 0, 0, 1);
        rc = mf_dt_grid_publish(MPI_SUCCESS, dt, ct, old, newtype);
        dt = NULL;
    }
    if (!rc) {
        rc = mf_attr_type_copy(old->pub.dt_handle, *newtype); /* copy callbacks */
        if (rc) {
            mf_datatype_release(mf_datatype_get(*newtype));
            *newtype = MPI_DATATYPE_NULL;
        }
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_dup);
