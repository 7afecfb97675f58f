/*
 * object.c — datatype objects behind handles: lookup, reference counting, registration of
 * derived types, and their recorded constructor arguments (contents).
 *
 * A derived type's handle stays valid while any reference exists: the user's (dropped by
 * MPI_Type_free), a parent type's (taken through the parent's contents), a pending operation's
 * (mf_datatype_retain), or one handed out by MPI_Type_get_contents. Predefined types are static
 * and ignore retain/release.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/handle.h"
#include "datatype/dt_internal.h"

static mf_handle_table mf_dt_table = MF_HANDLE_TABLE_INIT(MF_CLASS_DATATYPE);

mf_datatype *mf_datatype_get_slow(MPI_Datatype handle)
{
    if (MF_HANDLE_KIND(handle) == MF_HANDLE_USER)
        return mf_handle_lookup(&mf_dt_table, handle);
    return mf_dt_builtin_get(handle);
}

/* mf_datatype_info (datatype.h) casts: the public part must come first. */
_Static_assert(offsetof(struct mf_datatype, pub) == 0, "mf_datatype must start with pub");

void mf_datatype_retain_derived(mf_datatype *dt)
{
    if (dt && !dt->pub.dt_builtin)
        dt->dt_refs++;
}

static int (*mf_dt_free_hook)(MPI_Datatype type);

void mf_datatype_set_free_hook(int (*hook)(MPI_Datatype type))
{
    mf_dt_free_hook = hook;
}

void mf_datatype_release_derived(mf_datatype *dt)
{
    if (!dt || dt->pub.dt_builtin || --dt->dt_refs > 0)
        return;
    if (mf_dt_free_hook)
        mf_dt_free_hook(dt->pub.dt_handle); /* delete callbacks of the type's attributes */
    mf_handle_free(&mf_dt_table, dt->pub.dt_handle);
    mf_dt_destroy(dt); /* releases the types named in the contents */
}

int mf_dt_register(mf_datatype *dt, struct mf_dt_contents *ct)
{
    int h = mf_handle_alloc(&mf_dt_table, dt);
    if (!h) {
        mf_dt_contents_free(ct);
        return mf_error(MPI_ERR_NO_MEM, "datatype: out of handles");
    }
    dt->pub.dt_handle = h;
    dt->dt_refs = 1;
    dt->dt_contents = ct;
    return MPI_SUCCESS;
}

struct mf_dt_contents *mf_dt_contents_new(int combiner, MPI_Count ni, MPI_Count na, MPI_Count nc,
                                          MPI_Count nd)
{
    /* one allocation: header, then each array at its natural alignment */
    size_t bytes = sizeof(struct mf_dt_contents) + (size_t)na * sizeof(MPI_Aint) +
                   (size_t)nc * sizeof(MPI_Count) + (size_t)nd * sizeof(MPI_Datatype) +
                   (size_t)ni * sizeof(int);
    struct mf_dt_contents *ct = calloc(1, bytes);
    if (!ct)
        return NULL;
    ct->ct_combiner = combiner;
    ct->ct_ni = ni;
    ct->ct_na = na;
    ct->ct_nc = nc;
    ct->ct_nd = nd;
    char *p = (char *)(ct + 1);
    ct->ct_aints = (MPI_Aint *)p;
    p += (size_t)na * sizeof(MPI_Aint);
    ct->ct_counts = (MPI_Count *)p;
    p += (size_t)nc * sizeof(MPI_Count);
    ct->ct_types = (MPI_Datatype *)p;
    p += (size_t)nd * sizeof(MPI_Datatype);
    ct->ct_ints = (int *)p;
    for (MPI_Count i = 0; i < nd; i++)
        ct->ct_types[i] = MPI_DATATYPE_NULL;
    return ct;
}

void mf_dt_contents_free(struct mf_dt_contents *ct)
{
    if (!ct)
        return;
    for (MPI_Count i = 0; i < ct->ct_nd; i++)
        mf_datatype_release(mf_datatype_get(ct->ct_types[i]));
    free(ct);
}

void mf_dt_contents_type(struct mf_dt_contents *ct, MPI_Count i, mf_datatype *dt)
{
    mf_datatype_retain(dt);
    ct->ct_types[i] = dt->pub.dt_handle;
}

int mf_dt_check_any(MPI_Datatype handle, mf_datatype **out, const char *function, const char *arg)
{
    if (handle == MPI_DATATYPE_NULL)
        return mf_error(MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL", function, arg);
    mf_datatype *dt = mf_datatype_get(handle);
    if (!dt)
        return mf_error(MPI_ERR_TYPE, "%s: %s=0x%x is not a valid datatype", function, arg,
                        (unsigned)handle);
    *out = dt;
    return MPI_SUCCESS;
}

MPI_Datatype mf_datatype_basic_type(const mf_datatype *dt)
{
    return dt->dt_basic;
}

const char *mf_datatype_name(const mf_datatype *dt)
{
    return dt->dt_name;
}
