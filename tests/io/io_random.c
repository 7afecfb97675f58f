/*
 * MPI-IO collective accesses, two-phase against independent, on random views: each trial
 * gives every byte of a period of E bytes to one rank or to nobody (a hole), so that each rank's
 * filetype is the runs of bytes it owns (disjoint views, many pieces, holes between), and makes
 * the same collective write and read twice, once with two-phase forced (romio_cb_* "enable",
 * random cb_buffer_size and cb_nodes, so windows end anywhere and rounds are many) and once
 * with it disabled (every rank on its own). The two files must be equal byte for byte, over
 * the same random bytes written before (some trials shorter than the data: writes past the end
 * of the file), and the two reads equal in data and count (some reaching past the end). Memory
 * types contiguous or strided; some ranks bring nothing. The seed is printed with a failure;
 * MF_IO_RANDOM_SEED and MF_IO_RANDOM_TRIALS set it and the number of trials.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mftest.h"

enum { MAX_PERIOD = 300, MAX_COUNT = 4000, STRIDE = 3 };

static int rank, size;
static char path[2][256];

/* The same sequence on every rank from the same seed. */
static uint64_t rng;
static unsigned next(unsigned n)
{
    return mftest_random(&rng, n);
}

static unsigned char data_byte(int r, int i)
{
    return (unsigned char)(r * 61 + i * 7 + 1);
}

struct trial {
    int period, disp, owner[MAX_PERIOD];
    int count[16], offset[16]; /* per rank (at most 16 ranks) */
    bool strided;
    int cb_buffer_size, cb_nodes, prefill;
};

static void make_trial(struct trial *t)
{
    t->period = size + (int)next(MAX_PERIOD - 16);
    for (int b = 0; b < t->period; b++)
        t->owner[b] = b < size ? b : (int)next((unsigned)size + 1); /* size: a hole */
    t->disp = (int)next(64);
    for (int r = 0; r < size; r++) {
        t->count[r] = next(10) == 0 ? 0 : (int)next(MAX_COUNT);
        t->offset[r] = (int)next(50);
    }
    t->strided = next(2);
    t->cb_buffer_size = 1 + (int)next(next(2) ? 64 : 5000);
    t->cb_nodes = 1 + (int)next((unsigned)size);
    t->prefill = (int)next(2 * MAX_COUNT * (unsigned)size);
}

/* This rank's filetype: the bytes of the period it owns, as an hindexed type of extent
 * `period`. */
static MPI_Datatype my_filetype(const struct trial *t)
{
    int n = 0, len[MAX_PERIOD];
    MPI_Aint at[MAX_PERIOD];
    for (int b = 0; b < t->period; b++) {
        if (t->owner[b] != rank)
            continue;
        if (n && at[n - 1] + len[n - 1] == b) {
            len[n - 1]++;
        } else {
            at[n] = b;
            len[n++] = 1;
        }
    }
    MPI_Datatype h, ft;
    MPI_Type_create_hindexed(n, len, at, MPI_BYTE, &h);
    MPI_Type_create_resized(h, 0, t->period, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&h);
    return ft;
}

static MPI_File open_with(int which, const struct trial *t, const char *mode)
{
    MPI_Info info;
    char v[32];
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", mode);
    MPI_Info_set(info, "romio_cb_read", mode);
    snprintf(v, sizeof v, "%d", t->cb_buffer_size);
    MPI_Info_set(info, "cb_buffer_size", v);
    snprintf(v, sizeof v, "%d", t->cb_nodes);
    MPI_Info_set(info, "cb_nodes", v);
    MPI_File fh;
    MF_CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, path[which], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MF_CHECK_MPI(MPI_File_set_size(fh, 0));
    return fh;
}

