/*
 * op.c — MPI_Op objects, the op/type validity check and mf_op_apply (contract in op.h).
 *
 * Predefined types map to an element kind (op_kernels.h) through the table below, keyed by the
 * ABI handle. A derived type is reduced through its one basic type: the elements of both buffers
 * are packed into flat arrays, the kernel runs on the arrays, and the result is unpacked into
 * inout. The basic type comes from the datatype engine (mf_datatype_basic_type).
 */
#include "coll/op.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/op_kernels.h"
#include "core/error.h"
#include "core/handle.h"

/* ---- predefined types ------------------------------------------------------------------- */

struct op_type {
    MPI_Datatype handle;
    const char *name;
    enum mf_op_kind kind;
};

/* C integer types map by size and signedness (LP64: long is 64 bits). char is signed on the
 * platforms we build for; MPI_CHAR is accepted like MPI_SIGNED_CHAR, as MPICH does. */
static const struct op_type op_types[] = {
    {MPI_CHAR, "MPI_CHAR", MF_OK_I8},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", MF_OK_I8},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", MF_OK_U8},
    {MPI_BYTE, "MPI_BYTE", MF_OK_BYTE},
    {MPI_SHORT, "MPI_SHORT", MF_OK_I16},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", MF_OK_U16},
    {MPI_INT, "MPI_INT", MF_OK_I32},
    {MPI_UNSIGNED, "MPI_UNSIGNED", MF_OK_U32},
    {MPI_LONG, "MPI_LONG", sizeof(long) == 8 ? MF_OK_I64 : MF_OK_I32},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long) == 8 ? MF_OK_U64 : MF_OK_U32},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG", MF_OK_I64},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", MF_OK_U64},
    {MPI_FLOAT, "MPI_FLOAT", MF_OK_FLT},
    {MPI_DOUBLE, "MPI_DOUBLE", MF_OK_DBL},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", MF_OK_LDBL},
    {MPIX_C_FLOAT16, "MPIX_C_FLOAT16", MF_OK_F16},
    {MPI_INT8_T, "MPI_INT8_T", MF_OK_I8},
    {MPI_INT16_T, "MPI_INT16_T", MF_OK_I16},
    {MPI_INT32_T, "MPI_INT32_T", MF_OK_I32},
    {MPI_INT64_T, "MPI_INT64_T", MF_OK_I64},
    {MPI_UINT8_T, "MPI_UINT8_T", MF_OK_U8},
    {MPI_UINT16_T, "MPI_UINT16_T", MF_OK_U16},
    {MPI_UINT32_T, "MPI_UINT32_T", MF_OK_U32},
    {MPI_UINT64_T, "MPI_UINT64_T", MF_OK_U64},
    {MPI_AINT, "MPI_AINT", MF_OK_I64},
    {MPI_OFFSET, "MPI_OFFSET", MF_OK_I64},
    {MPI_COUNT, "MPI_COUNT", MF_OK_I64},
    {MPI_C_BOOL, "MPI_C_BOOL", MF_OK_BOOL},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", MF_OK_BOOL},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", MF_OK_CFLT},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", MF_OK_CDBL},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", MF_OK_CLDBL},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", MF_OK_CFLT},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", MF_OK_CDBL},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", MF_OK_CLDBL},
    /* Fortran types, as their C equivalents */
    {MPI_INTEGER, "MPI_INTEGER", MF_OK_I32},
    {MPI_INTEGER1, "MPI_INTEGER1", MF_OK_I8},
    {MPI_INTEGER2, "MPI_INTEGER2", MF_OK_I16},
    {MPI_INTEGER4, "MPI_INTEGER4", MF_OK_I32},
    {MPI_INTEGER8, "MPI_INTEGER8", MF_OK_I64},
    {MPI_REAL, "MPI_REAL", MF_OK_FLT},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", MF_OK_DBL},
    {MPI_REAL4, "MPI_REAL4", MF_OK_FLT},
    {MPI_REAL8, "MPI_REAL8", MF_OK_DBL},
    {MPI_REAL16, "MPI_REAL16", MF_OK_LDBL},
    {MPI_COMPLEX, "MPI_COMPLEX", MF_OK_CFLT},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", MF_OK_CDBL},
    {MPI_COMPLEX8, "MPI_COMPLEX8", MF_OK_CFLT},
    {MPI_COMPLEX16, "MPI_COMPLEX16", MF_OK_CDBL},
    {MPI_COMPLEX32, "MPI_COMPLEX32", MF_OK_CLDBL},
    {MPI_LOGICAL, "MPI_LOGICAL", MF_OK_FLOG},
    /* pair types for MINLOC / MAXLOC */
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", MF_OK_P_FLT_INT},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", MF_OK_P_DBL_INT},
    {MPI_LONG_INT, "MPI_LONG_INT", MF_OK_P_LONG_INT},
    {MPI_SHORT_INT, "MPI_SHORT_INT", MF_OK_P_SHORT_INT},
    {MPI_2INT, "MPI_2INT", MF_OK_P_INT_INT},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", MF_OK_P_LDBL_INT},
    {MPI_2INTEGER, "MPI_2INTEGER", MF_OK_P_INT_INT},
    {MPI_2REAL, "MPI_2REAL", MF_OK_P_FLT_FLT},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", MF_OK_P_DBL_DBL},
    /* no reduction is defined on these, but messages should still name them */
    {MPI_WCHAR, "MPI_WCHAR", MF_OK_NONE},
    {MPI_PACKED, "MPI_PACKED", MF_OK_NONE},
    {MPI_CHARACTER, "MPI_CHARACTER", MF_OK_NONE},
};

