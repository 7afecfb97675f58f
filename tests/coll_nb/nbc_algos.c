/*
 * The size-dependent algorithms of the nonblocking collectives (src/coll/nbc_algo.c):
 * Iallreduce, Ireduce_scatter(_block), Ibcast, Ialltoall, Iallgather at counts around every
 * threshold (MANIFOLD_COLL_SHORT_MSG, _LONG_MSG, 8x LONG_MSG where bcast's tree gives way when
 * oversubscribed, MANIFOLD_COLL_CHAIN_MIN), read from the environment that CMakeLists.txt sets
 * small so that every algorithm runs in a short test; each result checked against values
 * computed here, with MPI_IN_PLACE, a strided derived datatype (whose gaps must stay untouched)
 * and a non-commutative user op; then several collectives in flight at once on three
 * communicators.
 *
 * With the argument "shape" (automatic choice, no MANIFOLD_COLL_<COLL> forced) it also checks
 * from the MPI_T counters coll_nbc_rounds / _transfers / _bytes_sent that the schedules have
 * the shape of the blocking algorithms chosen at those sizes: rounds of recursive doubling,
 * one peer per round for a pairwise alltoall, bytes of Rabenseifner / ring / scatter-allgather.
 * The old schedules (reduce + bcast, ring allgather, one all-pairs round, binomial bcast,
 * reduce + scatterv) fail these checks.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define SENTINEL (-777)

static int rank, size;
static MPI_Datatype strided, mat;
static MPI_Op matop;

/* Layouts: 0 = MPI_INT (1 int per element), 1 = strided: 2 ints then a gap (extent 3 ints). */
static MPI_Datatype type_of(int lay)
{
    return lay ? strided : MPI_INT;
}
static int stride_of(int lay)
{
    return lay ? 3 : 1;
}
static int width_of(int lay)
{
    return lay ? 2 : 1;
}

static int val(int r, long item, int salt)
{
    return (int)((r * 7919L + item * 31 + salt * 101) % 100003);
}

/* Fills count elements: item index base + e*w + j; gaps get SENTINEL. */
static void fill(int *buf, long count, int lay, int r, long base, int salt)
{
    int s = stride_of(lay), w = width_of(lay);
    for (long e = 0; e < count; e++)
        for (int j = 0; j < s; j++)
            buf[e * s + j] = j < w ? val(r, base + e * w + j, salt) : SENTINEL;
}

static int *alloc_ints(long elems, int lay)
{
    long n = elems * stride_of(lay) + 1;
    int *p = malloc((size_t)n * sizeof *p);
    for (long i = 0; i < n; i++)
        p[i] = SENTINEL;
    return p;
}

typedef int (*expect_fn)(long item, void *ctx);

/* Checks count elements against expect(base + e*w + j) and the gaps. */
static void check(const int *buf, long count, int lay, long base, expect_fn fn, void *ctx,
                  const char *what, long n_arg)
{
    int s = stride_of(lay), w = width_of(lay);
    for (long e = 0; e < count; e++)
        for (int j = 0; j < s; j++) {
            int want = j < w ? fn(base + e * w + j, ctx) : SENTINEL;
            if (buf[e * s + j] != want) {
                MF_CHECK(0, "rank %d of %d: %s count %ld layout %d: element %ld.%d is %d, not %d",
                         rank, size, what, n_arg, lay, e, j, buf[e * s + j], want);
                return;
            }
        }
}

struct sum_ctx {
    int salt;
};
static int exp_sum(long item, void *ctx)
{
    int salt = ((struct sum_ctx *)ctx)->salt, t = 0;
    for (int r = 0; r < size; r++)
        t += val(r, item, salt);
    return t;
}

struct from_ctx {
    int r, salt;
};
static int exp_from(long item, void *ctx)
{
    struct from_ctx *c = ctx;
    return val(c->r, item, c->salt);
}

