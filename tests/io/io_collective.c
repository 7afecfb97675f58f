/*
 * MPI-IO collective accesses and two-phase collective buffering (src/io/aggregate.c), checked
 * against what the file holds and against the MPI_T counters that say which path each access
 * took (io_two_phase_accesses, io_independent_collectives):
 *   - the ranks' doubles interleaved one by one (a resized filetype displaced by the rank),
 *     written with write_all and read with read_all: with the default hints (one round), with
 *     cb_buffer_size 4096 (many rounds), with cb_nodes 1 (one aggregator), and with
 *     romio_cb_write / romio_cb_read "disable" (every rank on its own): the same bytes;
 *   - a strided memory type on both sides;
 *   - holes: the views cover half of the file's ints, and the other half keeps what the file
 *     held (the aggregators read their windows before writing them);
 *   - overlapping views: every rank writes the same ints, as many bytes in all as the span
 *     holds, half of it holes: the holes keep the file's bytes too;
 *   - reads past the end of the file: each rank's count is what lies before the end, and its
 *     buffer past that is untouched;
 *   - ranks without data (count 0) among ranks with;
 *   - one rank's bad argument (count -1) fails the collective on every rank, and the next
 *     collective access works;
 *   - the hints in effect read back with MPI_File_get_info, changed by MPI_File_set_info (and
 *     the next access taking the path they say), collective_buffering "false".
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

#define M 5000 /* records per rank */
#define FILL 0xABABABABu

static int rank, size;
static char path[256];
static MPI_T_pvar_session session;
static MPI_T_pvar_handle two_phase_h, own_h;

static void counters_start(void)
{
    int a = -1, b = -1, count;
    MF_CHECK_MPI(MPI_T_pvar_get_index("io_two_phase_accesses", MPI_T_PVAR_CLASS_COUNTER, &a));
    MF_CHECK_MPI(MPI_T_pvar_get_index("io_independent_collectives", MPI_T_PVAR_CLASS_COUNTER, &b));
    MF_CHECK_MPI(MPI_T_pvar_session_create(&session));
    MF_CHECK_MPI(MPI_T_pvar_handle_alloc(session, a, NULL, &two_phase_h, &count));
    MF_CHECK_MPI(MPI_T_pvar_handle_alloc(session, b, NULL, &own_h, &count));
    MF_CHECK_MPI(MPI_T_pvar_start(session, two_phase_h));
    MF_CHECK_MPI(MPI_T_pvar_start(session, own_h));
}

/* The collective accesses so far: aggregated ones in *two_phase, the others in *own. */
static void counters(unsigned long long *two_phase, unsigned long long *own)
{
    MF_CHECK_MPI(MPI_T_pvar_read(session, two_phase_h, two_phase));
    MF_CHECK_MPI(MPI_T_pvar_read(session, own_h, own));
}

/* Checks that the access just made took the path `aggregated` says, from counts taken before. */
static void expect_path(bool aggregated, unsigned long long tp0, unsigned long long own0,
                        const char *what)
{
    unsigned long long tp, own;
    counters(&tp, &own);
    MF_CHECK(tp - tp0 == (aggregated ? 1u : 0u) && own - own0 == (aggregated ? 0u : 1u),
             "%s: %llu two-phase and %llu independent collective accesses, expected %s", what,
             tp - tp0, own - own0, aggregated ? "two-phase" : "independent");
}

/* A file emptied (or created), opened with the hint key=value (key NULL: none). */
static MPI_File open_empty(const char *key, const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_File fh;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
    }
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MF_CHECK_MPI(MPI_File_set_size(fh, 0));
    if (key)
        MPI_Info_free(&info);
    return fh;
}

/* The filetype of `per` elements of t, repeated every `period` elements. */
static MPI_Datatype every(MPI_Datatype t, int per, int period)
{
    MPI_Datatype c, r;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_contiguous(per, t, &c);
    MPI_Type_create_resized(c, 0, ext * period, &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&c);
    return r;
}

/* Rank 0 reads n ints of the whole file at once (bytes from 0). */
static unsigned *whole_file(MPI_File fh, int n)
{
    unsigned *all = malloc((size_t)n * sizeof *all);
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        MF_CHECK_MPI(MPI_File_read_at(fh, 0, all, n, MPI_UNSIGNED, &st));
        MF_CHECK(mftest_count(&st, MPI_UNSIGNED) == n, "whole file: %d of %d ints",
                 mftest_count(&st, MPI_UNSIGNED), n);
    }
    return all;
}

/* The interleaved doubles, written and read collectively with hint key=value; agg_write and
 * agg_read say which path the counters must show. */
