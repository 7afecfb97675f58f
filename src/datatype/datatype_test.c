/*
 * datatype_test.c — unit tests of the datatype engine against a naive reference.
 *
 * The reference keeps a type map as it is defined in the standard: an explicit list of
 * (displacement, basic size) entries, expanded by every constructor. Packing with it is a plain
 * loop over elements and entries. The engine (runs, merging, cursor location) must produce the
 * same stream for every type, at any offset and length, and its iovecs must describe the same
 * bytes. Extents are checked against values computed by hand from the C layouts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/dt_internal.h"
#include "unit_check.h"

/* ---- reference type maps ---- */
struct ref {
    size_t n;
    MPI_Aint off[4096];
    size_t len[4096];
    MPI_Aint extent;
};

static void ref_add(struct ref *r, const struct ref *old, MPI_Aint disp)
{
    for (size_t i = 0; i < old->n; i++) {
        r->off[r->n] = old->off[i] + disp;
        r->len[r->n] = old->len[i];
        r->n++;
    }
}

static struct ref *ref_basic(size_t size)
{
    struct ref *r = calloc(1, sizeof *r);
    r->n = 1;
    r->len[0] = size;
    r->extent = (MPI_Aint)size;
    return r;
}

static struct ref *ref_vector(const struct ref *old, size_t count, size_t blen, MPI_Aint stride)
{
    struct ref *r = calloc(1, sizeof *r);
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < blen; j++)
            ref_add(r, old, (MPI_Aint)i * stride + (MPI_Aint)j * old->extent);
    return r;
}

static size_t ref_size(const struct ref *r)
{
    size_t s = 0;
    for (size_t i = 0; i < r->n; i++)
        s += r->len[i];
    return s;
}

static void ref_pack(const struct ref *r, MPI_Aint extent, const char *buf, size_t count, char *out)
{
    for (size_t e = 0; e < count; e++)
        for (size_t i = 0; i < r->n; i++) {
            memcpy(out, buf + (MPI_Aint)e * extent + r->off[i], r->len[i]);
            out += r->len[i];
        }
}

/* ---- comparing the engine with the reference ---- */
#define ARENA 65536
static char arena_src[ARENA], arena_dst[ARENA];
#define BASE (ARENA / 2) /* room for negative displacements */

static unsigned rng = 12345;
static size_t rnd(size_t n)
{
    rng = rng * 1103515245u + 12345u;
    return n ? (rng >> 8) % n : 0;
}

static void compare(const char *what, const mf_datatype *dt, const struct ref *r, size_t count)
{
    const struct mf_datatype_public *p = mf_datatype_info(dt);
    CHECKF(p->dt_size == ref_size(r), "%s: size %zu, reference %zu", what, p->dt_size, ref_size(r));
    size_t total = count * p->dt_size;
    char *want = malloc(total + 1), *got = malloc(total + 1);
    for (size_t i = 0; i < ARENA; i++)
        arena_src[i] = (char)(i * 7 + 3);
    ref_pack(r, p->dt_extent, arena_src + BASE, count, want);

    mf_datatype_pack(dt, arena_src + BASE, count, 0, got, total);
    CHECKF(!memcmp(want, got, total), "%s: whole pack differs", what);

    /* pieces at arbitrary offsets, in order, then reversed order for unpack */
    for (int trial = 0; trial < 20; trial++) {
        memset(got, 0, total);
        size_t off = 0;
        while (off < total) {
            size_t len = 1 + rnd(total - off < 37 ? total - off : 37);
            mf_datatype_pack(dt, arena_src + BASE, count, off, got + off, len);
            off += len;
        }
        CHECKF(!memcmp(want, got, total), "%s: pack in pieces differs (trial %d)", what, trial);

        memset(arena_dst, 0, ARENA);
        size_t end = total;
        while (end > 0) {
            size_t len = 1 + rnd(end < 29 ? end : 29);
            mf_datatype_unpack(dt, arena_dst + BASE, count, end - len, want + end - len, len);
            end -= len;
        }
        char *again = malloc(total + 1);
        ref_pack(r, p->dt_extent, arena_dst + BASE, count, again);
        CHECKF(!memcmp(want, again, total), "%s: unpack in pieces differs (trial %d)", what, trial);
        free(again);
    }

    /* iovecs from random offsets with a small vector budget */
    size_t off = rnd(total);
    size_t pos = off;
    while (pos < total) {
        struct iovec iov[3];
        size_t bytes;
        int n = mf_datatype_iov(dt, arena_src + BASE, count, pos, iov, 3, &bytes);
        CHECKF(n > 0 && bytes > 0, "%s: iov made no progress at %zu", what, pos);
        if (n <= 0 || !bytes)
            break;
        size_t q = pos;
        for (int i = 0; i < n; i++) {
            CHECKF(!memcmp(iov[i].iov_base, want + q, iov[i].iov_len), "%s: iov %d at %zu", what, i,
                   q);
            q += iov[i].iov_len;
        }
        CHECKF(q - pos == bytes, "%s: iov bytes %zu, vectors cover %zu", what, bytes, q - pos);
        pos += bytes;
    }
    free(want);
    free(got);
}

