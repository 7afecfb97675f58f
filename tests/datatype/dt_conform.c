/*
 * Datatype conformance found by third-party suites:
 *  - the standard names of the predefined C99/C++ types (MPI_C_COMPLEX is MPI_C_FLOAT_COMPLEX's
 *    handle: either name is accepted, as MPICH's own test does);
 *  - MPI_Type_create_struct with count 0 (arrays may be NULL) is a valid empty type;
 *  - bounds set by MPI_Type_create_resized act as the MPI_LB/MPI_UB markers did: they win over
 *    data lying beyond them in a struct, and propagate through contiguous, vector and struct,
 *    while the true extent covers only data;
 *  - MPIX_C_FLOAT16 (MPICH's extension, tested by mpi4py): 2 bytes, named, carried by
 *    send/receive and reduced (sum, max) correctly.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static void check_name(MPI_Datatype t, const char *want, const char *alt)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = -1;
    int rc = MPI_Type_get_name(t, name, &len);
    MF_CHECK(rc == MPI_SUCCESS && (!strcmp(name, want) || (alt && !strcmp(name, alt))) &&
                 len == (int)strlen(name),
             "name of %s: '%s' (len %d, rc %d)", want, name, len, rc);
}

static void check_bounds(MPI_Datatype t, const char *what, MPI_Aint lb, MPI_Aint extent,
                         MPI_Aint true_lb, MPI_Aint true_extent, int size)
{
    MPI_Aint l, e, tl, te;
    int s;
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    MPI_Type_size(t, &s);
    MF_CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, want %ld %ld", what, (long)l, (long)e,
             (long)lb, (long)extent);
    MF_CHECK(tl == true_lb && te == true_extent, "%s: true lb %ld extent %ld, want %ld %ld", what,
             (long)tl, (long)te, (long)true_lb, (long)true_extent);
    MF_CHECK(s == size, "%s: size %d, want %d", what, s, size);
}

static void names(void)
{
    check_name(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", "MPI_C_COMPLEX");
    check_name(MPI_C_COMPLEX, "MPI_C_COMPLEX", "MPI_C_FLOAT_COMPLEX");
    check_name(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", NULL);
    check_name(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", NULL);
    check_name(MPI_C_BOOL, "MPI_C_BOOL", NULL);
    check_name(MPI_CXX_BOOL, "MPI_CXX_BOOL", NULL);
    check_name(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", NULL);
    check_name(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", NULL);
    check_name(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", NULL);
    check_name(MPI_COMPLEX, "MPI_COMPLEX", NULL);
    check_name(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", NULL);
    check_name(MPI_LONG_LONG, "MPI_LONG_LONG_INT", "MPI_LONG_LONG");
    check_name(MPI_AINT, "MPI_AINT", NULL);
    check_name(MPI_COUNT, "MPI_COUNT", NULL);
    check_name(MPI_OFFSET, "MPI_OFFSET", NULL);
    check_name(MPIX_C_FLOAT16, "MPIX_C_FLOAT16", NULL);
}

static void empty_struct(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_struct(0, NULL, NULL, NULL, &t);
    MF_CHECK(rc == MPI_SUCCESS, "zero-count struct with NULL arrays: rc %d", rc);
    if (rc)
        return;
    MPI_Type_commit(&t);
    check_bounds(t, "empty struct", 0, 0, 0, 0, 0);
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MF_CHECK(comb == MPI_COMBINER_STRUCT && ni == 1 && na == 0 && nd == 0,
             "empty struct envelope %d %d %d %d", comb, ni, na, nd);
    MPI_Type_free(&t);
    int one = 1;
    MPI_Aint zero = 0;
    MPI_Datatype types[] = {MPI_INT};
    rc = MPI_Type_create_struct(0, &one, &zero, types, &t);
    MF_CHECK(rc == MPI_SUCCESS, "zero-count struct: rc %d", rc);
    if (!rc)
        MPI_Type_free(&t);
}

/* r: an int resized to lb -4, extent 16 (data at [0,4)). */
static void resized_bounds(MPI_Comm comm)
{
    MPI_Datatype r, c, v, s, s2, d;
    MPI_Type_create_resized(MPI_INT, -4, 16, &r);
    check_bounds(r, "resized", -4, 16, 0, 4, 4);

    MPI_Type_contiguous(3, r, &c);
    check_bounds(c, "contiguous(3, r)", -4, 48, 0, 36, 12);

    MPI_Type_vector(2, 1, 3, r, &v); /* copies at 0 and 48 */
    check_bounds(v, "vector(2, 1, 3, r)", -4, 64, 0, 52, 8);

    /* A char at 0 and r at 8: r's explicit bounds [4, 20) win over the char's [0, 1). */
    int bl[] = {1, 1};
    MPI_Aint ds[] = {0, 8};
    MPI_Datatype ts[] = {MPI_CHAR, r};
    MPI_Type_create_struct(2, bl, ds, ts, &s);
    check_bounds(s, "struct{char@0, r@8}", 4, 16, 0, 12, 5);

    /* A struct of the struct and a double beyond its bounds: still its explicit bounds, no
     * alignment padding (the markers make the extent exact). */
    MPI_Aint ds2[] = {0, 32};
    MPI_Datatype ts2[] = {s, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, ds2, ts2, &s2);
    check_bounds(s2, "struct{s@0, double@32}", 4, 16, 0, 40, 13);

    MPI_Type_dup(s, &d);
    check_bounds(d, "dup of the struct", 4, 16, 0, 12, 5);

    /* Communication uses the extent: 3 elements of r land 16 bytes apart. */
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Type_commit(&r);
    int buf[12];
    for (int i = 0; i < 12; i++)
        buf[i] = rank == 0 ? 100 + i : -1;
    if (rank == 0 && size == 1) {
        int got[12];
        MPI_Sendrecv(buf + 1, 3, r, 0, 7, got, 12, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
        MF_CHECK(got[0] == 101 && got[1] == 105 && got[2] == 109, "self: %d %d %d", got[0], got[1],
                 got[2]);
    } else if (rank == 0) {
        MPI_Send(buf + 1, 3, r, 1, 7, comm);
    } else if (rank == 1) {
        int got[3];
        MPI_Recv(got, 3, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
        MF_CHECK(got[0] == 101 && got[1] == 105 && got[2] == 109, "received %d %d %d", got[0],
                 got[1], got[2]);
    }
    MPI_Type_free(&r);
    MPI_Type_free(&c);
    MPI_Type_free(&v);
    MPI_Type_free(&s);
    MPI_Type_free(&s2);
    MPI_Type_free(&d);
}

/* binary16 encodings of k / 2 for k = 0..20 (exact). */
static uint16_t h16(int twice)
{
    static const uint16_t tab[] = {0x0000, 0x3800, 0x3c00, 0x3e00, 0x4000, 0x4100, 0x4200,
                                   0x4300, 0x4400, 0x4480, 0x4500, 0x4580, 0x4600, 0x4680,
                                   0x4700, 0x4780, 0x4800, 0x4840, 0x4880, 0x48c0, 0x4900};
    return twice >= 0 && twice <= 20 ? tab[twice] : 0xffff;
}

static void float16(MPI_Comm comm)
{
    int rank, size, s;
    MPI_Aint lb, ext;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Type_size(MPIX_C_FLOAT16, &s);
    MPI_Type_get_extent(MPIX_C_FLOAT16, &lb, &ext);
    MF_CHECK(s == 2 && lb == 0 && ext == 2, "MPIX_C_FLOAT16 size %d lb %ld extent %ld", s, (long)lb,
             (long)ext);
    uint16_t v[4], out[4];
    for (int i = 0; i < 4; i++)
        v[i] = h16(i + rank % 2); /* 0,0.5,1,1.5 or 0.5,1,1.5,2 */
    if (size > 1) {
        if (rank == 0)
            MPI_Send(v, 4, MPIX_C_FLOAT16, 1, 3, comm);
        else if (rank == 1) {
            MPI_Recv(out, 4, MPIX_C_FLOAT16, 0, 3, comm, MPI_STATUS_IGNORE);
            for (int i = 0; i < 4; i++)
                MF_CHECK(out[i] == h16(i), "float16 received [%d] 0x%x", i, out[i]);
        }
    }
    /* Sum over ranks of 0.5 * (i + rank % 2): exact in binary16 at these sizes. */
    int rc = MPI_Allreduce(v, out, 4, MPIX_C_FLOAT16, MPI_SUM, comm);
    MF_CHECK(rc == MPI_SUCCESS, "float16 allreduce rc %d", rc);
    int odd = size / 2;
    for (int i = 0; rc == MPI_SUCCESS && i < 4; i++) {
        int twice = i * size + odd; /* 2 * sum */
        MF_CHECK(out[i] == h16(twice), "float16 sum [%d] 0x%x, want 2*sum %d", i, out[i], twice);
    }
    rc = MPI_Allreduce(v, out, 4, MPIX_C_FLOAT16, MPI_MAX, comm);
    for (int i = 0; rc == MPI_SUCCESS && i < 4; i++)
        MF_CHECK(out[i] == h16(i + (size > 1)), "float16 max [%d] 0x%x", i, out[i]);
    /* Rounding: 2048 + 1 is a tie in binary16 (spacing 2) and goes to even 2048; 1 + 2^-11
     * rounds to 1; 65504 + 16 overflows to infinity. */
    uint16_t a[3] = {0x6800, 0x3c00, 0x7bff}, b[3] = {0x3c00, 0x1000, 0x4c00};
    MPI_Reduce_local(a, b, 3, MPIX_C_FLOAT16, MPI_SUM);
    MF_CHECK(b[0] == 0x6800 && b[1] == 0x3c00 && b[2] == 0x7c00, "float16 rounding 0x%x 0x%x 0x%x",
             b[0], b[1], b[2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    names();
    empty_struct();
    resized_bounds(MPI_COMM_WORLD);
    float16(MPI_COMM_WORLD);
    return mftest_finish();
}