static void interleaved(const char *key, const char *value, bool agg_write, bool agg_read,
                        bool strided)
{
    char what[96];
    snprintf(what, sizeof what, "interleaved, %s=%s%s", key ? key : "(no hint)", value ? value : "",
             strided ? ", strided memory" : "");
    MPI_File fh = open_empty(key, value);
    MPI_Datatype ft = every(MPI_DOUBLE, 1, size), mem;
    MPI_Type_vector(M, 1, 2, MPI_DOUBLE, &mem);
    MPI_Type_commit(&mem);
    double *buf = malloc(2 * M * sizeof *buf);
    for (int k = 0; k < M; k++) {
        buf[strided ? 2 * k : k] = (double)k * size + rank;
        if (strided)
            buf[2 * k + 1] = -1.0;
    }
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    unsigned long long tp0, own0;
    MPI_Status st;
    counters(&tp0, &own0);
    MF_CHECK_MPI(strided ? MPI_File_write_all(fh, buf, 1, mem, &st)
                         : MPI_File_write_all(fh, buf, M, MPI_DOUBLE, &st));
    MF_CHECK(mftest_count(&st, MPI_BYTE) == M * 8, "%s: write_all moved %d bytes", what,
             mftest_count(&st, MPI_BYTE));
    expect_path(agg_write, tp0, own0, what);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
    /* The file: 0, 1, 2, ... as doubles. */
    double *all = (double *)whole_file(fh, 2 * M * size);
    for (int i = 0; rank == 0 && i < M * size; i++)
        if (all[i] != (double)i) {
            MF_CHECK(0, "%s: double %d of the file is %g", what, i, all[i]);
            break;
        }
    free(all);
    /* Read back through the view. */
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    for (int i = 0; i < 2 * M; i++)
        buf[i] = -2.0;
    counters(&tp0, &own0);
    MF_CHECK_MPI(strided ? MPI_File_read_all(fh, buf, 1, mem, &st)
                         : MPI_File_read_all(fh, buf, M, MPI_DOUBLE, &st));
    MF_CHECK(mftest_count(&st, MPI_BYTE) == M * 8, "%s: read_all moved %d bytes", what,
             mftest_count(&st, MPI_BYTE));
    expect_path(agg_read, tp0, own0, what);
    for (int k = 0; k < M; k++) {
        double want = (double)k * size + rank, got = buf[strided ? 2 * k : k];
        if (got != want || (strided && buf[2 * k + 1] != -2.0)) {
            MF_CHECK(0, "%s: record %d read as %g", what, k, got);
            break;
        }
    }
    free(buf);
    MPI_Type_free(&ft);
    MPI_Type_free(&mem);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* Each rank's M ints in a block of its own (not interleaved: independent, unless the hint
 * romio_cb_write / romio_cb_read is `mode`). */
