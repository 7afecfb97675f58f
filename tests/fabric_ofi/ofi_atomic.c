/*
 * ofi_atomic.c — native atomics over ofi (fabric atomics, src/rma/rma_native.c): the window's
 * one atomicity domain when every accumulating operation goes through the provider, the own
 * rank's included. All ranks at once, on an MPI_Win_create window:
 *   - fetch-and-op tickets from one counter on rank 0 (rank 0 takes its own too): all distinct,
 *     0 .. size*N-1, and the counter ends at size*N;
 *   - a compare-and-swap increment loop on a counter of the last rank loses no update;
 *   - MPI_Accumulate of a vector layout (every other long) with MPI_SUM from every rank, and an
 *     MPI_Get_accumulate with MPI_NO_OP reading it back through a vector result type;
 *   - an accumulate of more elements than one provider atomic carries (split into pieces).
 * Argument "native": MPI_T rma_native_atomics counted every one of them (the test then fails
 * where they were emulated, as before the fabric had atomics).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

enum { N = 200, BIG = 20000 };

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool native = argc > 1 && strcmp(argv[1], "native") == 0;
    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h;
    int idx, count;
    MF_CHECK_MPI(MPI_T_pvar_session_create(&sess));

    /* 0: ticket counter, 1: CAS counter, 2..33: vector target, then BIG ints for the big one */
    MPI_Aint bytes = (34 + BIG) * (MPI_Aint)sizeof(long);
    long *mem = calloc(1, (size_t)bytes);
    MPI_Win win;
    MF_CHECK_MPI(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    bool have =
        MPI_T_pvar_get_index("rma_native_atomics", MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS;
    if (have) {
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count));
        MF_CHECK_MPI(MPI_T_pvar_start(sess, h));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    long tickets[N], one = 1;
    int last = size - 1;
    MF_CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++) {
        MF_CHECK_MPI(MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MF_CHECK_MPI(MPI_Win_flush(0, win));
    }
    for (int i = 0; i < N / 4; i++) { /* CAS increment loop */
        long old = 0, seen;
        for (;;) {
            long want = old + 1;
            MF_CHECK_MPI(MPI_Compare_and_swap(&want, &old, &seen, MPI_LONG, last, 1, win));
            MF_CHECK_MPI(MPI_Win_flush(last, win));
            if (seen == old)
                break;
            old = seen;
        }
    }
    MPI_Datatype vec;
    MF_CHECK_MPI(MPI_Type_vector(16, 1, 2, MPI_LONG, &vec));
    MF_CHECK_MPI(MPI_Type_commit(&vec));
    long add[16];
    for (int j = 0; j < 16; j++)
        add[j] = rank + j;
    MF_CHECK_MPI(MPI_Accumulate(add, 16, MPI_LONG, 0, 2, 1, vec, MPI_SUM, win));
    int *big = malloc(BIG * sizeof(int));
    for (int j = 0; j < BIG; j++)
        big[j] = j % 7 + 1;
    MF_CHECK_MPI(MPI_Accumulate(big, BIG, MPI_INT, 0, 34, BIG, MPI_INT, MPI_SUM, win));
    MF_CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* read the vector back through a vector result type, atomically (NO_OP) */
    long back[32];
    for (int j = 0; j < 32; j++)
        back[j] = -7;
    MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MF_CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG, back, 1, vec, 0, 2, 1, vec, MPI_NO_OP, win));
    MF_CHECK_MPI(MPI_Win_unlock(0, win));
    for (int j = 0; j < 16; j++) {
        long want = (long)size * (size - 1) / 2 + (long)size * j;
        MF_CHECK(back[2 * j] == want && back[2 * j + 1] == -7, "vector: back[%d]=%ld, want %ld",
                 2 * j, back[2 * j], want);
    }

    long *all = malloc((size_t)size * N * sizeof(long));
    MPI_Gather(tickets, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size * N, sizeof(long), cmp_long);
        for (long i = 0; i < (long)size * N; i++)
            if (all[i] != i) {
                MF_CHECK(0, "tickets: position %ld holds %ld (duplicate or lost)", i, all[i]);
                break;
            }
        MF_CHECK(mem[0] == (long)size * N, "ticket counter %ld, want %ld", mem[0], (long)size * N);
        int *ints = (int *)(void *)(mem + 34);
        for (int j = 0; j < BIG; j++)
            if (ints[j] != size * (j % 7 + 1)) {
                MF_CHECK(0, "big accumulate: [%d]=%d, want %d", j, ints[j], size * (j % 7 + 1));
                break;
            }
    }
    if (rank == last)
        MF_CHECK(mem[1] == (long)size * (N / 4), "CAS counter %ld, want %ld", mem[1],
                 (long)size * (N / 4));
    if (native && size > 1) {
        unsigned long long v = 0;
        MF_CHECK(have, "no rma_native_atomics counter: no window had a native target");
        if (have)
            MF_CHECK_MPI(MPI_T_pvar_read(sess, h, &v));
        /* N tickets, at least N/4 CAS, the vector, the big one, the read-back */
        MF_CHECK(v >= (unsigned long long)(N + N / 4 + 3), "only %llu native atomics", v);
    }
    MF_CHECK_MPI(MPI_Type_free(&vec));
    MF_CHECK_MPI(MPI_Win_free(&win));
    MF_CHECK_MPI(MPI_T_pvar_session_free(&sess));
    free(all);
    free(big);
    free(mem);
    return mftest_finish();
}
