/*
 * coll_ops.c — every predefined reduction op on every predefined type the standard defines it
 * for, through MPI_Allreduce (and MPI_Reduce_local), checked against a reduction each rank
 * computes itself over the inputs of all ranks; and op/type pairs the standard does not define
 * must fail with MPI_ERR_OP.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mftest.h"

#define N 5
static int rank, size;

/* Inputs chosen so that no reduction overflows even int8 at 8 ranks. */
static long long input(int op_kind, int r, int i)
{
    switch (op_kind) {
    case 0:
        return (r * 5 + i * 3) % 11 - (i % 2 ? 5 : 0); /* MAX/MIN/SUM: may be negative */
    case 1:
        return (r == i % size) ? 2 + (i % 2) : 1; /* PROD */
    case 2:
        return (r + i) % 3 == 0; /* logical */
    default:
        return (1 << ((r + i) % 7)) | (r & 1); /* bitwise */
    }
}

/* Integer-like types: every op the standard gives C/Fortran integers. */
#define TEST_INT(T, MT, is_signed)                                                                 \
    do {                                                                                           \
        const MPI_Op ops[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD, MPI_LAND,                     \
                              MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};                    \
        const int kinds[] = {0, 0, 0, 1, 2, 2, 2, 3, 3, 3};                                        \
        for (int o = 0; o < 10; o++) {                                                             \
            T s[N], r[N], e[N];                                                                    \
            for (int i = 0; i < N; i++) {                                                          \
                long long v = input(kinds[o], rank, i);                                            \
                s[i] = (T)(is_signed ? v : (v < 0 ? -v : v));                                      \
                for (int q = 0; q < size; q++) {                                                   \
                    long long w0 = input(kinds[o], q, i);                                          \
                    T w = (T)(is_signed ? w0 : (w0 < 0 ? -w0 : w0));                               \
                    if (q == 0) {                                                                  \
                        e[i] = kinds[o] == 2 ? (T)(w != 0) : w;                                    \
                        continue;                                                                  \
                    }                                                                              \
                    switch (o) {                                                                   \
                    case 0:                                                                        \
                        e[i] = w > e[i] ? w : e[i];                                                \
                        break;                                                                     \
                    case 1:                                                                        \
                        e[i] = w < e[i] ? w : e[i];                                                \
                        break;                                                                     \
                    case 2:                                                                        \
                        e[i] = (T)(e[i] + w);                                                      \
                        break;                                                                     \
                    case 3:                                                                        \
                        e[i] = (T)(e[i] * w);                                                      \
                        break;                                                                     \
                    case 4:                                                                        \
                        e[i] = (T)(e[i] && w);                                                     \
                        break;                                                                     \
                    case 5:                                                                        \
                        e[i] = (T)(e[i] || w);                                                     \
                        break;                                                                     \
                    case 6:                                                                        \
                        e[i] = (T)((e[i] != 0) != (w != 0));                                       \
                        break;                                                                     \
                    case 7:                                                                        \
                        e[i] = (T)(e[i] & w);                                                      \
                        break;                                                                     \
                    case 8:                                                                        \
                        e[i] = (T)(e[i] | w);                                                      \
                        break;                                                                     \
                    case 9:                                                                        \
                        e[i] = (T)(e[i] ^ w);                                                      \
                        break;                                                                     \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            MF_CHECK_MPI(MPI_Allreduce(s, r, N, MT, ops[o], MPI_COMM_WORLD));                      \
            for (int i = 0; i < N; i++)                                                            \
                MF_CHECK(r[i] == e[i], "%s op #%d [%d]: got %lld expected %lld", #MT, o, i,        \
                         (long long)r[i], (long long)e[i]);                                        \
        }                                                                                          \
    } while (0)

/* Floating types: MAX MIN SUM PROD (small integers, exact in every format). */
#define TEST_FLOAT(T, MT)                                                                          \
    do {                                                                                           \
        const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};                                \
        for (int o = 0; o < 4; o++) {                                                              \
            T s[N], r[N], e[N];                                                                    \
            int kind = o == 3 ? 1 : 0;                                                             \
            for (int i = 0; i < N; i++) {                                                          \
                s[i] = (T)input(kind, rank, i) / 2;                                                \
                for (int q = 0; q < size; q++) {                                                   \
                    T w = (T)input(kind, q, i) / 2;                                                \
                    e[i] = q == 0   ? w                                                            \
                           : o == 0 ? (w > e[i] ? w : e[i])                                        \
                           : o == 1 ? (w < e[i] ? w : e[i])                                        \
                           : o == 2 ? e[i] + w                                                     \
                                    : e[i] * w;                                                    \
                }                                                                                  \
            }                                                                                      \
            MF_CHECK_MPI(MPI_Allreduce(s, r, N, MT, ops[o], MPI_COMM_WORLD));                      \
            for (int i = 0; i < N; i++)                                                            \
                MF_CHECK(r[i] == e[i], "%s op #%d [%d]: got %g expected %g", #MT, o, i,            \
                         (double)r[i], (double)e[i]);                                              \
        }                                                                                          \
    } while (0)

#define TEST_COMPLEX(T, MT)                                                                        \
    do {                                                                                           \
        const MPI_Op ops[] = {MPI_SUM, MPI_PROD};                                                  \
        for (int o = 0; o < 2; o++) {                                                              \
            T s[N], r[N], e[N];                                                                    \
            for (int i = 0; i < N; i++) {                                                          \
                s[i] = (T)(o ? 1 : rank) + (T)(rank == i % size) * (T)I;                           \
                for (int q = 0; q < size; q++) {                                                   \
                    T w = (T)(o ? 1 : q) + (T)(q == i % size) * (T)I;                              \
                    e[i] = q == 0 ? w : o ? e[i] * w : e[i] + w;                                   \
                }                                                                                  \
            }                                                                                      \
            MF_CHECK_MPI(MPI_Allreduce(s, r, N, MT, ops[o], MPI_COMM_WORLD));                      \
            for (int i = 0; i < N; i++)                                                            \
                MF_CHECK(r[i] == e[i], "%s op #%d [%d]: got %g%+gi", #MT, o, i,                    \
                         (double)creal(r[i]), (double)cimag(r[i]));                                \
        }                                                                                          \
    } while (0)

#define TEST_LOGICAL(T, MT)                                                                        \
    do {                                                                                           \
        const MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};                                        \
        for (int o = 0; o < 3; o++) {                                                              \
            T s[N], r[N];                                                                          \
            bool e[N];                                                                             \
            for (int i = 0; i < N; i++) {                                                          \
                s[i] = (T)input(2, rank, i);                                                       \
                for (int q = 0; q < size; q++) {                                                   \
                    bool w = input(2, q, i) != 0;                                                  \
                    e[i] = q == 0 ? w : o == 0 ? (e[i] && w) : o == 1 ? (e[i] || w) : e[i] != w;   \
                }                                                                                  \
            }                                                                                      \
            MF_CHECK_MPI(MPI_Allreduce(s, r, N, MT, ops[o], MPI_COMM_WORLD));                      \
            for (int i = 0; i < N; i++)                                                            \
                MF_CHECK((r[i] != 0) == e[i], "%s op #%d [%d]: got %d", #MT, o, i, (int)r[i]);     \
        }                                                                                          \
    } while (0)

#define TEST_PAIR(V, I_, MT)                                                                       \
    do {                                                                                           \
        struct {                                                                                   \
            V v;                                                                                   \
            I_ i;                                                                                  \
        } s[N], r[N], e[N];                                                                        \
        for (int o = 0; o < 2; o++) {                                                              \
            for (int i = 0; i < N; i++) {                                                          \
                s[i].v = (V)((rank * 3 + i) % 4);                                                  \
                s[i].i = (I_)rank;                                                                 \
                for (int q = 0; q < size; q++) {                                                   \
                    V w = (V)((q * 3 + i) % 4);                                                    \
                    /* ranks come in ascending order, so a tie keeps the earlier index */          \
                    if (q == 0 || (o == 0 ? w < e[i].v : w > e[i].v)) {                            \
                        e[i].v = w;                                                                \
                        e[i].i = (I_)q;                                                            \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            MF_CHECK_MPI(                                                                          \
                MPI_Allreduce(s, r, N, MT, o == 0 ? MPI_MINLOC : MPI_MAXLOC, MPI_COMM_WORLD));     \
            for (int i = 0; i < N; i++)                                                            \
                MF_CHECK(r[i].v == e[i].v && r[i].i == e[i].i,                                     \
                         "%s %s [%d]: got (%g, %g) expected (%g, %g)", #MT,                        \
                         o ? "MAXLOC" : "MINLOC", i, (double)r[i].v, (double)r[i].i,               \
                         (double)e[i].v, (double)e[i].i);                                          \
        }                                                                                          \
    } while (0)

static void test_bytes(void)
{
    const MPI_Op ops[] = {MPI_BAND, MPI_BOR, MPI_BXOR};
    for (int o = 0; o < 3; o++) {
        unsigned char s[N], r[N], e[N];
        for (int i = 0; i < N; i++) {
            s[i] = (unsigned char)input(3, rank, i);
            for (int q = 0; q < size; q++) {
                unsigned char w = (unsigned char)input(3, q, i);
                e[i] = q == 0 ? w : o == 0 ? e[i] & w : o == 1 ? e[i] | w : e[i] ^ w;
            }
        }
        MF_CHECK_MPI(MPI_Allreduce(s, r, N, MPI_BYTE, ops[o], MPI_COMM_WORLD));
        MF_CHECK(memcmp(r, e, N) == 0, "MPI_BYTE op #%d", o);
    }
}

static void test_invalid(void)
{
    struct {
        MPI_Op op;
        MPI_Datatype dt;
    } bad[] = {
        {MPI_BAND, MPI_DOUBLE}, {MPI_LAND, MPI_FLOAT},   {MPI_MAX, MPI_C_DOUBLE_COMPLEX},
        {MPI_SUM, MPI_C_BOOL},  {MPI_MINLOC, MPI_INT},   {MPI_SUM, MPI_2INT},
        {MPI_MAX, MPI_BYTE},    {MPI_BXOR, MPI_LOGICAL}, {MPI_PROD, MPI_PACKED},
    };
    char buf[64], out[64];
    memset(buf, 0, sizeof buf);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int cls = 0;
        MPI_Error_class(MPI_Allreduce(buf, out, 1, bad[k].dt, bad[k].op, MPI_COMM_WORLD), &cls);
        MF_CHECK(cls == MPI_ERR_OP, "pair #%zu: class %d, expected MPI_ERR_OP", k, cls);
        MPI_Error_class(MPI_Reduce_local(buf, out, 1, bad[k].dt, bad[k].op), &cls);
        MF_CHECK(cls == MPI_ERR_OP, "reduce_local pair #%zu: class %d", k, cls);
    }
    /* the message names both the op and the type */
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(MPI_Allreduce(buf, out, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), msg, &len);
    MF_CHECK(strstr(msg, "MPI_BAND") && strstr(msg, "MPI_DOUBLE"), "message: %s", msg);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_reduce_local(void)
{
    int a[3] = {1, 5, -3}, b[3] = {4, 2, 7};
    MF_CHECK_MPI(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_MAX));
    MF_CHECK(b[0] == 4 && b[1] == 5 && b[2] == 7, "reduce_local max: %d %d %d", b[0], b[1], b[2]);
    MF_CHECK_MPI(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_REPLACE));
    MF_CHECK(b[0] == 1 && b[1] == 5 && b[2] == -3, "reduce_local replace");
    MF_CHECK_MPI(MPI_Reduce_local(b, a, 3, MPI_INT, MPI_NO_OP));
    MF_CHECK(a[0] == 1 && a[1] == 5 && a[2] == -3, "reduce_local no_op");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_INT(signed char, MPI_SIGNED_CHAR, 1);
    TEST_INT(char, MPI_CHAR, 1);
    TEST_INT(unsigned char, MPI_UNSIGNED_CHAR, 0);
    TEST_INT(short, MPI_SHORT, 1);
    TEST_INT(unsigned short, MPI_UNSIGNED_SHORT, 0);
    TEST_INT(int, MPI_INT, 1);
    TEST_INT(unsigned, MPI_UNSIGNED, 0);
    TEST_INT(long, MPI_LONG, 1);
    TEST_INT(unsigned long, MPI_UNSIGNED_LONG, 0);
    TEST_INT(long long, MPI_LONG_LONG, 1);
    TEST_INT(unsigned long long, MPI_UNSIGNED_LONG_LONG, 0);
    TEST_INT(int8_t, MPI_INT8_T, 1);
    TEST_INT(int16_t, MPI_INT16_T, 1);
    TEST_INT(int32_t, MPI_INT32_T, 1);
    TEST_INT(int64_t, MPI_INT64_T, 1);
    TEST_INT(uint8_t, MPI_UINT8_T, 0);
    TEST_INT(uint16_t, MPI_UINT16_T, 0);
    TEST_INT(uint32_t, MPI_UINT32_T, 0);
    TEST_INT(uint64_t, MPI_UINT64_T, 0);
    TEST_INT(MPI_Aint, MPI_AINT, 1);
    TEST_INT(MPI_Offset, MPI_OFFSET, 1);
    TEST_INT(MPI_Count, MPI_COUNT, 1);
    TEST_INT(int, MPI_INTEGER, 1);
    TEST_INT(int8_t, MPI_INTEGER1, 1);
    TEST_INT(int16_t, MPI_INTEGER2, 1);
    TEST_INT(int32_t, MPI_INTEGER4, 1);
    TEST_INT(int64_t, MPI_INTEGER8, 1);
    TEST_FLOAT(float, MPI_FLOAT);
    TEST_FLOAT(double, MPI_DOUBLE);
    TEST_FLOAT(long double, MPI_LONG_DOUBLE);
    TEST_FLOAT(float, MPI_REAL);
    TEST_FLOAT(double, MPI_DOUBLE_PRECISION);
    TEST_FLOAT(float, MPI_REAL4);
    TEST_FLOAT(double, MPI_REAL8);
    TEST_FLOAT(long double, MPI_REAL16);
    TEST_COMPLEX(float _Complex, MPI_C_FLOAT_COMPLEX);
    TEST_COMPLEX(double _Complex, MPI_C_DOUBLE_COMPLEX);
    TEST_COMPLEX(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    TEST_COMPLEX(float _Complex, MPI_COMPLEX);
    TEST_COMPLEX(double _Complex, MPI_DOUBLE_COMPLEX);
    TEST_COMPLEX(float _Complex, MPI_COMPLEX8);
    TEST_COMPLEX(double _Complex, MPI_COMPLEX16);
    TEST_COMPLEX(long double _Complex, MPI_COMPLEX32);
    TEST_COMPLEX(float _Complex, MPI_CXX_FLOAT_COMPLEX);
    TEST_COMPLEX(double _Complex, MPI_CXX_DOUBLE_COMPLEX);
    TEST_LOGICAL(bool, MPI_C_BOOL);
    TEST_LOGICAL(bool, MPI_CXX_BOOL);
    TEST_LOGICAL(int, MPI_LOGICAL);
    TEST_PAIR(float, int, MPI_FLOAT_INT);
    TEST_PAIR(double, int, MPI_DOUBLE_INT);
    TEST_PAIR(long, int, MPI_LONG_INT);
    TEST_PAIR(short, int, MPI_SHORT_INT);
    TEST_PAIR(int, int, MPI_2INT);
    TEST_PAIR(long double, int, MPI_LONG_DOUBLE_INT);
    TEST_PAIR(int, int, MPI_2INTEGER);
    TEST_PAIR(float, float, MPI_2REAL);
    TEST_PAIR(double, double, MPI_2DOUBLE_PRECISION);
    test_bytes();
    test_reduce_local();
    test_invalid();
    return mftest_finish();
}
