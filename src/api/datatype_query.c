/*
 * datatype_query.c — committing, freeing and asking about datatypes (MPI-4.0 §5.1.5–5.1.13,
 * §5.1.11 addresses, §3.2.5/§5.1.11 element counts in a status).
 *
 * Queries accept uncommitted types. Int-valued results that do not fit an int are
 * MPI_UNDEFINED, as the standard asks for MPI_Type_size and MPI_Get_count. The status byte count
 * is read and written through src/datatype/status.h.
 */
#include <limits.h>
#include <string.h>

#include "api/api.h"
#include "datatype/dt_internal.h"
#include "datatype/status.h"

#define MF_DT_API(fn, body)                                                                        \
    do {                                                                                           \
        MF_API_ENTER();                                                                            \
        int rc = (body);                                                                           \
        MF_API_EXIT();                                                                             \
        return mf_err_no_object(rc, fn);                                                           \
    } while (0)

static int mf_dt_out(const void *p, const char *what, const char *fn)
{
    return p ? MPI_SUCCESS : mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, what);
}

/* ---- commit and free ---- */
static int mf_dt_commit(MPI_Datatype *type, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_out(type, "datatype", fn);
    if (!rc)
        rc = mf_dt_check_any(*type, &dt, fn, "datatype");
    if (!rc)
        dt->pub.dt_committed = true;
    return rc;
}

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    MF_DT_API("MPI_Type_commit", mf_dt_commit(datatype, "MPI_Type_commit"));
}
MF_API_ALIAS(Type_commit);

static int mf_dt_free(MPI_Datatype *type, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_out(type, "datatype", fn);
    if (!rc)
        rc = mf_dt_check_any(*type, &dt, fn, "datatype");
    int comb = !rc && dt->dt_contents ? dt->dt_contents->ct_combiner : MPI_COMBINER_NAMED;
    if (!rc && (dt->pub.dt_builtin || comb == MPI_COMBINER_F90_REAL ||
                comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER))
        rc = mf_error(MPI_ERR_TYPE, "%s: datatype=%s is predefined and cannot be freed", fn,
                      dt->pub.dt_builtin ? dt->dt_name : "(a type of MPI_Type_create_f90_*)");
    if (!rc) {
        mf_datatype_release(dt);
        *type = MPI_DATATYPE_NULL;
    }
    return rc;
}

int PMPI_Type_free(MPI_Datatype *datatype)
{
    MF_DT_API("MPI_Type_free", mf_dt_free(datatype, "MPI_Type_free"));
}
MF_API_ALIAS(Type_free);

/* ---- sizes and extents ---- */
static int mf_dt_query(MPI_Datatype type, const void *out1, const void *out2, mf_datatype **dt,
                       const char *fn)
{
    int rc = mf_dt_check_any(type, dt, fn, "datatype");
    if (!rc)
        rc = mf_dt_out(out1, "an output argument", fn);
    if (!rc && out2 != (const void *)1)
        rc = mf_dt_out(out2, "an output argument", fn);
    return rc;
}

static int mf_dt_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent, bool true_ext,
                        const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_query(type, lb, extent, &dt, fn);
    if (!rc) {
        *lb = true_ext ? dt->pub.dt_true_lb : dt->pub.dt_lb;
        *extent = true_ext ? dt->pub.dt_true_extent : dt->pub.dt_extent;
    }
    return rc;
}

