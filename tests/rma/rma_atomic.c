/*
 * rma_atomic.c — the window's atomicity domain under contention from every rank at once:
 * fetch-and-op tickets are unique, a compare-and-swap increment loop loses no update,
 * exclusive locks serialise a non-atomic read-modify-write (get, flush, put), get_accumulate
 * with MPI_REPLACE is an atomic swap, and MAXLOC on a pair type (a type with a gap) accumulates
 * right.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define N 100

static int rank, size;
static int use_create; /* argv[1] "create": MPI_Win_create windows (the emulated back end) */

/* A window of `bytes`; *(void **)baseptr gets its memory. */
static void win_new(MPI_Aint bytes, int unit, void *baseptr, MPI_Win *win)
{
    if (use_create) {
        void *mem = calloc(1, (size_t)bytes);
        *(void **)baseptr = mem;
        MF_CHECK_MPI(MPI_Win_create(mem, bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, win));
    } else {
        MF_CHECK_MPI(MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win));
    }
}

static void win_done(MPI_Win *win, void *mem)
{
    MF_CHECK_MPI(MPI_Win_free(win));
    if (use_create)
        free(mem);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    use_create = argc > 1 && !strcmp(argv[1], "create");
    long *mem;
    MPI_Win win;
    win_new(8 * sizeof(long), sizeof(long), &mem, &win);
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    mem[3] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. tickets from fetch-and-op: all distinct, 0 .. size*N-1 */
    long tickets[N], one = 1;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < N; i++) {
        MF_CHECK_MPI(MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG, 0, 0, MPI_SUM, win));
        if (i % 16 == 0)
            MPI_Win_flush(0, win);
    }
    /* 2. increment by compare-and-swap, retrying on interference */
    for (int i = 0; i < N; i++) {
        long old, seen, nv;
        MF_CHECK_MPI(MPI_Fetch_and_op(NULL, &old, MPI_LONG, 0, 1, MPI_NO_OP, win));
        MPI_Win_flush(0, win);
        for (;;) {
            nv = old + 1;
            MF_CHECK_MPI(MPI_Compare_and_swap(&nv, &old, &seen, MPI_LONG, 0, 1, win));
            MPI_Win_flush(0, win);
            if (seen == old)
                break;
            old = seen;
        }
    }
    /* 4. swap by get_accumulate(MPI_REPLACE) */
    long me = rank, prev = -2;
    MF_CHECK_MPI(MPI_Get_accumulate(&me, 1, MPI_LONG, &prev, 1, MPI_LONG, 0, 3, 1, MPI_LONG,
                                    MPI_REPLACE, win));
    MPI_Win_unlock_all(win);

    /* 3. exclusive lock around get, flush, put */
    int last = size - 1;
    for (int i = 0; i < N; i++) {
        long v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
        MF_CHECK_MPI(MPI_Get(&v, 1, MPI_LONG, last, 2, 1, MPI_LONG, win));
        MPI_Win_flush(last, win);
        v++;
        MF_CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, last, 2, 1, MPI_LONG, win));
        MPI_Win_unlock(last, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    long *all = malloc((size_t)size * N * sizeof(long));
    MPI_Gather(tickets, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD);
    long *swaps = malloc(((size_t)size + 1) * sizeof(long));
    MPI_Gather(&prev, 1, MPI_LONG, swaps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size * N, sizeof(long), cmp_long);
        for (int i = 0; i < size * N; i++)
            MF_CHECK(all[i] == i, "ticket %d is %ld (duplicate or lost)", i, all[i]);
        MF_CHECK(mem[0] == (long)size * N, "fetch-and-op counter %ld, want %d", mem[0], size * N);
        MF_CHECK(mem[1] == (long)size * N, "CAS counter %ld, want %d", mem[1], size * N);
        swaps[size] = mem[3];
        qsort(swaps, (size_t)size + 1, sizeof(long), cmp_long);
        for (int i = 0; i <= size; i++)
            MF_CHECK(swaps[i] == i - 1, "swap chain broken: %ld at %d", swaps[i], i);
    }
    if (rank == last)
        MF_CHECK(mem[2] == (long)size * N, "locked counter %ld, want %d", mem[2], size * N);
    free(all);
    free(swaps);
    win_done(&win, mem);

    /* 5. MAXLOC on MPI_DOUBLE_INT (12 bytes of data in a 16-byte element), two per origin */
    struct {
        double v;
        int i;
    } * pm, pv[2];
    win_new(2 * sizeof *pm, sizeof *pm, &pm, &win);
    pm[0].v = pm[1].v = -1.0;
    pm[0].i = pm[1].i = -1;
    pv[0].v = rank;
    pv[0].i = rank;
    pv[1].v = -rank;
    pv[1].i = rank;
    MPI_Win_fence(0, win);
    MF_CHECK_MPI(MPI_Accumulate(pv, 2, MPI_DOUBLE_INT, 0, 0, 2, MPI_DOUBLE_INT, MPI_MAXLOC, win));
    MPI_Win_fence(0, win);
    if (rank == 0) {
        MF_CHECK(pm[0].v == size - 1 && pm[0].i == size - 1, "MAXLOC[0] = (%g, %d)", pm[0].v,
                 pm[0].i);
        MF_CHECK(pm[1].v == 0 && pm[1].i == 0, "MAXLOC[1] = (%g, %d)", pm[1].v, pm[1].i);
    }
    win_done(&win, pm);
    return mftest_finish();
}