static void blocks(const char *mode, bool aggregated)
{
    char what[64];
    snprintf(what, sizeof what, "blocks, romio_cb_*=%s", mode ? mode : "(no hint)");
    MPI_File fh = open_empty(mode ? "romio_cb_write" : NULL, mode);
    if (mode) { /* and the read hint, given at set_view */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_read", mode);
        MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
        MPI_Info_free(&info);
    }
    int *buf = malloc(M * sizeof *buf);
    for (int k = 0; k < M; k++)
        buf[k] = rank * M + k;
    MPI_Offset at = (MPI_Offset)rank * M * 4;
    unsigned long long tp0, own0;
    counters(&tp0, &own0);
    MF_CHECK_MPI(MPI_File_write_at_all(fh, at, buf, M, MPI_INT, MPI_STATUS_IGNORE));
    expect_path(aggregated, tp0, own0, what);
    for (int k = 0; k < M; k++)
        buf[k] = -1;
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
    counters(&tp0, &own0);
    MF_CHECK_MPI(MPI_File_read_at_all(fh, at, buf, M, MPI_INT, MPI_STATUS_IGNORE));
    expect_path(aggregated, tp0, own0, what);
    for (int k = 0; k < M; k++)
        if (buf[k] != rank * M + k) {
            MF_CHECK(0, "%s: int %d read as %d", what, k, buf[k]);
            break;
        }
    free(buf);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* The file filled with FILL, n ints, by rank 0. */
static void prefill(MPI_File fh, int n)
{
    unsigned *fill = malloc((size_t)n * sizeof *fill);
    for (int i = 0; i < n; i++)
        fill[i] = FILL;
    if (rank == 0)
        MF_CHECK_MPI(MPI_File_write_at(fh, 0, fill, n, MPI_UNSIGNED, MPI_STATUS_IGNORE));
    free(fill);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
}

/* Holes: rank r's view is int r of every 2 * size, so half of the file stays FILL. With
 * `overlap`, every rank's view is int 0 of every 2 and all write the same values. */
static void holes(bool overlap)
{
    const char *what = overlap ? "overlapping views" : "holes";
    MPI_File fh = open_empty(NULL, NULL);
    int n = overlap ? 2 * M : 2 * size * M;
    prefill(fh, n);
    MPI_Datatype ft = every(MPI_UNSIGNED, 1, overlap ? 2 : 2 * size);
    MF_CHECK_MPI(MPI_File_set_view(fh, overlap ? 0 : (MPI_Offset)rank * 4, MPI_UNSIGNED, ft,
                                   "native", MPI_INFO_NULL));
    unsigned *buf = malloc(M * sizeof *buf);
    for (int k = 0; k < M; k++)
        buf[k] = overlap ? (unsigned)k : (unsigned)(k * size + rank);
    unsigned long long tp0, own0;
    counters(&tp0, &own0);
    MF_CHECK_MPI(MPI_File_write_all(fh, buf, M, MPI_UNSIGNED, MPI_STATUS_IGNORE));
    expect_path(size > 1, tp0, own0, what);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
    unsigned *all = whole_file(fh, n);
    for (int i = 0; rank == 0 && i < n; i++) {
        int period = overlap ? 2 : 2 * size, at = i % period, g = i / period;
        unsigned want = at >= (overlap ? 1 : size) ? FILL
                        : overlap                  ? (unsigned)g
                                                   : (unsigned)(g * size + at);
        if (all[i] != want) {
            MF_CHECK(0, "%s: int %d of the file is %#x, not %#x", what, i, all[i], want);
            break;
        }
    }
    free(all);
    free(buf);
    MPI_Type_free(&ft);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* The interleaved doubles, 3 short of M * size in the file, read with read_all. */
static void past_the_end(void)
{
    MPI_File fh = open_empty(NULL, NULL);
    int n = M * size - 3;
    if (rank == 0) {
        double *all = malloc((size_t)n * sizeof *all);
        for (int i = 0; i < n; i++)
            all[i] = i;
        MF_CHECK_MPI(MPI_File_write_at(fh, 0, all, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        free(all);
    }
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MF_CHECK_MPI(MPI_File_sync(fh));
    MPI_Datatype ft = every(MPI_DOUBLE, 1, size);
    MF_CHECK_MPI(
        MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    double *buf = malloc(M * sizeof *buf);
    for (int k = 0; k < M; k++)
        buf[k] = -1.0;
    MPI_Status st;
    unsigned long long tp0, own0;
    counters(&tp0, &own0);
    MF_CHECK_MPI(MPI_File_read_all(fh, buf, M, MPI_DOUBLE, &st));
    expect_path(size > 1, tp0, own0, "past the end");
    int want = 0; /* records k with k * size + rank < n */
    while (want < M && want * size + rank < n)
        want++;
    MF_CHECK(mftest_count(&st, MPI_DOUBLE) == want, "past the end: count %d, not %d",
             mftest_count(&st, MPI_DOUBLE), want);
    for (int k = 0; k < M; k++)
        if (buf[k] != (k < want ? (double)k * size + rank : -1.0)) {
            MF_CHECK(0, "past the end: record %d is %g (count %d)", k, buf[k], want);
            break;
        }
    free(buf);
    MPI_Type_free(&ft);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* Odd ranks bring no data; the even ranks' records land and read back, and the odd ranks'
 * places in the file read as zeros (holes, where the file had no bytes before). */
static void some_empty(void)
{
    MPI_File fh = open_empty(NULL, NULL);
    MPI_Datatype ft = every(MPI_INT, 1, size);
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    int mine = rank % 2 ? 0 : M, *buf = malloc(M * sizeof *buf);
    for (int k = 0; k < M; k++)
        buf[k] = k * size + rank;
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, mine, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == mine, "some empty: wrote %d of %d",
             mftest_count(&st, MPI_INT), mine);
    for (int k = 0; k < M; k++)
        buf[k] = -1;
    MF_CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, mine, MPI_INT, &st));
    MF_CHECK(mftest_count(&st, MPI_INT) == mine, "some empty: read %d of %d",
             mftest_count(&st, MPI_INT), mine);
    for (int k = 0; k < mine; k++)
        if (buf[k] != k * size + rank) {
            MF_CHECK(0, "some empty: record %d read as %d", k, buf[k]);
            break;
        }
    int n = (M - 1) * size + 1 + (size > 2 ? 2 * ((size - 1) / 2) : 0); /* up to the last even */
    MPI_Offset fsize = 0;
    MF_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    MF_CHECK(fsize == (MPI_Offset)n * 4, "some empty: file of %lld bytes, not %d", (long long)fsize,
             n * 4);
    unsigned *all = whole_file(fh, n);
    for (int i = 0; rank == 0 && i < n; i++)
        if (all[i] != (i % size % 2 ? 0u : (unsigned)i)) {
            MF_CHECK(0, "some empty: int %d of the file is %#x", i, all[i]);
            break;
        }
    free(all);
    free(buf);
    MPI_Type_free(&ft);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* The last rank's count -1 fails write_all on every rank; the next one works. */
static void one_rank_wrong(void)
{
    MPI_File fh = open_empty(NULL, NULL);
    MPI_Datatype ft = every(MPI_INT, 1, size);
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    int buf[4] = {rank, rank, rank, rank}, cls = MPI_SUCCESS;
    int rc = MPI_File_write_all(fh, buf, rank == size - 1 ? -1 : 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_COUNT, "one rank's count -1: class %d on rank %d", cls, rank);
    MPI_Offset pos = -1;
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 0, "a failed write_all moved the pointer to %lld", (long long)pos);
    MF_CHECK_MPI(MPI_File_write_all(fh, buf, 4, MPI_INT, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_File_get_position(fh, &pos));
    MF_CHECK(pos == 4, "write_all after the failed one: position %lld", (long long)pos);
    MPI_Type_free(&ft);
    MF_CHECK_MPI(MPI_File_close(&fh));
}

/* MPI_File_get_info's value of key, compared with want. */
static void expect_hint(MPI_File fh, const char *key, const char *want)
{
    MPI_Info info;
    char value[64] = "";
    int flag = 0;
    MF_CHECK_MPI(MPI_File_get_info(fh, &info));
    MF_CHECK_MPI(MPI_Info_get_string(info, key, &(int){sizeof value}, value, &flag));
    MF_CHECK(flag && strcmp(value, want) == 0, "get_info: %s is \"%s\", not \"%s\"", key,
             flag ? value : "(unset)", want);
    MPI_Info_free(&info);
}

/* One interleaved write_all of 4 ints per rank; checks the path it took. */
static void write_interleaved(MPI_File fh, bool aggregated, const char *what)
{
    MPI_Datatype ft = every(MPI_INT, 1, size);
    int buf[4] = {rank, rank, rank, rank};
    unsigned long long tp0, own0;
    MF_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    counters(&tp0, &own0);
    MF_CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, 4, MPI_INT, MPI_STATUS_IGNORE));
    expect_path(aggregated, tp0, own0, what);
    MPI_Type_free(&ft);
}

static void hints(void)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", size);
    MPI_File fh = open_empty("cb_buffer_size", "4096");
    expect_hint(fh, "cb_buffer_size", "4096");
    expect_hint(fh, "cb_nodes", nodes);
    expect_hint(fh, "romio_cb_read", "automatic");
    expect_hint(fh, "collective_buffering", "true");
    write_interleaved(fh, size > 1, "hints: at open");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    MF_CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    expect_hint(fh, "romio_cb_write", "disable");
    expect_hint(fh, "cb_buffer_size", "4096");
    write_interleaved(fh, false, "hints: romio_cb_write disabled by set_info");
    MF_CHECK_MPI(MPI_File_close(&fh));
    fh = open_empty("collective_buffering", "false");
    expect_hint(fh, "romio_cb_read", "disable");
    expect_hint(fh, "romio_cb_write", "disable");
    expect_hint(fh, "collective_buffering", "false");
    write_interleaved(fh, false, "hints: collective_buffering false");
    MF_CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mftest_init_tools(&argc, &argv, &rank, &size);
    mftest_shared_path(path, sizeof path, "io_collective");
    MPI_File fh = open_empty(NULL, NULL); /* the first open publishes the counters */
    MF_CHECK_MPI(MPI_File_close(&fh));
    counters_start();
    bool many = size > 1;
    interleaved(NULL, NULL, many, many, false);
    interleaved(NULL, NULL, many, many, true);
    interleaved("cb_buffer_size", "4096", many, many, false);
    interleaved("cb_buffer_size", "4096", many, many, true);
    interleaved("cb_nodes", "1", many, many, false);
    interleaved("romio_cb_write", "disable", false, many, false);
    interleaved("romio_cb_read", "disable", many, false, true);
    blocks(NULL, false);
    blocks("enable", many);
    holes(false);
    holes(true);
    past_the_end();
    some_empty();
    one_rank_wrong();
    hints();
    MPI_T_pvar_handle_free(session, &two_phase_h);
    MPI_T_pvar_handle_free(session, &own_h);
    MPI_T_pvar_session_free(&session);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MF_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    return mftest_finish_tools();
}
