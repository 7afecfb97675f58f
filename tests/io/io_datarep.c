/*
 * io_datarep.c — file views in a data representation that converts (MPI-4.0 section 14.5):
 *   - "external32": each rank writes its ints through an interleaving view with write_at_all;
 *     the file's bytes, read through a "native" view, are the values big-endian; read back
 *     through the external32 view they are the values again;
 *   - sizes that differ from memory's: MPI_LONG is 4 bytes in external32, so a vector filetype
 *     of longs strides in 4-byte elements (MPI_File_get_type_extent says so) and the file is
 *     half the size the same native view makes; a long that 4 bytes cannot hold fails the write
 *     with MPI_ERR_CONVERSION;
 *   - a subarray filetype of doubles (each rank a block of columns), nonblocking collective and
 *     independent accesses (MPI_File_iwrite_all, MPI_File_iread_at, MPI_File_iread_all), the
 *     individual file pointer counting the file's etypes;
 *   - a read that meets the end of the file in the middle of a struct element: the status counts
 *     the whole basic elements read, in memory's bytes, and the rest of the buffer is untouched;
 *   - a registered representation with conversion functions ("wide": an int is a negated
 *     8-byte integer in the file), called with the position in the tiled datatype; one without
 *     conversion functions whose extent function is asked about predefined types only (a view
 *     with a derived filetype); and the errors: a datarep never registered, one without
 *     conversion functions whose extents are not memory's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

static int rank, size;
static char path[256];

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static MPI_File open_fresh(void)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    return fh;
}

/* Ints, interleaved: rank r's int i at file int i * size + r. */
static void test_ints(void)
{
    enum { N = 1000 };
    MPI_File fh = open_fresh();
    MPI_Datatype ft;
    MPI_Type_vector(N, 1, size, MPI_INT, &ft);
    MPI_Datatype ftr;
    MPI_Type_create_resized(ft, 0, (MPI_Aint)N * size * 4, &ftr);
    MPI_Type_commit(&ftr);
    int *v = malloc(N * sizeof *v), *back = malloc(N * sizeof *back);
    for (int i = 0; i < N; i++)
        v[i] = (i * size + rank) * (i % 2 ? -1 : 1) - 7;
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ftr, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, f2;
    MF_CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &f2, rep));
    MF_CHECK(strcmp(rep, "external32") == 0, "get_view datarep %s", rep);
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_write_at_all(fh, 0, v, N, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N, "write_at_all count %d", mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_read_at_all(fh, 0, back, N, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N, "read_at_all count %d", mftest_count(&st, MPI_INT));
    for (int i = 0; i < N; i++)
        MF_CHECK(back[i] == v[i], "external32 int %d read back as %d, not %d", i, back[i], v[i]);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* the bytes in the file: every rank's ints, big-endian */
        unsigned char *raw = malloc((size_t)N * size * 4);
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MF_CHECK_MPI(MPI_File_read_at(fh, 0, raw, N * size * 4, MPI_BYTE, &st));
        MF_CHECK(mftest_count(&st, MPI_BYTE) == N * size * 4, "file bytes %d",
                 mftest_count(&st, MPI_BYTE));
        for (int k = 0; k < N * size; k++) {
            int i = k / size, r = k % size;
            int want = (i * size + r) * (i % 2 ? -1 : 1) - 7;
            MF_CHECK((int32_t)(uint32_t)be(raw + 4 * k, 4) == want, "file int %d is %d, not %d", k,
                     (int)(int32_t)(uint32_t)be(raw + 4 * k, 4), want);
        }
        free(raw);
    } else {
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    free(v);
    free(back);
}

