/*
 * MPI-IO: every data-access form and the calls around it, checked against what the file holds.
 *   - explicit offsets, collective and not, blocking, nonblocking and split; sizes;
 *   - a view that interleaves the ranks' ints (a strided filetype, per-rank displacement),
 *     written collectively, read back through a plain byte view; a strided memory type;
 *   - the individual file pointer: seek (SET, CUR, END), position, byte offset, reads that stop
 *     at the end of the file with the count they moved;
 *   - the shared file pointer: every rank's write_shared lands once; write_ordered and
 *     read_ordered in rank order; seek_shared and its position;
 *   - open modes (EXCL, APPEND, DELETE_ON_CLOSE), atomicity, set_size and preallocate, amode,
 *     group, info, Fortran handles;
 *   - errors with their classes: a missing file, a bad amode, EXCL on an existing file, writing
 *     a read-only file, reading a write-only one, an unsupported datarep, a bad handle; and a
 *     user error handler set on MPI_FILE_NULL reaching a failed open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define N 1000 /* ints per rank */

static int rank, size;
static char path[256], path2[300];

/* Blocks of N ints per rank at explicit offsets, every form. */
static void offsets(void)
{
    MPI_File fh;
    MPI_Status st;
    int *buf = malloc(N * sizeof *buf), *all = malloc((size_t)size * N * sizeof *all);
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (int i = 0; i < N; i++)
        buf[i] = rank * N + i;
    MPI_Offset at = (MPI_Offset)rank * N * (MPI_Offset)sizeof(int);
    MF_CHECK_MPI(MPI_File_write_at_all(fh, at, buf, N, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N, "write_at_all: count %d", mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Offset fsize = 0;
    MF_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    MF_CHECK(fsize == (MPI_Offset)size * N * (MPI_Offset)sizeof(int), "size %lld",
             (long long)fsize);
    /* Every rank reads the whole file, independently. */
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, all, size * N, MPI_INT, &st));
    for (int i = 0; i < size * N; i++)
        if (all[i] != i) {
            MF_CHECK(0, "read_at: int %d is %d", i, all[i]);
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read before any rewrites */
    /* Nonblocking, then split collective, each rewriting its block with new values. */
    for (int i = 0; i < N; i++)
        buf[i] = -(rank * N + i);
    MPI_Request rq;
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, at, buf, N, MPI_INT, &rq));
    MF_CHECK_MPI(MPI_Wait(&rq, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N, "iwrite_at: count %d", mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_sync(fh));
    memset(buf, 0, N * sizeof *buf);
    MF_CHECK_MPI(MPI_File_read_at_all_begin(fh, at, buf, N, MPI_INT));
    MF_CHECK_MPI(MPI_File_read_at_all_end(fh, buf, &st));
    MF_CHECK(buf[0] == -(rank * N) && buf[N - 1] == -(rank * N + N - 1),
             "split read_at_all: %d .. %d", buf[0], buf[N - 1]);
    MF_CHECK_MPI(MPI_File_iread_at_all(fh, at, buf, N, MPI_INT, &rq));
    MF_CHECK_MPI(MPI_Wait(&rq, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == N && buf[1] == -(rank * N + 1), "iread_at_all");
    /* Past the end: a read that stops there says how much it moved. */
    MF_CHECK_MPI(MPI_File_read_at(fh, fsize - 2 * (MPI_Offset)sizeof(int), buf, 10, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == 2, "read across the end: count %d",
             mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_read_at(fh, fsize + 100, buf, 10, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == 0, "read past the end: count %d",
             mftest_count(&st, MPI_INT));
    MF_CHECK_MPI(MPI_File_close(&fh));
    MF_CHECK(fh == MPI_FILE_NULL, "close left the handle");
    free(buf);
    free(all);
}

/* The ranks' ints interleaved by a view: int k of rank r at int k * size + r. */
static void views(void)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype vec, ft, mem;
    int data[2 * N];
    MPI_Type_vector(1, 1, size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(size * sizeof(int)), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    /* In memory: every other int of data (a strided memory type). */
    MPI_Type_vector(N, 1, 2, MPI_INT, &mem);
    MPI_Type_commit(&mem);
    for (int k = 0; k < N; k++) {
        data[2 * k] = k * size + rank;
        data[2 * k + 1] = -7;
    }
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(int), MPI_INT, ft,
                                   "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft2;
    char rep[MPI_MAX_DATAREP_STRING];
    MF_CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft2, rep));
    MF_CHECK(disp == (MPI_Offset)rank * (MPI_Offset)sizeof(int) && et == MPI_INT &&
                 strcmp(rep, "native") == 0,
             "get_view: %lld %s", (long long)disp, rep);
    MPI_Type_free(&ft2);
    MPI_Offset byte;
    MF_CHECK_MPI(MPI_File_get_byte_offset(fh, 3, &byte));
    MF_CHECK(byte == (MPI_Offset)(3 * size + rank) * (MPI_Offset)sizeof(int),
             "get_byte_offset(3): %lld", (long long)byte);
    /* Half with write_all (the pointer advances), half with write_all_begin/end, each from
     * every other int of data. */
    MPI_Datatype half;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &half);
    MPI_Type_commit(&half);
    MF_CHECK_MPI(MPI_File_write_all(fh, data, 1, half, &st));
    MPI_Offset pos;
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == N / 2, "position after write_all: %lld", (long long)pos);
    MF_CHECK_MPI(MPI_File_write_all_begin(fh, data + N, 1, half));
    MF_CHECK_MPI(MPI_File_write_all_end(fh, data + N, &st));
    MPI_Type_free(&half);
    MF_CHECK_MPI(MPI_File_close(&fh));
    /* Read back through the strided view into the strided memory type... */
    int back[2 * N];
    for (int i = 0; i < 2 * N; i++)
        back[i] = -9;
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(int), MPI_INT, ft,
                                   "native", MPI_INFO_NULL));
    MF_CHECK_MPI(MPI_File_read_all(fh, back, 1, mem, &st));
    MF_CHECK(mftest_count(&st, mem) == 1, "read_all of the memory type: count %d",
             mftest_count(&st, mem));
    for (int k = 0; k < N; k++)
        if (back[2 * k] != k * size + rank || back[2 * k + 1] != -9) {
            MF_CHECK(0, "strided read: int %d is %d (gap %d)", k, back[2 * k], back[2 * k + 1]);
            break;
        }
    /* ... and as plain ints: the file holds 0 .. size*N-1 in order. */
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int *all = malloc((size_t)size * N * sizeof *all);
    MF_CHECK_MPI(MPI_File_read(fh, all, size * N, MPI_INT, &st));
    for (int i = 0; i < size * N; i++)
        if (all[i] != i) {
            MF_CHECK(0, "interleaved file: int %d is %d", i, all[i]);
            break;
        }
    /* The individual pointer: END, CUR, SET. */
    MF_CHECK_MPI(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_END));
    MF_CHECK_MPI(MPI_File_read(fh, all, 1, MPI_INT, &st));
    MF_CHECK(all[0] == size * N - 1, "seek END: read %d", all[0]);
    MF_CHECK_MPI(MPI_File_seek(fh, 8, MPI_SEEK_SET));
    MF_CHECK_MPI(MPI_File_seek(fh, 4, MPI_SEEK_CUR));
    MF_CHECK_MPI(MPI_File_read(fh, all, 1, MPI_INT, &st));
    MF_CHECK(all[0] == 3, "seek SET+CUR: read %d", all[0]);
    MPI_Request rq;
    MF_CHECK_MPI(MPI_File_iread(fh, all, 2, MPI_INT, &rq));
    MF_CHECK_MPI(MPI_Wait(&rq, &st));
    MF_CHECK(all[0] == 4 && all[1] == 5, "iread: %d %d", all[0], all[1]);
    MF_CHECK_MPI(MPI_File_close(&fh));
    free(all);
    MPI_Type_free(&ft);
    MPI_Type_free(&mem);
}