/* One trial; returns false when it found a difference. */
static bool run_trial(int trial, uint64_t seed)
{
    struct trial t;
    make_trial(&t);
    int n = t.count[rank];
    MPI_Datatype ft = my_filetype(&t), mem = MPI_BYTE;
    if (t.strided) {
        MPI_Type_vector(n, 1, STRIDE, MPI_BYTE, &mem);
        MPI_Type_commit(&mem);
    }
    size_t span = (size_t)(n ? (n - 1) * (t.strided ? STRIDE : 1) + 1 : 1);
    unsigned char *out = malloc(span), *in[2] = {malloc(span), malloc(span)};
    for (size_t i = 0; i < span; i++)
        out[i] = data_byte(rank, (int)i);
    unsigned char *fill = malloc((size_t)t.prefill + 1);
    for (int i = 0; i < t.prefill; i++)
        fill[i] = (unsigned char)next(256);
    MPI_File fh[2];
    MPI_Status st[2];
    int wrote[2], got[2];
    for (int w = 0; w < 2; w++) {
        fh[w] = open_with(w, &t, w == 0 ? "enable" : "disable");
        if (rank == 0 && t.prefill)
            MF_CHECK_MPI(MPI_File_write_at(fh[w], 0, fill, t.prefill, MPI_BYTE, MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_File_sync(fh[w]));
        MPI_Barrier(MPI_COMM_WORLD);
        MF_CHECK_MPI(MPI_File_sync(fh[w]));
        MF_CHECK_MPI(MPI_File_set_view(fh[w], t.disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        MF_CHECK_MPI(
            MPI_File_write_at_all(fh[w], t.offset[rank], out, t.strided ? 1 : n, mem, &st[w]));
        MPI_Get_count(&st[w], MPI_BYTE, &wrote[w]);
        MF_CHECK_MPI(MPI_File_sync(fh[w]));
        MPI_Barrier(MPI_COMM_WORLD);
        MF_CHECK_MPI(MPI_File_sync(fh[w]));
    }
    bool same = wrote[0] == wrote[1] && wrote[0] == n;
    MF_CHECK(same, "trial %d (seed %llu): wrote %d and %d bytes of %d", trial,
             (unsigned long long)seed, wrote[0], wrote[1], n);
    /* The files, byte for byte (rank 0). */
    MPI_Offset fsize[2];
    for (int w = 0; w < 2; w++)
        MF_CHECK_MPI(MPI_File_get_size(fh[w], &fsize[w]));
    if (fsize[0] != fsize[1]) {
        MF_CHECK(0, "trial %d (seed %llu): files of %lld and %lld bytes", trial,
                 (unsigned long long)seed, (long long)fsize[0], (long long)fsize[1]);
        same = false;
    } else if (rank == 0) { /* through a second handle: views are set collectively */
        unsigned char *whole[2] = {malloc((size_t)fsize[0] + 1), malloc((size_t)fsize[0] + 1)};
        for (int w = 0; w < 2; w++) {
            MPI_File self;
            MF_CHECK_MPI(
                MPI_File_open(MPI_COMM_SELF, path[w], MPI_MODE_RDONLY, MPI_INFO_NULL, &self));
            MF_CHECK_MPI(
                MPI_File_read_at(self, 0, whole[w], (int)fsize[0], MPI_BYTE, MPI_STATUS_IGNORE));
            MF_CHECK_MPI(MPI_File_close(&self));
        }
        for (MPI_Offset i = 0; i < fsize[0]; i++)
            if (whole[0][i] != whole[1][i]) {
                MF_CHECK(0,
                         "trial %d (seed %llu): byte %lld is %u by two-phase, %u each on its own",
                         trial, (unsigned long long)seed, (long long)i, whole[0][i], whole[1][i]);
                same = false;
                break;
            }
        free(whole[0]);
        free(whole[1]);
    }
    /* Read back with other places: some reach past the end of the file. */
    int shift = (int)next(3 * MAX_COUNT);
    for (int w = 0; w < 2; w++) {
        memset(in[w], 0xEE, span);
        MF_CHECK_MPI(MPI_File_read_at_all(fh[w], shift + t.offset[rank] / 2, in[w],
                                          t.strided ? 1 : n, mem, &st[w]));
        MPI_Get_elements(&st[w], MPI_BYTE, &got[w]);
    }
    if (got[0] != got[1] || memcmp(in[0], in[1], span) != 0) {
        size_t i = 0;
        while (i < span && in[0][i] == in[1][i])
            i++;
        MF_CHECK(0, "trial %d (seed %llu): read %d and %d bytes, first difference at %zu", trial,
                 (unsigned long long)seed, got[0], got[1], i);
        same = false;
    }
    for (int w = 0; w < 2; w++)
        MF_CHECK_MPI(MPI_File_close(&fh[w]));
    MPI_Type_free(&ft);
    if (t.strided)
        MPI_Type_free(&mem);
    free(out);
    free(in[0]);
    free(in[1]);
    free(fill);
    int all = same;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MF_CHECK(size <= 16, "at most 16 ranks");
    uint64_t seed =
        getenv("MF_IO_RANDOM_SEED") ? strtoull(getenv("MF_IO_RANDOM_SEED"), NULL, 10) : 20261207u;
    int trials = getenv("MF_IO_RANDOM_TRIALS") ? atoi(getenv("MF_IO_RANDOM_TRIALS")) : 40;
    if (rank == 0) {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        for (int w = 0; w < 2; w++)
            snprintf(path[w], sizeof path[w], "%s/mf_io_random.%d.%c", dir, (int)getpid(), "ab"[w]);
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    rng = seed * 2654435761u + 1;
    for (int trial = 0; trial < trials && size <= 16; trial++)
        if (!run_trial(trial, seed))
            break;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int w = 0; w < 2; w++)
            MPI_File_delete(path[w], MPI_INFO_NULL);
    return mftest_finish();
}