static mf_datatype *bt(MPI_Datatype h)
{
    return mf_datatype_get(h);
}

static void test_builtins(void)
{
    struct {
        MPI_Datatype h;
        size_t size;
        MPI_Aint extent;
        const char *name;
    } t[] = {
        {MPI_INT, 4, 4, "MPI_INT"},
        {MPI_LONG_LONG, 8, 8, "MPI_LONG_LONG_INT"},
        {MPI_DOUBLE_INT, 12, 16, "MPI_DOUBLE_INT"},
        {MPI_SHORT_INT, 6, 8, "MPI_SHORT_INT"},
        {MPI_FLOAT_INT, 8, 8, "MPI_FLOAT_INT"},
        {MPI_LONG_INT, 12, 16, "MPI_LONG_INT"},
        {MPI_LONG_DOUBLE_INT, 20, 32, "MPI_LONG_DOUBLE_INT"},
        {MPI_2INT, 8, 8, "MPI_2INT"},
        {MPI_C_DOUBLE_COMPLEX, 16, 16, "MPI_C_DOUBLE_COMPLEX"},
        {MPI_C_COMPLEX, 8, 8, "MPI_C_COMPLEX"}, /* MPI_C_FLOAT_COMPLEX too; MPICH's name */
        {MPI_LB, 0, 0, "MPI_LB"},
        {MPI_COUNT, 8, 8, "MPI_COUNT"},
        {MPI_CXX_BOOL, 1, 1, "MPI_CXX_BOOL"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        mf_datatype *dt = bt(t[i].h);
        CHECKF(dt, "builtin 0x%x not found", (unsigned)t[i].h);
        if (!dt)
            continue;
        CHECKF(dt->pub.dt_size == t[i].size, "%s size %zu", t[i].name, dt->pub.dt_size);
        CHECKF(dt->pub.dt_extent == t[i].extent, "%s extent %ld", t[i].name,
               (long)dt->pub.dt_extent);
        CHECKF(!strcmp(mf_datatype_name(dt), t[i].name), "%s named %s", t[i].name,
               mf_datatype_name(dt));
    }
    CHECKF(!mf_datatype_get(MPI_DATATYPE_NULL), "MPI_DATATYPE_NULL resolves");
    CHECKF(!mf_datatype_get(0x4c000415), "unknown builtin resolves");
    CHECKF(!mf_datatype_get(0x8c000009), "unknown pair resolves");
    CHECKF(mf_datatype_kind(bt(MPI_UNSIGNED)) == MF_DT_KIND_UNSIGNED, "kind of MPI_UNSIGNED");
    CHECKF(mf_datatype_ctype(bt(MPI_LONG)) == MF_DT_C_INT64, "ctype of MPI_LONG");
    CHECKF(mf_datatype_basic_type(bt(MPI_SHORT_INT)) == MPI_SHORT_INT, "basic of MPI_SHORT_INT");
    CHECKF(bt(MPI_INT)->pub.dt_contig && !bt(MPI_SHORT_INT)->pub.dt_contig, "contig flags");

    /* the padded pair: the stream skips the hole after the short */
    struct {
        short v;
        int i;
    } pairs[2] = {{1, 10}, {-2, 20}};
    char out[12];
    mf_datatype_pack(bt(MPI_SHORT_INT), pairs, 2, 0, out, 12);
    short s;
    int n;
    memcpy(&s, out + 6, 2);
    memcpy(&n, out + 8, 4);
    CHECKF(s == -2 && n == 20, "MPI_SHORT_INT stream: %d %d", s, n);
}

static void test_layouts(void)
{
    mf_datatype *i4 = bt(MPI_INT), *d8 = bt(MPI_DOUBLE), *c1 = bt(MPI_CHAR);
    struct ref *ri = ref_basic(4), *rd = ref_basic(8), *rc = ref_basic(1);
    mf_datatype *t;

    /* contiguous */
    mf_dt_build_contiguous(i4, 5, &t);
    struct ref *r = ref_vector(ri, 1, 5, 0);
    r->extent = 20;
    CHECKF(t->pub.dt_contig && t->pub.dt_extent == 20 && t->pub.dt_piece_avg == 20,
           "contiguous(5, int)");
    compare("contiguous", t, r, 3);
    mf_dt_destroy(t);
    free(r);

    /* vector: 4 blocks of 3 ints, stride 5 ints */
    mf_dt_build_hvector(i4, 4, 3, 20, &t);
    r = ref_vector(ri, 4, 3, 20);
    CHECKF(t->pub.dt_extent == 4 * 3 * 4 + 3 * 2 * 4, "vector extent %ld", (long)t->pub.dt_extent);
    CHECKF(t->dt_nfast == 1, "vector is one run, got %zu", t->dt_nfast);
    /* 4 pieces of 12 bytes: what a sender reads to pack rather than gather (p2p/send.c) */
    CHECKF(t->pub.dt_piece_avg == 12, "vector piece average %zu", t->pub.dt_piece_avg);
    r->extent = t->pub.dt_extent;
    compare("vector", t, r, 4);

    /* vector of that vector, negative stride */
    mf_datatype *t2;
    mf_dt_build_hvector(t, 3, 2, -200, &t2);
    struct ref *r2 = ref_vector(r, 3, 2, -200);
    CHECKF(t2->pub.dt_lb == -400, "negative stride lb %ld", (long)t2->pub.dt_lb);
    CHECKF(t2->pub.dt_true_lb == -400, "negative stride true lb %ld", (long)t2->pub.dt_true_lb);
    r2->extent = t2->pub.dt_extent;
    compare("vector of vector, negative stride", t2, r2, 2);
    mf_dt_destroy(t2);
    free(r2);
    mf_dt_destroy(t);
    free(r);

    /* hindexed with zero-length and overlapping-order blocks */
    MPI_Count bl[] = {2, 0, 1, 3, 1};
    MPI_Aint ds[] = {24, 0, 0, 40, 4};
    mf_dt_build_hindexed(d8, 5, bl, 0, ds, &t);
    r = calloc(1, sizeof *r);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < bl[i]; j++)
            ref_add(r, rd, ds[i] + 8 * j);
    CHECKF(t->pub.dt_lb == 0 && t->pub.dt_extent == 64, "hindexed extent %ld",
           (long)t->pub.dt_extent);
    CHECKF(t->pub.dt_true_lb == 0 && t->pub.dt_true_extent == 64, "hindexed true extent");
    r->extent = 64;
    compare("hindexed", t, r, 3);
    mf_dt_destroy(t);
    free(r);

    /* struct {char c; double d; int i[3];}: padding and alignment as the compiler does */
    struct s1 {
        char c;
        double d;
        int i[3];
    };
    MPI_Count sbl[] = {1, 1, 3};
    MPI_Aint sds[] = {0, 8, 16};
    mf_datatype *sty[] = {c1, d8, i4};
    mf_dt_build_struct(3, sbl, sds, sty, &t);
    CHECKF(t->pub.dt_extent == (MPI_Aint)sizeof(struct s1), "struct extent %ld, sizeof %zu",
           (long)t->pub.dt_extent, sizeof(struct s1));
    CHECKF(t->pub.dt_size == 21, "struct size %zu", t->pub.dt_size);
    CHECKF(mf_datatype_basic_type(t) == MPI_DATATYPE_NULL, "struct mixes types");
    r = calloc(1, sizeof *r);
    ref_add(r, rc, 0);
    ref_add(r, rd, 8);
    for (int j = 0; j < 3; j++)
        ref_add(r, ri, 16 + 4 * j);
    r->extent = t->pub.dt_extent;
    compare("struct", t, r, 5);
    MPI_Count whole, basic;
    mf_datatype_count(t, 21 * 2 + 9, &whole, &basic);
    CHECKF(whole == MPI_UNDEFINED && basic == 2 * 5 + 2, "elements: %ld %ld", (long)whole,
           (long)basic);
    mf_datatype_count(t, 21 * 2 + 10, &whole, &basic);
    CHECKF(basic == MPI_UNDEFINED, "elements of a partial int: %ld", (long)basic);

    /* resized with a negative lb, then a vector of it: extents step by the new extent */
    mf_datatype *rs;
    mf_dt_build_resized(t, -8, 48, &rs);
    CHECKF(rs->pub.dt_lb == -8 && rs->pub.dt_extent == 48, "resized bounds");
    mf_dt_build_contiguous(rs, 3, &t2);
    CHECKF(t2->pub.dt_lb == -8 && t2->pub.dt_extent == 144, "contiguous of resized: %ld %ld",
           (long)t2->pub.dt_lb, (long)t2->pub.dt_extent);
    r2 = ref_vector(r, 1, 3, 0);
    r2->n = 0;
    for (int j = 0; j < 3; j++)
        ref_add(r2, r, 48 * j);
    r2->extent = 144;
    compare("contiguous of resized", t2, r2, 2);
    mf_dt_destroy(t2);
    free(r2);

    /* struct containing a resized type: no extra padding, and its explicit bounds win over the
     * char's data beyond them (as MPI_LB/MPI_UB markers would): lb -8, ub 40 */
    MPI_Count b2[] = {1, 1};
    MPI_Aint d2[] = {0, 48};
    mf_datatype *ty2[] = {rs, c1};
    mf_dt_build_struct(2, b2, d2, ty2, &t2);
    CHECKF(t2->pub.dt_lb == -8 && t2->pub.dt_extent == 48, "struct with resized: %ld %ld",
           (long)t2->pub.dt_lb, (long)t2->pub.dt_extent);
    CHECKF(t2->pub.dt_true_lb == 0 && t2->pub.dt_true_extent == 49, "struct true extent: %ld %ld",
           (long)t2->pub.dt_true_lb, (long)t2->pub.dt_true_extent);
    mf_dt_destroy(t2);
    mf_dt_destroy(rs);
    mf_dt_destroy(t);
    free(r);
    free(ri);
    free(rd);
    free(rc);
}

