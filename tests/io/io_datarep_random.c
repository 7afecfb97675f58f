/*
 * io_datarep_random.c — external32 views on random nested filetypes, against native ones.
 *
 * MPI-4.0 section 14.5.1 lays a view's types out in the file's representation: constructors
 * that count elements scale with each basic type's size there, byte displacements stay. An
 * MPI_LONG is 4 bytes in external32, as an MPI_INT is natively; so a filetype built of MPI_LONG,
 * in an external32 view, must lay its data out exactly as the same constructors over MPI_INT
 * do in a native view. Each trial builds one random type twice (contiguous, vector, hvector,
 * indexed, hindexed, indexed_block, hindexed_block, struct, subarray, resized and dup, nested up
 * to three deep, displacements increasing and multiples of 4), writes the same values through
 * both views collectively (MPI_LONG into one file in external32, MPI_INT into another natively),
 * and rank 0 compares the files: every 4-byte word of the first is the second's byte-swapped.
 * MPI_File_get_type_extent of the long type must be the int type's extent, and the data read
 * back through the external32 view the values written. The seed is printed with a failure;
 * MF_IO_RANDOM_SEED and MF_IO_RANDOM_TRIALS set it and the number of trials, and
 * MF_IO_RANDOM_TRIAL=k makes trial k alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;
static char path[2][256];
/* The same sequence on every rank from the same seed. */
static uint64_t rng;
static unsigned next(unsigned n)
{
    return mftest_random(&rng, n);
}

/* The same constructor twice: over MPI_LONG (t[0]) and over MPI_INT (t[1]). */
struct pair {
    MPI_Datatype t[2];
};

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static void pair_free(struct pair *p)
{
    for (int k = 0; k < 2; k++)
        if (p->t[k] != MPI_LONG && p->t[k] != MPI_INT)
            MPI_Type_free(&p->t[k]);
}

/* A random type `depth` constructors deep; its byte displacements from the int type's extent
 * (the file's, for the long one). */
static struct pair make(int depth)
{
    struct pair in = {{MPI_LONG, MPI_INT}}, out;
    if (depth == 0)
        return in;
    in = make(depth - 1);
    MPI_Aint ext = extent_of(in.t[1]); /* a multiple of 4, data within [0, ext) */
    int n = 1 + (int)next(3), blens[3], idisps[3];
    MPI_Aint bdisps[3];
    int at = 0;
    for (int i = 0; i < n; i++) { /* increasing, blocks apart */
        blens[i] = 1 + (int)next(2);
        idisps[i] = at + (int)next(2);
        bdisps[i] = (MPI_Aint)idisps[i] * ext + 4 * (MPI_Aint)next(2);
        at = idisps[i] + blens[i] + 1;
    }
    switch (next(11)) {
    case 0:
        for (int k = 0; k < 2; k++)
            MPI_Type_contiguous(n, in.t[k], &out.t[k]);
        break;
    case 1: {
        int stride = blens[0] + 1 + (int)next(2);
        for (int k = 0; k < 2; k++)
            MPI_Type_vector(n, blens[0], stride, in.t[k], &out.t[k]);
        break;
    }
    case 2: {
        MPI_Aint stride = blens[0] * ext + 4 * (MPI_Aint)next(4);
        for (int k = 0; k < 2; k++)
            MPI_Type_create_hvector(n, blens[0], stride, in.t[k], &out.t[k]);
        break;
    }
    case 3:
        for (int k = 0; k < 2; k++)
            MPI_Type_indexed(n, blens, idisps, in.t[k], &out.t[k]);
        break;
    case 4: {
        MPI_Aint hd[3];
        for (int i = 0; i < n; i++) /* blocks of up to 2 elements, 3 elements apart at least */
            hd[i] = (MPI_Aint)i * 3 * ext + 4 * (MPI_Aint)next(2);
        for (int k = 0; k < 2; k++)
            MPI_Type_create_hindexed(n, blens, hd, in.t[k], &out.t[k]);
        break;
    }
    case 5:
        for (int k = 0; k < 2; k++)
            MPI_Type_create_indexed_block(n, 1, idisps, in.t[k], &out.t[k]);
        break;
    case 6:
        for (int k = 0; k < 2; k++)
            MPI_Type_create_hindexed_block(n, 1, bdisps, in.t[k], &out.t[k]);
        break;
    case 7: {
        int ones[3] = {1, 1, 1};
        for (int k = 0; k < 2; k++) {
            MPI_Datatype ts[3] = {in.t[k], in.t[k], in.t[k]};
            MPI_Type_create_struct(n, ones, bdisps, ts, &out.t[k]);
        }
        break;
    }
    case 8: {
        int sizes[2] = {2 + (int)next(3), 2 + (int)next(3)}, sub[2], st[2];
        for (int d = 0; d < 2; d++) {
            sub[d] = 1 + (int)next((unsigned)sizes[d]);
            st[d] = (int)next((unsigned)(sizes[d] - sub[d] + 1));
        }
        int order = next(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int k = 0; k < 2; k++)
            MPI_Type_create_subarray(2, sizes, sub, st, order, in.t[k], &out.t[k]);
        break;
    }
    case 9: {
        MPI_Aint grow = 4 * (MPI_Aint)next(4);
        for (int k = 0; k < 2; k++)
            MPI_Type_create_resized(in.t[k], 0, ext + grow, &out.t[k]);
        break;
    }
    default:
        for (int k = 0; k < 2; k++)
            MPI_Type_dup(in.t[k], &out.t[k]);
        break;
    }
    pair_free(&in);
    return out;
}