/* Longs: 4 bytes each in the file, so the vector's stride counts 4-byte elements. */
static void test_longs(void)
{
    enum { N = 64 };
    MPI_File fh = open_fresh();
    MPI_Datatype ft;
    MPI_Type_vector(N, 1, size, MPI_LONG, &ft);
    MPI_Type_commit(&ft);
    long v[N], back[N];
    for (int i = 0; i < N; i++)
        v[i] = -1000000L * rank - i;
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    MPI_Aint e = 0;
    MF_CHECK_MPI(MPI_File_get_type_extent(fh, MPI_LONG, &e));
    MF_CHECK(e == 4, "external32 extent of MPI_LONG is %ld, not 4", (long)e);
    MF_CHECK_MPI(MPI_File_get_type_extent(fh, ft, &e));
    MF_CHECK(e == (MPI_Aint)((N - 1) * size + 1) * 4, "external32 extent of the vector is %ld",
             (long)e);
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_write_all(fh, v, N, MPI_LONG, &st));
    MPI_Offset pos = -1, bytepos = -1;
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == N, "position after the write is %lld etypes, not %d", (long long)pos, N);
    MF_CHECK_MPI(MPI_File_get_byte_offset(fh, pos, &bytepos));
    MF_CHECK(bytepos == (MPI_Offset)rank * 4 + (MPI_Offset)((N - 1) * size + 1) * 4,
             "byte offset of the end is %lld", (long long)bytepos);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset fsize = 0;
    MF_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    MF_CHECK(fsize == (MPI_Offset)N * size * 4, "the file holds %lld bytes, not %d",
             (long long)fsize, N * size * 4);
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, back, N, MPI_LONG, &st));
    MF_CHECK(mftest_count(&st, MPI_LONG) == N, "read count %d", mftest_count(&st, MPI_LONG));
    for (int i = 0; i < N; i++)
        MF_CHECK(back[i] == v[i], "long %d read back as %ld, not %ld", i, back[i], v[i]);
    long big = 1L << 40;
    MF_CHECK_CLASS(MPI_File_write_at(fh, 0, &big, 1, MPI_LONG, &st), MPI_ERR_CONVERSION,
                   "a long 4 bytes cannot hold");
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, back, 1, MPI_LONG, &st));
    MF_CHECK(back[0] == v[0], "a refused write changed the file: %ld", back[0]);
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

/* A type's extent in an external32 file, by constructor: element counts scale with MPI_LONG's
 * 4 bytes there, byte displacements stay. */
static void expect_extent(MPI_File fh, MPI_Datatype t, MPI_Aint want, const char *what)
{
    MPI_Aint e = -1;
    MPI_Count ec = -1;
    MPI_Type_commit(&t);
    MF_CHECK_MPI(MPI_File_get_type_extent(fh, t, &e));
    MF_CHECK_MPI(MPI_File_get_type_extent_c(fh, t, &ec));
    MF_CHECK(e == want && ec == want, "%s: external32 extent %ld (%lld), not %ld", what, (long)e,
             (long long)ec, (long)want);
    MPI_Type_free(&t);
}

