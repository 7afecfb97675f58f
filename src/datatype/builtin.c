/*
 * builtin.c — the predefined datatypes of the MPICH ABI as static objects.
 *
 * A predefined handle 0x4c00SSII carries its size SS and an index II; the pair types
 * (MPI_FLOAT_INT ... 0x8c00000N) carry neither, so they get indices after the last ABI index.
 * The table below is the single source of every fact about a predefined type: name, native and
 * external32 sizes, how external32 converts it, and its reduction kind. Objects are filled once
 * (pthread_once) from the table and the real C layouts (pair structs with their padding, the
 * alignment of each C type) and are never freed.
 */
#include <float.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdalign.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

#include "datatype/dt_internal.h"

#define MF_DT_PAIR_BASE 0x47 /* index of MPI_FLOAT_INT (after MPIX_C_FLOAT16); the pairs follow */

/* C layouts of the MINLOC/MAXLOC pair types. */
struct mf_dt_float_int {
    float v;
    int i;
};
struct mf_dt_double_int {
    double v;
    int i;
};
struct mf_dt_long_int {
    long v;
    int i;
};
struct mf_dt_short_int {
    short v;
    int i;
};
struct mf_dt_ldouble_int {
    long double v;
    int i;
};

/* x86 long double is the 80-bit format in 16 bytes; external32 wants IEEE binary128. */
#if LDBL_MANT_DIG == 64
#define MF_DT_CONV_LDOUBLE MF_DT_CONV_X87
#else
#define MF_DT_CONV_LDOUBLE MF_DT_CONV_FLOAT
#endif

#define MF_DT_INT_CTYPE(t)                                                                         \
    (((t)-1 < (t)1) ? (sizeof(t) == 1   ? MF_DT_C_INT8                                             \
                       : sizeof(t) == 2 ? MF_DT_C_INT16                                            \
                       : sizeof(t) == 4 ? MF_DT_C_INT32                                            \
                                        : MF_DT_C_INT64)                                           \
                    : (sizeof(t) == 1   ? MF_DT_C_UINT8                                            \
                       : sizeof(t) == 2 ? MF_DT_C_UINT16                                           \
                       : sizeof(t) == 4 ? MF_DT_C_UINT32                                           \
                                        : MF_DT_C_UINT64))

#define B(h, name, size, ext32, unit, conv, kind, ctype)                                           \
    [(h)&0xff] = {h, name, size, ext32, unit, conv, kind, ctype}
#define P(n, h, name, size, kind, ctype)                                                           \
    [MF_DT_PAIR_BASE + (n)] = {h, name, size, 0, 0, MF_DT_CONV_RAW, kind, ctype}

