/*
 * MPI-IO nonblocking independent accesses, made by the I/O thread (src/io/async.c) while the
 * program goes on:
 *   - eight iwrite_at at once per rank, 1 B to 4 MiB, one from a strided memory type, finished
 *     with MPI_Waitall; the file then holds every one (checked through a second handle);
 *   - the same read back with iread_at, finished by polling MPI_Test and MPI_Testany;
 *   - iwrite and iread through the individual pointer: it moves past all an access asked for as
 *     the access starts; a read past the end of the file counts what it moved;
 *   - iwrite_shared from every rank: each record lands once;
 *   - MPI_T's io_async_accesses counts every one of them, and nothing else;
 *   - errors found as an access starts (reading a write-only file, count -1) come back from the
 *     call, and no request is made; an error the I/O thread meets (writing /dev/full) comes back
 *     from MPI_Wait with its class, although the communicator the file was opened on has
 *     MPI_ERRORS_ARE_FATAL (the file's default handler returns); from MPI_Waitall as
 *     MPI_ERR_IN_STATUS with the class in the failed request's status (MPI_COMM_WORLD's fatal
 *     handler is not called); and a handler set on the file is called once per failed request,
 *     with the file, from Wait, Test, Waitany and Waitall;
 *   - nonblocking collective accesses (iwrite_all, iwrite_at_all, iread_all, iread_at_all) on
 *     interleaved records (two-phase territory): several started at once, the individual pointer
 *     moved as they start, a blocking collective access and set_info while one is pending, the
 *     file right byte for byte; MPI_T's io_async_collectives counts each; a rank whose call fails
 *     (count -1) gets the error from the call and the others' requests fail naming it; split
 *     collectives are made by the thread too (counted); a write whose request was freed at once
 *     lands before the file closes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

enum { NREQ = 8 };

static int rank, size;
static char path[256];
static MPI_T_pvar_session session;
static MPI_T_pvar_handle async_h, coll_h;

static unsigned long long async_count(void)
{
    unsigned long long v = 0;
    MF_CHECK_MPI(MPI_T_pvar_read(session, async_h, &v));
    return v;
}

static size_t req_size(int i)
{
    return i == NREQ - 1 ? (size_t)4 << 20 : (size_t)1 << (3 * i); /* 1 B .. 256 KiB, 4 MiB */
}

static unsigned char byte_of(int r, int i, size_t k)
{
    return (unsigned char)(r * 31 + i * 7 + k * 13 + 1);
}

