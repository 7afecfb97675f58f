/*
 * datatype_f90.c — MPI_Type_create_f90_real, _complex and _integer (MPI-4.0 §19.1.9): the
 * datatype of the Fortran kind that SELECTED_REAL_KIND(p, r) or SELECTED_INT_KIND(r) would give.
 *
 * Kinds are those of gfortran on x86-64, the compiler an MPICH-ABI library pairs with:
 *   real     p <= 6 and r <= 37: 4 bytes; p <= 15 and r <= 307: 8; p <= 33 and r <= 4931: 16
 *   integer  r <= 2: 1 byte; <= 4: 2; <= 9: 4; <= 18: 8
 * (complex: twice the real). The 10-byte x87 kind has no MPI type, so precisions 16-18 take
 * the 16-byte one, as MPICH does. p or r may be MPI_UNDEFINED ("any"), not both.
 *
 * What comes back is predefined in the standard's sense (it cannot be freed) yet reports
 * MPI_COMBINER_F90_* with (p, r) as its envelope and contents, so it is not the named type
 * itself: a duplicate of MPI_REAL8 & co. made once per (combiner, p, r) and kept for the life
 * of the process; asking again returns the same handle. MPI_Type_free refuses it.
 */
#include <stdlib.h>

#include "api/api.h"
#include "datatype/dt_internal.h"

/* The types made so far, searched linearly: a program asks for a handful of kinds. */
struct mf_f90_type {
    int combiner, p, r;
    MPI_Datatype handle;
};
static struct mf_f90_type *mf_f90_types;
static int mf_f90_ntypes;

/* The named type of the kind asked for, or MPI_DATATYPE_NULL when no kind has it. */
static MPI_Datatype mf_f90_base(int combiner, int p, int r)
{
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        return r <= 2    ? MPI_INTEGER1
               : r <= 4  ? MPI_INTEGER2
               : r <= 9  ? MPI_INTEGER4
               : r <= 18 ? MPI_INTEGER8
                         : MPI_DATATYPE_NULL;
    }
    bool cplx = combiner == MPI_COMBINER_F90_COMPLEX;
    bool any_p = p == MPI_UNDEFINED, any_r = r == MPI_UNDEFINED;
    if ((any_p || p <= 6) && (any_r || r <= 37))
        return cplx ? MPI_COMPLEX8 : MPI_REAL4;
    if ((any_p || p <= 15) && (any_r || r <= 307))
        return cplx ? MPI_COMPLEX16 : MPI_REAL8;
    if ((any_p || p <= 33) && (any_r || r <= 4931))
        return cplx ? MPI_COMPLEX32 : MPI_REAL16;
    return MPI_DATATYPE_NULL;
}

static int mf_f90_make(int combiner, int p, int r, MPI_Datatype *newtype, const char *fn)
{
    bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    int rc = mf_check_initialized(fn);
    if (!rc && !newtype)
        rc = mf_error(MPI_ERR_ARG, "%s: newtype is NULL", fn);
    if (!rc && integer && (r == MPI_UNDEFINED || r < 0))
        rc = mf_error(MPI_ERR_ARG, "%s: r=%d is not a decimal exponent range", fn, r);
    if (!rc && !integer &&
        ((p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (p != MPI_UNDEFINED && p < 0) ||
         (r != MPI_UNDEFINED && r < 0)))
        rc = mf_error(MPI_ERR_ARG,
                      "%s: p=%d, r=%d: each must be at least 0 or MPI_UNDEFINED, not both "
                      "MPI_UNDEFINED",
                      fn, p, r);
    MPI_Datatype base = rc ? MPI_DATATYPE_NULL : mf_f90_base(combiner, p, r);
    if (!rc && base == MPI_DATATYPE_NULL)
        rc = integer ? mf_error(MPI_ERR_ARG, "%s: no integer kind has a range of %d digits", fn, r)
                     : mf_error(MPI_ERR_ARG,
                                "%s: no %s kind has precision %d and range %d (at most 33 and "
                                "4931)",
                                fn, combiner == MPI_COMBINER_F90_REAL ? "real" : "complex", p, r);
    if (rc)
        return rc;
    if (integer)
        p = MPI_UNDEFINED; /* not part of the key */
    for (int i = 0; i < mf_f90_ntypes; i++)
        if (mf_f90_types[i].combiner == combiner && mf_f90_types[i].p == p &&
            mf_f90_types[i].r == r) {
            *newtype = mf_f90_types[i].handle;
            return MPI_SUCCESS;
        }
    struct mf_f90_type *grown = realloc(mf_f90_types, (size_t)(mf_f90_ntypes + 1) * sizeof *grown);
    if (!grown)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    mf_f90_types = grown;
    mf_datatype *dt = NULL;
    if ((rc = mf_dt_build_dup(mf_datatype_get(base), &dt)))
        return rc;
    dt->pub.dt_committed = true;
    struct mf_dt_contents *ct = mf_dt_contents_new(combiner, integer ? 1 : 2, 0, 0, 0);
    if (!ct) {
        mf_dt_destroy(dt);
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    if (integer) {
        ct->ct_ints[0] = r;
    } else {
        ct->ct_ints[0] = p;
        ct->ct_ints[1] = r;
    }
    if ((rc = mf_dt_register(dt, ct))) { /* frees ct */
        mf_dt_destroy(dt);
        return rc;
    }
    mf_f90_types[mf_f90_ntypes++] = (struct mf_f90_type){combiner, p, r, dt->pub.dt_handle};
    *newtype = dt->pub.dt_handle;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_real";
    MF_API_ENTER();
    int rc = mf_f90_make(MPI_COMBINER_F90_REAL, p, r, newtype, fn);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_complex";
    MF_API_ENTER();
    int rc = mf_f90_make(MPI_COMBINER_F90_COMPLEX, p, r, newtype, fn);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_create_f90_complex);

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_integer";
    MF_API_ENTER();
    int rc = mf_f90_make(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype, fn);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_create_f90_integer);
