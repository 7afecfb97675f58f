/*
 * io — MPI-IO bandwidth: every rank writes `size` bytes (doubles) to one shared file, syncs, and
 * reads them back, two ways:
 *   io.contig   each rank's bytes one block at rank * size (MPI_File_write_at_all / read_at_all);
 *   io.strided  the ranks' doubles interleaved one by one through a view (a vector filetype
 *               resized to np doubles, displaced by the rank; MPI_File_write_all / read_all):
 *               the distributed-array pattern collective I/O and data sieving exist for.
 *   io.external32 io.contig through an "external32" view: the file holds the doubles
 *               big-endian, converted on the way in and out (skipped by an MPI that refuses
 *               the representation).
 *   io.iwrite   each rank's block written with MPI_File_iwrite_at while the rank computes
 *               (a loop that does not call MPI) for as long as the write took when waited for at
 *               once, then MPI_Wait: overlap_pct is the share of that time t_write the program
 *               no longer sees, 100 * (t_write - t_iwrite_call - t_wait) / t_write, 0
 *               when the MPI writes before returning or only inside MPI_Wait (medians of at
 *               least 5 reps, rank 0).
 *   io.iwrite_all the same with the collective MPI_File_iwrite_at_all of each rank's block:
 *               overlap_pct of a nonblocking collective write (blocks, not io.strided's
 *               interleaved doubles, which one MPI writes at 2 MB/s: ten of its 8 MiB writes
 *               would outlast the runner's quick timeout).
 * Metrics, aggregate over the ranks from the slowest rank's time, best of the reps:
 * write_MBps (write_all + MPI_File_sync) and read_MBps. Every rank checks what it read. The
 * file is $BENCH_IO_DIR (default $TMPDIR or /tmp)/bench-io.<pid of rank 0>, deleted at the end:
 * on tmpfs this measures the MPI's I/O path, not a disk.
 */
#include "bench_mpi.h"

#include <stdbool.h>
#include <unistd.h>

enum { CONTIG, STRIDED, EXTERNAL32 };

/* One write and read back; false (nothing timed) when the MPI refuses the view. */
static bool run(int how, MPI_File fh, double *buf, size_t n, int rank, int np, MPI_Datatype ft,
                double *tw, double *tr)
{
    MPI_Offset at = (MPI_Offset)rank * (MPI_Offset)(n * sizeof(double));
    int rc;
    if (how == STRIDED)
        rc = MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(double), MPI_DOUBLE, ft,
                               "native", MPI_INFO_NULL);
    else
        rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
                               how == EXTERNAL32 ? "external32" : "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS)
        return false;
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
    return true;
}

/* Spins without calling MPI until `seconds` have passed (what it computes goes to sink, so
 * that the loop stays). */
static volatile double sink;
static double compute(double seconds)
{
    double x = 1.0, end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

/* One io.iwrite measurement of this rank's write of n doubles: *t_io, the time of the write
 * waited for at once (MPI_File_iwrite_at and MPI_Wait, so that both measurements take the same
 * path through the same caches), and *visible, what the write still cost the program when a
 * computation as long as *t_io ran between the two (the call, and the wait after it). */
static void overlap(int coll, MPI_File fh, double *buf, size_t n, int rank, double *t_io,
                    double *visible)
{
    MPI_Offset at = (MPI_Offset)rank * (MPI_Offset)(n * sizeof(double));
    MPI_Request r;
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (coll)
        MPI_File_iwrite_at_all(fh, at, buf, (int)n, MPI_DOUBLE, &r);
    else
        MPI_File_iwrite_at(fh, at, buf, (int)n, MPI_DOUBLE, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    *t_io = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (coll)
        MPI_File_iwrite_at_all(fh, at, buf, (int)n, MPI_DOUBLE, &r);
    else
        MPI_File_iwrite_at(fh, at, buf, (int)n, MPI_DOUBLE, &r);
    double t1 = MPI_Wtime();
    sink += compute(*t_io);
    double t2 = MPI_Wtime();
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    *visible = (t1 - t0) + (MPI_Wtime() - t2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
    static const char *const name[3] = {"io.contig", "io.strided", "io.external32"};
    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        size_t n = size / sizeof(double);
        for (int how = CONTIG; how <= EXTERNAL32 && n > 0; how++) {
            double bw = 1e30, br = 1e30;
            bool ok = true;
            for (int rep = -1; ok && rep < (o.smoke ? 1 : o.reps); rep++) {
                double tw = 0, tr = 0;
                ok = run(how, fh, buf, n, rank, np, ft, &tw, &tr);
                if (rep >= 0 && tw < bw)
                    bw = tw;
                if (rep >= 0 && tr < br)
                    br = tr;
            }
            double total = (double)np * (double)n * sizeof(double);
            if (rank == 0 && ok) {
                bench_emit(name[how], size, "write_MBps", total / bw / 1e6);
                bench_emit(name[how], size, "read_MBps", total / br / 1e6);
            }
        }
        /* Medians over the reps (at least 5): the blocking write's time varies by more than
         * the difference being measured at the small sizes. */
        int reps = o.smoke ? 1 : o.reps < 5 ? 5 : o.reps;
        double *t_io = malloc((size_t)reps * sizeof *t_io),
               *visible = malloc((size_t)reps * sizeof *visible);
        static const char *const iname[2] = {"io.iwrite", "io.iwrite_all"};
        for (int coll = 0; coll <= 1 && n > 0; coll++) {
            for (int rep = -1; rep < reps; rep++) {
                double a, b;
                overlap(coll, fh, buf, n, rank, &a, &b);
                if (rep >= 0) {
                    t_io[rep] = a;
                    visible[rep] = b;
                }
            }
            if (rank == 0) {
                double io = median(t_io, reps), seen = median(visible, reps);
                double pct = io > 0 ? 100.0 * (io - seen) / io : 0;
                bench_emit(iname[coll], size, "overlap_pct", pct < 0 ? 0 : pct > 100 ? 100 : pct);
            }
        }
        free(t_io);
        free(visible);
    }
    MPI_File_close(&fh);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Type_free(&ft);
    free(buf);
    return bench_finish();
}
