/*
 * rma_route.c — the fabric instance one-sided traffic takes (issue 13, hybrid routes).
 *
 * Usage: rma_route single|hybrid|bulk. Rank 0 reads the MPI_T byte counters of the instances
 * (tcp0_bytes_sent, ...: src/fabric/fabric_mpit.c) around what it does, so the counters say
 * which instance carried it. Windows are MPI_Win_create windows: the emulated back end, whose
 * operations are messages on the window's private communicator.
 *
 * hybrid (MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp:lo MANIFOLD_RMA_FABRIC=tcp:127.0.0.0/8: tcp0 for
 * point-to-point, tcp1 for one-sided traffic):
 *   - messages on MPI_COMM_WORLD go over tcp0, tcp1 sends nothing;
 *   - puts and gets (lock/flush and fence epochs) on a window without info, or with info
 *     manifold_fabric=rma or =tcp1, go over tcp1 (it grows by at least the bytes moved), tcp0
 *     sends nothing; with manifold_fabric=p2p or =tcp0, the other way round.
 * single (one instance per peer, shm or tcp): the same windows with p2p, rma and the instance's
 * own name work and move their bytes over it.
 * Both: values of manifold_fabric that name nothing in use fail window creation with
 * MPI_ERR_INFO_VALUE and a message naming the key and the value, and MPI_Win_get_info reports
 * the value a window was created with.
 * bulk: nothing but rank 0 putting BULK bytes to rank 1 through a window without info, so that
 * the job's report (mpiexec --report-fabrics) shows them on the one-sided instance
 * (rma_report.sh).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

enum { SMALL = 8, BIG = 64 * 1024, BULK = 4 << 20 };
#define KEY "manifold_fabric"

typedef struct {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2][2]; /* [instance][sent, received] */
    const char *inst[2];
    int n;
} counters;

static void counters_open(counters *c, const char *a, const char *b)
{
    c->inst[0] = a;
    c->inst[1] = b;
    c->n = b ? 2 : 1;
    MF_CHECK_MPI(MPI_T_pvar_session_create(&c->s));
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++) {
            char name[64];
            int idx = -1, count;
            snprintf(name, sizeof name, "%s_%s", c->inst[i], k ? "bytes_received" : "bytes_sent");
            int rc = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx);
            MF_CHECK(rc == MPI_SUCCESS, "no counter %s (rc %d)", name, rc);
            if (rc != MPI_SUCCESS)
                exit(mftest_finish());
            MF_CHECK_MPI(MPI_T_pvar_handle_alloc(c->s, idx, NULL, &c->h[i][k], &count));
            MF_CHECK_MPI(MPI_T_pvar_start(c->s, c->h[i][k]));
        }
}

static void counters_read(counters *c, unsigned long long v[2][2])
{
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++)
            MF_CHECK_MPI(MPI_T_pvar_read(c->s, c->h[i][k], &v[i][k]));
}

static void counters_close(counters *c)
{
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++)
            MPI_T_pvar_handle_free(c->s, &c->h[i][k]);
    MPI_T_pvar_session_free(&c->s);
}

static MPI_Info info_with(const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    if (value) {
        MF_CHECK_MPI(MPI_Info_create(&info));
        MF_CHECK_MPI(MPI_Info_set(info, KEY, value));
    }
    return info;
}

/* Rank 0 puts SMALL then BIG bytes to every other rank and gets them back, in one lock/flush
 * epoch per target, or in fence epochs; the others only expose their memory and check what
 * landed after the closing fence (on the window: its traffic only). Returns the bytes rank 0
 * put (it got BIG per target). */
static long long exercise(MPI_Win win, unsigned char *mem, int rank, int size, bool fence)
{
    size_t n = (size_t)size * BIG;
    unsigned char *out = malloc(n), *in = calloc(1, n);
    long long moved = 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(i / BIG * 31 + i % BIG);
    if (fence)
        MF_CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 1; t < size && rank == 0; t++) {
        if (!fence)
            MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MF_CHECK_MPI(MPI_Put(out + t * BIG, SMALL, MPI_BYTE, t, BIG, SMALL, MPI_BYTE, win));
        MF_CHECK_MPI(MPI_Put(out + t * BIG, BIG, MPI_BYTE, t, 0, BIG, MPI_BYTE, win));
        if (!fence)
            MF_CHECK_MPI(MPI_Win_flush(t, win));
        moved += BIG + SMALL;
    }
    if (fence)
        MF_CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 1; t < size && rank == 0; t++) {
        MF_CHECK_MPI(MPI_Get(in + t * BIG, BIG, MPI_BYTE, t, 0, BIG, MPI_BYTE, win));
        if (!fence)
            MF_CHECK_MPI(MPI_Win_unlock(t, win));
    }
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0 && size > 1)
        MF_CHECK(memcmp(in + BIG, out + BIG, n - BIG) == 0, "what rank 0 got back differs");
    if (rank > 0)
        MF_CHECK(memcmp(mem, out + (size_t)rank * BIG, BIG) == 0, "rank %d's window differs", rank);
    free(out);
    free(in);
    return moved;
}

/* A window created with manifold_fabric = value (NULL: no info) carries rank 0's operations over
 * instance `want` (index into c): its counters grow by at least what was moved, the other's sent
 * counter stays put. */