static const struct mf_dt_builtin_info mf_dt_table[MF_DT_BUILTIN_MAX] = {
    B(MPI_CHAR, "MPI_CHAR", 1, 1, 1, MF_DT_CONV_RAW, MF_DT_KIND_CHAR, MF_DT_INT_CTYPE(char)),
    B(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, 1, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT8),
    B(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, 1, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED,
      MF_DT_C_UINT8),
    B(MPI_BYTE, "MPI_BYTE", 1, 1, 1, MF_DT_CONV_RAW, MF_DT_KIND_BYTE, MF_DT_C_BYTE),
    B(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), 2, sizeof(wchar_t), MF_DT_CONV_UINT, MF_DT_KIND_CHAR,
      MF_DT_INT_CTYPE(wchar_t)),
    B(MPI_SHORT, "MPI_SHORT", 2, 2, 2, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT16),
    B(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, 2, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED,
      MF_DT_C_UINT16),
    B(MPI_INT, "MPI_INT", 4, 4, 4, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT32),
    B(MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, 4, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED, MF_DT_C_UINT32),
    /* external32 fixes MPI_LONG at 4 bytes whatever the platform's long is */
    B(MPI_LONG, "MPI_LONG", sizeof(long), 4, sizeof(long), MF_DT_CONV_INT, MF_DT_KIND_SIGNED,
      MF_DT_INT_CTYPE(long)),
    B(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), 4, sizeof(long), MF_DT_CONV_UINT,
      MF_DT_KIND_UNSIGNED, MF_DT_INT_CTYPE(unsigned long)),
    B(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED,
      MF_DT_C_INT64),
    B(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, MF_DT_CONV_UINT,
      MF_DT_KIND_UNSIGNED, MF_DT_C_UINT64),
    B(MPI_FLOAT, "MPI_FLOAT", 4, 4, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_FLOAT),
    B(MPI_DOUBLE, "MPI_DOUBLE", 8, 8, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_DOUBLE),
    B(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), 16, sizeof(long double),
      MF_DT_CONV_LDOUBLE, MF_DT_KIND_FLOAT, MF_DT_C_LONG_DOUBLE),
    B(MPI_PACKED, "MPI_PACKED", 1, 1, 1, MF_DT_CONV_RAW, MF_DT_KIND_OTHER, MF_DT_C_NONE),
    B(MPI_LB, "MPI_LB", 0, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_OTHER, MF_DT_C_NONE),
    B(MPI_UB, "MPI_UB", 0, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_OTHER, MF_DT_C_NONE),
    B(MPI_2INT, "MPI_2INT", 8, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_PAIR, MF_DT_C_PAIR_INT_INT),
    B(MPI_CHARACTER, "MPI_CHARACTER", 1, 1, 1, MF_DT_CONV_RAW, MF_DT_KIND_CHAR, MF_DT_C_INT8),
    B(MPI_INTEGER, "MPI_INTEGER", 4, 4, 4, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT32),
    B(MPI_REAL, "MPI_REAL", 4, 4, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_FLOAT),
    B(MPI_LOGICAL, "MPI_LOGICAL", 4, 4, 4, MF_DT_CONV_INT, MF_DT_KIND_LOGICAL, MF_DT_C_FLOGICAL),
    B(MPI_COMPLEX, "MPI_COMPLEX", 8, 8, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_FLOAT_COMPLEX),
    B(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT,
      MF_DT_C_DOUBLE),
    B(MPI_2INTEGER, "MPI_2INTEGER", 8, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_PAIR, MF_DT_C_PAIR_INT_INT),
    B(MPI_2REAL, "MPI_2REAL", 8, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_PAIR, MF_DT_C_PAIR_FLOAT_FLOAT),
    B(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_DOUBLE_COMPLEX),
    B(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 0, 0, MF_DT_CONV_RAW, MF_DT_KIND_PAIR,
      MF_DT_C_PAIR_DOUBLE_DOUBLE),
    B(MPI_REAL4, "MPI_REAL4", 4, 4, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_FLOAT),
    B(MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_FLOAT_COMPLEX),
    B(MPI_REAL8, "MPI_REAL8", 8, 8, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_DOUBLE),
    B(MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_DOUBLE_COMPLEX),
    B(MPI_REAL16, "MPI_REAL16", 16, 16, 16, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT, MF_DT_C_FLOAT128),
    B(MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, 16, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_FLOAT128_COMPLEX),
    B(MPI_INTEGER1, "MPI_INTEGER1", 1, 1, 1, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT8),
    B(MPI_INTEGER2, "MPI_INTEGER2", 2, 2, 2, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT16),
    B(MPI_INTEGER4, "MPI_INTEGER4", 4, 4, 4, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT32),
    B(MPI_INTEGER8, "MPI_INTEGER8", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT64),
    B(MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, 1, MF_DT_CONV_UINT, MF_DT_KIND_LOGICAL, MF_DT_C_BOOL),
    B(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, 8, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_FLOAT_COMPLEX),
    B(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, 8, MF_DT_CONV_FLOAT,
      MF_DT_KIND_COMPLEX, MF_DT_C_DOUBLE_COMPLEX),
    B(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 32,
      sizeof(long double), MF_DT_CONV_LDOUBLE, MF_DT_KIND_COMPLEX, MF_DT_C_LONG_DOUBLE_COMPLEX),
    B(MPI_INT8_T, "MPI_INT8_T", 1, 1, 1, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT8),
    B(MPI_INT16_T, "MPI_INT16_T", 2, 2, 2, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT16),
    B(MPI_INT32_T, "MPI_INT32_T", 4, 4, 4, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT32),
    B(MPI_INT64_T, "MPI_INT64_T", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT64),
    B(MPI_UINT8_T, "MPI_UINT8_T", 1, 1, 1, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED, MF_DT_C_UINT8),
    B(MPI_UINT16_T, "MPI_UINT16_T", 2, 2, 2, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED, MF_DT_C_UINT16),
    B(MPI_UINT32_T, "MPI_UINT32_T", 4, 4, 4, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED, MF_DT_C_UINT32),
    B(MPI_UINT64_T, "MPI_UINT64_T", 8, 8, 8, MF_DT_CONV_UINT, MF_DT_KIND_UNSIGNED, MF_DT_C_UINT64),
    B(MPI_C_BOOL, "MPI_C_BOOL", 1, 1, 1, MF_DT_CONV_UINT, MF_DT_KIND_LOGICAL, MF_DT_C_BOOL),
    B(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", 8, 8, 4, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_FLOAT_COMPLEX),
    B(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16, 8, MF_DT_CONV_FLOAT, MF_DT_KIND_COMPLEX,
      MF_DT_C_DOUBLE_COMPLEX),
    B(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 32,
      sizeof(long double), MF_DT_CONV_LDOUBLE, MF_DT_KIND_COMPLEX, MF_DT_C_LONG_DOUBLE_COMPLEX),
    B(MPI_AINT, "MPI_AINT", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT64),
    B(MPI_OFFSET, "MPI_OFFSET", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT64),
    B(MPI_COUNT, "MPI_COUNT", 8, 8, 8, MF_DT_CONV_INT, MF_DT_KIND_SIGNED, MF_DT_C_INT64),
    B(MPIX_C_FLOAT16, "MPIX_C_FLOAT16", 2, 2, 2, MF_DT_CONV_FLOAT, MF_DT_KIND_FLOAT,
      MF_DT_C_FLOAT16),
    P(0, MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, MF_DT_KIND_PAIR, MF_DT_C_PAIR_FLOAT_INT),
    P(1, MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, MF_DT_KIND_PAIR, MF_DT_C_PAIR_DOUBLE_INT),
    P(2, MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + 4, MF_DT_KIND_PAIR, MF_DT_C_PAIR_LONG_INT),
    P(3, MPI_SHORT_INT, "MPI_SHORT_INT", 6, MF_DT_KIND_PAIR, MF_DT_C_PAIR_SHORT_INT),
    P(4, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + 4, MF_DT_KIND_PAIR,
      MF_DT_C_PAIR_LONG_DOUBLE_INT),
};
#undef B
#undef P

