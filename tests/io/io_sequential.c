/*
 * io_sequential.c — a file opened MPI_MODE_SEQUENTIAL (MPI-4.0 sections 14.2.1, 14.3, 14.4):
 *   - only the shared file pointer's calls read, write or move in it: the individual pointer's
 *     and the explicit offsets' (blocking, nonblocking, collective, seek, get_position) fail
 *     with MPI_ERR_UNSUPPORTED_OPERATION and leave the file and the shared pointer as they were;
 *     get_byte_offset still answers;
 *   - MPI_File_set_view with MPI_DISPLACEMENT_CURRENT puts the view's start where the shared
 *     pointer is, and the next ordered write lands there;
 *   - MPI_DISPLACEMENT_CURRENT on a file opened without it is MPI_ERR_ARG.
 * The file is then read back whole, through a file opened without MPI_MODE_SEQUENTIAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mftest.h"

static int rank, size;

/* Every call that needs the individual pointer or an explicit offset is refused. */
static void refused(MPI_File fh)
{
    int v = -1, u = MPI_ERR_UNSUPPORTED_OPERATION;
    MPI_Offset at = -1, before = -1, after = -1;
    MPI_Request r = MPI_REQUEST_NULL;
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &before));
    MF_CHECK_CLASS(MPI_File_write(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE), u, "write");
    MF_CHECK_CLASS(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), u, "write_at");
    MF_CHECK_CLASS(MPI_File_iwrite(fh, &v, 1, MPI_INT, &r), u, "iwrite");
    MF_CHECK_CLASS(MPI_File_iwrite_at(fh, 0, &v, 1, MPI_INT, &r), u, "iwrite_at");
    MF_CHECK(r == MPI_REQUEST_NULL, "a refused nonblocking write made a request");
    MF_CHECK_CLASS(MPI_File_write_all(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE), u, "write_all");
    MF_CHECK_CLASS(MPI_File_write_at_all(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), u,
                   "write_at_all");
    MF_CHECK_CLASS(MPI_File_write_all_begin(fh, &v, 1, MPI_INT), u, "write_all_begin");
    MF_CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), u, "seek");
    MF_CHECK_CLASS(MPI_File_get_position(fh, &at), u, "get_position");
    MF_CHECK_MPI(MPI_File_get_byte_offset(fh, 3, &at));
    MF_CHECK_MPI(MPI_File_get_position_shared(fh, &after));
    MPI_Barrier(MPI_COMM_WORLD); /* before any rank goes on to write_shared */
    MF_CHECK(after == before, "refused calls moved the shared pointer from %lld to %lld",
             (long long)before, (long long)after);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[256];
    mftest_shared_path(path, sizeof path, "io_sequential");

    MPI_File fh;
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
                               MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL,
                               MPI_INFO_NULL, &fh));
    MF_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* Part 1, ordered: rank r writes r + 1 ints of value r. */
    int mine[64];
    for (int i = 0; i <= rank; i++)
        mine[i] = rank;
    MF_CHECK_MPI(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    refused(fh);
    /* Part 2, shared: two ints per rank, 100 + r, in whatever order the ranks come. */
    int two[2] = {100 + rank, 100 + rank};
    MF_CHECK_MPI(MPI_File_write_shared(fh, two, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Part 3: a view from where the shared pointer is, its etype a pair of ints. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MF_CHECK_MPI(
        MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, pair, pair, "native", MPI_INFO_NULL));
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MF_CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    long long ints = (long long)size * (size + 1) / 2 + 2LL * size;
    MF_CHECK(disp == ints * (MPI_Offset)sizeof(int),
             "set_view at MPI_DISPLACEMENT_CURRENT: disp %lld, not %lld", (long long)disp,
             ints * (long long)sizeof(int));
    if (et != MPI_INT)
        MPI_Type_free(&et);
    if (ft != MPI_INT && ft != et)
        MPI_Type_free(&ft);
    int last[2] = {1000 + rank, 1000 + rank};
    MF_CHECK_MPI(MPI_File_write_ordered(fh, last, 1, pair, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&pair);

    /* Read back, not sequential: DISPLACEMENT_CURRENT is refused there. */
    MF_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MF_CHECK_CLASS(
        MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
        MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT on a file that is not sequential");
    if (rank == 0) {
        long long n = ints + 2LL * size;
        int *all = malloc((size_t)n * sizeof *all), *seen = calloc((size_t)size, sizeof *seen);
        MPI_Status st;
        int got = -1;
        MF_CHECK_MPI(MPI_File_read_at(fh, 0, all, (int)n, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &got);
        MF_CHECK(got == n, "the file holds %d ints, not %lld", got, n);
        long long k = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i <= r; i++, k++)
                MF_CHECK(all[k] == r, "ordered part: int %lld is %d, not %d", k, all[k], r);
        for (int r = 0; r < size; r++, k += 2) {
            int who = all[k] - 100;
            MF_CHECK(who >= 0 && who < size && all[k + 1] == all[k], "shared part: pair %d", r);
            if (who >= 0 && who < size)
                seen[who]++;
        }
        for (int r = 0; r < size; r++)
            MF_CHECK(seen[r] == 1, "shared part: rank %d's pair is there %d times", r, seen[r]);
        for (int r = 0; r < size; r++, k += 2)
            MF_CHECK(all[k] == 1000 + r && all[k + 1] == 1000 + r,
                     "after the view: pair %d is %d %d", r, all[k], all[k + 1]);
        free(all);
        free(seen);
    }
    MF_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return mftest_finish();
}