static const struct op_type *op_type_find(MPI_Datatype handle)
{
    for (size_t i = 0; i < sizeof op_types / sizeof op_types[0]; i++)
        if (op_types[i].handle == handle)
            return &op_types[i];
    return NULL;
}

const char *mf_op_type_name(MPI_Datatype dt, char *buf, size_t len)
{
    const struct op_type *t = op_type_find(dt);
    if (t)
        return t->name;
    snprintf(buf, len, "0x%x", (unsigned)dt);
    return buf;
}

/* The element kind of `dt`; *derived_basic is set for derived types (else MPI_DATATYPE_NULL). */
static enum mf_op_kind op_kind_of(const mf_datatype *dt, MPI_Datatype *derived_basic)
{
    const struct mf_datatype_public *info = mf_datatype_info(dt);
    *derived_basic = MPI_DATATYPE_NULL;
    const struct op_type *t = op_type_find(info->dt_handle);
    if (t)
        return t->kind;
    if (info->dt_builtin)
        return MF_OK_NONE;
    MPI_Datatype basic = mf_datatype_basic_type(dt);
    if (basic == MPI_DATATYPE_NULL || !(t = op_type_find(basic)))
        return MF_OK_NONE;
    *derived_basic = basic;
    return t->kind;
}

/* ---- op objects ---------------------------------------------------------------------------- */

static const char *const op_names[MF_OP_BUILTIN_COUNT] = {
    NULL,       "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
    "MPI_LAND", "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
    "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP",
};

static mf_op op_builtin[MF_OP_BUILTIN_COUNT];
static mf_handle_table op_table = MF_HANDLE_TABLE_INIT(MF_CLASS_OP);

static void op_builtin_init(void)
{
    if (op_builtin[MF_OP_MAX].op_index)
        return;
    for (int i = 1; i < MF_OP_BUILTIN_COUNT; i++) {
        op_builtin[i] = (mf_op){.op_handle = MPI_MAX - 1 + i,
                                .op_refs = 1,
                                .op_builtin = true,
                                .op_commute = true,
                                .op_index = i};
    }
}