static mf_datatype mf_dt_objects[MF_DT_BUILTIN_MAX];
static pthread_once_t mf_dt_once = PTHREAD_ONCE_INIT;
static int mf_dt_init_rc;
/* Set (release) once mf_dt_init_all has run: every send and receive resolves a builtin type, and
 * an acquire load is cheaper than the call into pthread_once. */
static _Atomic bool mf_dt_ready;

/* Two-component layout: value at 0 and second member (an index) at `off2`, struct `extent`. */
struct mf_dt_pair_layout {
    int index;
    int tag1, tag2;
    size_t off2, extent, align;
};

static size_t mf_dt_align_of(int idx)
{
    switch (mf_dt_table[idx].bi_ctype) {
    case MF_DT_C_INT16:
    case MF_DT_C_UINT16:
    case MF_DT_C_FLOAT16:
        return alignof(int16_t);
    case MF_DT_C_INT32:
    case MF_DT_C_UINT32:
    case MF_DT_C_FLOGICAL:
        return alignof(int32_t);
    case MF_DT_C_INT64:
    case MF_DT_C_UINT64:
        return alignof(int64_t);
    case MF_DT_C_FLOAT:
    case MF_DT_C_FLOAT_COMPLEX:
        return alignof(float);
    case MF_DT_C_DOUBLE:
    case MF_DT_C_DOUBLE_COMPLEX:
        return alignof(double);
    case MF_DT_C_LONG_DOUBLE:
    case MF_DT_C_LONG_DOUBLE_COMPLEX:
    case MF_DT_C_FLOAT128:
    case MF_DT_C_FLOAT128_COMPLEX:
        return alignof(long double);
    default:
        return 1;
    }
}

