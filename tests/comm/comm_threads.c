/* MPI_THREAD_MULTIPLE: the query and handle-making calls on communicators (MPI_Comm_rank,
 * MPI_Comm_size, MPI_Comm_group, MPI_Comm_compare, MPI_Comm_get_name, MPI_Comm_get_info,
 * MPI_Topo_test, ...) from one thread while a second creates and frees communicators and
 * groups (the handle tables grow and shrink) and a third exchanges messages on
 * MPI_COMM_WORLD (its requests take and drop references on it). Every answer must stay right;
 * under ThreadSanitizer (CI's tsan stage runs every test named *thread*) any of these calls
 * that reads or writes shared state without the library lock fails the test. Even sizes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "mftest.h"

#define DUPS 80     /* past the handle table's first 64 slots: it grows while others look up */
#define ROUNDS 12   /* creator rounds */
#define TRAFFIC 600 /* message rounds */

static int rank, size;
static MPI_Comm base, q; /* base: the creator's own; q: the one the queries look at */
static atomic_int busy = 2;

static void *creator(void *arg)
{
    static MPI_Comm dups[DUPS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < DUPS; i++)
            MF_CHECK_MPI(MPI_Comm_dup(base, &dups[i]));
        for (int i = 0; i < DUPS; i++) {
            MPI_Group g;
            MF_CHECK_MPI(MPI_Comm_group(dups[i], &g));
            MF_CHECK_MPI(MPI_Group_free(&g));
        }
        for (int i = DUPS - 1; i >= 0; i--)
            MF_CHECK_MPI(MPI_Comm_free(&dups[i]));
    }
    atomic_fetch_sub(&busy, 1);
    return arg;
}

static void *traffic(void *arg)
{
    int peer = rank ^ 1, out[64], in[64];
    for (int round = 0; round < TRAFFIC; round++) {
        MPI_Request rq[2];
        for (int i = 0; i < 64; i++)
            out[i] = rank * 100000 + round * 64 + i;
        MF_CHECK_MPI(MPI_Irecv(in, 64, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq[0]));
        MF_CHECK_MPI(MPI_Isend(out, 64, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq[1]));
        MF_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        MF_CHECK(in[63] == peer * 100000 + round * 64 + 63, "round %d: got %d", round, in[63]);
    }
    atomic_fetch_sub(&busy, 1);
    return arg;
}

/* One pass of every query, each answer checked. */
static void queries(void)
{
    int r = -1, n = -1, cmp = -1, inter = -1, topo = -1, len = 0, gsize = -1;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Group g;
    MPI_Info info;
    MF_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    MF_CHECK_MPI(MPI_Comm_size(q, &n));
    MF_CHECK(r == rank && n == size, "rank %d size %d", r, n);
    MF_CHECK_MPI(MPI_Comm_compare(q, MPI_COMM_WORLD, &cmp));
    MF_CHECK(cmp == MPI_CONGRUENT, "compare: %d", cmp);
    MF_CHECK_MPI(MPI_Comm_test_inter(q, &inter));
    MF_CHECK_MPI(MPI_Topo_test(q, &topo));
    MF_CHECK(!inter && topo == MPI_UNDEFINED, "inter %d topo %d", inter, topo);
    MF_CHECK_MPI(MPI_Comm_get_name(q, name, &len));
    MF_CHECK(strcmp(name, "queried") == 0, "name '%s'", name);
    MF_CHECK_MPI(MPI_Comm_group(q, &g));
    MF_CHECK_MPI(MPI_Group_size(g, &gsize));
    MF_CHECK(gsize == size, "group size %d", gsize);
    MF_CHECK_MPI(MPI_Group_free(&g));
    MF_CHECK_MPI(MPI_Comm_get_info(q, &info));
    MF_CHECK_MPI(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MF_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MF_CHECK(size % 2 == 0, "needs an even number of ranks, not %d", size);
    if (provided == MPI_THREAD_MULTIPLE && size % 2 == 0) {
        MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &base));
        MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &q));
        MF_CHECK_MPI(MPI_Comm_set_name(q, "queried"));
        pthread_t t[2];
        pthread_create(&t[0], NULL, creator, NULL);
        pthread_create(&t[1], NULL, traffic, NULL);
        long passes = 0;
        /* A pause between passes, for CI's time: without it each rank's query thread keeps
         * a core busy, and 4 ranks (12 threads) on 2 cores take 20-25 s instead of 0.1 s, most
         * of it the cores' time slices (core/lock.c measures this case). --no-pause (2 ranks)
         * takes the lock back to back, as a thread polling MPI does. */
        bool pause = !(argc > 1 && strcmp(argv[1], "--no-pause") == 0);
        while (atomic_load(&busy) > 0 || passes < 100) {
            queries();
            passes++;
            if (pause)
                nanosleep(&(struct timespec){0, 50 * 1000}, NULL);
        }
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        MF_CHECK_MPI(MPI_Comm_free(&q));
        MF_CHECK_MPI(MPI_Comm_free(&base));
    }
    return mftest_finish();
}
