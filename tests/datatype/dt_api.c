/*
 * dt_api.c — datatype constructors and queries through the MPI interface.
 *
 * Expected sizes and extents come from the C compiler (sizeof/offsetof of the matching structs)
 * or from layouts worked out by hand in the comments; envelope/contents must give back the
 * arguments exactly; errors are checked by class under MPI_ERRORS_RETURN.
 */
#include <mpi.h>
#include <stddef.h>
#include <string.h>

#include "mftest.h"

static void check_extent(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb,
                         MPI_Aint textent, int size, const char *what)
{
    MPI_Aint l, e, tl, te;
    int s;
    MF_CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
    MF_CHECK_MPI(MPI_Type_get_true_extent(t, &tl, &te));
    MF_CHECK_MPI(MPI_Type_size(t, &s));
    MF_CHECK(l == lb && e == extent, "%s: lb/extent %ld/%ld, want %ld/%ld", what, (long)l, (long)e,
             (long)lb, (long)extent);
    MF_CHECK(tl == tlb && te == textent, "%s: true lb/extent %ld/%ld, want %ld/%ld", what, (long)tl,
             (long)te, (long)tlb, (long)textent);
    MF_CHECK(s == size, "%s: size %d, want %d", what, s, size);
}

static void test_predefined(void)
{
    struct {
        MPI_Datatype t;
        int size;
        MPI_Aint extent;
        const char *name;
    } p[] = {
        {MPI_CHAR, 1, 1, "MPI_CHAR"},
        {MPI_INT, (int)sizeof(int), sizeof(int), "MPI_INT"},
        {MPI_LONG_LONG, 8, 8, "MPI_LONG_LONG_INT"},
        {MPI_LONG_DOUBLE, (int)sizeof(long double), sizeof(long double), "MPI_LONG_DOUBLE"},
        {MPI_FLOAT_INT, 8, sizeof(struct {
             float a;
             int b;
         }),
         "MPI_FLOAT_INT"},
        {MPI_DOUBLE_INT, 12, sizeof(struct {
             double a;
             int b;
         }),
         "MPI_DOUBLE_INT"},
        {MPI_SHORT_INT, 6, sizeof(struct {
             short a;
             int b;
         }),
         "MPI_SHORT_INT"},
        {MPI_LONG_DOUBLE_INT, (int)sizeof(long double) + 4, sizeof(struct {
             long double a;
             int b;
         }),
         "MPI_LONG_DOUBLE_INT"},
        {MPI_2INT, 8, 8, "MPI_2INT"},
        {MPI_C_DOUBLE_COMPLEX, 16, 16, "MPI_C_DOUBLE_COMPLEX"},
        {MPI_DOUBLE_PRECISION, 8, 8, "MPI_DOUBLE_PRECISION"},
        {MPI_INTEGER8, 8, 8, "MPI_INTEGER8"},
        {MPI_UINT16_T, 2, 2, "MPI_UINT16_T"},
        {MPI_AINT, (int)sizeof(MPI_Aint), sizeof(MPI_Aint), "MPI_AINT"},
        {MPI_CXX_BOOL, 1, 1, "MPI_CXX_BOOL"},
        {MPI_PACKED, 1, 1, "MPI_PACKED"},
        {MPI_UB, 0, 0, "MPI_UB"},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        int size, len, ni, na, nd, comb;
        MPI_Aint lb, extent;
        char name[MPI_MAX_OBJECT_NAME];
        MF_CHECK_MPI(MPI_Type_size(p[i].t, &size));
        MF_CHECK_MPI(MPI_Type_get_extent(p[i].t, &lb, &extent));
        MF_CHECK_MPI(MPI_Type_get_name(p[i].t, name, &len));
        MF_CHECK(size == p[i].size && extent == p[i].extent && lb == 0,
                 "%s: size %d extent %ld, want %d %ld", p[i].name, size, (long)extent, p[i].size,
                 (long)p[i].extent);
        MF_CHECK(!strcmp(name, p[i].name) && len == (int)strlen(p[i].name), "name %s, want %s",
                 name, p[i].name);
        MF_CHECK_MPI(MPI_Type_get_envelope(p[i].t, &ni, &na, &nd, &comb));
        MF_CHECK(comb == MPI_COMBINER_NAMED && !ni && !na && !nd, "%s is not NAMED", p[i].name);
    }
    MPI_Datatype m;
    MF_CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    MF_CHECK(m == MPI_REAL8, "match_size(REAL, 8)");
}