/* Eight accesses per rank at once, at offsets of their own. */
static void many_at_once(void)
{
    MPI_File fh;
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset per_rank = 0, at[NREQ];
    for (int i = 0; i < NREQ; i++) {
        at[i] = per_rank;
        per_rank += (MPI_Offset)req_size(i);
    }
    unsigned char *buf[NREQ];
    MPI_Request req[NREQ];
    MPI_Datatype vec;
    /* The 64 KiB one from every other byte of a buffer twice its size. */
    MPI_Type_vector((int)req_size(6), 1, 2, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    unsigned long long before = async_count();
    for (int i = 0; i < NREQ; i++) {
        size_t n = req_size(i);
        buf[i] = malloc(2 * n);
        for (size_t k = 0; k < n; k++)
            buf[i][i == 6 ? 2 * k : k] = byte_of(rank, i, k);
        MPI_Offset where = (MPI_Offset)rank * per_rank + at[i];
        MF_CHECK_MPI(i == 6 ? MPI_File_iwrite_at(fh, where, buf[i], 1, vec, &req[i])
                            : MPI_File_iwrite_at(fh, where, buf[i], (int)n, MPI_BYTE, &req[i]));
    }
    MPI_Status st[NREQ];
    MF_CHECK_MPI(MPI_Waitall(NREQ, req, st));
    for (int i = 0; i < NREQ; i++) {
        int got = -1;
        MPI_Get_elements(&st[i], MPI_BYTE, &got);
        MF_CHECK(got == (int)req_size(i), "iwrite_at %d: %d bytes of %zu", i, got, req_size(i));
    }
    MF_CHECK(async_count() - before == NREQ, "io_async_accesses counted %llu of %d iwrite_at",
             async_count() - before, NREQ);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
    /* What the file holds, through a handle of this rank's own. */
    MPI_File self;
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &self));
    unsigned char *back = malloc((size_t)per_rank);
    int peer = (rank + 1) % size;
    MF_CHECK_MPI(MPI_File_read_at(self, (MPI_Offset)peer * per_rank, back, (int)per_rank, MPI_BYTE,
                                  MPI_STATUS_IGNORE));
    for (int i = 0; i < NREQ; i++)
        for (size_t k = 0; k < req_size(i); k++)
            if (back[at[i] + (MPI_Offset)k] != byte_of(peer, i, k)) {
                MF_CHECK(0, "rank %d's access %d: byte %zu in the file is %u", peer, i, k,
                         back[at[i] + (MPI_Offset)k]);
                break;
            }
    MF_CHECK_MPI(MPI_File_close(&self));
    free(back);
    /* Read back with iread_at, polled to completion. */
    for (int i = 0; i < NREQ; i++) {
        memset(buf[i], 0, 2 * req_size(i));
        MPI_Offset where = (MPI_Offset)rank * per_rank + at[i];
        MF_CHECK_MPI(
            i == 6 ? MPI_File_iread_at(fh, where, buf[i], 1, vec, &req[i])
                   : MPI_File_iread_at(fh, where, buf[i], (int)req_size(i), MPI_BYTE, &req[i]));
    }
    int flag = 0;
    while (!flag)
        MF_CHECK_MPI(MPI_Test(&req[NREQ - 1], &flag, MPI_STATUS_IGNORE));
    for (int left = NREQ - 1; left > 0;) {
        int idx = MPI_UNDEFINED;
        MF_CHECK_MPI(MPI_Testany(NREQ - 1, req, &idx, &flag, MPI_STATUS_IGNORE));
        if (flag && idx != MPI_UNDEFINED)
            left--;
    }
    for (int i = 0; i < NREQ; i++) {
        for (size_t k = 0; k < req_size(i); k++)
            if (buf[i][i == 6 ? 2 * k : k] != byte_of(rank, i, k)) {
                MF_CHECK(0, "iread_at %d: byte %zu is %u", i, k, buf[i][i == 6 ? 2 * k : k]);
                break;
            }
        free(buf[i]);
    }
    MPI_Type_free(&vec);
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MF_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The individual pointer, the shared pointer, and errors. */
static void pointers(void)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Request r[2];
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_size(fh, 0));
    /* Each rank's own view: ints from rank * 1000. */
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 4000, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int out[100], in[100];
    for (int i = 0; i < 100; i++)
        out[i] = rank * 1000 + i;
    unsigned long long before = async_count();
    MF_CHECK_MPI(MPI_File_iwrite(fh, out, 60, MPI_INT, &r[0]));
    MPI_Offset pos = -1;
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 60, "after iwrite of 60 ints: position %lld", (long long)pos);
    MF_CHECK_MPI(MPI_File_iwrite(fh, out + 60, 40, MPI_INT, &r[1]));
    MF_CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    MF_CHECK_MPI(MPI_File_seek(fh, 90, MPI_SEEK_SET));
    /* 20 asked, 10 before the end of this rank's ints (the last rank's: the end of the file). */
    MF_CHECK_MPI(MPI_File_iread(fh, in, 20, MPI_INT, &r[0]));
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 110, "after iread of 20 ints from 90: position %lld", (long long)pos);
    MF_CHECK_MPI(MPI_Wait(&r[0], &st));
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    if (rank == size - 1)
        MF_CHECK(got == 10, "iread past the end: %d ints", got);
    for (int i = 0; i < 10; i++)
        MF_CHECK(in[i] == rank * 1000 + 90 + i, "iread: int %d is %d", i, in[i]);
    MF_CHECK(async_count() - before == 3, "io_async_accesses: %llu of 3", async_count() - before);
    /* Errors as the access starts: no request. */
    MPI_Request none = MPI_REQUEST_NULL;
    MF_CHECK_CLASS(MPI_File_iwrite(fh, out, -1, MPI_INT, &none), MPI_ERR_COUNT, "iwrite count -1");
    MF_CHECK(none == MPI_REQUEST_NULL, "a failed iwrite made a request");
    MF_CHECK_CLASS(MPI_File_iread_at(fh, -1, in, 1, MPI_INT, &none), MPI_ERR_ARG, "offset -1");
    MF_CHECK_MPI(MPI_File_close(&fh));
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_CLASS(MPI_File_iread_at(fh, 0, in, 1, MPI_INT, &none), MPI_ERR_ACCESS,
                   "iread of a write-only file");
    /* The shared pointer: every rank's record once. */
    MF_CHECK_MPI(MPI_File_set_size(fh, 0));
    MF_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    /* A read that fails takes no place from the shared pointer. */
    MF_CHECK_CLASS(MPI_File_iread_shared(fh, in, 4, MPI_INT, &none), MPI_ERR_ACCESS,
                   "iread_shared of a write-only file");
    MPI_Offset shared = -1;
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
    MF_CHECK(shared == 0, "a failed iread_shared moved the shared pointer to %lld",
             (long long)shared);
    MPI_Barrier(MPI_COMM_WORLD);
    int rec[4] = {rank, rank, rank, rank};
    MF_CHECK_MPI(MPI_File_iwrite_shared(fh, rec, 4, MPI_INT, &r[0]));
    MF_CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MF_CHECK(async_count() - before == 4, "io_async_accesses: %llu of 4", async_count() - before);
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int *all = calloc((size_t)size * 4, sizeof *all), seen[64] = {0};
        MPI_File self;
        MF_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                                   MPI_INFO_NULL, &self));
        MF_CHECK_MPI(MPI_File_read_at(self, 0, all, size * 4, MPI_INT, MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_File_close(&self));
        for (int k = 0; k < size; k++) {
            bool whole = all[4 * k] >= 0 && all[4 * k] < size && all[4 * k] < 64;
            for (int j = 1; whole && j < 4; j++)
                whole = all[4 * k + j] == all[4 * k];
            MF_CHECK(whole, "iwrite_shared: record %d is %d %d %d %d", k, all[4 * k],
                     all[4 * k + 1], all[4 * k + 2], all[4 * k + 3]);
            if (whole)
                seen[all[4 * k]]++;
        }
        for (int k = 0; k < size && k < 64; k++)
            MF_CHECK(seen[k] == 1, "iwrite_shared: rank %d's record %d times", k, seen[k]);
        free(all);
    }
}