mf_op *mf_op_get(MPI_Op handle)
{
    if (MF_HANDLE_KIND(handle) == MF_HANDLE_BUILTIN && MF_HANDLE_CLASS(handle) == MF_CLASS_OP) {
        int i = MF_HANDLE_INDEX(handle);
        if (i < 1 || i >= MF_OP_BUILTIN_COUNT)
            return NULL;
        op_builtin_init();
        return &op_builtin[i];
    }
    return mf_handle_lookup(&op_table, handle);
}

int mf_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, bool commute, mf_op **out)
{
    mf_op *op = calloc(1, sizeof *op);
    if (!op)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Op_create: out of memory");
    op->op_handle = mf_handle_alloc(&op_table, op);
    if (!op->op_handle) {
        free(op);
        return mf_error(MPI_ERR_NO_MEM, "MPI_Op_create: out of handles");
    }
    op->op_refs = 1;
    op->op_commute = commute;
    op->op_fn = fn;
    op->op_fn_c = fn_c;
    *out = op;
    return MPI_SUCCESS;
}

void mf_op_retain(mf_op *op)
{
    if (!op->op_builtin)
        op->op_refs++;
}

void mf_op_release(mf_op *op)
{
    if (op->op_builtin || --op->op_refs > 0)
        return;
    mf_handle_free(&op_table, op->op_handle);
    free(op);
}

const char *mf_op_name(const mf_op *op, char *buf, size_t len)
{
    if (op->op_builtin)
        return op_names[op->op_index];
    snprintf(buf, len, "user op 0x%x", (unsigned)op->op_handle);
    return buf;
}

/* ---- check and apply ----------------------------------------------------------------------- */

static bool op_defined(int op_index, enum mf_op_kind kind)
{
    if (kind == MF_OK_NONE)
        return false;
    if (op_index == MF_OP_REPLACE || op_index == MF_OP_NO_OP)
        return true;
    return mf_op_kernel_get(op_index, kind) || mf_op_pair_kernel_get(op_index, kind);
}

int mf_op_kind_of(const mf_datatype *dt)
{
    MPI_Datatype basic;
    return (int)op_kind_of(dt, &basic);
}

int mf_op_check(const mf_op *op, const mf_datatype *dt, const char *function)
{
    if (!op->op_builtin)
        return MPI_SUCCESS;
    MPI_Datatype basic;
    enum mf_op_kind kind = op_kind_of(dt, &basic);
    if (op_defined(op->op_index, kind))
        return MPI_SUCCESS;
    /* REPLACE and NO_OP only move bytes: any type will do */
    if (op->op_index == MF_OP_REPLACE || op->op_index == MF_OP_NO_OP)
        return MPI_SUCCESS;
    char tb[32];
    MPI_Datatype h = mf_datatype_info(dt)->dt_handle;
    if (!mf_datatype_info(dt)->dt_builtin && !op_type_find(h) && kind == MF_OK_NONE)
        return mf_error(MPI_ERR_OP,
                        "%s: op=%s is not defined for datatype=%s (a predefined op on a derived "
                        "type needs one basic type the op is defined for)",
                        function, op_names[op->op_index], mf_op_type_name(h, tb, sizeof tb));
    return mf_error(MPI_ERR_OP, "%s: op=%s is not defined for datatype=%s", function,
                    op_names[op->op_index], mf_op_type_name(h, tb, sizeof tb));
}

int mf_op_check_atomic_type(const mf_datatype *dt, bool compare, const char *function)
{
    const struct mf_datatype_public *info = mf_datatype_info(dt);
    char tb[32];
    if (!info->dt_builtin)
        return mf_error(MPI_ERR_TYPE,
                        "%s: datatype=%s is a derived type; it takes a predefined one", function,
                        mf_op_type_name(info->dt_handle, tb, sizeof tb));
    MPI_Datatype basic;
    enum mf_op_category cat = mf_op_kind_info(op_kind_of(dt, &basic))->category;
    if (compare && cat != MF_OC_INT && cat != MF_OC_LOGICAL && cat != MF_OC_BYTE)
        return mf_error(MPI_ERR_TYPE,
                        "%s: datatype=%s is not an integer, logical or byte type, the types "
                        "compare-and-swap is defined for",
                        function, mf_op_type_name(info->dt_handle, tb, sizeof tb));
    return MPI_SUCCESS;
}

