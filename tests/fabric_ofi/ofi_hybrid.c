/*
 * ofi_hybrid.c — a hybrid job: point-to-point on tcp, one-sided on ofi
 * (MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp MANIFOLD_RMA_FABRIC=ofi). Rank 0 reads the MPI_T byte
 * frame counters of tcp0 and ofi0 (src/fabric/fabric_mpit.c) around what it does (frames, not
 * bytes: ofi pulls rendezvous payloads with fi_read, which no frame counts):
 *   - messages on MPI_COMM_WORLD (eager and rendezvous sizes) go over tcp0, ofi0 sends nothing;
 *   - puts, gets and an accumulate on an MPI_Win_create window, in lock/flush and fence epochs,
 *     go over ofi0, tcp0 sends nothing; the data is right.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

enum { BIG = 100 * 1000 };

static MPI_T_pvar_session sess;
static MPI_T_pvar_handle h[2]; /* tcp0, ofi0 frames sent */

static void counters_open(void)
{
    static const char *names[2] = {"tcp0_frames_sent", "ofi0_frames_sent"};
    MF_CHECK_MPI(MPI_T_pvar_session_create(&sess));
    for (int i = 0; i < 2; i++) {
        int idx = -1, count;
        int rc = MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx);
        MF_CHECK(rc == MPI_SUCCESS, "no counter %s (rc %d)", names[i], rc);
        if (rc != MPI_SUCCESS)
            exit(mftest_finish());
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(sess, h[i]));
    }
}

static void counters_read(unsigned long long v[2])
{
    for (int i = 0; i < 2; i++)
        MF_CHECK_MPI(MPI_T_pvar_read(sess, h[i], &v[i]));
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counters_open();
    unsigned long long a[2], b[2];
    unsigned char *buf = malloc(BIG), *mem = calloc(1, (size_t)BIG);
    for (int i = 0; i < BIG; i++)
        buf[i] = (unsigned char)(i * 7 + rank);

    /* Point-to-point: a ring of one small and one large message. */
    counters_read(a);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int len = 8; len <= BIG; len += BIG - 8)
        MF_CHECK_MPI(MPI_Sendrecv(buf, len, MPI_BYTE, next, 1, mem, len, MPI_BYTE, prev, 1,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    counters_read(b);
    if (size > 1) {
        MF_CHECK(b[0] - a[0] >= 2, "tcp0 sent %llu frames for the ring", b[0] - a[0]);
        MF_CHECK(b[1] == a[1], "ofi0 sent %llu frames of point-to-point traffic", b[1] - a[1]);
    }

    /* One-sided on a create window. */
    MPI_Win win;
    memset(mem, 0, BIG);
    MF_CHECK_MPI(MPI_Win_create(mem, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Barrier(MPI_COMM_WORLD);
    counters_read(a);
    long long put = 0;
    if (rank == 0)
        for (int t = 1; t < size; t++) {
            MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MF_CHECK_MPI(MPI_Put(buf, BIG, MPI_BYTE, t, 0, BIG, MPI_BYTE, win));
            MF_CHECK_MPI(MPI_Win_flush(t, win));
            int one = 1;
            MF_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win));
            MF_CHECK_MPI(MPI_Win_unlock(t, win));
            put += BIG;
        }
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    unsigned char *back = malloc(BIG);
    if (rank == 0 && size > 1)
        MF_CHECK_MPI(MPI_Get(back, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win));
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    counters_read(b);
    if (rank == 0 && size > 1) {
        MF_CHECK(b[1] - a[1] >= (unsigned long long)(size - 1) * 3,
                 "ofi0 sent %llu frames for %lld bytes put", b[1] - a[1], put);
        MF_CHECK(b[0] == a[0], "tcp0 sent %llu frames of one-sided traffic", b[0] - a[0]);
        int first;
        memcpy(&first, back, sizeof first);
        int want;
        memcpy(&want, buf, sizeof want);
        MF_CHECK(first == want + 1, "the accumulate did not land: %d, expected %d", first,
                 want + 1);
        MF_CHECK(memcmp(back + 4, buf + 4, BIG - 4) == 0, "what rank 0 got back differs");
    }
    MPI_Win_free(&win);
    for (int i = 0; i < 2; i++)
        MPI_T_pvar_handle_free(sess, &h[i]);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    free(buf);
    free(mem);
    free(back);
    return mftest_finish();
}