static MPI_File handled_file;
static int handled_calls, handled_class;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handled_calls++;
    MF_CHECK(*fh == handled_file, "the file handler was called with another file");
    MPI_Error_class(*code, &handled_class);
}

static unsigned long long coll_count(void)
{
    unsigned long long v = 0;
    MF_CHECK_MPI(MPI_T_pvar_read(session, coll_h, &v));
    return v;
}

static double value_of(int r, int part, int k)
{
    return (part + 1) * 1e7 + r * 1e5 + k;
}

/* Nonblocking collective accesses on the ranks' doubles interleaved one by one. */
static void collective(void)
{
    enum { N = 1 << 14 }; /* doubles per rank and access: 128 KiB */
    char name[300];
    snprintf(name, sizeof name, "%s.coll", path);
    MPI_File fh;
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype slot;
    MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)(size * sizeof(double)), &slot);
    MPI_Type_commit(&slot);
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(double)), MPI_DOUBLE, slot,
                                   "native", MPI_INFO_NULL));
    double *out = malloc(5 * N * sizeof *out), *in = malloc(5 * N * sizeof *in);
    for (int part = 0; part < 5; part++)
        for (int k = 0; k < N; k++)
            out[part * N + k] = value_of(rank, part, k);
    unsigned long long c0 = coll_count();
    MPI_Request r[4];
    MPI_Status st[4];
    MPI_Offset pos = -1;
    /* Parts 0 and 1 at explicit offsets, part 2 through the pointer, all at once. */
    MF_CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, out, N, MPI_DOUBLE, &r[0]));
    MF_CHECK_MPI(MPI_File_iwrite_at_all(fh, N, out + N, N, MPI_DOUBLE, &r[1]));
    MF_CHECK_MPI(MPI_File_seek(fh, 2 * N, MPI_SEEK_SET));
    MF_CHECK_MPI(MPI_File_iwrite_all(fh, out + 2 * N, N, MPI_DOUBLE, &r[2]));
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 3 * N, "iwrite_all: the pointer is at %lld as it starts, not %d",
             (long long)pos, 3 * N);
    /* Part 3 by a blocking collective write while those are pending, and hints changed. */
    MF_CHECK_MPI(MPI_File_write_at_all(fh, 3 * N, out + 3 * N, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MF_CHECK_MPI(MPI_File_iwrite_at_all(fh, 4 * N, out + 4 * N, N, MPI_DOUBLE, &r[3]));
    MF_CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    MF_CHECK_MPI(MPI_Waitall(4, r, st));
    for (int i = 0; i < 4; i++) {
        int got = -1;
        MPI_Get_count(&st[i], MPI_DOUBLE, &got);
        MF_CHECK(got == N, "nonblocking collective write %d: count %d", i, got);
    }
    /* Back: parts 0-2 through the pointer, 3-4 at an offset, both pending at once. */
    MF_CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MF_CHECK_MPI(MPI_File_iread_all(fh, in, 3 * N, MPI_DOUBLE, &r[0]));
    MF_CHECK_MPI(MPI_File_iread_at_all(fh, 3 * N, in + 3 * N, 2 * N, MPI_DOUBLE, &r[1]));
    MF_CHECK_MPI(MPI_Waitall(2, r, st));
    int bad = 0;
    for (int k = 0; k < 5 * N; k++)
        bad += in[k] != out[k];
    MF_CHECK(bad == 0, "nonblocking collective reads: %d doubles differ", bad);
    MF_CHECK(coll_count() - c0 == 6, "io_async_collectives counted %llu, not 6", coll_count() - c0);
    /* The whole file, as rank 0 sees it without the view: record j belongs to rank j % size. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *fp = fopen(name, "rb");
        double *all = malloc((size_t)size * 5 * N * sizeof *all);
        size_t n = fp ? fread(all, sizeof *all, (size_t)size * 5 * N, fp) : 0;
        MF_CHECK(n == (size_t)size * 5 * N, "the file holds %zu doubles", n);
        bad = 0;
        for (size_t j = 0; j < n; j++)
            bad += all[j] != value_of((int)(j % size), (int)(j / size / N), (int)(j / size % N));
        MF_CHECK(bad == 0, "the file: %d doubles misplaced", bad);
        free(all);
        if (fp)
            fclose(fp);
    }
    /* One rank's call fails: it hears at once, the others at completion, naming it. */
    int last = size - 1, rc;
    r[0] = MPI_REQUEST_NULL;
    rc = MPI_File_iwrite_at_all(fh, 0, out, rank == last ? -1 : N, MPI_DOUBLE, &r[0]);
    if (rank == last) {
        MF_CHECK_CLASS(rc, MPI_ERR_COUNT, "iwrite_at_all with count -1");
        MF_CHECK(r[0] == MPI_REQUEST_NULL, "a failed nonblocking collective made a request");
    } else {
        MF_CHECK_MPI(rc);
        rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MF_CHECK_CLASS(rc, MPI_ERR_COUNT, "iwrite_at_all beside a rank's count -1");
        char text[MPI_MAX_ERROR_STRING], who[32];
        int len;
        MPI_Error_string(rc, text, &len);
        snprintf(who, sizeof who, "rank %d", last);
        MF_CHECK(strstr(text, who) != NULL, "the error does not name %s: %s", who, text);
    }
    /* The next one works. */
    MF_CHECK_MPI(MPI_File_iread_at_all(fh, 0, in, N, MPI_DOUBLE, &r[0]));
    MF_CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MF_CHECK(in[0] == out[0] && in[N - 1] == out[N - 1], "a read after the failed write");
    /* Split collectives: the I/O thread makes them between _begin and _end. */
    unsigned long long c1 = coll_count();
    MF_CHECK_MPI(MPI_File_write_at_all_begin(fh, 0, out + 2 * N, N, MPI_DOUBLE));
    MF_CHECK_MPI(MPI_File_write_at_all_end(fh, out + 2 * N, &st[0]));
    MF_CHECK(mftest_count(&st[0], MPI_DOUBLE) == N, "split write: count %d",
             mftest_count(&st[0], MPI_DOUBLE));
    memset(in, 0, N * sizeof *in);
    MF_CHECK_MPI(MPI_File_read_at_all_begin(fh, 0, in, N, MPI_DOUBLE));
    MF_CHECK_MPI(MPI_File_read_at_all_end(fh, in, &st[0]));
    MF_CHECK(mftest_count(&st[0], MPI_DOUBLE) == N, "split read: count %d",
             mftest_count(&st[0], MPI_DOUBLE));
    MF_CHECK(memcmp(in, out + 2 * N, N * sizeof *in) == 0, "split read: other doubles");
    MF_CHECK(coll_count() - c1 == 2, "io_async_collectives counted %llu split accesses, not 2",
             coll_count() - c1);
    /* A request freed at once: the write still happens, before the file closes. */
    MF_CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, out + N, N, MPI_DOUBLE, &r[0]));
    MF_CHECK_MPI(MPI_Request_free(&r[0]));
    MF_CHECK_MPI(MPI_File_close(&fh));
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(double)), MPI_DOUBLE, slot,
                                   "native", MPI_INFO_NULL));
    MF_CHECK_MPI(MPI_File_read_at_all(fh, 0, in, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    MF_CHECK(in[0] == out[N] && in[N - 1] == out[2 * N - 1],
             "the write whose request was freed did not land");
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&slot);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    free(out);
    free(in);
}