/* MPI_Count and MPI_Aint are both long in this ABI, so the _x/_c variants share the code. */
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MF_DT_API("MPI_Type_get_extent",
              mf_dt_extent(datatype, lb, extent, false, "MPI_Type_get_extent"));
}
MF_API_ALIAS(Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MF_DT_API("MPI_Type_get_extent_x",
              mf_dt_extent(datatype, lb, extent, false, "MPI_Type_get_extent_x"));
}
MF_API_ALIAS(Type_get_extent_x);

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MF_DT_API("MPI_Type_get_extent_c",
              mf_dt_extent(datatype, lb, extent, false, "MPI_Type_get_extent_c"));
}
MF_API_ALIAS(Type_get_extent_c);

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    MF_DT_API("MPI_Type_get_true_extent",
              mf_dt_extent(datatype, true_lb, true_extent, true, "MPI_Type_get_true_extent"));
}
MF_API_ALIAS(Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    MF_DT_API("MPI_Type_get_true_extent_x",
              mf_dt_extent(datatype, true_lb, true_extent, true, "MPI_Type_get_true_extent_x"));
}
MF_API_ALIAS(Type_get_true_extent_x);

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    MF_DT_API("MPI_Type_get_true_extent_c",
              mf_dt_extent(datatype, true_lb, true_extent, true, "MPI_Type_get_true_extent_c"));
}
MF_API_ALIAS(Type_get_true_extent_c);

/* which: 0 extent, 1 lb, 2 ub (the deprecated MPI-1 queries) */
static int mf_dt_old_query(MPI_Datatype type, MPI_Aint *out, int which, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_query(type, out, (const void *)1, &dt, fn);
    if (!rc)
        *out = which == 0   ? dt->pub.dt_extent
               : which == 1 ? dt->pub.dt_lb
                            : dt->pub.dt_lb + dt->pub.dt_extent;
    return rc;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MF_DT_API("MPI_Type_extent", mf_dt_old_query(datatype, extent, 0, "MPI_Type_extent"));
}
MF_API_ALIAS(Type_extent);

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MF_DT_API("MPI_Type_lb", mf_dt_old_query(datatype, displacement, 1, "MPI_Type_lb"));
}
MF_API_ALIAS(Type_lb);

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MF_DT_API("MPI_Type_ub", mf_dt_old_query(datatype, displacement, 2, "MPI_Type_ub"));
}
MF_API_ALIAS(Type_ub);

static int mf_dt_size(MPI_Datatype type, MPI_Count *size, int *isize, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_query(type, size ? (const void *)size : (const void *)isize, (const void *)1,
                         &dt, fn);
    if (rc)
        return rc;
    if (size)
        *size = (MPI_Count)dt->pub.dt_size;
    else
        *isize = dt->pub.dt_size > INT_MAX ? MPI_UNDEFINED : (int)dt->pub.dt_size;
    return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    MF_DT_API("MPI_Type_size", mf_dt_size(datatype, NULL, size, "MPI_Type_size"));
}
MF_API_ALIAS(Type_size);

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    MF_DT_API("MPI_Type_size_x", mf_dt_size(datatype, size, NULL, "MPI_Type_size_x"));
}
MF_API_ALIAS(Type_size_x);

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    MF_DT_API("MPI_Type_size_c", mf_dt_size(datatype, size, NULL, "MPI_Type_size_c"));
}
MF_API_ALIAS(Type_size_c);

/* ---- envelope and contents ---- */
static const struct mf_dt_contents mf_dt_named = {MPI_COMBINER_NAMED};

