/*
 * op_kernels.c — one loop per (predefined op, element kind) the standard defines; see
 * op_kernels.h. The table below is the standard's op/type matrix (MPI-4.0 section 6.9.2):
 *   MAX MIN            integers, floating point
 *   SUM PROD           integers, floating point, complex
 *   LAND LOR LXOR      integers, logical
 *   BAND BOR BXOR      integers, byte
 *   MINLOC MAXLOC      pair types
 * Integer SUM and PROD wrap around (computed in unsigned arithmetic) instead of invoking signed
 * overflow, so that a reduction is deterministic whatever the inputs.
 */
#include "coll/op_kernels.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* GCC's -O2 vectorizer uses the "very cheap" cost model: no runtime alias check and no scalar
 * epilogue, so it leaves loops like these (n unknown, in and inout possibly the same buffer)
 * scalar. The kernels are the hot loop of every large reduction, so they ask for the dynamic
 * model: a vector loop guarded by an overlap check, with a scalar tail (twice the speed of the
 * scalar loop for sums of doubles). Clang vectorizes them at -O2 by itself. */
#if defined(__GNUC__) && !defined(__clang__)
#define KERNEL_VECTORIZE_MODEL __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define KERNEL_VECTORIZE_MODEL
#endif
/* The x86-64 baseline is SSE2 (16-byte vectors). Each kernel is also compiled for AVX2 (32-byte
 * vectors) and the loader picks the clone once, from the CPU it runs on (an ifunc), so the hot
 * loop runs at twice the width where the CPU has it and the library still loads everywhere.
 * Every kernel is element-wise (inout[i] depends on in[i] and inout[i] only), so the width
 * changes no result: integer ops stay exact, and each floating-point element sees the one IEEE
 * operation it sees today (no sums reassociated, no multiply-add fused: the clones are compiled
 * without FMA, and there is no multiply followed by an add to contract). */
/* Not under ThreadSanitizer: the ifunc resolvers run while the dynamic loader relocates
 * libmpi, before the TSan runtime is set up, and their instrumented code crashes every program
 * at load (CI's tsan stage). One width there loses only speed. */
#if defined(__SANITIZE_THREAD__)
#define MF_KERNEL_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MF_KERNEL_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(MF_KERNEL_NO_CLONES)
#if __has_attribute(target_clones) && (defined(__clang__) || defined(__GNUC__))
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif
#define KERNEL_VECTORIZE KERNEL_VECTORIZE_MODEL KERNEL_CLONES

/* inout[i] = EXPR(x = in[i], y = inout[i]) */
#define KERNEL(name, T, EXPR)                                                                      \
    KERNEL_VECTORIZE static void name(const void *in, void *inout, size_t n)                       \
    {                                                                                              \
        const char *a = in;                                                                        \
        char *b = inout;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            T x, y;                                                                                \
            memcpy(&x, a + i * sizeof(T), sizeof(T));                                              \
            memcpy(&y, b + i * sizeof(T), sizeof(T));                                              \
            T r = (EXPR);                                                                          \
            memcpy(b + i * sizeof(T), &r, sizeof(T));                                              \
        }                                                                                          \
    }

#define WRAP(T, x, y, o) ((T)((unsigned long long)(x)o(unsigned long long)(y)))