static int mf_dt_init_one(int idx)
{
    const struct mf_dt_builtin_info *bi = &mf_dt_table[idx];
    mf_datatype *dt = &mf_dt_objects[idx];
    dt->pub.dt_handle = bi->bi_handle;
    dt->pub.dt_builtin = true;
    dt->pub.dt_committed = true;
    dt->dt_index = idx;
    dt->dt_refs = 1;
    dt->dt_basic = bi->bi_handle;
    dt->dt_align = mf_dt_align_of(idx);
    dt->dt_nbasic = 1;
    strcpy(dt->dt_name, bi->bi_name);

    static const struct mf_dt_pair_layout pairs[] = {
        {MF_DT_PAIR_BASE + 0, MPI_FLOAT & 0xff, MPI_INT & 0xff, offsetof(struct mf_dt_float_int, i),
         sizeof(struct mf_dt_float_int), alignof(struct mf_dt_float_int)},
        {MF_DT_PAIR_BASE + 1, MPI_DOUBLE & 0xff, MPI_INT & 0xff,
         offsetof(struct mf_dt_double_int, i), sizeof(struct mf_dt_double_int),
         alignof(struct mf_dt_double_int)},
        {MF_DT_PAIR_BASE + 2, MPI_LONG & 0xff, MPI_INT & 0xff, offsetof(struct mf_dt_long_int, i),
         sizeof(struct mf_dt_long_int), alignof(struct mf_dt_long_int)},
        {MF_DT_PAIR_BASE + 3, MPI_SHORT & 0xff, MPI_INT & 0xff, offsetof(struct mf_dt_short_int, i),
         sizeof(struct mf_dt_short_int), alignof(struct mf_dt_short_int)},
        {MF_DT_PAIR_BASE + 4, MPI_LONG_DOUBLE & 0xff, MPI_INT & 0xff,
         offsetof(struct mf_dt_ldouble_int, i), sizeof(struct mf_dt_ldouble_int),
         alignof(struct mf_dt_ldouble_int)},
        {MPI_2INT & 0xff, MPI_INT & 0xff, MPI_INT & 0xff, sizeof(int), 2 * sizeof(int),
         alignof(int)},
        {MPI_2INTEGER & 0xff, MPI_INTEGER & 0xff, MPI_INTEGER & 0xff, 4, 8, 4},
        {MPI_2REAL & 0xff, MPI_REAL & 0xff, MPI_REAL & 0xff, 4, 8, alignof(float)},
        {MPI_2DOUBLE_PRECISION & 0xff, MPI_DOUBLE_PRECISION & 0xff, MPI_DOUBLE_PRECISION & 0xff, 8,
         16, alignof(double)},
    };
    int rc = MPI_SUCCESS;
    const struct mf_dt_pair_layout *pl = NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].index == idx)
            pl = &pairs[i];
    if (pl) {
        size_t s1 = mf_dt_table[pl->tag1].bi_size, s2 = mf_dt_table[pl->tag2].bi_size;
        dt->pub.dt_size = s1 + s2;
        mf_dt_bound_lb(dt, 0, false);
        mf_dt_bound_ub(dt, (MPI_Aint)pl->extent, false);
        dt->dt_align = pl->align;
        dt->dt_nbasic = 2;
        if ((rc = mf_dt_emit(dt, (struct mf_dt_run){0, 0, s1, 1, pl->tag1})) ||
            (rc = mf_dt_emit(dt, (struct mf_dt_run){(MPI_Aint)pl->off2, 0, s2, 1, pl->tag2})))
            return rc;
    } else {
        dt->pub.dt_size = bi->bi_size;
        if (bi->bi_handle == MPI_LB || bi->bi_handle == MPI_UB) {
            /* one explicit bound at 0, no data */
            if (bi->bi_handle == MPI_LB)
                mf_dt_bound_lb(dt, 0, true);
            else
                mf_dt_bound_ub(dt, 0, true);
            dt->dt_nbasic = 0;
            dt->dt_basic = MPI_DATATYPE_NULL;
        } else {
            mf_dt_bound_lb(dt, 0, false);
            mf_dt_bound_ub(dt, (MPI_Aint)bi->bi_size, false);
            if ((rc = mf_dt_emit(dt, (struct mf_dt_run){0, 0, bi->bi_size, 1, idx})))
                return rc;
        }
    }
    return mf_dt_finish(dt);
}