/* Runs the kernel of (op, kind) over n elements; `native` selects the user-buffer layout of pair
 * kinds over the packed one. */
static void op_run(int op_index, enum mf_op_kind kind, const void *in, void *inout, size_t n,
                   bool native)
{
    const struct mf_op_kind_info *ki = mf_op_kind_info(kind);
    mf_op_pair_kernel *pk = mf_op_pair_kernel_get(op_index, kind);
    if (pk) {
        pk(in, inout, n, native ? ki->native_stride : ki->size,
           native ? ki->native_idx : ki->packed_idx);
        return;
    }
    mf_op_kernel *k = mf_op_kernel_get(op_index, kind);
    if (k)
        k(in, inout, n);
}

/* Calls a user function over `count` elements, in pieces an int length can describe. */
static void op_run_user(const mf_op *op, const void *in, void *inout, MPI_Count count,
                        const mf_datatype *dt)
{
    MPI_Datatype h = mf_datatype_info(dt)->dt_handle;
    if (op->op_fn_c) {
        MPI_Count len = count;
        op->op_fn_c((void *)in, inout, &len, &h);
        return;
    }
    MPI_Aint ext = mf_datatype_info(dt)->dt_extent;
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        op->op_fn((void *)in, inout, &len, &h);
        in = (const char *)in + (MPI_Aint)len * ext;
        inout = (char *)inout + (MPI_Aint)len * ext;
        count -= len;
    }
}

int mf_op_apply(const mf_op *op, const void *in, void *inout, MPI_Count count,
                const mf_datatype *dt)
{
    if (count <= 0)
        return MPI_SUCCESS;
    if (!op->op_builtin) {
        op_run_user(op, in, inout, count, dt);
        return MPI_SUCCESS;
    }
    if (op->op_index == MF_OP_NO_OP)
        return MPI_SUCCESS;
    const struct mf_datatype_public *info = mf_datatype_info(dt);
    MPI_Datatype basic;
    enum mf_op_kind kind = op_kind_of(dt, &basic);
    if (basic == MPI_DATATYPE_NULL) {
        /* predefined type: the user layout is an array of the kind's native elements */
        if (op->op_index == MF_OP_REPLACE) {
            memmove((char *)inout + info->dt_true_lb, (const char *)in + info->dt_true_lb,
                    (size_t)(count - 1) * (size_t)info->dt_extent + (size_t)info->dt_true_extent);
            return MPI_SUCCESS;
        }
        op_run(op->op_index, kind, in, inout, (size_t)count, true);
        return MPI_SUCCESS;
    }
    /* derived type: reduce the packed streams, write the result back through unpack */
    size_t bytes = (size_t)count * info->dt_size;
    void *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    if (!a || !b) {
        free(a);
        free(b);
        return mf_error(MPI_ERR_NO_MEM, "reduction: no memory for %zu bytes of packed data", bytes);
    }
    mf_datatype_pack(dt, in, (size_t)count, 0, a, bytes);
    if (op->op_index == MF_OP_REPLACE) {
        mf_datatype_unpack(dt, inout, (size_t)count, 0, a, bytes);
    } else {
        mf_datatype_pack(dt, inout, (size_t)count, 0, b, bytes);
        size_t n = bytes / mf_op_kind_info(kind)->size;
        op_run(op->op_index, kind, a, b, n, false);
        mf_datatype_unpack(dt, inout, (size_t)count, 0, b, bytes);
    }
    free(a);
    free(b);
    return MPI_SUCCESS;
}