#define INT_KERNELS(k, T)                                                                          \
    KERNEL(k_max_##k, T, x > y ? x : y)                                                            \
    KERNEL(k_min_##k, T, x < y ? x : y)                                                            \
    KERNEL(k_sum_##k, T, WRAP(T, x, y, +))                                                         \
    KERNEL(k_prod_##k, T, WRAP(T, x, y, *))                                                        \
    KERNEL(k_land_##k, T, (T)(x && y))                                                             \
    KERNEL(k_lor_##k, T, (T)(x || y))                                                              \
    KERNEL(k_lxor_##k, T, (T)(!x != !y))                                                           \
    KERNEL(k_band_##k, T, (T)(x & y))                                                              \
    KERNEL(k_bor_##k, T, (T)(x | y))                                                               \
    KERNEL(k_bxor_##k, T, (T)(x ^ y))

#define FLOAT_KERNELS(k, T)                                                                        \
    KERNEL(k_max_##k, T, x > y ? x : y)                                                            \
    KERNEL(k_min_##k, T, x < y ? x : y)                                                            \
    KERNEL(k_sum_##k, T, x + y)                                                                    \
    KERNEL(k_prod_##k, T, x *y)

#define COMPLEX_KERNELS(k, T)                                                                      \
    KERNEL(k_sum_##k, T, x + y)                                                                    \
    KERNEL(k_prod_##k, T, x *y)

#define LOGICAL_KERNELS(k, T)                                                                      \
    KERNEL(k_land_##k, T, (T)(x && y))                                                             \
    KERNEL(k_lor_##k, T, (T)(x || y))                                                              \
    KERNEL(k_lxor_##k, T, (T)(!x != !y))

INT_KERNELS(i8, int8_t)
INT_KERNELS(i16, int16_t)
INT_KERNELS(i32, int32_t)
INT_KERNELS(i64, int64_t)
INT_KERNELS(u8, uint8_t)
INT_KERNELS(u16, uint16_t)
INT_KERNELS(u32, uint32_t)
INT_KERNELS(u64, uint64_t)
FLOAT_KERNELS(flt, float)
FLOAT_KERNELS(dbl, double)
FLOAT_KERNELS(ldbl, long double)
COMPLEX_KERNELS(cflt, float _Complex)
COMPLEX_KERNELS(cdbl, double _Complex)
COMPLEX_KERNELS(cldbl, long double _Complex)
LOGICAL_KERNELS(bool, bool)
LOGICAL_KERNELS(flog, int32_t)
/* binary16: compilers without _Float16 (clang before 15 on x86) are common, so the kernels
 * widen to float, which is exact, and round the result back to nearest-even; for one sum or
 * product of two binary16 values that gives the correctly rounded binary16 result (float has
 * more than 2 * 11 + 2 significand bits). */
static float f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float f;
    if (exp == 0) { /* zero or subnormal: mant * 2^-24 */
        f = (float)mant * 0x1p-24f;
        return sign ? -f : f;
    }
    uint32_t bits = sign | (exp == 31 ? 0x7f800000u | mant << 13 : (exp + 112) << 23 | mant << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t f16_round(uint32_t v, unsigned shift)
{
    uint32_t q = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
    return (uint16_t)(q + (rem > half || (rem == half && (q & 1))));
}

static uint16_t float_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    x &= 0x7fffffff;
    if (x >= 0x7f800000) /* inf, nan (stays a quiet nan) */
        return sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00);
    if (x >= 0x477ff000) /* 65520 and up round to infinity */
        return sign | 0x7c00;
    uint32_t e = x >> 23;
    if (e < 113) /* below 2^-14: a subnormal result (or zero below 2^-25) */
        return e < 102 ? sign : sign | f16_round((x & 0x7fffff) | 0x800000, 126 - e);
    /* normal: rebias the exponent, round the 23-bit fraction to 10 (a carry may bump exp) */
    return sign | (uint16_t)(((e - 112) << 10) + f16_round(x & 0x7fffff, 13));
}

#define F16_KERNEL(name, EXPR)                                                                     \
    static void name(const void *in, void *inout, size_t n)                                        \
    {                                                                                              \
        const char *a = in;                                                                        \
        char *b = inout;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            uint16_t hx, hy;                                                                       \
            memcpy(&hx, a + 2 * i, 2);                                                             \
            memcpy(&hy, b + 2 * i, 2);                                                             \
            float x = f16_to_float(hx), y = f16_to_float(hy);                                      \
            uint16_t r = float_to_f16(EXPR);                                                       \
            memcpy(b + 2 * i, &r, 2);                                                              \
        }                                                                                          \
    }
F16_KERNEL(k_max_f16, x > y ? x : y)
F16_KERNEL(k_min_f16, x < y ? x : y)
F16_KERNEL(k_sum_f16, x + y)
F16_KERNEL(k_prod_f16, x *y)

KERNEL(k_band_byte, uint8_t, (uint8_t)(x &y))
KERNEL(k_bor_byte, uint8_t, (uint8_t)(x | y))
KERNEL(k_bxor_byte, uint8_t, (uint8_t)(x ^ y))

/* MINLOC/MAXLOC: the better value wins; on a tie the smaller index (MPI-4.0 6.9.4). */
#define PAIR_KERNELS(k, V, I)                                                                      \
    static void k_minloc_##k(const void *in, void *inout, size_t n, size_t stride, size_t idx_off) \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            const char *a = (const char *)in + i * stride;                                         \
            char *b = (char *)inout + i * stride;                                                  \
            V va, vb;                                                                              \
            I ia, ib;                                                                              \
            memcpy(&va, a, sizeof va);                                                             \
            memcpy(&vb, b, sizeof vb);                                                             \
            memcpy(&ia, a + idx_off, sizeof ia);                                                   \
            memcpy(&ib, b + idx_off, sizeof ib);                                                   \
            if (va < vb || (va == vb && ia < ib)) {                                                \
                memcpy(b, &va, sizeof va);                                                         \
                memcpy(b + idx_off, &ia, sizeof ia);                                               \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void k_maxloc_##k(const void *in, void *inout, size_t n, size_t stride, size_t idx_off) \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            const char *a = (const char *)in + i * stride;                                         \
            char *b = (char *)inout + i * stride;                                                  \
            V va, vb;                                                                              \
            I ia, ib;                                                                              \
            memcpy(&va, a, sizeof va);                                                             \
            memcpy(&vb, b, sizeof vb);                                                             \
            memcpy(&ia, a + idx_off, sizeof ia);                                                   \
            memcpy(&ib, b + idx_off, sizeof ib);                                                   \
            if (va > vb || (va == vb && ia < ib)) {                                                \
                memcpy(b, &va, sizeof va);                                                         \
                memcpy(b + idx_off, &ia, sizeof ia);                                               \
            }                                                                                      \
        }                                                                                          \
    }

PAIR_KERNELS(flt_int, float, int)
PAIR_KERNELS(dbl_int, double, int)
PAIR_KERNELS(long_int, long, int)
PAIR_KERNELS(short_int, short, int)
PAIR_KERNELS(int_int, int, int)
PAIR_KERNELS(ldbl_int, long double, int)
PAIR_KERNELS(flt_flt, float, float)
PAIR_KERNELS(dbl_dbl, double, double)

#define PAIR_INFO(V, I)                                                                            \
    {                                                                                              \
        MF_OC_PAIR, sizeof(V) + sizeof(I), sizeof(struct {                                         \
            V v;                                                                                   \
            I i;                                                                                   \
        }),                                                                                        \
            offsetof(                                                                              \
                struct {                                                                           \
                    V v;                                                                           \
                    I i;                                                                           \
                },                                                                                 \
                i),                                                                                \
            sizeof(V)                                                                              \
    }

static const struct mf_op_kind_info kind_info[MF_OK_COUNT] = {
    [MF_OK_NONE] = {MF_OC_NONE, 0, 0, 0},
    [MF_OK_I8] = {MF_OC_INT, 1, 1, 0},
    [MF_OK_I16] = {MF_OC_INT, 2, 2, 0},
    [MF_OK_I32] = {MF_OC_INT, 4, 4, 0},
    [MF_OK_I64] = {MF_OC_INT, 8, 8, 0},
    [MF_OK_U8] = {MF_OC_INT, 1, 1, 0},
    [MF_OK_U16] = {MF_OC_INT, 2, 2, 0},
    [MF_OK_U32] = {MF_OC_INT, 4, 4, 0},
    [MF_OK_U64] = {MF_OC_INT, 8, 8, 0},
    [MF_OK_FLT] = {MF_OC_FLOAT, sizeof(float), sizeof(float), 0},
    [MF_OK_DBL] = {MF_OC_FLOAT, sizeof(double), sizeof(double), 0},
    [MF_OK_LDBL] = {MF_OC_FLOAT, sizeof(long double), sizeof(long double), 0},
    [MF_OK_F16] = {MF_OC_FLOAT, 2, 2, 0},
    [MF_OK_CFLT] = {MF_OC_COMPLEX, sizeof(float _Complex), sizeof(float _Complex), 0},
    [MF_OK_CDBL] = {MF_OC_COMPLEX, sizeof(double _Complex), sizeof(double _Complex), 0},
    [MF_OK_CLDBL] = {MF_OC_COMPLEX, sizeof(long double _Complex), sizeof(long double _Complex), 0},
    [MF_OK_BOOL] = {MF_OC_LOGICAL, sizeof(bool), sizeof(bool), 0},
    [MF_OK_FLOG] = {MF_OC_LOGICAL, 4, 4, 0},
    [MF_OK_BYTE] = {MF_OC_BYTE, 1, 1, 0},
    [MF_OK_P_FLT_INT] = PAIR_INFO(float, int),
    [MF_OK_P_DBL_INT] = PAIR_INFO(double, int),
    [MF_OK_P_LONG_INT] = PAIR_INFO(long, int),
    [MF_OK_P_SHORT_INT] = PAIR_INFO(short, int),
    [MF_OK_P_INT_INT] = PAIR_INFO(int, int),
    [MF_OK_P_LDBL_INT] = PAIR_INFO(long double, int),
    [MF_OK_P_FLT_FLT] = PAIR_INFO(float, float),
    [MF_OK_P_DBL_DBL] = PAIR_INFO(double, double),
};

#define INT_ROW(K, k)                                                                              \
    [MF_OP_MAX][K] = k_max_##k, [MF_OP_MIN][K] = k_min_##k, [MF_OP_SUM][K] = k_sum_##k,            \
    [MF_OP_PROD][K] = k_prod_##k, [MF_OP_LAND][K] = k_land_##k, [MF_OP_LOR][K] = k_lor_##k,        \
    [MF_OP_LXOR][K] = k_lxor_##k, [MF_OP_BAND][K] = k_band_##k, [MF_OP_BOR][K] = k_bor_##k,        \
    [MF_OP_BXOR][K] = k_bxor_##k
#define FLOAT_ROW(K, k)                                                                            \
    [MF_OP_MAX][K] = k_max_##k, [MF_OP_MIN][K] = k_min_##k, [MF_OP_SUM][K] = k_sum_##k,            \
    [MF_OP_PROD][K] = k_prod_##k
#define COMPLEX_ROW(K, k) [MF_OP_SUM][K] = k_sum_##k, [MF_OP_PROD][K] = k_prod_##k
#define LOGICAL_ROW(K, k)                                                                          \
    [MF_OP_LAND][K] = k_land_##k, [MF_OP_LOR][K] = k_lor_##k, [MF_OP_LXOR][K] = k_lxor_##k
#define PAIR_ROW(K, k) [MF_OP_MINLOC][K] = k_minloc_##k, [MF_OP_MAXLOC][K] = k_maxloc_##k

static mf_op_kernel *const kernels[MF_OP_BUILTIN_COUNT][MF_OK_COUNT] = {
    INT_ROW(MF_OK_I8, i8),
    INT_ROW(MF_OK_I16, i16),
    INT_ROW(MF_OK_I32, i32),
    INT_ROW(MF_OK_I64, i64),
    INT_ROW(MF_OK_U8, u8),
    INT_ROW(MF_OK_U16, u16),
    INT_ROW(MF_OK_U32, u32),
    INT_ROW(MF_OK_U64, u64),
    FLOAT_ROW(MF_OK_FLT, flt),
    FLOAT_ROW(MF_OK_DBL, dbl),
    FLOAT_ROW(MF_OK_LDBL, ldbl),
    FLOAT_ROW(MF_OK_F16, f16),
    COMPLEX_ROW(MF_OK_CFLT, cflt),
    COMPLEX_ROW(MF_OK_CDBL, cdbl),
    COMPLEX_ROW(MF_OK_CLDBL, cldbl),
    LOGICAL_ROW(MF_OK_BOOL, bool),
    LOGICAL_ROW(MF_OK_FLOG, flog),
    [MF_OP_BAND][MF_OK_BYTE] = k_band_byte,
    [MF_OP_BOR][MF_OK_BYTE] = k_bor_byte,
    [MF_OP_BXOR][MF_OK_BYTE] = k_bxor_byte,
};

static mf_op_pair_kernel *const pair_kernels[MF_OP_BUILTIN_COUNT][MF_OK_COUNT] = {
    PAIR_ROW(MF_OK_P_FLT_INT, flt_int),   PAIR_ROW(MF_OK_P_DBL_INT, dbl_int),
    PAIR_ROW(MF_OK_P_LONG_INT, long_int), PAIR_ROW(MF_OK_P_SHORT_INT, short_int),
    PAIR_ROW(MF_OK_P_INT_INT, int_int),   PAIR_ROW(MF_OK_P_LDBL_INT, ldbl_int),
    PAIR_ROW(MF_OK_P_FLT_FLT, flt_flt),   PAIR_ROW(MF_OK_P_DBL_DBL, dbl_dbl),
};

const struct mf_op_kind_info *mf_op_kind_info(enum mf_op_kind kind)
{
    return &kind_info[(unsigned)kind < MF_OK_COUNT ? kind : MF_OK_NONE];
}

mf_op_kernel *mf_op_kernel_get(int op_index, enum mf_op_kind kind)
{
    if (op_index <= 0 || op_index >= MF_OP_BUILTIN_COUNT || (unsigned)kind >= MF_OK_COUNT)
        return NULL;
    return kernels[op_index][kind];
}

mf_op_pair_kernel *mf_op_pair_kernel_get(int op_index, enum mf_op_kind kind)
{
    if (op_index <= 0 || op_index >= MF_OP_BUILTIN_COUNT || (unsigned)kind >= MF_OK_COUNT)
        return NULL;
    return pair_kernels[op_index][kind];
}