static void test_extents(void)
{
    MPI_File fh = open_fresh();
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Datatype t, u;
    MPI_Type_contiguous(3, MPI_LONG, &t);
    expect_extent(fh, t, 12, "contiguous");
    MPI_Type_contiguous_c(3, MPI_LONG, &t);
    expect_extent(fh, t, 12, "contiguous_c");
    MPI_Type_vector(2, 1, 3, MPI_LONG, &t);
    expect_extent(fh, t, 16, "vector");
    MPI_Type_vector_c(2, 1, 3, MPI_LONG, &t);
    expect_extent(fh, t, 16, "vector_c");
    MPI_Type_create_hvector(2, 1, 100, MPI_LONG, &t);
    expect_extent(fh, t, 104, "hvector");
    int bl[2] = {1, 2}, di[2] = {0, 5};
    MPI_Type_indexed(2, bl, di, MPI_LONG, &t);
    expect_extent(fh, t, 28, "indexed");
    MPI_Aint da[2] = {0, 50};
    MPI_Type_create_hindexed(2, bl, da, MPI_LONG, &t);
    expect_extent(fh, t, 58, "hindexed");
    MPI_Type_create_indexed_block(2, 1, di, MPI_LONG, &t);
    expect_extent(fh, t, 24, "indexed_block");
    MPI_Type_create_hindexed_block(2, 1, da, MPI_LONG, &t);
    expect_extent(fh, t, 54, "hindexed_block");
    int sb[2] = {1, 1};
    MPI_Aint sd[2] = {0, 16};
    MPI_Datatype st[2] = {MPI_LONG, MPI_CHAR};
    MPI_Type_create_struct(2, sb, sd, st, &t);
    expect_extent(fh, t, 17, "struct (no padding in the file)");
    MPI_Type_create_resized(MPI_LONG, 0, 32, &t);
    expect_extent(fh, t, 32, "resized");
    int gs[1] = {10}, ss[1] = {2}, s0[1] = {1};
    MPI_Type_create_subarray(1, gs, ss, s0, MPI_ORDER_C, MPI_LONG, &t);
    expect_extent(fh, t, 40, "subarray");
    int dist[1] = {MPI_DISTRIBUTE_CYCLIC}, darg[1] = {2}, ps[1] = {2};
    MPI_Type_create_darray(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_LONG, &t);
    expect_extent(fh, t, 40, "darray");
    MPI_Type_dup(MPI_LONG, &u);
    MPI_Type_contiguous(2, u, &t);
    MPI_Type_free(&u);
    expect_extent(fh, t, 8, "contiguous of a dup");
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* Doubles in a subarray filetype, nonblocking accesses. */
static void test_subarray_nonblocking(void)
{
    enum { ROWS = 6, COLS = 4 };
    MPI_File fh = open_fresh();
    int sizes[2] = {ROWS, COLS * size}, sub[2] = {ROWS, COLS}, starts[2] = {0, COLS * rank};
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    double v[ROWS * COLS], back[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++)
        v[i] = rank * 1000.5 + i * 0.25;
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "external32", MPI_INFO_NULL));
    MPI_Request r;
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_iwrite_all(fh, v, ROWS * COLS, MPI_DOUBLE, &r));
    MF_CHECK_MPI(MPI_Wait(&r, &st));
    MF_CHECK(mftest_count(&st, MPI_DOUBLE) == ROWS * COLS, "iwrite_all count %d",
             mftest_count(&st, MPI_DOUBLE));
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    memset(back, 0, sizeof back);
    MF_CHECK_MPI(MPI_File_iread_at(fh, 0, back, ROWS * COLS, MPI_DOUBLE, &r));
    MF_CHECK_MPI(MPI_Wait(&r, &st));
    MF_CHECK(mftest_count(&st, MPI_DOUBLE) == ROWS * COLS, "iread_at count %d",
             mftest_count(&st, MPI_DOUBLE));
    MF_CHECK(memcmp(back, v, sizeof v) == 0, "iread_at read other doubles");
    memset(back, 0, sizeof back);
    MF_CHECK_MPI(MPI_File_iread_at_all(fh, 0, back, ROWS * COLS, MPI_DOUBLE, &r));
    MF_CHECK_MPI(MPI_Wait(&r, &st));
    MF_CHECK(memcmp(back, v, sizeof v) == 0, "iread_at_all read other doubles");
    if (rank == 0) { /* row 1, column COLS * size - 1: the last rank's double COLS + COLS - 1 */
        unsigned char raw[8];
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MF_CHECK_MPI(
            MPI_File_read_at(fh, (MPI_Offset)(2 * COLS * size - 1) * 8, raw, 8, MPI_BYTE, &st));
        double want = (size - 1) * 1000.5 + (2 * COLS - 1) * 0.25, got;
        uint64_t bits = be(raw, 8);
        memcpy(&got, &bits, 8);
        MF_CHECK(got == want, "file double is %g, not %g", got, want);
    } else {
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

/* The end of the file inside an element: whole basic elements are counted and converted. */
static void test_partial(void)
{
    struct rec {
        int i;
        double d;
        short s;
    } w[2] = {{1, 2.5, 3}, {-4, 5.5, -6}}, r[3];
    MPI_Datatype t;
    int bl[3] = {1, 1, 1};
    MPI_Aint dp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, s)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
    MPI_Type_create_struct(3, bl, dp, ty, &t);
    MPI_Type_commit(&t);
    MPI_File fh = open_fresh();
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Status st;
    if (rank == 0)
        MF_CHECK_MPI(MPI_File_write_at(fh, 0, w, 2, t, &st));
    MF_CHECK_MPI(MPI_File_sync(fh));
    MF_CHECK_MPI(MPI_File_set_size(fh, 14 + 4 + 8)); /* one record, then an int and a double */
    memset(r, 0x55, sizeof r);
    struct rec untouched;
    memset(&untouched, 0x55, sizeof untouched);
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, r, 3, t, &st));
    MPI_Count n = -1;
    MPI_Get_elements_x(&st, t, &n);
    MF_CHECK(n == 5, "read %lld basic elements, not 5", (long long)n);
    MF_CHECK(mftest_count(&st, t) == MPI_UNDEFINED, "count of a partial record %d",
             mftest_count(&st, t));
    MF_CHECK(r[0].i == 1 && r[0].d == 2.5 && r[0].s == 3, "record 0 read back wrong");
    MF_CHECK(r[1].i == -4 && r[1].d == 5.5, "record 1's int and double read back wrong");
    MF_CHECK(r[1].s == untouched.s, "record 1's short, not in the file, was written");
    MF_CHECK(memcmp(&r[2], &untouched, sizeof untouched) == 0, "record 2 was written");
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&t);
}