/* ---- Non-commutative op: 2x2 integer matrices mod 9973 under multiplication (mftest_matmul) */

static void mat_of(int r, long e, int *m)
{
    m[0] = (int)((r + 2 + e) % 97);
    m[1] = 1;
    m[2] = r % 3;
    m[3] = (int)((e * 5 + r) % 89);
}

/* The product over ranks 0..n-1 (in order) of element e. */
static void mat_prod(long e, int *out)
{
    mat_of(0, e, out);
    for (int r = 1; r < size; r++) {
        int m[4], len = 1;
        mat_of(r, e, m);
        int acc[4];
        memcpy(acc, out, sizeof acc);
        /* out = acc * m: matmul computes inout = in * inout */
        mftest_matmul(acc, m, &len, NULL);
        memcpy(out, m, sizeof m);
    }
}

static void check_mat(const int *buf, long count, long base, const char *what)
{
    for (long e = 0; e < count; e++) {
        int want[4];
        mat_prod(base + e, want);
        if (memcmp(buf + 4 * e, want, sizeof want)) {
            MF_CHECK(0, "rank %d of %d: %s count %ld: matrix %ld is wrong", rank, size, what, count,
                     e);
            return;
        }
    }
}

/* ---- The collectives --------------------------------------------------------------------- */