static int mf_dt_envelope(MPI_Datatype type, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                          MPI_Count *nd, int *combiner, const struct mf_dt_contents **out,
                          const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_check_any(type, &dt, fn, "datatype");
    if (!rc)
        rc = mf_dt_out(combiner, "combiner", fn);
    if (rc)
        return rc;
    const struct mf_dt_contents *ct = dt->dt_contents ? dt->dt_contents : &mf_dt_named;
    *ni = ct->ct_ni;
    *na = ct->ct_na;
    *nc = ct->ct_nc;
    *nd = ct->ct_nd;
    *combiner = ct->ct_combiner;
    if (out)
        *out = ct;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope";
    MF_API_ENTER();
    MPI_Count ni, na, nc, nd;
    int rc = mf_dt_envelope(datatype, &ni, &na, &nc, &nd, combiner, NULL, fn);
    if (!rc && (!num_integers || !num_addresses || !num_datatypes))
        rc = mf_error(MPI_ERR_ARG, "%s: an output argument is NULL", fn);
    if (!rc && nc)
        rc = mf_error(MPI_ERR_VALUE_TOO_LARGE,
                      "%s: datatype was built with large counts; use "
                      "MPI_Type_get_envelope_c",
                      fn);
    if (!rc) {
        *num_integers = (int)ni;
        *num_addresses = (int)na;
        *num_datatypes = (int)nd;
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_get_envelope);

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope_c";
    MF_API_ENTER();
    MPI_Count ni, na, nc, nd;
    int rc = mf_dt_envelope(datatype, &ni, &na, &nc, &nd, combiner, NULL, fn);
    if (!rc && (!num_integers || !num_addresses || !num_large_counts || !num_datatypes))
        rc = mf_error(MPI_ERR_ARG, "%s: an output argument is NULL", fn);
    if (!rc) {
        *num_integers = ni;
        *num_addresses = na;
        *num_large_counts = nc;
        *num_datatypes = nd;
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_get_envelope_c);

static int mf_dt_contents_copy(MPI_Datatype type, MPI_Count max_i, MPI_Count max_a, MPI_Count max_c,
                               MPI_Count max_d, int *ints, MPI_Aint *aints, MPI_Count *counts,
                               MPI_Datatype *types, const char *fn)
{
    const struct mf_dt_contents *ct;
    MPI_Count ni, na, nc, nd;
    int comb;
    int rc = mf_dt_envelope(type, &ni, &na, &nc, &nd, &comb, &ct, fn);
    if (rc)
        return rc;
    if (comb == MPI_COMBINER_NAMED)
        return mf_error(MPI_ERR_TYPE, "%s: datatype is predefined (MPI_COMBINER_NAMED)", fn);
    if (max_i < ni || max_a < na || max_c < nc || max_d < nd)
        return mf_error(MPI_ERR_ARG,
                        "%s: arrays too small: need %ld integers, %ld addresses, "
                        "%ld large counts, %ld datatypes",
                        fn, (long)ni, (long)na, (long)nc, (long)nd);
    if ((ni && !ints) || (na && !aints) || (nc && !counts) || (nd && !types))
        return mf_error(MPI_ERR_ARG, "%s: an output array is NULL", fn);
    if (ni)
        memcpy(ints, ct->ct_ints, (size_t)ni * sizeof *ints);
    if (na)
        memcpy(aints, ct->ct_aints, (size_t)na * sizeof *aints);
    if (nc)
        memcpy(counts, ct->ct_counts, (size_t)nc * sizeof *counts);
    for (MPI_Count i = 0; i < nd; i++) {
        /* derived types come back as new references the caller frees (MPI-4.0 §5.1.13) */
        types[i] = ct->ct_types[i];
        mf_datatype_retain(mf_datatype_get(types[i]));
    }
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    MF_DT_API("MPI_Type_get_contents",
              mf_dt_contents_copy(datatype, max_integers, max_addresses, 0, max_datatypes,
                                  array_of_integers, array_of_addresses, NULL, array_of_datatypes,
                                  "MPI_Type_get_contents"));
}
MF_API_ALIAS(Type_get_contents);

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    MF_DT_API("MPI_Type_get_contents_c",
              mf_dt_contents_copy(datatype, max_integers, max_addresses, max_large_counts,
                                  max_datatypes, array_of_integers, array_of_addresses,
                                  array_of_large_counts, array_of_datatypes,
                                  "MPI_Type_get_contents_c"));
}
MF_API_ALIAS(Type_get_contents_c);