/* Rank 0 writes the even ints of a region through a strided view (sieved: read, fill in, write
 * back the whole span) while rank 1 writes the odd ones one call each: neither may undo the
 * other's, round after round. */
static void sieve_race(void)
{
    enum { INTS = 4096, ROUNDS = 10 };
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair == MPI_COMM_NULL || size < 2) {
        if (pair != MPI_COMM_NULL)
            MPI_Comm_free(&pair);
        return;
    }
    MPI_File fh;
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    MF_CHECK_MPI(MPI_File_open(pair, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int *v = malloc(INTS * sizeof *v);
    for (int round = 0; round < ROUNDS; round++) {
        MF_CHECK_MPI(
            MPI_File_set_view(fh, 0, MPI_INT, rank == 0 ? ft : MPI_INT, "native", MPI_INFO_NULL));
        if (rank == 0) {
            for (int i = 0; i < INTS / 2; i++)
                v[i] = round * INTS + 2 * i;
            MF_CHECK_MPI(MPI_File_write_at(fh, 0, v, INTS / 2, MPI_INT, MPI_STATUS_IGNORE));
        } else {
            for (int i = 1; i < INTS; i += 2) {
                int x = round * INTS + i;
                MF_CHECK_MPI(MPI_File_write_at(fh, i, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
            }
        }
        MF_CHECK_MPI(MPI_File_sync(fh));
        MPI_Barrier(pair);
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        MF_CHECK_MPI(MPI_File_read_at(fh, 0, v, INTS, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 0; i < INTS; i++)
            if (v[i] != round * INTS + i) {
                MF_CHECK(0, "round %d: int %d is %d, not %d (a write was undone)", round, i, v[i],
                         round * INTS + i);
                break;
            }
    }
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Comm_free(&pair);
    MPI_Type_free(&ft);
    free(v);
}

/* The shared file pointer. */
static void shared(void)
{
    MPI_File fh;
    MPI_Status st;
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_size(fh, 0));
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < 3; i++) {
        int v = rank * 3 + i;
        MF_CHECK_MPI(MPI_File_write_shared(fh, &v, 1, MPI_INT, &st));
    }
    MPI_Request rq;
    int v = 1000 + rank;
    MF_CHECK_MPI(MPI_File_iwrite_shared(fh, &v, 1, MPI_INT, &rq));
    MF_CHECK_MPI(MPI_Wait(&rq, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sp;
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    MF_CHECK(sp == 4 * size, "shared position %lld, not %d", (long long)sp, 4 * size);
    /* Every value once. */
    int *all = malloc((size_t)4 * size * sizeof *all),
        *seen = calloc((size_t)4 * size, sizeof *seen);
    MF_CHECK_MPI(MPI_File_read_at(fh, 0, all, 4 * size, MPI_INT, &st));
    for (int i = 0; i < 4 * size; i++) {
        int k = all[i] >= 1000 ? 3 * size + all[i] - 1000 : all[i];
        MF_CHECK(k >= 0 && k < 4 * size && !seen[k]++, "write_shared: value %d at %d", all[i], i);
    }
    /* Ordered: after what is there, rank r's 2 ints at 2r. */
    int two[2] = {rank * 10, rank * 10 + 1};
    MF_CHECK_MPI(MPI_File_write_ordered(fh, two, 2, MPI_INT, &st));
    MF_CHECK_MPI(MPI_File_write_ordered_begin(fh, two, 2, MPI_INT));
    MF_CHECK_MPI(MPI_File_write_ordered_end(fh, two, &st));
    MF_CHECK_MPI(MPI_File_seek_shared(fh, 4 * size, MPI_SEEK_SET));
    int back[2] = {-1, -1};
    MF_CHECK_MPI(MPI_File_read_ordered(fh, back, 2, MPI_INT, &st));
    MF_CHECK(back[0] == rank * 10 && back[1] == rank * 10 + 1, "read_ordered: %d %d", back[0],
             back[1]);
    MF_CHECK_MPI(MPI_File_read_ordered_begin(fh, back, 2, MPI_INT));
    MF_CHECK_MPI(MPI_File_read_ordered_end(fh, back, &st));
    MF_CHECK(back[0] == rank * 10 && mftest_count(&st, MPI_INT) == 2, "split read_ordered");
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    MF_CHECK(sp == 8 * size, "shared position after ordered: %lld", (long long)sp);
    MF_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    if (rank == 0) {
        MF_CHECK_MPI(MPI_File_read_shared(fh, back, 1, MPI_INT, &st));
        MF_CHECK(mftest_count(&st, MPI_INT) == 1, "read_shared");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    MF_CHECK(sp == 8 * size, "seek_shared END: %lld", (long long)sp);
    MF_CHECK_MPI(MPI_File_close(&fh));
    free(all);
    free(seen);
}

static int handler_calls, handler_class;
static void file_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

/* Modes, queries and errors. */
static void modes(void)
{
    MPI_File fh;
    MPI_Status st;
    int one = 1;
    /* MPI_FILE_NULL's handler is MPI_ERRORS_RETURN at first. */
    MF_CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                   MPI_ERR_NO_SUCH_FILE, "open of a missing file");
    MF_CHECK(fh == MPI_FILE_NULL, "a failed open gave a handle");
    MF_CHECK_CLASS(
        MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
        MPI_ERR_AMODE, "RDONLY|CREATE");
    MF_CHECK_CLASS(
        MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        MPI_ERR_AMODE, "RDWR|WRONLY");
    /* EXCL: the first open creates, the second fails. */
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path2,
                               MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
                               &fh));
    MF_CHECK_MPI(MPI_File_write_at(fh, rank * (MPI_Offset)sizeof(int), &one, 1, MPI_INT, &st));
    MF_CHECK_CLASS(MPI_File_read_at(fh, 0, &one, 1, MPI_INT, &st), MPI_ERR_ACCESS,
                   "read of a write-only file");
    int amode = 0;
    MF_CHECK_MPI(MPI_File_get_amode(fh, &amode));
    MF_CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY), "amode %d", amode);
    MPI_Group g, wg;
    int cmp = -1;
    MF_CHECK_MPI(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    MF_CHECK(cmp == MPI_IDENT, "get_group: %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MF_CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    MF_CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    MF_CHECK(flag == 1, "atomicity %d", flag);
    MF_CHECK_MPI(MPI_File_write_at(fh, 0, &one, 1, MPI_INT, &st)); /* under the record lock */
    MF_CHECK_MPI(MPI_File_preallocate(fh, 4096));
    MPI_Offset fsize = 0;
    MF_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    MF_CHECK(fsize >= 4096, "preallocate: size %lld", (long long)fsize);
    MF_CHECK_MPI(MPI_File_set_size(fh, 100));
    MF_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    MF_CHECK(fsize == 100, "set_size: size %lld", (long long)fsize);
    MF_CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL),
                   MPI_ERR_UNSUPPORTED_DATAREP, "a datarep never registered");
    MPI_Info info;
    MF_CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_free(&info);
    MF_CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c round trip");
    MF_CHECK_MPI(MPI_File_close(&fh));
    MF_CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path2,
                                 MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
                                 &fh),
                   MPI_ERR_FILE_EXISTS, "EXCL on an existing file");
    /* Read-only; APPEND puts the pointer at the end; DELETE_ON_CLOSE removes the file. */
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path2,
                               MPI_MODE_RDONLY | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1;
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 100, "APPEND: position %lld", (long long)pos);
    MF_CHECK_CLASS(MPI_File_write_at(fh, 0, &one, 1, MPI_INT, &st), MPI_ERR_READ_ONLY,
                   "write of a read-only file");
    MF_CHECK_CLASS(MPI_File_read(fh, &one, -1, MPI_INT, &st), MPI_ERR_COUNT, "count -1");
    MF_CHECK_CLASS(MPI_File_read_at(fh, -4, &one, 1, MPI_INT, &st), MPI_ERR_ARG, "offset -4");
    MF_CHECK_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "whence 12345");
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 100, "failed calls moved the pointer to %lld", (long long)pos);
    MF_CHECK_MPI(MPI_File_read_all_begin(fh, &one, 1, MPI_INT));
    MF_CHECK_CLASS(MPI_File_read_all_begin(fh, &one, 1, MPI_INT), MPI_ERR_OTHER,
                   "a second split collective");
    MF_CHECK_MPI(MPI_File_read_all_end(fh, &one, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == 0, "split read at the end: count %d",
             mftest_count(&st, MPI_INT));
    MPI_File bad = (MPI_File)&one;
    MF_CHECK_CLASS(MPI_File_get_position(bad, &pos), MPI_ERR_FILE, "a made-up handle");
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK(access(path2, F_OK) != 0, "DELETE_ON_CLOSE left %s", path2);
    /* A user handler on MPI_FILE_NULL sees a failed open. */
    MPI_Errhandler eh;
    MF_CHECK_MPI(MPI_File_create_errhandler(file_handler, &eh));
    MF_CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MF_CHECK(handler_calls == 1 && handler_class == MPI_ERR_NO_SUCH_FILE,
             "file handler: %d calls, class %d", handler_calls, handler_class);
    MF_CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
    if (rank == 0)
        MF_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "delete twice");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mftest_shared_path(path, sizeof path, "io_basic");
    snprintf(path2, sizeof path2, "%s.b", path);
    offsets();
    views();
    sieve_race();
    shared();
    modes();
    return mftest_finish();
}
