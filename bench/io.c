/*
 * io — MPI-IO bandwidth: every rank writes `size` bytes (doubles) to one shared file, syncs, and
 * reads them back, two ways:
 *   io.contig   each rank's bytes one block at rank * size (MPI_File_write_at_all / read_at_all);
 *   io.strided  the ranks' doubles interleaved one by one through a view (a vector filetype
 *               resized to np doubles, displaced by the rank; MPI_File_write_all / read_all):
 *               the distributed-array pattern collective I/O and data sieving exist for.
 * Metrics, aggregate over the ranks from the slowest rank's time, best of the reps:
 * write_MBps (write_all + MPI_File_sync) and read_MBps. Every rank checks what it read. The
 * file is $BENCH_IO_DIR (default $TMPDIR or /tmp)/bench-io.<pid of rank 0>, deleted at the end:
 * on tmpfs this measures the MPI's I/O path, not a disk.
 */
#include "bench_mpi.h"

#include <unistd.h>

enum { CONTIG, STRIDED };

static void run(int how, MPI_File fh, double *buf, size_t n, int rank, int np, MPI_Datatype ft,
                double *tw, double *tr)
{
    MPI_Offset at = (MPI_Offset)rank * (MPI_Offset)(n * sizeof(double));
    if (how == STRIDED)
        MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(double), MPI_DOUBLE, ft,
                          "native", MPI_INFO_NULL);
    else
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    for (size_t i = 0; i < n; i++)
        buf[i] = (double)rank * 1e9 + (double)i;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (how == STRIDED)
        MPI_File_write_all(fh, buf, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    else
        MPI_File_write_at_all(fh, at, buf, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    double t1 = MPI_Wtime();
    for (size_t i = 0; i < n; i++)
        buf[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    if (how == STRIDED) {
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_File_read_all(fh, buf, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    } else {
        MPI_File_read_at_all(fh, at, buf, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    }
    double t3 = MPI_Wtime();
    for (size_t i = 0; i < n; i++)
        BENCH_REQUIRE(buf[i] == (double)rank * 1e9 + (double)i,
                      "io: double %zu of %zu read back wrong (%g)", i, n, buf[i]);
    double mine[2] = {t1 - t0, t3 - t2}, worst[2];
    MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *tw = worst[0];
    *tr = worst[1];
    (void)np;
}

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "io", 1, &o, 64u << 10, 16u << 20, NULL, &rank, &np);
    char path[512];
    if (rank == 0) {
        const char *dir = getenv("BENCH_IO_DIR");
        if (!dir)
            dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, sizeof path, "%s/bench-io.%d", dir, (int)getpid());
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, 1, np, MPI_DOUBLE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)((size_t)np * sizeof(double)), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    double *buf = bench_alloc(o.max_size);
    MPI_File fh;
    BENCH_REQUIRE(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh) == MPI_SUCCESS,
                  "io: cannot open %s", path);
    static const char *const name[2] = {"io.contig", "io.strided"};
    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        size_t n = size / sizeof(double);
        for (int how = CONTIG; how <= STRIDED && n > 0; how++) {
            double bw = 1e30, br = 1e30;
            for (int rep = -1; rep < (o.smoke ? 1 : o.reps); rep++) {
                double tw, tr;
                run(how, fh, buf, n, rank, np, ft, &tw, &tr);
                if (rep >= 0 && tw < bw)
                    bw = tw;
                if (rep >= 0 && tr < br)
                    br = tr;
            }
            double total = (double)np * (double)n * sizeof(double);
            if (rank == 0) {
                bench_emit(name[how], size, "write_MBps", total / bw / 1e6);
                bench_emit(name[how], size, "read_MBps", total / br / 1e6);
            }
        }
    }
    MPI_File_close(&fh);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Type_free(&ft);
    free(buf);
    return bench_finish();
}
