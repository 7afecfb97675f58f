/*
 * rails.c — traffic to every peer in both directions, eager and rendezvous, with contents
 * checked: what the fabric tests (rails_test.sh) run over several instances of one class and
 * read the per-instance counters of (MANIFOLD_REPORT=fabrics).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char byte_of(int src, int dst, size_t i)
{
    return (unsigned char)(src * 31 + dst * 7 + i * 13);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const size_t lens[] = {0, 100, 4096, 1 << 20};
    int bad = 0;
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        size_t len = lens[k];
        unsigned char *out = malloc(len * (size_t)size + 1), *in = malloc(len * (size_t)size + 1);
        MPI_Request *rq = malloc(2 * (size_t)size * sizeof *rq);
        int n = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            for (size_t i = 0; i < len; i++)
                out[(size_t)p * len + i] = byte_of(rank, p, i);
            MPI_Irecv(in + (size_t)p * len, (int)len, MPI_BYTE, p, (int)k, MPI_COMM_WORLD,
                      &rq[n++]);
            MPI_Isend(out + (size_t)p * len, (int)len, MPI_BYTE, p, (int)k, MPI_COMM_WORLD,
                      &rq[n++]);
        }
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; p++)
            for (size_t i = 0; p != rank && i < len; i++)
                bad += in[(size_t)p * len + i] != byte_of(p, rank, i);
        free(out);
        free(in);
        free(rq);
    }
    if (bad)
        fprintf(stderr, "rank %d: %d bytes differ\n", rank, bad);
    MPI_Finalize();
    return bad != 0;
}
