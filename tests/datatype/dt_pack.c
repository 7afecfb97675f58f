/*
 * dt_pack.c — MPI_Pack/MPI_Unpack round trips, external32 bytes, and a derived type on the wire.
 *
 * Packed streams are checked against the elements picked out by hand; external32 bytes against
 * big-endian encodings written out literally; with two or more ranks, rank 0 sends the columns
 * of a matrix as a vector type and rank 1 receives them contiguously (and back the other way).
 */
#include <mpi.h>
#include <stddef.h>
#include <string.h>

#include "mftest.h"

static void test_pack_roundtrip(void)
{
    /* every third int of 30, in blocks of two: picks 0,1, 3,4, ... */
    int src[30], back[30], packed[20];
    for (int i = 0; i < 30; i++)
        src[i] = 1000 + i;
    MPI_Datatype v;
    MF_CHECK_MPI(MPI_Type_vector(10, 2, 3, MPI_INT, &v));
    MF_CHECK_MPI(MPI_Type_commit(&v));
    int size;
    MF_CHECK_MPI(MPI_Pack_size(1, v, MPI_COMM_WORLD, &size));
    MF_CHECK(size == 80, "pack size %d", size);
    int pos = 0;
    MF_CHECK_MPI(MPI_Pack(src, 1, v, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
    MF_CHECK(pos == 80, "pack position %d", pos);
    for (int i = 0; i < 10; i++)
        MF_CHECK(packed[2 * i] == 1000 + 3 * i && packed[2 * i + 1] == 1001 + 3 * i,
                 "packed block %d: %d %d", i, packed[2 * i], packed[2 * i + 1]);
    memset(back, 0, sizeof back);
    pos = 0;
    MF_CHECK_MPI(MPI_Unpack(packed, 80, &pos, back, 1, v, MPI_COMM_WORLD));
    for (int i = 0; i < 30; i++)
        MF_CHECK(back[i] == (i % 3 == 2 ? 0 : src[i]), "unpacked %d: %d", i, back[i]);
    MF_CHECK_MPI(MPI_Type_free(&v));

    /* two packs into one buffer, unpacked in order with other types */
    struct {
        short s;
        double d;
    } pair = {-7, 2.5};
    int n = 42;
    char buf[64];
    MPI_Datatype st;
    int bl[2] = {1, 1};
    MPI_Aint ds[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_SHORT, MPI_DOUBLE};
    MF_CHECK_MPI(MPI_Type_create_struct(2, bl, ds, ty, &st));
    MF_CHECK_MPI(MPI_Type_commit(&st));
    pos = 0;
    MF_CHECK_MPI(MPI_Pack(&pair, 1, st, buf, 64, &pos, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Pack(&n, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    MF_CHECK(pos == 14, "two packs: position %d", pos);
    short s2;
    double d2;
    int n2;
    pos = 0;
    MF_CHECK_MPI(MPI_Unpack(buf, 14, &pos, &s2, 1, MPI_SHORT, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Unpack(buf, 14, &pos, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Unpack(buf, 14, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD));
    MF_CHECK(s2 == -7 && d2 == 2.5 && n2 == 42, "unpacked %d %g %d", s2, d2, n2);
    MF_CHECK_MPI(MPI_Type_free(&st));
}

static void test_external32(void)
{
    /* struct { int i; long l; double d; short s; } as external32: 4 + 4 + 8 + 2 bytes */
    struct rec {
        int i;
        long l;
        double d;
        short s;
    } r = {0x01020304, -2, 1.5, 0x0a0b};
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint ds[4] = {offsetof(struct rec, i), offsetof(struct rec, l), offsetof(struct rec, d),
                      offsetof(struct rec, s)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_LONG, MPI_DOUBLE, MPI_SHORT}, t;
    MF_CHECK_MPI(MPI_Type_create_struct(4, bl, ds, ty, &t));
    MF_CHECK_MPI(MPI_Type_commit(&t));
    MPI_Aint size;
    MF_CHECK_MPI(MPI_Pack_external_size("external32", 2, t, &size));
    MF_CHECK(size == 36, "external32 size %ld", (long)size);
    unsigned char out[36];
    const unsigned char want[18] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0x3f,
                                    0xf8, 0,    0,    0,    0,    0,    0,    0x0a, 0x0b};
    struct rec two[2] = {r, r};
    MPI_Aint pos = 0;
    MF_CHECK_MPI(MPI_Pack_external("external32", two, 2, t, out, sizeof out, &pos));
    MF_CHECK(pos == 36, "external32 position %ld", (long)pos);
    MF_CHECK(!memcmp(out, want, 18) && !memcmp(out + 18, want, 18), "external32 bytes");
    struct rec back[2];
    memset(back, 0, sizeof back);
    pos = 0;
    MF_CHECK_MPI(MPI_Unpack_external("external32", out, 36, &pos, back, 2, t));
    MF_CHECK(back[1].i == r.i && back[1].l == r.l && back[1].d == r.d && back[1].s == r.s,
             "external32 round trip");
    MF_CHECK_MPI(MPI_Type_free(&t));
}

static void test_wire(int rank, int size)
{
    if (size < 2 || rank > 1)
        return;
    /* a 6x5 matrix of doubles; column 2 as a vector type */
    double m[6][5], col[6];
    MPI_Datatype c;
    MF_CHECK_MPI(MPI_Type_vector(6, 1, 5, MPI_DOUBLE, &c));
    MF_CHECK_MPI(MPI_Type_commit(&c));
    if (rank == 0) {
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 5; j++)
                m[i][j] = i * 10 + j;
        MF_CHECK_MPI(MPI_Send(&m[0][2], 1, c, 1, 7, MPI_COMM_WORLD));
        memset(m, 0, sizeof m);
        MF_CHECK_MPI(MPI_Recv(&m[0][4], 1, c, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 6; i++)
            MF_CHECK(m[i][4] == -i && m[i][3] == 0, "column back %d: %g", i, m[i][4]);
    } else {
        MPI_Status st;
        MF_CHECK_MPI(MPI_Recv(col, 6, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &st));
        int n;
        MF_CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE, &n));
        MF_CHECK(n == 6, "received %d doubles", n);
        for (int i = 0; i < 6; i++)
            MF_CHECK(col[i] == i * 10 + 2, "column %d: %g", i, col[i]);
        for (int i = 0; i < 6; i++)
            col[i] = -i;
        MF_CHECK_MPI(MPI_Send(col, 6, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD));
    }
    MF_CHECK_MPI(MPI_Type_free(&c));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_pack_roundtrip();
    test_external32();
    test_wire(rank, size);
    return mftest_finish();
}
