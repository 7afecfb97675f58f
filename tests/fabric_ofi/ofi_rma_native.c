/*
 * ofi_rma_native.c — the native one-sided back end (src/rma/rma_native.c) over ofi: puts and
 * gets of contiguous data go by fi_write/fi_read, what it cannot do falls back to the emulation
 * and is counted. Every rank, on an MPI_Win_create window:
 *   - fence epoch: puts a block into its right neighbour, gets one from its left one;
 *   - passive: lock/put/flush/get/unlock on every other rank, and MPI_Rput/MPI_Rget;
 *   - atomics: MPI_Accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap on ints (native where
 *     the window has native atomics: shm, tcp;ofi_rxm with MANIFOLD_OFI_ATOMICS=on);
 *   - forced fallbacks: a put with a vector datatype and an MPI_MAXLOC accumulate on MPI_2INT (a
 *     pair type: no fabric atomic);
 * checks the data, then the MPI_T counters rma_native_* (argument "native": puts, gets and the
 * three atomics went native and both fallbacks were counted, on every rank with another rank;
 * "noatomics", tcp;ofi_rxm by default: puts and gets native, the atomics emulated and counted;
 * "off", under
 * MANIFOLD_RMA_NATIVE=0: nothing went native and every operation counted as turned off;
 * "none": nothing went native nor counted, as on fabrics without the ops).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

enum { N = 4096, NC = 7 };
static const char *names[NC] = {"rma_native_puts",
                                "rma_native_gets",
                                "rma_native_fallback_layout",
                                "rma_native_fallback_acc",
                                "rma_native_fallback_off",
                                "rma_native_atomics",
                                "rma_native_fallback_atomic_type"};

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool native = argc > 1 && strcmp(argv[1], "native") == 0;
    bool off = argc > 1 && strcmp(argv[1], "off") == 0;
    bool noatomics = argc > 1 && strcmp(argv[1], "noatomics") == 0;

    /* handles started now, read at the end: the counts of this run */
    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h[NC];
    MF_CHECK_MPI(MPI_T_pvar_session_create(&sess));

    int *mem = calloc(4 * N, sizeof(int)), *buf = malloc(N * sizeof(int));
    int *got = malloc(N * sizeof(int));
    MPI_Win win;
    MF_CHECK_MPI(
        MPI_Win_create(mem, 4 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* the counters exist once a window had a native target */
    bool have = true;
    for (int i = 0; i < NC; i++) {
        int idx, count;
        if (MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS) {
            have = false;
            break;
        }
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(sess, h[i]));
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* fence epoch: block 0 of the right neighbour gets our data; we read the left one's */
    for (int i = 0; i < N; i++)
        buf[i] = rank * 100000 + i;
    for (int i = 0; i < N; i++)
        mem[N + i] = rank * 7 + i;
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Put(buf, N, MPI_INT, right, 0, N, MPI_INT, win));
    MF_CHECK_MPI(MPI_Get(got, N, MPI_INT, left, N, N, MPI_INT, win));
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        MF_CHECK(mem[i] == left * 100000 + i, "fence put: mem[%d] = %d", i, mem[i]);
        MF_CHECK(got[i] == left * 7 + i, "fence get: got[%d] = %d", i, got[i]);
        if (mem[i] != left * 100000 + i || got[i] != left * 7 + i)
            break;
    }

    /* passive target: one element each into block 2 of every other rank, read back */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < size; t++) {
        if (t == rank)
            continue;
        int v = rank + 1, back = -1;
        MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MF_CHECK_MPI(MPI_Put(&v, 1, MPI_INT, t, 2 * N + rank, 1, MPI_INT, win));
        MF_CHECK_MPI(MPI_Win_flush(t, win));
        MF_CHECK_MPI(MPI_Get(&back, 1, MPI_INT, t, 2 * N + rank, 1, MPI_INT, win));
        MF_CHECK_MPI(MPI_Win_unlock(t, win));
        MF_CHECK(back == v, "lock/put/flush/get on rank %d read %d, not %d", t, back, v);
        /* request-based */
        MPI_Request rq[2];
        int w2 = -(rank + 1), r2 = 0;
        MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MF_CHECK_MPI(MPI_Rput(&w2, 1, MPI_INT, t, 3 * N + rank, 1, MPI_INT, win, &rq[0]));
        MF_CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_Win_flush(t, win));
        MF_CHECK_MPI(MPI_Rget(&r2, 1, MPI_INT, t, 3 * N + rank, 1, MPI_INT, win, &rq[1]));
        MF_CHECK_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_Win_unlock(t, win));
        MF_CHECK(r2 == w2, "Rput/Rget on rank %d read %d, not %d", t, r2, w2);
    }
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int o = 0; o < size; o++)
        if (o != rank)
            MF_CHECK(mem[2 * N + o] == o + 1, "rank %d's passive put left %d", o, mem[2 * N + o]);

    /* atomics on the right neighbour's block 3 end: accumulate, fetch-and-op, compare-and-swap */
    int one = 1, fetched = -1, swap = rank + 1, zero = 0, was = -1;
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, right, 4 * N - 1, 1, MPI_INT, MPI_SUM, win));
    MF_CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_INT, right, 4 * N - 5, MPI_SUM, win));
    MF_CHECK_MPI(MPI_Compare_and_swap(&swap, &zero, &was, MPI_INT, right, 4 * N - 6, win));
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK(mem[4 * N - 1] == 1, "accumulate left %d", mem[4 * N - 1]);
    MF_CHECK(fetched == 0 && mem[4 * N - 5] == 1, "fetch-and-op fetched %d, left %d", fetched,
             mem[4 * N - 5]);
    MF_CHECK(was == 0 && mem[4 * N - 6] == left + 1, "compare-and-swap found %d, left %d", was,
             mem[4 * N - 6]);

    /* forced fallbacks: every other element (a vector type), and MAXLOC on a pair type */
    MPI_Datatype vec;
    MF_CHECK_MPI(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
    MF_CHECK_MPI(MPI_Type_commit(&vec));
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Put(buf, 8, MPI_INT, right, N, 1, vec, win));
    int pair[2] = {rank + 5, rank};
    MF_CHECK_MPI(MPI_Accumulate(pair, 1, MPI_2INT, right, 4 * N - 4, 1, MPI_2INT, MPI_MAXLOC, win));
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++)
        MF_CHECK(mem[N + 2 * i] == left * 100000 + i, "vector put: mem[%d] = %d", N + 2 * i,
                 mem[N + 2 * i]);
    MF_CHECK(mem[4 * N - 4] == left + 5 && mem[4 * N - 3] == left, "maxloc left (%d, %d)",
             mem[4 * N - 4], mem[4 * N - 3]);
    MF_CHECK_MPI(MPI_Type_free(&vec));

    unsigned long long v[NC] = {0};
    if (have)
        for (int i = 0; i < NC; i++)
            MF_CHECK_MPI(MPI_T_pvar_read(sess, h[i], &v[i]));
    if (native && size > 1) {
        MF_CHECK(have, "no rma_native_* counters: no window had a native target");
        MF_CHECK(v[0] >= (unsigned long long)(1 + 2 * (size - 1)), "only %llu native puts", v[0]);
        MF_CHECK(v[1] >= (unsigned long long)(1 + 2 * (size - 1)), "only %llu native gets", v[1]);
        MF_CHECK(v[2] >= 1, "the vector put was not counted as a fallback (%llu)", v[2]);
        MF_CHECK(v[5] >= 3, "only %llu native atomics", v[5]);
        MF_CHECK(v[6] >= 1, "the MAXLOC accumulate was not counted as a fallback (%llu)", v[6]);
        MF_CHECK(v[4] == 0, "%llu operations counted as turned off", v[4]);
    } else if (noatomics && size > 1) {
        MF_CHECK(have, "no rma_native_* counters: no window had a native target");
        MF_CHECK(v[0] >= (unsigned long long)(1 + 2 * (size - 1)), "only %llu native puts", v[0]);
        MF_CHECK(v[5] == 0, "%llu atomics went native", v[5]);
        MF_CHECK(v[3] >= 3, "only %llu accumulating operations counted as emulated", v[3]);
    } else if (off && size > 1) {
        MF_CHECK(have, "no rma_native_* counters: no window had a native target");
        MF_CHECK(v[0] == 0 && v[1] == 0 && v[5] == 0,
                 "%llu puts, %llu gets, %llu atomics went native", v[0], v[1], v[5]);
        MF_CHECK(v[4] >= (unsigned long long)(4 * (size - 1)), "only %llu counted as turned off",
                 v[4]);
    } else if (!native && !off && !noatomics) {
        for (int i = 0; i < NC; i++)
            MF_CHECK(v[i] == 0, "%s = %llu without a native fabric", names[i], v[i]);
    }
    MF_CHECK_MPI(MPI_Win_free(&win));
    MF_CHECK_MPI(MPI_T_pvar_session_free(&sess));
    free(mem);
    free(buf);
    free(got);
    return mftest_finish();
}