static void test_constructors(void)
{
    MPI_Datatype t, t2;

    /* vector(3 blocks of 2 ints, stride 4 ints): 2 + 4 + 4 ints wide */
    MF_CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    check_extent(t, 0, 40, 0, 40, 24, "vector");
    int ints[3];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    int ni, na, nd, comb;
    MF_CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MF_CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "vector envelope");
    MF_CHECK_MPI(MPI_Type_get_contents(t, 3, 0, 1, ints, addrs, types));
    MF_CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_INT,
             "vector contents %d %d %d", ints[0], ints[1], ints[2]);

    /* hvector of the vector with a negative stride: copies at 0 and -100 */
    MF_CHECK_MPI(MPI_Type_create_hvector(2, 1, -100, t, &t2));
    check_extent(t2, -100, 140, -100, 140, 48, "hvector negative");
    MF_CHECK_MPI(MPI_Type_get_envelope(t2, &ni, &na, &nd, &comb));
    MF_CHECK(comb == MPI_COMBINER_HVECTOR && ni == 2 && na == 1 && nd == 1, "hvector envelope");
    MF_CHECK_MPI(MPI_Type_get_contents(t2, 2, 1, 1, ints, addrs, types));
    MF_CHECK(addrs[0] == -100 && types[0] == t, "hvector contents");
    MF_CHECK_MPI(MPI_Type_free(&types[0])); /* get_contents handed out a reference */
    MF_CHECK_MPI(MPI_Type_free(&t2));
    MF_CHECK(t2 == MPI_DATATYPE_NULL, "free sets MPI_DATATYPE_NULL");

    /* the vector stays usable after its handle is freed while a parent holds it */
    MF_CHECK_MPI(MPI_Type_contiguous(2, t, &t2));
    MF_CHECK_MPI(MPI_Type_free(&t));
    check_extent(t2, 0, 80, 0, 80, 48, "contiguous of freed vector");
    MF_CHECK_MPI(MPI_Type_free(&t2));

    /* struct { char c; double d; int i[3]; } as the compiler lays it out */
    struct s {
        char c;
        double d;
        int i[3];
    };
    int bl[3] = {1, 1, 3};
    MPI_Aint ds[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MF_CHECK_MPI(MPI_Type_create_struct(3, bl, ds, ty, &t));
    check_extent(t, 0, sizeof(struct s), 0, offsetof(struct s, i) + 12, 21, "struct");
    int sints[4];
    MPI_Aint sadd[3];
    MPI_Datatype stys[3];
    MF_CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MF_CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3, "struct envelope");
    MF_CHECK_MPI(MPI_Type_get_contents(t, 4, 3, 3, sints, sadd, stys));
    MF_CHECK(sints[0] == 3 && sints[3] == 3 && sadd[1] == ds[1] && stys[2] == MPI_INT,
             "struct contents");

    /* resized to a negative lb */
    MF_CHECK_MPI(MPI_Type_create_resized(t, -16, 64, &t2));
    check_extent(t2, -16, 64, 0, offsetof(struct s, i) + 12, 21, "resized");
    MF_CHECK_MPI(MPI_Type_set_name(t2, "my resized struct"));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MF_CHECK_MPI(MPI_Type_get_name(t2, name, &len));
    MF_CHECK(!strcmp(name, "my resized struct"), "set/get name: %s", name);
    MF_CHECK_MPI(MPI_Type_get_name(t, name, &len));
    MF_CHECK(len == 0 && name[0] == 0, "derived types start unnamed");
    MF_CHECK_MPI(MPI_Type_free(&t2));
    MF_CHECK_MPI(MPI_Type_free(&t));

    /* indexed: blocks {2 at 5, 1 at 0, 3 at 10} of doubles */
    int ibl[3] = {2, 1, 3}, idp[3] = {5, 0, 10};
    MF_CHECK_MPI(MPI_Type_indexed(3, ibl, idp, MPI_DOUBLE, &t));
    check_extent(t, 0, 104, 0, 104, 48, "indexed");
    MF_CHECK_MPI(MPI_Type_free(&t));

    /* subarray: 3x4 ints out of 6x8 starting at (1,2), C order: first int at (1*8+2)*4 */
    int sz[2] = {6, 8}, sub[2] = {3, 4}, st[2] = {1, 2};
    MF_CHECK_MPI(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
    check_extent(t, 0, 6 * 8 * 4, 40, ((3 * 8 + 5) - 10 + 1) * 4, 48, "subarray");
    int cints[8];
    MPI_Datatype ctypes[1];
    MF_CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MF_CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1, "subarray envelope");
    MF_CHECK_MPI(MPI_Type_get_contents(t, 8, 0, 1, cints, NULL, ctypes));
    MF_CHECK(cints[0] == 2 && cints[1] == 6 && cints[4] == 4 && cints[6] == 2 &&
                 cints[7] == MPI_ORDER_C,
             "subarray contents");
    MF_CHECK_MPI(MPI_Type_dup(t, &t2));
    MF_CHECK_MPI(MPI_Type_get_envelope(t2, &ni, &na, &nd, &comb));
    MF_CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup envelope");
    check_extent(t2, 0, 6 * 8 * 4, 40, ((3 * 8 + 5) - 10 + 1) * 4, 48, "dup");
    MF_CHECK_MPI(MPI_Type_free(&t2));
    MF_CHECK_MPI(MPI_Type_free(&t));

    /* darray: 10 doubles, cyclic(2) over 3 processes; rank 1 owns 2,3 and 8,9 */
    int gs[1] = {10}, di[1] = {MPI_DISTRIBUTE_CYCLIC}, da[1] = {2}, ps[1] = {3};
    MF_CHECK_MPI(MPI_Type_create_darray(3, 1, 1, gs, di, da, ps, MPI_ORDER_C, MPI_DOUBLE, &t));
    check_extent(t, 0, 80, 16, 64, 32, "darray cyclic");
    MF_CHECK_MPI(MPI_Type_free(&t));
    /* block over a 2x2 grid of 5x6: rank 3 has rows 3..4 and columns 3..5 */
    int gs2[2] = {5, 6}, di2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        da2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps2[2] = {2, 2};
    MF_CHECK_MPI(MPI_Type_create_darray(4, 3, 2, gs2, di2, da2, ps2, MPI_ORDER_C, MPI_INT, &t));
    check_extent(t, 0, 120, (3 * 6 + 3) * 4, ((4 * 6 + 5) - (3 * 6 + 3) + 1) * 4, 24,
                 "darray block");
    MF_CHECK_MPI(MPI_Type_free(&t));

    /* large-count variant records its arguments in the large-count array */
    MF_CHECK_MPI(MPI_Type_contiguous_c(7, MPI_SHORT, &t));
    MPI_Count cni, cna, cnc, cnd;
    MF_CHECK_MPI(MPI_Type_get_envelope_c(t, &cni, &cna, &cnc, &cnd, &comb));
    MF_CHECK(comb == MPI_COMBINER_CONTIGUOUS && cnc == 1 && cni == 0, "contiguous_c envelope");
    MPI_Count big;
    MF_CHECK_MPI(MPI_Type_size_c(t, &big));
    MF_CHECK(big == 14, "contiguous_c size");
    MF_CHECK_MPI(MPI_Type_free(&t));
}

