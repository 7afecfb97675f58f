/*
 * strided — sending one column of a row-major matrix of doubles (rows of 32 doubles, so the
 * elements lie 256 bytes apart) between ranks 0 and 1 as a ping-pong, three ways:
 *   strided.vector  the column described by MPI_Type_vector, sent and received in place;
 *   strided.pack    copied by hand into a contiguous buffer, sent, and copied back by hand;
 *   strided.contig  the same number of bytes, already contiguous (the lower bound);
 * and as a halo exchange, both ranks at once sending their first column and receiving the
 * peer's into their second (MPI_Irecv, MPI_Isend, MPI_Waitall), two ways:
 *   strided.halo_vector  with the vector type;
 *   strided.halo_pack    packed and unpacked by hand around contiguous messages.
 * size is the payload in bytes (8 x number of rows); metrics: latency_us (ping-pong: one way,
 * half the round trip; halo: one exchange; packing included) and bandwidth_MBps = size /
 * latency_us.
 */
#include "bench_mpi.h"

#define ROW 32 /* doubles per matrix row */

enum { VECTOR, PACK, CONTIG, HALO_VECTOR, HALO_PACK, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {
    "strided.vector", "strided.pack", "strided.contig", "strided.halo_vector", "strided.halo_pack"};

static void fill_column(double *mat, long rows, double seed)
{
    for (long i = 0; i < rows; i++)
        mat[i * ROW] = seed + (double)i;
}

static int column_ok(const double *mat, long rows, double seed)
{
    for (long i = 0; i < rows; i++)
        if (mat[i * ROW] != seed + (double)i)
            return 0;
    return 1;
}

/* One message of the given variant: sent to peer when `send`, else received from it. */
static void xfer(int variant, int send, int peer, double *mat, double *tmp, long rows,
                 MPI_Datatype column)
{
    switch (variant) {
    case VECTOR:
        if (send)
            MPI_Send(mat, 1, column, peer, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(mat, 1, column, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case PACK:
        if (send) {
            for (long i = 0; i < rows; i++)
                tmp[i] = mat[i * ROW];
            MPI_Send(tmp, (int)rows, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        } else {
            MPI_Recv(tmp, (int)rows, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < rows; i++)
                mat[i * ROW] = tmp[i];
        }
        break;
    default:
        if (send)
            MPI_Send(tmp, (int)rows, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(tmp, (int)rows, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    }
}

/* One halo exchange with the peer: our column 0 goes out, its column 0 lands in our column 1
 * (tmp and tmp2: the hand-packed variant's send and receive buffers). */
static void halo(int variant, int peer, double *mat, double *tmp, double *tmp2, long rows,
                 MPI_Datatype column)
{
    MPI_Request rq[2];
    if (variant == HALO_VECTOR) {
        MPI_Irecv(mat + 1, 1, column, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(mat, 1, column, peer, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        return;
    }
    MPI_Irecv(tmp2, (int)rows, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &rq[0]);
    for (long i = 0; i < rows; i++)
        tmp[i] = mat[i * ROW];
    MPI_Isend(tmp, (int)rows, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (long i = 0; i < rows; i++)
        mat[i * ROW + 1] = tmp2[i];
}

/* Whether column 1 of mat holds the peer's column 0 (fill_column(.., seed)). */
static int halo_ok(const double *mat, long rows, double seed)
{
    return column_ok(mat + 1, rows, seed);
}

int main(int argc, char **argv)
{
    int rank, np;
    bench_opts o;
    bench_mpi_start(&argc, &argv, "strided", 2, &o, 8, 512u << 10, NULL, &rank, &np);
    long maxrows = (long)(o.max_size / sizeof(double));
    if (maxrows < 1)
        maxrows = 1;
    double *mat = bench_alloc((size_t)maxrows * ROW * sizeof(double));
    double *tmp = bench_alloc((size_t)maxrows * sizeof(double));
    double *tmp2 = bench_alloc((size_t)maxrows * sizeof(double));
    int peer = rank ^ 1;

    for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
        long rows = (long)(size / sizeof(double));
        if (rows < 1)
            continue;
        MPI_Datatype column;
        MPI_Type_vector((int)rows, 1, ROW, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        long iters = bench_iters(&o, size);
        for (int v = 0; v < NVARIANTS; v++) {
            /* Checked exchange, then checked round trip for the variants that move the column
             * itself. */
            if (v >= HALO_VECTOR && rank <= 1) {
                fill_column(mat, rows, 100.0 * rank + v);
                fill_column(mat + 1, rows, -1.0);
                halo(v, peer, mat, tmp, tmp2, rows, column);
                BENCH_REQUIRE(halo_ok(mat, rows, 100.0 * peer + v),
                              "%s: exchanged column of %ld rows differs", variant_name[v], rows);
            } else if (v != CONTIG && rank <= 1) {
                if (rank == 0) {
                    fill_column(mat, rows, 1000.0 + v);
                    xfer(v, 1, peer, mat, tmp, rows, column);
                    fill_column(mat, rows, -1.0);
                    xfer(v, 0, peer, mat, tmp, rows, column);
                    BENCH_REQUIRE(column_ok(mat, rows, 1000.0 + v),
                                  "%s: echoed column of %ld rows differs", variant_name[v], rows);
                } else {
                    fill_column(mat, rows, -1.0);
                    xfer(v, 0, peer, mat, tmp, rows, column);
                    BENCH_REQUIRE(column_ok(mat, rows, 1000.0 + v),
                                  "%s: column of %ld rows received wrong", variant_name[v], rows);
                    xfer(v, 1, peer, mat, tmp, rows, column);
                }
            }
            double best = 1e30;
            for (int rep = -1; rep < o.reps; rep++) {
                long n = rep < 0 ? o.warmup : iters;
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (long i = 0; rank <= 1 && i < n; i++) {
                    if (v >= HALO_VECTOR) {
                        halo(v, peer, mat, tmp, tmp2, rows, column);
                        continue;
                    }
                    xfer(v, rank == 0, peer, mat, tmp, rows, column);
                    xfer(v, rank != 0, peer, mat, tmp, rows, column);
                }
                double t = (MPI_Wtime() - t0) / ((v >= HALO_VECTOR ? 1.0 : 2.0) * (double)n);
                if (rep >= 0 && t < best)
                    best = t;
            }
            if (rank == 0) {
                bench_emit(variant_name[v], size, "latency_us", best * 1e6);
                bench_emit(variant_name[v], size, "bandwidth_MBps", (double)size / best / 1e6);
            }
        }
        MPI_Type_free(&column);
    }
    free(tmp2);
    free(tmp);
    free(mat);
    return bench_finish();
}