struct mf_dt_fast_entry mf_dt_fast[MF_DT_FAST_MAX];
_Static_assert(MF_DT_FAST_MAX <= MF_DT_BUILTIN_MAX, "the fast table indexes the builtin table");

static void mf_dt_init_all(void)
{
    for (int i = 0; i < MF_DT_BUILTIN_MAX; i++)
        if (mf_dt_table[i].bi_name && (mf_dt_init_rc = mf_dt_init_one(i)))
            break;
    /* Plain 0x4c00ssii handles only (the index is the handle's low byte); filled once every
     * object is ready, before the flag below is raised. */
    for (int i = 0; i < MF_DT_FAST_MAX && !mf_dt_init_rc; i++)
        if (mf_dt_table[i].bi_name && (mf_dt_table[i].bi_handle & ~0xffff) == 0x4c000000 &&
            (mf_dt_table[i].bi_handle & 0xff) == i) {
            mf_dt_fast[i].dt = &mf_dt_objects[i];
            mf_dt_fast[i].handle = mf_dt_table[i].bi_handle;
        }
    atomic_store_explicit(&mf_dt_ready, true, memory_order_release);
}

const struct mf_dt_builtin_info *mf_dt_builtin_info(int index)
{
    if (index < 0 || index >= MF_DT_BUILTIN_MAX || !mf_dt_table[index].bi_name)
        return NULL;
    return &mf_dt_table[index];
}

mf_datatype *mf_dt_builtin_get(MPI_Datatype handle)
{
    int idx;
    if ((handle & ~0xffff) == 0x4c000000)
        idx = handle & 0xff;
    else if (handle >= MPI_FLOAT_INT && handle <= MPI_LONG_DOUBLE_INT)
        idx = MF_DT_PAIR_BASE + (handle & 0xf);
    else
        return NULL;
    if (idx >= MF_DT_BUILTIN_MAX || mf_dt_table[idx].bi_handle != handle ||
        !mf_dt_table[idx].bi_name)
        return NULL;
    if (!atomic_load_explicit(&mf_dt_ready, memory_order_acquire))
        pthread_once(&mf_dt_once, mf_dt_init_all);
    return mf_dt_init_rc ? NULL : &mf_dt_objects[idx];
}

mf_dt_kind mf_datatype_kind(const mf_datatype *dt)
{
    return dt->pub.dt_builtin ? mf_dt_table[dt->dt_index].bi_kind : MF_DT_KIND_NONE;
}

mf_dt_ctype mf_datatype_ctype(const mf_datatype *dt)
{
    return dt->pub.dt_builtin ? mf_dt_table[dt->dt_index].bi_ctype : MF_DT_C_NONE;
}