static void t_allreduce(long count, int lay, bool in_place, MPI_Comm comm)
{
    int salt = (int)count + lay;
    int *s = alloc_ints(count, lay), *r = alloc_ints(count, lay);
    fill(in_place ? r : s, count, lay, rank, 0, salt);
    MPI_Request q;
    MF_CHECK_MPI(MPI_Iallreduce(in_place ? MPI_IN_PLACE : s, r, (int)count, type_of(lay), MPI_SUM,
                                comm, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    struct sum_ctx c = {salt};
    check(r, count, lay, 0, exp_sum, &c, in_place ? "iallreduce in place" : "iallreduce", count);
    free(s);
    free(r);
}

static void t_allreduce_mat(long count, bool in_place)
{
    int *s = malloc((size_t)(4 * count + 1) * sizeof *s),
        *r = malloc((size_t)(4 * count + 1) * sizeof *r);
    for (long e = 0; e < count; e++)
        mat_of(rank, e, (in_place ? r : s) + 4 * e);
    MPI_Request q;
    MF_CHECK_MPI(
        MPI_Iallreduce(in_place ? MPI_IN_PLACE : s, r, (int)count, mat, matop, MPI_COMM_WORLD, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_mat(r, count, 0, "iallreduce non-commutative");
    free(s);
    free(r);
}

/* rcounts[i] = base + i % 3 (uneven) or base (block form). */
static void t_reduce_scatter(long base, int lay, bool in_place, bool block)
{
    int n = size, salt = (int)base * 3 + lay + 7;
    int *counts = malloc((size_t)n * sizeof *counts);
    long total = 0, mydisp = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = (int)(block ? base : base + i % 3);
        if (i < rank)
            mydisp += counts[i];
        total += counts[i];
    }
    int *s = alloc_ints(total, lay), *r = alloc_ints(in_place ? total : counts[rank], lay);
    fill(in_place ? r : s, total, lay, rank, 0, salt);
    MPI_Request q;
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (block)
        MF_CHECK_MPI(
            MPI_Ireduce_scatter_block(sb, r, (int)base, type_of(lay), MPI_SUM, MPI_COMM_WORLD, &q));
    else
        MF_CHECK_MPI(MPI_Ireduce_scatter(sb, r, counts, type_of(lay), MPI_SUM, MPI_COMM_WORLD, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    struct sum_ctx c = {salt};
    check(r, counts[rank], lay, mydisp * width_of(lay), exp_sum, &c,
          block ? "ireduce_scatter_block" : "ireduce_scatter", base);
    free(s);
    free(r);
    free(counts);
}

static void t_reduce_scatter_mat(long base)
{
    int n = size, *counts = malloc((size_t)n * sizeof *counts);
    long total = 0, mydisp = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = (int)(base + i % 2);
        if (i < rank)
            mydisp += counts[i];
        total += counts[i];
    }
    int *s = malloc((size_t)(4 * total + 4) * sizeof *s),
        *r = malloc((size_t)(4 * counts[rank] + 4) * sizeof *r);
    for (long e = 0; e < total; e++)
        mat_of(rank, e, s + 4 * e);
    MPI_Request q;
    MF_CHECK_MPI(MPI_Ireduce_scatter(s, r, counts, mat, matop, MPI_COMM_WORLD, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_mat(r, counts[rank], mydisp, "ireduce_scatter non-commutative");
    free(s);
    free(r);
    free(counts);
}

static void t_bcast(long count, int lay, int root, MPI_Comm comm)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int salt = (int)count + 11 * lay + root, *b = alloc_ints(count, lay);
    if (me == root)
        fill(b, count, lay, root, 0, salt);
    MPI_Request q;
    MF_CHECK_MPI(MPI_Ibcast(b, (int)count, type_of(lay), root, comm, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    struct from_ctx c = {root, salt};
    check(b, count, lay, 0, exp_from, &c, "ibcast", count);
    free(b);
}

static void t_alltoall(long count, int lay, bool in_place)
{
    int n = size, salt = (int)count + 5 * lay + 3, w = width_of(lay);
    int *s = alloc_ints(count * n, lay), *r = alloc_ints(count * n, lay);
    fill(in_place ? r : s, count * n, lay, rank, 0, salt);
    MPI_Request q;
    MF_CHECK_MPI(MPI_Ialltoall(in_place ? MPI_IN_PLACE : s, (int)count, type_of(lay), r, (int)count,
                               type_of(lay), MPI_COMM_WORLD, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int src = 0; src < n; src++) {
        struct from_ctx c = {src, salt};
        check(r + (long)src * count * stride_of(lay), count, lay, (long)rank * count * w, exp_from,
              &c, in_place ? "ialltoall in place" : "ialltoall", count);
    }
    free(s);
    free(r);
}

static void t_allgather(long count, int lay, bool in_place)
{
    int n = size, salt = (int)count + 9 * lay + 1;
    int *s = alloc_ints(count, lay), *r = alloc_ints(count * n, lay);
    if (in_place)
        fill(r + (long)rank * count * stride_of(lay), count, lay, rank, 0, salt);
    else
        fill(s, count, lay, rank, 0, salt);
    MPI_Request q;
    MF_CHECK_MPI(MPI_Iallgather(in_place ? MPI_IN_PLACE : s, (int)count, type_of(lay), r,
                                (int)count, type_of(lay), MPI_COMM_WORLD, &q));
    MF_CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int src = 0; src < n; src++) {
        struct from_ctx c = {src, salt};
        check(r + (long)src * count * stride_of(lay), count, lay, 0, exp_from, &c,
              in_place ? "iallgather in place" : "iallgather", count);
    }
    free(s);
    free(r);
}

/* ---- Several in flight: on MPI_COMM_WORLD, a duplicate and a split, all posted first ------- */

static void t_in_flight(long count)
{
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    int hn, hr, n = size;
    MPI_Comm_size(half, &hn);
    MPI_Comm_rank(half, &hr);
    enum { K = 7 };
    int *a[K], *b[K];
    MPI_Request q[K];
    long cnt[K] = {count, count, count, count * n, count * n, count, count};
    for (int k = 0; k < K; k++) {
        a[k] = alloc_ints(cnt[k] * 2, 0);
        b[k] = alloc_ints(cnt[k] * 2, 0);
    }
    fill(a[0], count, 0, rank, 0, 1);
    fill(a[1], count, 0, rank, 0, 2);
    if (rank == 0)
        fill(b[2], count, 0, 0, 0, 3);
    fill(a[3], count * n, 0, rank, 0, 4);
    fill(a[4], count, 0, rank, 0, 5);
    fill(a[5], count, 0, rank, 0, 6);
    if (hr == hn - 1)
        fill(b[6], count, 0, hn - 1, 0, 7);
    MF_CHECK_MPI(MPI_Iallreduce(a[0], b[0], (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]));
    MF_CHECK_MPI(MPI_Iallreduce(a[1], b[1], (int)count, MPI_INT, MPI_SUM, dup, &q[1]));
    MF_CHECK_MPI(MPI_Ibcast(b[2], (int)count, MPI_INT, 0, MPI_COMM_WORLD, &q[2]));
    MF_CHECK_MPI(MPI_Ialltoall(a[3], (int)count, MPI_INT, b[3], (int)count, MPI_INT, dup, &q[3]));
    MF_CHECK_MPI(MPI_Iallgather(a[4], (int)count, MPI_INT, b[4], (int)count, MPI_INT,
                                MPI_COMM_WORLD, &q[4]));
    MF_CHECK_MPI(MPI_Iallreduce(a[5], b[5], (int)count, MPI_INT, MPI_SUM, half, &q[5]));
    MF_CHECK_MPI(MPI_Ibcast(b[6], (int)count, MPI_INT, hn - 1, half, &q[6]));
    MF_CHECK_MPI(MPI_Waitall(K, q, MPI_STATUSES_IGNORE));
    struct sum_ctx s1 = {1}, s2 = {2};
    check(b[0], count, 0, 0, exp_sum, &s1, "in flight: iallreduce world", count);
    check(b[1], count, 0, 0, exp_sum, &s2, "in flight: iallreduce dup", count);
    struct from_ctx f3 = {0, 3};
    check(b[2], count, 0, 0, exp_from, &f3, "in flight: ibcast world", count);
    for (int src = 0; src < n; src++) {
        struct from_ctx f = {src, 4}, g = {src, 5};
        check(b[3] + (long)src * count, count, 0, (long)rank * count, exp_from, &f,
              "in flight: ialltoall dup", count);
        check(b[4] + (long)src * count, count, 0, 0, exp_from, &g, "in flight: iallgather world",
              count);
    }
    /* the half's sum: ranks of my parity; its bcast root: the half's last rank */
    for (long i = 0; i < count; i++) {
        int want = 0;
        for (int r = rank % 2; r < n; r += 2)
            want += val(r, i, 6);
        if (b[5][i] != want) {
            MF_CHECK(0, "rank %d: in flight: iallreduce split: element %ld is %d, not %d", rank, i,
                     b[5][i], want);
            break;
        }
    }
    struct from_ctx f6 = {hn - 1, 7};
    check(b[6], count, 0, 0, exp_from, &f6, "in flight: ibcast split", count);
    for (int k = 0; k < K; k++) {
        free(a[k]);
        free(b[k]);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
}

/* ---- Shape checks through MPI_T ---------------------------------------------------------- */

enum { ROUNDS, TRANSFERS, BYTES, NCOUNTERS };
static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[NCOUNTERS];

static void counters_open(void)
{
    static const char *names[NCOUNTERS] = {"coll_nbc_rounds", "coll_nbc_transfers",
                                           "coll_nbc_bytes_sent"};
    MF_CHECK_MPI(MPI_T_pvar_session_create(&session));
    for (int i = 0; i < NCOUNTERS; i++) {
        int idx = -1, count;
        MF_CHECK_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &handles[i], &count));
        MF_CHECK_MPI(MPI_T_pvar_start(session, handles[i]));
    }
}

static void counters_read(unsigned long long *v)
{
    for (int i = 0; i < NCOUNTERS; i++)
        MF_CHECK_MPI(MPI_T_pvar_read(session, handles[i], &v[i]));
}

/* What one collective cost this rank: counters after minus before. */
#define MEASURE(d, call)                                                                           \
    do {                                                                                           \
        unsigned long long b_[NCOUNTERS], a_[NCOUNTERS];                                           \
        MPI_Request q_;                                                                            \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        counters_read(b_);                                                                         \
        MF_CHECK_MPI(call);                                                                        \
        MF_CHECK_MPI(MPI_Wait(&q_, MPI_STATUS_IGNORE));                                            \
        counters_read(a_);                                                                         \
        for (int i_ = 0; i_ < NCOUNTERS; i_++)                                                     \
            (d)[i_] = a_[i_] - b_[i_];                                                             \
    } while (0)

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static void t_shape(long short_msg, long long_msg)
{
    int n = size;
    if (n == 1)
        return;
    bool pow2 = (n & (n - 1)) == 0;
    unsigned long long d[NCOUNTERS];
    long big = 8 * long_msg / (long)sizeof(int) + n; /* past every bandwidth threshold */
    int *s = calloc((size_t)big * n, sizeof(int)), *r = calloc((size_t)big * n, sizeof(int));

    /* allreduce, short: recursive doubling, log2 rounds (+2 to fold a non-power of two) */
    MEASURE(d, MPI_Iallreduce(s, r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q_));
    int most = ceil_log2(n) - (pow2 ? 0 : 1) + (pow2 ? 0 : 2);
    MF_CHECK(d[ROUNDS] <= (unsigned long long)most,
             "rank %d of %d: short iallreduce took %llu rounds (recursive doubling: <= %d)", rank,
             n, d[ROUNDS], most);
    /* allreduce, long: ring (or Rabenseifner), each rank sends under 2x the vector */
    long v = big * (long)sizeof(int);
    MEASURE(d, MPI_Iallreduce(s, r, (int)big, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q_));
    MF_CHECK(d[BYTES] <= (unsigned long long)(2 * v * (n - 1) / n + 16 * n),
             "rank %d of %d: long iallreduce of %ld bytes sent %llu (ring: 2(n-1)/n of it)", rank,
             n, v, d[BYTES]);
    /* allgather, short, power of two: recursive doubling, log2 n rounds */
    if (pow2) {
        MEASURE(d, MPI_Iallgather(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD, &q_));
        MF_CHECK(d[ROUNDS] <= (unsigned long long)ceil_log2(n),
                 "rank %d of %d: short iallgather took %llu rounds (recursive doubling: %d)", rank,
                 n, d[ROUNDS], ceil_log2(n));
    }
    /* alltoall, long blocks: pairwise, one peer (two transfers) per round; on an oversubscribed
     * host (mpiexec says so: more ranks than cores) linear, every peer in one round */
    long blk = long_msg / (long)sizeof(int) + 1;
    bool over = mftest_oversubscribed(n, NULL);
    int rounds = over ? 1 : n - 1;
    MEASURE(d, MPI_Ialltoall(s, (int)blk, MPI_INT, r, (int)blk, MPI_INT, MPI_COMM_WORLD, &q_));
    MF_CHECK(d[ROUNDS] == (unsigned long long)rounds && d[TRANSFERS] == 2ULL * (n - 1),
             "rank %d of %d: long ialltoall took %llu rounds, %llu transfers (%s: %d, %d)", rank, n,
             d[ROUNDS], d[TRANSFERS], over ? "linear, oversubscribed" : "pairwise", rounds,
             2 * (n - 1));
    /* bcast, long: the root sends at most 2(n-1)/n of the message (scatter + allgather; the
     * chain sends it once), not a copy per child */
    MEASURE(d, MPI_Ibcast(s, (int)big, MPI_INT, 0, MPI_COMM_WORLD, &q_));
    if (rank == 0 && n > 2)
        MF_CHECK(d[BYTES] <= (unsigned long long)(2 * v * (n - 1) / n + 2 * n),
                 "rank 0 of %d: long ibcast of %ld bytes sent %llu from the root", n, v, d[BYTES]);
    /* reduce_scatter_block, long: ring, each rank sends the n-1 blocks not its own */
    MEASURE(d, MPI_Ireduce_scatter_block(s, r, (int)big, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q_));
    MF_CHECK(d[BYTES] <= (unsigned long long)((n - 1) * v),
             "rank %d of %d: long ireduce_scatter_block of %ld bytes per block sent %llu (ring: "
             "%ld)",
             rank, n, v, d[BYTES], (n - 1) * v);
    (void)short_msg;
    free(s);
    free(r);
}

static long env_size(const char *var, long dflt)
{
    const char *e = getenv(var);
    if (!e || !*e)
        return dflt;
    char *end;
    long x = strtol(e, &end, 10);
    if (*end == 'K' || *end == 'k')
        x *= 1024;
    else if (*end == 'M' || *end == 'm')
        x *= 1024 * 1024;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool shape = argc > 1 && !strcmp(argv[1], "shape");
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, 3 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&two);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(mftest_matmul, 0, &matop);

    /* Counts (elements) around every threshold, for a whole vector and for one block of n */
    long sm = env_size("MANIFOLD_COLL_SHORT_MSG", 2048),
         lg = env_size("MANIFOLD_COLL_LONG_MSG", 65536);
    long ch = env_size("MANIFOLD_COLL_CHAIN_MIN", 1 << 20);
    long th[] = {sm, lg, 8 * lg, ch};
    long counts[64];
    int nc = 0;
    counts[nc++] = 0;
    counts[nc++] = 1;
    counts[nc++] = 3;
    for (size_t t = 0; t < sizeof th / sizeof th[0]; t++) {
        long per[2] = {th[t] / (long)sizeof(int), th[t] / (long)sizeof(int) / size};
        for (int k = 0; k < 2; k++)
            for (long dlt = -1; dlt <= 1; dlt++)
                if (per[k] + dlt > 3 && per[k] + dlt < (1 << 16) && nc < 64)
                    counts[nc++] = per[k] + dlt;
    }

    for (int i = 0; i < nc; i++) {
        long c = counts[i];
        for (int lay = 0; lay < 2; lay++) {
            /* a strided element holds 2 ints: halve its count to stay around the threshold */
            long cl = lay ? (c + 1) / 2 : c;
            t_allreduce(cl, lay, false, MPI_COMM_WORLD);
            t_allreduce(cl, lay, true, MPI_COMM_WORLD);
            t_bcast(cl, lay, 0, MPI_COMM_WORLD);
            t_bcast(cl, lay, size - 1, MPI_COMM_WORLD);
            long per = (cl + size - 1) / size; /* a block per rank: the totals stay near c */
            t_reduce_scatter(per, lay, false, true);
            t_reduce_scatter(per, lay, true, true);
            t_reduce_scatter(per, lay, lay == 0, false);
            /* alltoall and allgather decide on one block (and n blocks): c per block */
            if (c > lg / (long)sizeof(int) + 1)
                continue;
            t_alltoall(cl, lay, false);
            t_alltoall(cl, lay, true);
            t_allgather(cl, lay, false);
            t_allgather(cl, lay, true);
        }
        long cm = c / 4 + 1; /* a matrix is 4 ints */
        t_allreduce_mat(cm, i % 2);
        t_reduce_scatter_mat((cm + size - 1) / size);
    }
    t_in_flight(1);
    t_in_flight(lg / (long)sizeof(int) + 5);

    if (shape) {
        /* the counters exist from the first nonblocking collective on */
        MPI_Request q;
        MPI_Ibarrier(MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        counters_open();
        t_shape(sm, lg);
        for (int i = 0; i < NCOUNTERS; i++)
            MPI_T_pvar_handle_free(session, &handles[i]);
        MPI_T_pvar_session_free(&session);
    }

    MPI_Op_free(&matop);
    MPI_Type_free(&mat);
    MPI_Type_free(&strided);
    int errs = mftest_finish();
    MPI_T_finalize();
    return errs;
}