static void check_window(counters *c, const char *value, int want, int rank, int size, bool fence)
{
    MPI_Info info = info_with(value);
    unsigned char *mem = calloc(1, BIG + SMALL);
    MPI_Win win;
    MF_CHECK_MPI(MPI_Win_create(mem, BIG + SMALL, 1, info, MPI_COMM_WORLD, &win));
    if (value) {
        MPI_Info got;
        char v[64] = "";
        int flag = 0;
        MF_CHECK_MPI(MPI_Win_get_info(win, &got));
        MF_CHECK_MPI(MPI_Info_get_string(got, KEY, &(int){sizeof v}, v, &flag));
        MF_CHECK(flag && strcmp(v, value) == 0, "MPI_Win_get_info: %s='%s' (flag %d), not '%s'",
                 KEY, v, flag, value);
        MPI_Info_free(&got);
        MPI_Info_free(&info);
    }
    /* Nothing rank 0 sends after this barrier precedes its first reading. */
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long before[2][2], after[2][2];
    counters_read(c, before);
    long long moved = exercise(win, mem, rank, size, fence);
    counters_read(c, after);
    if (rank == 0 && size > 1) {
        unsigned long long sent = after[want][0] - before[want][0];
        unsigned long long got = after[want][1] - before[want][1];
        long long fetched = (long long)BIG * (size - 1);
        MF_CHECK(sent >= (unsigned long long)moved && got >= (unsigned long long)fetched,
                 "%s=%s (%s): %s sent %llu and received %llu bytes for %lld put and %lld got", KEY,
                 value ? value : "(none)", fence ? "fence" : "lock", c->inst[want], sent, got,
                 moved, fetched);
        if (c->n == 2) {
            unsigned long long other = after[1 - want][0] - before[1 - want][0];
            MF_CHECK(other == 0, "%s=%s (%s): %s sent %llu bytes, expected none", KEY,
                     value ? value : "(none)", fence ? "fence" : "lock", c->inst[1 - want], other);
        }
    }
    MF_CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

/* Point-to-point messages on MPI_COMM_WORLD go over instance 0. */
static void check_p2p(counters *c, int rank, int size)
{
    unsigned char *buf = calloc(1, BIG);
    MF_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long before[2][2], after[2][2];
    counters_read(c, before);
    if (rank == 0)
        for (int t = 1; t < size; t++)
            MF_CHECK_MPI(MPI_Send(buf, BIG, MPI_BYTE, t, 5, MPI_COMM_WORLD));
    else
        MF_CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    counters_read(c, after);
    if (rank == 0) {
        unsigned long long sent = after[0][0] - before[0][0];
        MF_CHECK(sent >= (unsigned long long)BIG * (size - 1), "p2p: %s sent %llu bytes",
                 c->inst[0], sent);
        if (c->n == 2)
            MF_CHECK(after[1][0] == before[1][0], "p2p: %s sent %llu bytes, expected none",
                     c->inst[1], after[1][0] - before[1][0]);
    }
    free(buf);
}

/* Values naming nothing in use: MPI_ERR_INFO_VALUE, with the key and value in the message. */
static void check_bad(const char *value)
{
    MPI_Info info = info_with(value);
    char mem[8];
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_create(mem, sizeof mem, 1, info, MPI_COMM_WORLD, &win);
    int cls = MPI_SUCCESS, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    MF_CHECK(cls == MPI_ERR_INFO_VALUE, "%s=%s: MPI_Win_create returned class %d, not %d", KEY,
             value, cls, MPI_ERR_INFO_VALUE);
    MF_CHECK(strstr(text, KEY) && strstr(text, value), "%s=%s: the error does not name it: %s", KEY,
             value, text);
    MF_CHECK(win == MPI_WIN_NULL, "%s=%s: a window was returned anyway", KEY, value);
    MPI_Info_free(&info);
}

static void bulk(int rank, int size)
{
    unsigned char *mem = calloc(1, BULK);
    MPI_Win win;
    MF_CHECK_MPI(MPI_Win_create(mem, BULK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (rank == 0 && size > 1) {
        MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MF_CHECK_MPI(MPI_Put(mem, BULK, MPI_BYTE, 1, 0, BULK, MPI_BYTE, win));
        MF_CHECK_MPI(MPI_Win_unlock(1, win));
    }
    MF_CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && strcmp(argv[1], "bulk") == 0) {
        bulk(rank, size);
        return mftest_finish();
    }
    bool hybrid = argc > 1 && strcmp(argv[1], "hybrid") == 0;
    const char *shm = getenv("MANIFOLD_SHM");
    const char *single = size == 1 ? "self0" : shm && strcmp(shm, "0") == 0 ? "tcp0" : "shm0";
    counters c;
    if (hybrid)
        counters_open(&c, "tcp0", "tcp1");
    else
        counters_open(&c, single, NULL);

    check_p2p(&c, rank, size);
    for (int fence = 0; fence < 2; fence++) {
        if (hybrid) {
            check_window(&c, NULL, 1, rank, size, fence);
            check_window(&c, "rma", 1, rank, size, fence);
            check_window(&c, "tcp1", 1, rank, size, fence);
            check_window(&c, "p2p", 0, rank, size, fence);
            check_window(&c, "tcp0", 0, rank, size, fence);
        } else {
            check_window(&c, NULL, 0, rank, size, fence);
            check_window(&c, "rma", 0, rank, size, fence);
            check_window(&c, "p2p", 0, rank, size, fence);
            check_window(&c, single, 0, rank, size, fence);
        }
    }
    check_bad("tcp9");
    check_bad("shm");
    check_bad("bogus value");
    counters_close(&c);
    return mftest_finish();
}