static void test_grid(void)
{
    /* subarray of a 4x5x6 int array, C order: subsizes 2x3x2 at starts 1,2,3 */
    MPI_Count st[3] = {1, 2, 3}, ln[3] = {2, 3, 2};
    struct mf_dt_dim dims[3] = {
        {4, 1, &st[0], &ln[0]}, {5, 1, &st[1], &ln[1]}, {6, 1, &st[2], &ln[2]}};
    mf_datatype *t;
    mf_dt_build_grid(bt(MPI_INT), 3, dims, MPI_ORDER_C, &t);
    CHECKF(t->pub.dt_lb == 0 && t->pub.dt_extent == 4 * 5 * 6 * 4, "subarray C extent");
    struct ref *r = calloc(1, sizeof *r), *ri = ref_basic(4);
    for (int a = 1; a < 3; a++)
        for (int b = 2; b < 5; b++)
            for (int c = 3; c < 5; c++)
                ref_add(r, ri, ((a * 5 + b) * 6 + c) * 4);
    r->extent = 480;
    CHECKF(t->pub.dt_true_lb == ((1 * 5 + 2) * 6 + 3) * 4, "subarray true lb %ld",
           (long)t->pub.dt_true_lb);
    compare("subarray C", t, r, 2);
    mf_dt_destroy(t);

    /* same in Fortran order: dimension 0 varies fastest */
    mf_dt_build_grid(bt(MPI_INT), 3, dims, MPI_ORDER_FORTRAN, &t);
    r->n = 0;
    for (int c = 3; c < 5; c++)
        for (int b = 2; b < 5; b++)
            for (int a = 1; a < 3; a++)
                ref_add(r, ri, ((c * 5 + b) * 4 + a) * 4);
    compare("subarray Fortran", t, r, 2);
    mf_dt_destroy(t);

    /* a darray-like grid: 10 elements cyclic(2) over 3 processes, process 1 holds 2,3 and 8,9 */
    MPI_Count cst[2] = {2, 8}, cln[2] = {2, 2};
    struct mf_dt_dim cyc = {10, 2, cst, cln};
    mf_dt_build_grid(bt(MPI_DOUBLE), 1, &cyc, MPI_ORDER_C, &t);
    struct ref *rd = ref_basic(8);
    r->n = 0;
    int want[] = {2, 3, 8, 9};
    for (int i = 0; i < 4; i++)
        ref_add(r, rd, want[i] * 8);
    r->extent = 80;
    CHECKF(t->pub.dt_extent == 80 && t->pub.dt_size == 32, "cyclic grid extent/size");
    compare("cyclic", t, r, 3);
    mf_dt_destroy(t);
    free(r);
    free(ri);
    free(rd);
}