/* ---- names ---- */
static int mf_dt_set_name(MPI_Datatype type, const char *name, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_check_any(type, &dt, fn, "datatype");
    if (!rc)
        rc = mf_dt_out(name, "type_name", fn);
    if (!rc) {
        /* longer names are truncated, as the standard allows */
        strncpy(dt->dt_name, name, MPI_MAX_OBJECT_NAME - 1);
        dt->dt_name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    }
    return rc;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    MF_DT_API("MPI_Type_set_name", mf_dt_set_name(datatype, type_name, "MPI_Type_set_name"));
}
MF_API_ALIAS(Type_set_name);

static int mf_dt_get_name(MPI_Datatype type, char *name, int *len, const char *fn)
{
    if (type == MPI_DATATYPE_NULL)
        return mf_api_null_name("MPI_DATATYPE_NULL", name, len, fn);
    mf_datatype *dt = NULL;
    int rc = mf_dt_query(type, name, len, &dt, fn);
    if (!rc) {
        strcpy(name, dt->dt_name);
        *len = (int)strlen(name);
    }
    return rc;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    MF_DT_API("MPI_Type_get_name",
              mf_dt_get_name(datatype, type_name, resultlen, "MPI_Type_get_name"));
}
MF_API_ALIAS(Type_get_name);

/* ---- MPI_Type_match_size: the Fortran fixed-size types ---- */
static int mf_dt_match(int typeclass, int size, MPI_Datatype *out, const char *fn)
{
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *list;
    size_t n;
    int rc = mf_dt_out(out, "datatype", fn);
    if (rc)
        return rc;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL:
        list = reals;
        n = 3;
        break;
    case MPI_TYPECLASS_INTEGER:
        list = ints;
        n = 4;
        break;
    case MPI_TYPECLASS_COMPLEX:
        list = cplx;
        n = 3;
        break;
    default:
        return mf_error(MPI_ERR_ARG, "%s: typeclass=%d is not an MPI_TYPECLASS_*", fn, typeclass);
    }
    for (size_t i = 0; i < n; i++)
        if (mf_datatype_get(list[i])->pub.dt_size == (size_t)size) {
            *out = list[i];
            return MPI_SUCCESS;
        }
    return mf_error(MPI_ERR_ARG, "%s: no type of typeclass=%d has size=%d", fn, typeclass, size);
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    MF_DT_API("MPI_Type_match_size", mf_dt_match(typeclass, size, datatype, "MPI_Type_match_size"));
}
MF_API_ALIAS(Type_match_size);

/* ---- counts in a status ---- */
static int mf_dt_status_count(const MPI_Status *st, MPI_Datatype type, MPI_Count *out, int *iout,
                              bool elements, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_out(st == MPI_STATUS_IGNORE ? NULL : st, "status", fn);
    if (!rc)
        rc = mf_dt_query(type, out ? (const void *)out : (const void *)iout, (const void *)1, &dt,
                         fn);
    if (rc)
        return rc;
    MPI_Count whole, basic;
    mf_datatype_count(dt, (size_t)mf_status_get_bytes(st), &whole, &basic);
    MPI_Count v = elements ? basic : whole;
    if (out)
        *out = v;
    else
        *iout = v > INT_MAX ? MPI_UNDEFINED : (int)v;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MF_DT_API("MPI_Get_count",
              mf_dt_status_count(status, datatype, NULL, count, false, "MPI_Get_count"));
}
MF_API_ALIAS(Get_count);

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    MF_DT_API("MPI_Get_count_c",
              mf_dt_status_count(status, datatype, count, NULL, false, "MPI_Get_count_c"));
}
MF_API_ALIAS(Get_count_c);

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MF_DT_API("MPI_Get_elements",
              mf_dt_status_count(status, datatype, NULL, count, true, "MPI_Get_elements"));
}
MF_API_ALIAS(Get_elements);

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    MF_DT_API("MPI_Get_elements_c",
              mf_dt_status_count(status, datatype, count, NULL, true, "MPI_Get_elements_c"));
}
MF_API_ALIAS(Get_elements_c);

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    MF_DT_API("MPI_Get_elements_x",
              mf_dt_status_count(status, datatype, count, NULL, true, "MPI_Get_elements_x"));
}
MF_API_ALIAS(Get_elements_x);