/* Accesses that fail in the I/O thread: ENOSPC from /dev/full. */
static void failing(void)
{
    if (access("/dev/full", W_OK) != 0)
        return; /* not in this container */
    MPI_File fh;
    MPI_Request r, two[2];
    MPI_Status st, sts[2];
    char buf[4096] = {0};
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &r));
    MF_CHECK_CLASS(MPI_Wait(&r, &st), MPI_ERR_NO_SPACE, "iwrite_at of /dev/full, at MPI_Wait");
    MF_CHECK(r == MPI_REQUEST_NULL, "the failed request was not freed");

    /* Waitall: the failed request's status has the class; an empty write beside it succeeds. */
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &two[0]));
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, 0, MPI_BYTE, &two[1]));
    MF_CHECK_CLASS(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS, "Waitall with a failed iwrite");
    MF_CHECK_CLASS(sts[0].MPI_ERROR, MPI_ERR_NO_SPACE, "Waitall, the failed iwrite's status");
    MF_CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "Waitall, the empty iwrite's status: %d",
             sts[1].MPI_ERROR);

    /* A handler set on the file is called for each failed request, whichever call completes
     * it, and the call returns what the handler left in the code. */
    MPI_Errhandler eh;
    MF_CHECK_MPI(MPI_File_create_errhandler(file_handler, &eh));
    MF_CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    handled_file = fh;
    int flag = 0, idx = -1;
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &r));
    MF_CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE, "Wait, with a handler");
    MF_CHECK(handled_calls == 1 && handled_class == MPI_ERR_NO_SPACE,
             "Wait: the file's handler was called %d times (class %d)", handled_calls,
             handled_class);
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &r));
    int rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    MF_CHECK_CLASS(rc, MPI_ERR_NO_SPACE, "Test, with a handler");
    MF_CHECK(handled_calls == 2, "Test: the file's handler was called %d times in all",
             handled_calls);
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &r));
    MF_CHECK_CLASS(MPI_Waitany(1, &r, &idx, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE,
                   "Waitany, with a handler");
    MF_CHECK(handled_calls == 3 && idx == 0, "Waitany: %d handler calls in all, index %d",
             handled_calls, idx);
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, 0, MPI_BYTE, &two[0]));
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, &two[1]));
    MF_CHECK_CLASS(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS, "Waitall, with a handler");
    MF_CHECK(handled_calls == 4, "Waitall: the file's handler was called %d times in all",
             handled_calls);
    MF_CHECK_MPI(MPI_Errhandler_free(&eh));
    MF_CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mftest_init_tools(&argc, &argv, &rank, &size);
    mftest_shared_path(path, sizeof path, "io_async");
    /* A first access starts the I/O thread, which publishes the counter. */
    MPI_File fh;
    MPI_Request r;
    int one = 1, idx = -1, count;
    char probe[300];
    snprintf(probe, sizeof probe, "%s.probe%d", path, rank);
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, probe,
                               MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_iwrite_at(fh, 0, &one, 1, MPI_INT, &r));
    MF_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_T_pvar_get_index("io_async_accesses", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MF_CHECK_MPI(MPI_T_pvar_session_create(&session));
    MF_CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &async_h, &count));
    MF_CHECK_MPI(MPI_T_pvar_start(session, async_h));
    MF_CHECK_MPI(MPI_T_pvar_get_index("io_async_collectives", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MF_CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &coll_h, &count));
    MF_CHECK_MPI(MPI_T_pvar_start(session, coll_h));
    many_at_once();
    pointers();
    collective();
    failing();
    MPI_T_pvar_handle_free(session, &coll_h);
    MPI_T_pvar_handle_free(session, &async_h);
    MPI_T_pvar_session_free(&session);
    return mftest_finish_tools();
}