static void test_big_count(void)
{
    /* a vector with a million blocks must stay one run, and locate offsets deep inside */
    mf_datatype *t;
    mf_dt_build_hvector(bt(MPI_INT), 1000000, 1, 8, &t);
    CHECKF(t->dt_nruns == 1 && t->dt_nfast == 1, "million-block vector has %zu runs", t->dt_nruns);
    int *src = malloc(2000000 * sizeof(int));
    for (int i = 0; i < 2000000; i++)
        src[i] = i;
    int got[4];
    mf_datatype_pack(t, src, 1, 4 * 777777, got, sizeof got);
    CHECKF(got[0] == 2 * 777777 && got[3] == 2 * 777780, "deep offset pack: %d %d", got[0], got[3]);
    free(src);
    mf_dt_destroy(t);
}

static void test_external32(void)
{
    int32_t i = 0x01020304;
    unsigned char out[32];
    mf_datatype_pack_external(bt(MPI_INT), &i, 1, out);
    CHECKF(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4, "int external32");
    long l = -2;
    mf_datatype_pack_external(bt(MPI_LONG), &l, 1, out);
    CHECKF(bt(MPI_LONG)->dt_ext32_size == 4 && out[0] == 0xff && out[3] == 0xfe,
           "long external32 is 4 bytes");
    long back = 0;
    mf_datatype_unpack_external(bt(MPI_LONG), out, &back, 1);
    CHECKF(back == -2, "long external32 back: %ld", back);
    l = 1L << 40;
    CHECKF(mf_datatype_pack_external(bt(MPI_LONG), &l, 1, out) != MPI_SUCCESS,
           "long overflow detected");
    double d = 1.0;
    mf_datatype_pack_external(bt(MPI_DOUBLE), &d, 1, out);
    CHECKF(out[0] == 0x3f && out[1] == 0xf0 && out[7] == 0, "double external32");
    long double ld = -1.5L, ldb = 0;
    mf_datatype_pack_external(bt(MPI_LONG_DOUBLE), &ld, 1, out);
    /* binary128 of -1.5: sign 1, exponent 0x3fff, fraction 1000... */
    CHECKF(out[0] == 0xbf && out[1] == 0xff && out[2] == 0x80 && out[3] == 0 && out[15] == 0,
           "long double external32: %02x %02x %02x", out[0], out[1], out[2]);
    mf_datatype_unpack_external(bt(MPI_LONG_DOUBLE), out, &ldb, 1);
    CHECKF(ldb == ld, "long double back");
    struct {
        double v;
        int i;
    } di = {2.0, 7};
    mf_datatype_pack_external(bt(MPI_DOUBLE_INT), &di, 1, out);
    CHECKF(out[0] == 0x40 && out[11] == 7, "double_int external32");
}

int main(void)
{
    test_builtins();
    test_layouts();
    test_grid();
    test_big_count();
    test_external32();
    if (unit_check_failures) {
        fprintf(stderr, "%d failures\n", unit_check_failures);
        return 1;
    }
    printf("datatype unit tests passed\n");
    return 0;
}