/* "wide": an int is a negated 8-byte integer in the file. */
static int wide_extent_calls;
static int wide_extent(MPI_Datatype t, MPI_Aint *ext, void *state)
{
    (void)state;
    wide_extent_calls++;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    *ext = 8;
    return MPI_SUCCESS;
}

static int wide_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                      void *state)
{
    (void)state;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    const int *u = (const int *)userbuf + position;
    for (int k = 0; k < count; k++) {
        int64_t x = -(int64_t)u[k];
        memcpy((char *)filebuf + 8 * k, &x, 8);
    }
    return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                     void *state)
{
    (void)state;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    int *u = (int *)userbuf + position;
    for (int k = 0; k < count; k++) {
        int64_t x;
        memcpy(&x, (char *)filebuf + 8 * k, 8);
        u[k] = (int)-x;
    }
    return MPI_SUCCESS;
}

/* Asked about predefined types only, as the standard says: anything else is an error here. */
static int same_extent(MPI_Datatype t, MPI_Aint *ext, void *state)
{
    (void)state;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    *ext = 4;
    return MPI_SUCCESS;
}

static int double_extent(MPI_Datatype t, MPI_Aint *ext, void *state)
{
    (void)state;
    MPI_Aint lb;
    int rc = MPI_Type_get_extent(t, &lb, ext);
    *ext *= 2;
    return rc;
}

static void test_registered(void)
{
    enum { N = 10 };
    MF_CHECK_MPI(MPI_Register_datarep("wide", wide_read, wide_write, wide_extent, NULL));
    MF_CHECK_CLASS(MPI_Register_datarep("wide", wide_read, wide_write, wide_extent, NULL),
                   MPI_ERR_DUP_DATAREP, "wide registered twice");
    MF_CHECK_MPI(MPI_Register_datarep("same", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                      same_extent, NULL));
    MF_CHECK_MPI(MPI_Register_datarep("twice", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                      double_extent, NULL));
    MPI_File fh = open_fresh();
    MF_CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                   MPI_ERR_UNSUPPORTED_DATAREP, "a datarep never registered");
    MF_CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "twice", MPI_INFO_NULL),
                   MPI_ERR_UNSUPPORTED_DATAREP, "no conversion functions, other extents");
    MPI_Datatype pairs;
    MPI_Type_vector(2, 2, 3, MPI_INT, &pairs);
    MPI_Type_commit(&pairs);
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, pairs, "same", MPI_INFO_NULL));
    MPI_Type_free(&pairs);
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * N * 8, MPI_INT, MPI_INT, "wide", MPI_INFO_NULL));
    MF_CHECK(wide_extent_calls > 0, "the extent function was never called");
    int v[N], back[N];
    for (int i = 0; i < N; i++)
        v[i] = 100 * rank + i;
    MPI_Status st;
    /* Two halves: the second at etype 5, i.e. file byte 40 of this rank's part. */
    MF_CHECK_MPI(MPI_File_write_at(fh, 0, v, N / 2, MPI_INT, &st));
    MF_CHECK_MPI(MPI_File_write_at(fh, N / 2, v + N / 2, N / 2, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N / 2, "write count %d", mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, back, N, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N, "read count %d", mftest_count(&st, MPI_INT));
    for (int i = 0; i < N; i++)
        MF_CHECK(back[i] == v[i], "wide int %d read back as %d, not %d", i, back[i], v[i]);
    int64_t raw[N];
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MF_CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)rank * N * 8, raw, N * 8, MPI_BYTE, &st));
    for (int i = 0; i < N; i++)
        MF_CHECK(raw[i] == -(int64_t)v[i], "file holds %lld for int %d", (long long)raw[i], i);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mftest_shared_path(path, sizeof path, "io_datarep");
    test_ints();
    test_longs();
    test_extents();
    test_subarray_nonblocking();
    test_partial();
    test_registered();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return mftest_finish();
}