/* Sets the byte count so that MPI_Get_elements(status, type) returns `count` basic elements:
 * whole elements are count / nbasic, the rest are the first basic elements of one more. */
static int mf_dt_set_elements(MPI_Status *st, MPI_Datatype type, MPI_Count count, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_dt_out(st == MPI_STATUS_IGNORE ? NULL : st, "status", fn);
    if (!rc)
        rc = mf_dt_check_any(type, &dt, fn, "datatype");
    if (!rc)
        rc = mf_check_count(count, fn);
    if (rc)
        return rc;
    MPI_Count bytes = 0;
    if (dt->dt_nbasic) {
        MPI_Count whole = count / dt->dt_nbasic, rest = count % dt->dt_nbasic;
        bytes = whole * (MPI_Count)dt->pub.dt_size;
        for (size_t i = 0; rest && i < dt->dt_nruns; i++) {
            const struct mf_dt_run *r = &dt->dt_runs[i];
            size_t bsize = mf_dt_builtin_info(r->r_tag)->bi_size;
            MPI_Count in_run = (MPI_Count)(r->r_len / bsize * r->r_n);
            MPI_Count take = rest < in_run ? rest : in_run;
            bytes += take * (MPI_Count)bsize;
            rest -= take;
        }
    }
    mf_status_set_bytes(st, bytes);
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    MF_DT_API("MPI_Status_set_elements",
              mf_dt_set_elements(status, datatype, count, "MPI_Status_set_elements"));
}
MF_API_ALIAS(Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    MF_DT_API("MPI_Status_set_elements_x",
              mf_dt_set_elements(status, datatype, count, "MPI_Status_set_elements_x"));
}
MF_API_ALIAS(Status_set_elements_x);

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    MF_DT_API("MPI_Status_set_elements_c",
              mf_dt_set_elements(status, datatype, count, "MPI_Status_set_elements_c"));
}
MF_API_ALIAS(Status_set_elements_c);

/* ---- MPI-4.1: the predefined (value, index) pair type of MPI_MINLOC and MPI_MAXLOC ---- */

static int mf_dt_value_index(MPI_Datatype value, MPI_Datatype index, MPI_Datatype *pair,
                             const char *fn)
{
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    mf_datatype *dt = NULL;
    int rc = mf_dt_out(pair, "pair_type", fn);
    if (!rc)
        rc = mf_dt_check_any(value, &dt, fn, "value_type");
    if (!rc)
        rc = mf_dt_check_any(index, &dt, fn, "index_type");
    if (rc)
        return rc;
    /* A pair exists for predefined types only: handles of user types never match. */
    *pair = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].value == value && pairs[i].index == index)
            *pair = pairs[i].pair;
    return MPI_SUCCESS;
}

int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    MF_DT_API("MPI_Type_get_value_index",
              mf_dt_value_index(value_type, index_type, pair_type, "MPI_Type_get_value_index"));
}
MF_API_ALIAS(Type_get_value_index);

/* ---- addresses ---- */
static int mf_dt_address(const void *location, MPI_Aint *address, const char *fn)
{
    int rc = mf_dt_out(address, "address", fn);
    if (!rc)
        *address = (MPI_Aint)(uintptr_t)location;
    return rc;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    MF_DT_API("MPI_Get_address", mf_dt_address(location, address, "MPI_Get_address"));
}
MF_API_ALIAS(Get_address);

int PMPI_Address(void *location, MPI_Aint *address)
{
    MF_DT_API("MPI_Address", mf_dt_address(location, address, "MPI_Address"));
}
MF_API_ALIAS(Address);

/* Plain integer arithmetic: addresses in this ABI are flat. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
MF_API_ALIAS(Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
MF_API_ALIAS(Aint_diff);