static void test_status_counts(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int n;
    MF_CHECK_MPI(MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 5));
    /* 5 basic elements of (double, int) pairs: 2 whole pairs and one double */
    MF_CHECK_MPI(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    MF_CHECK(n == 5, "get_elements %d", n);
    MF_CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    MF_CHECK(n == MPI_UNDEFINED, "get_count of partial %d", n);
    MF_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    MF_CHECK(n == 32, "bytes %d", n);
    MPI_Count big = (MPI_Count)3 << 33;
    MF_CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    MPI_Count got;
    MF_CHECK_MPI(MPI_Get_elements_x(&st, MPI_BYTE, &got));
    MF_CHECK(got == big, "large element count %ld", (long)got);
    MF_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    MF_CHECK(n == MPI_UNDEFINED, "int count overflows to MPI_UNDEFINED");

    int a[4];
    MPI_Aint p0, p2;
    MF_CHECK_MPI(MPI_Get_address(&a[0], &p0));
    MF_CHECK_MPI(MPI_Get_address(&a[2], &p2));
    MF_CHECK(MPI_Aint_diff(p2, p0) == 2 * (MPI_Aint)sizeof(int), "Aint_diff");
    MF_CHECK(MPI_Aint_add(p0, 8) == p2, "Aint_add");
}

static void expect_class(int rc, int cls, const char *what)
{
    int c = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    MF_CHECK(rc != MPI_SUCCESS && c == cls, "%s: got %s, want class %d", what,
             rc == MPI_SUCCESS ? "MPI_SUCCESS" : mftest_error_text(rc), cls);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL, u;
    expect_class(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "negative count");
    expect_class(MPI_Type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "null oldtype");
    expect_class(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, "negative blocklength");
    expect_class(MPI_Type_contiguous(1, (MPI_Datatype)0x4c000915, &t), MPI_ERR_TYPE,
                 "forged handle");
    u = MPI_INT;
    expect_class(MPI_Type_free(&u), MPI_ERR_TYPE, "free predefined");
    int sz[1] = {4}, sub[1] = {2}, st[1] = {3};
    expect_class(MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
                 "subarray outside the array");
    int ints[1];
    expect_class(MPI_Type_get_contents(MPI_INT, 1, 0, 0, ints, NULL, NULL), MPI_ERR_TYPE,
                 "contents of a named type");

    /* uncommitted types cannot be packed; committed ones can */
    MF_CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    int in[2] = {1, 2}, pos = 0;
    char buf[16];
    expect_class(MPI_Pack(in, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE,
                 "pack uncommitted");
    MF_CHECK_MPI(MPI_Type_commit(&t));
    MF_CHECK_MPI(MPI_Pack(in, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    MF_CHECK(pos == 8, "pack position %d", pos);
    expect_class(MPI_Pack(in, 2, t, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_ARG,
                 "pack past outsize");
    expect_class(MPI_Pack(in, -1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT,
                 "pack negative count");
    pos = 4;
    expect_class(MPI_Unpack(buf, 8, &pos, in, 1, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
                 "unpack past insize");
    MPI_Aint apos = 0;
    expect_class(MPI_Pack_external("native", in, 1, t, buf, 16, &apos), MPI_ERR_UNSUPPORTED_DATAREP,
                 "unknown datarep");
    MF_CHECK_MPI(MPI_Type_free(&t));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_predefined();
    test_constructors();
    test_status_counts();
    test_errors();
    return mftest_finish();
}