static void swap4(unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i += 4) {
        unsigned char a = p[i], b = p[i + 1];
        p[i] = p[i + 3];
        p[i + 1] = p[i + 2];
        p[i + 2] = b;
        p[i + 3] = a;
    }
}

static void trial(int t, uint64_t seed)
{
    struct pair p = make(1 + (int)next(3));
    MPI_Type_commit(&p.t[0]);
    MPI_Type_commit(&p.t[1]);
    MPI_Aint ext = extent_of(p.t[1]);
    int tsize = 0;
    MPI_Type_size(p.t[1], &tsize);
    int per = tsize / 4, reps = 1 + (int)next(3), n = per * reps - (int)next((unsigned)per);
    MPI_Offset region = (MPI_Offset)ext * reps + 4 * (MPI_Offset)next(3);
    MPI_Offset disp = 4 * (MPI_Offset)next(4) + region * rank;
    long *lv = malloc((size_t)n * sizeof *lv + 1), *back = malloc((size_t)n * sizeof *back + 1);
    int *iv = malloc((size_t)n * sizeof *iv + 1);
    for (int i = 0; i < n; i++)
        iv[i] = (int)(next(1u << 28) - (1u << 27)) * (rank + 1), lv[i] = iv[i];
    MPI_File fh[2];
    for (int k = 0; k < 2; k++) {
        MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path[k], MPI_MODE_CREATE | MPI_MODE_RDWR,
                                   MPI_INFO_NULL, &fh[k]));
        MF_CHECK_MPI(MPI_File_set_size(fh[k], 0));
        MF_CHECK_MPI(MPI_File_set_view(fh[k], disp, k ? MPI_INT : MPI_LONG, p.t[k],
                                       k ? "native" : "external32", MPI_INFO_NULL));
        MF_CHECK_MPI(MPI_File_write_all(fh[k], k ? (void *)iv : (void *)lv, n,
                                        k ? MPI_INT : MPI_LONG, MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_File_sync(fh[k]));
    }
    MPI_Aint fext = -1;
    MF_CHECK_MPI(MPI_File_get_type_extent(fh[0], p.t[0], &fext));
    MF_CHECK(fext == ext, "trial %d (seed %llu): external32 extent %ld, native int one %ld", t,
             (unsigned long long)seed, (long)fext, (long)ext);
    MPI_Status st;
    MF_CHECK_MPI(MPI_File_read_at_all(fh[0], 0, back, n, MPI_LONG, &st));
    MF_CHECK(mftest_count(&st, MPI_LONG) == n && memcmp(back, lv, (size_t)n * sizeof *lv) == 0,
             "trial %d (seed %llu): read back through the external32 view differs", t,
             (unsigned long long)seed);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Offset len[2];
        unsigned char *bytes[2];
        for (int k = 0; k < 2; k++) {
            MF_CHECK_MPI(MPI_File_get_size(fh[k], &len[k]));
            bytes[k] = calloc((size_t)len[k] + 4, 1);
            FILE *fp = fopen(path[k], "rb");
            if (fp) {
                MF_CHECK(fread(bytes[k], 1, (size_t)len[k], fp) == (size_t)len[k], "short read");
                fclose(fp);
            }
        }
        swap4(bytes[1], (size_t)len[1]);
        MF_CHECK(len[0] == len[1] && memcmp(bytes[0], bytes[1], (size_t)len[0]) == 0,
                 "trial %d (seed %llu): the external32 file (%lld bytes) is not the native "
                 "one (%lld bytes) byte-swapped",
                 t, (unsigned long long)seed, (long long)len[0], (long long)len[1]);
        free(bytes[0]);
        free(bytes[1]);
    }
    for (int k = 0; k < 2; k++)
        MF_CHECK_MPI(MPI_File_close(&fh[k]));
    pair_free(&p);
    free(lv);
    free(back);
    free(iv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t seed =
        getenv("MF_IO_RANDOM_SEED") ? strtoull(getenv("MF_IO_RANDOM_SEED"), NULL, 10) : 20261207u;
    int trials = getenv("MF_IO_RANDOM_TRIALS") ? atoi(getenv("MF_IO_RANDOM_TRIALS")) : 200;
    mftest_shared_path(path[0], sizeof path[0], "io_datarep_random.ext32");
    mftest_shared_path(path[1], sizeof path[1], "io_datarep_random.native");
    int only = getenv("MF_IO_RANDOM_TRIAL") ? atoi(getenv("MF_IO_RANDOM_TRIAL")) : -1;
    for (int t = only < 0 ? 0 : only; t < (only < 0 ? trials : only + 1); t++) {
        rng = seed * 2654435761u + (uint64_t)t * 0x9e3779b97f4a7c15ull + 1;
        next(2);
        trial(t, seed);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(path[0], MPI_INFO_NULL);
        MPI_File_delete(path[1], MPI_INFO_NULL);
    }
    return mftest_finish();
}
