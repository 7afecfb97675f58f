/*
 * sctp_rma_window.c — many large one-sided puts in flight at once (as bench/rma's put_bw): rank
 * 0 puts 16 blocks of 1 MiB into rank 1's MPI_Win_create window (the emulated back end, whose
 * puts travel as point-to-point frames over the fabric) before one flush, in rounds with a new
 * pattern each; rank 1 checks every word after each round. Over sctp this is the traffic that
 * stalled usrsctp (issue #15): a window of 1 MiB messages on one association. Prints
 * " No Errors".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 16
#define BLOCK (1 << 20)
#define ROUNDS 4

static uint64_t word(int round, size_t i)
{
    return ((uint64_t)round + 1) * 0x9e3779b97f4a7c15ull ^ i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t words = (size_t)BLOCKS * BLOCK / sizeof(uint64_t);
    uint64_t *mem = calloc(words, sizeof *mem), *src = malloc(words * sizeof *src);
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)(words * sizeof *mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int round = 0; round < ROUNDS && np > 1; round++) {
        if (rank == 0) {
            for (size_t i = 0; i < words; i++)
                src[i] = word(round, i);
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int b = 0; b < BLOCKS; b++)
                MPI_Put((char *)src + (size_t)b * BLOCK, BLOCK, MPI_BYTE, 1, (MPI_Aint)b * BLOCK,
                        BLOCK, MPI_BYTE, win);
            MPI_Win_flush(1, win);
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* our own memory, synchronised */
            for (size_t i = 0; i < words; i++)
                if (mem[i] != word(round, i)) {
                    if (bad++ < 3)
                        fprintf(stderr, "round %d: word %zu differs\n", round, i);
                    break;
                }
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED\n" : " No Errors\n");
    free(mem);
    free(src);
    MPI_Finalize();
    return all != 0;
}
