/*
 * MPI_Type_create_f90_real, _complex and _integer: the kind chosen for each (p, r) (sizes of
 * gfortran's kinds on x86-64), the envelope and contents that name the call, the same handle on
 * every call with the same arguments, MPI_Type_free refusing the predefined result, argument
 * errors, and the type on the wire (a ring of reals, integers and complexes).
 */
#include <string.h>

#include "mftest.h"

static int rank, size;

/* The type's size, and that its envelope and contents are (combiner, ints). */
static void check_type(MPI_Datatype t, int want_size, int combiner, int ni, int p, int r,
                       const char *what)
{
    int sz = -1, nints = -1, na = -1, nd = -1, comb = -1, ints[2] = {-7, -7};
    MPI_Aint aints[1];
    MPI_Datatype types[1];
    MF_CHECK_MPI(MPI_Type_size(t, &sz));
    MF_CHECK(sz == want_size, "%s: size %d, expected %d", what, sz, want_size);
    MF_CHECK_MPI(MPI_Type_get_envelope(t, &nints, &na, &nd, &comb));
    MF_CHECK(comb == combiner && nints == ni && na == 0 && nd == 0,
             "%s: envelope combiner %d ni %d na %d nd %d", what, comb, nints, na, nd);
    MF_CHECK_MPI(MPI_Type_get_contents(t, 2, 0, 0, ints, aints, types));
    MF_CHECK(ni == 1 ? ints[0] == r : ints[0] == p && ints[1] == r, "%s: contents %d %d", what,
             ints[0], ints[1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    static const struct {
        int p, r, real_size;
    } reals[] = {{6, 30, 4},
                 {6, 37, 4},
                 {7, 30, 8},
                 {15, 300, 8},
                 {15, 308, 16},
                 {MPI_UNDEFINED, 37, 4},
                 {10, MPI_UNDEFINED, 8},
                 {18, 4931, 16},
                 {33, 100, 16}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        MPI_Datatype t, c, again;
        char what[64];
        snprintf(what, sizeof what, "real(p=%d, r=%d)", reals[i].p, reals[i].r);
        MF_CHECK_MPI(MPI_Type_create_f90_real(reals[i].p, reals[i].r, &t));
        check_type(t, reals[i].real_size, MPI_COMBINER_F90_REAL, 2, reals[i].p, reals[i].r, what);
        MF_CHECK_MPI(MPI_Type_create_f90_real(reals[i].p, reals[i].r, &again));
        MF_CHECK(again == t, "%s: a second call gave another handle", what);
        snprintf(what, sizeof what, "complex(p=%d, r=%d)", reals[i].p, reals[i].r);
        MF_CHECK_MPI(MPI_Type_create_f90_complex(reals[i].p, reals[i].r, &c));
        check_type(c, 2 * reals[i].real_size, MPI_COMBINER_F90_COMPLEX, 2, reals[i].p, reals[i].r,
                   what);
    }
    static const struct {
        int r, size;
    } ints[] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        MPI_Datatype t;
        char what[64];
        snprintf(what, sizeof what, "integer(r=%d)", ints[i].r);
        MF_CHECK_MPI(MPI_Type_create_f90_integer(ints[i].r, &t));
        check_type(t, ints[i].size, MPI_COMBINER_F90_INTEGER, 1, MPI_UNDEFINED, ints[i].r, what);
    }

    /* Errors: no such kind, both unspecified, negative; freeing the predefined result. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int cls = -1;
    MPI_Error_class(MPI_Type_create_f90_real(34, 10, &t), &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "real(p=34): class %d", cls);
    MPI_Error_class(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "real(undefined, undefined): class %d", cls);
    MPI_Error_class(MPI_Type_create_f90_complex(6, 5000, &t), &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "complex(r=5000): class %d", cls);
    MPI_Error_class(MPI_Type_create_f90_integer(19, &t), &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "integer(r=19): class %d", cls);
    MPI_Error_class(MPI_Type_create_f90_integer(-1, &t), &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "integer(r=-1): class %d", cls);
    MF_CHECK_MPI(MPI_Type_create_f90_real(15, 300, &t));
    MPI_Datatype keep = t;
    MPI_Error_class(MPI_Type_free(&t), &cls);
    MF_CHECK(cls == MPI_ERR_TYPE && t == keep, "MPI_Type_free of an f90 type: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* On the wire: 8-byte reals and 4-byte integers around the ring, by their f90 types. */
    MPI_Datatype r8, i4;
    MF_CHECK_MPI(MPI_Type_create_f90_real(15, 300, &r8));
    MF_CHECK_MPI(MPI_Type_create_f90_integer(9, &i4));
    double out[3] = {rank + 0.5, -rank * 2.25, 1e300}, in[3] = {0};
    int iout[2] = {rank, -rank}, iin[2] = {-9, -9};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MF_CHECK_MPI(
        MPI_Sendrecv(out, 3, r8, next, 1, in, 3, r8, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(
        MPI_Sendrecv(iout, 2, i4, next, 2, iin, 2, i4, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK(in[0] == prev + 0.5 && in[1] == -prev * 2.25 && in[2] == 1e300,
             "reals from rank %d: %g %g %g", prev, in[0], in[1], in[2]);
    MF_CHECK(iin[0] == prev && iin[1] == -prev, "integers from rank %d: %d %d", prev, iin[0],
             iin[1]);
    double sum = 0;
    double mine = rank + 1.0;
    MF_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    MF_CHECK(sum == size * (size + 1) / 2.0, "allreduce over an f90 real: %g", sum);
    return mftest_finish();
}
