/*
 * coll_algo.c — barrier, bcast, reduce and allreduce under whatever algorithm the environment
 * forces (MANIFOLD_COLL_BARRIER/BCAST/REDUCE/ALLREDUCE; tests/coll/CMakeLists.txt runs it once
 * per algorithm at 1-8 ranks), across the step and chunk boundaries the settings put at small
 * sizes (MANIFOLD_COLL_SHM_SLOT, MANIFOLD_COLL_CHAIN_CHUNK), on MPI_COMM_WORLD and on split
 * communicators of odd sizes (with MANIFOLD_COLL_ALLTOALL too):
 *   - sums of ints, counts 0 .. 3000 (whole steps, one element more and less);
 *   - a non-commutative user op (decimal digit concatenation: any reordering of operands
 *     changes the number) on a contiguous derived type, every root;
 *   - MPI_IN_PLACE;
 *   - bcast of a strided vector type (gaps must stay untouched);
 *   - alltoall of ints, sent from a strided type;
 *   - back-to-back operations with rotating roots, checked each time (a rank running ahead of
 *     a slow reader must not overwrite data still being read).
 * Expected values are computed locally.
 *
 * COLL_ALGO_HOSTS=k pretends the ranks live on k hosts (MANIFOLD_HOSTNAME set before MPI_Init
 * from the local rank: round-robin, or in blocks with COLL_ALGO_BLOCK=1), so that the
 * host-leader algorithms run on one machine: shm inside a pretend host, tcp between them; only
 * the first pretend host is oversubscribed (MANIFOLD_OVERSUBSCRIBED), as hosts may differ.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mftest.h"

static const int counts[] = {0, 1, 3, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025, 3000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static int val(int r, int i)
{
    return (r + 1) * 3 + i % 11;
}

static int sum_of(int n, int i)
{
    return 3 * n * (n + 1) / 2 + n * (i % 11);
}

static void test_sums(MPI_Comm comm, int count)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *s = malloc((size_t)(count + 1) * sizeof *s), *r = malloc((size_t)(count + 1) * sizeof *r);
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < count; i++) {
            s[i] = val(rank, i);
            r[i] = ip ? s[i] : -1;
        }
        r[count] = -7;
        MF_CHECK_MPI(MPI_Allreduce(ip ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < count; i++)
            if (r[i] != sum_of(n, i)) {
                MF_CHECK(0, "allreduce n=%d ip=%d count=%d: r[%d]=%d, expected %d", n, ip, count, i,
                         r[i], sum_of(n, i));
                break;
            }
        MF_CHECK(r[count] == -7, "allreduce count=%d wrote past the end", count);
        for (int root = 0; root<n; root += n> 3 ? n / 2 : 1) {
            for (int i = 0; i < count; i++) {
                s[i] = val(rank, i);
                r[i] = ip && rank == root ? s[i] : -1;
            }
            const void *sb = ip && rank == root ? MPI_IN_PLACE : s;
            MF_CHECK_MPI(MPI_Reduce(sb, r, count, MPI_INT, MPI_SUM, root, comm));
            for (int i = 0; i < count && rank == root; i++)
                if (r[i] != sum_of(n, i)) {
                    MF_CHECK(0, "reduce n=%d root=%d ip=%d count=%d: r[%d]=%d", n, root, ip, count,
                             i, r[i]);
                    break;
                }
            for (int i = 0; i < count; i++)
                r[i] = rank == root ? val(root, i) * 5 : -1;
            MF_CHECK_MPI(MPI_Bcast(r, count, MPI_INT, root, comm));
            for (int i = 0; i < count; i++)
                if (r[i] != val(root, i) * 5) {
                    MF_CHECK(0, "bcast n=%d root=%d count=%d: r[%d]=%d", n, root, count, i, r[i]);
                    break;
                }
        }
    }
    MF_CHECK_MPI(MPI_Barrier(comm));
    free(s);
    free(r);
}

/* ---- non-commutative: digit strings ---- */
typedef struct {
    int64_t val, len;
} digits;

static void concat(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    (void)dt;
    digits *a = invec, *b = inoutvec;
    for (int i = 0; i < *len; i++) {
        int64_t p = 1;
        for (int64_t k = 0; k < b[i].len; k++)
            p *= 10;
        b[i].val = a[i].val * p + b[i].val; /* b = a op b: a's digits first */
        b[i].len += a[i].len;
    }
}

static void test_noncommutative(MPI_Comm comm, int count)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Type_contiguous(2, MPI_INT64_T, &dt);
    MPI_Type_commit(&dt);
    MPI_Op_create(concat, 0, &op);
    digits *s = malloc((size_t)(count + 1) * sizeof *s),
           *r = malloc((size_t)(count + 1) * sizeof *r);
    for (int root = -1; root < n; root++) { /* -1: allreduce */
        for (int i = 0; i < count; i++) {
            s[i] = (digits){(rank + i) % 9 + 1, 1};
            r[i] = (digits){-1, -1};
        }
        if (root < 0)
            MF_CHECK_MPI(MPI_Allreduce(s, r, count, dt, op, comm));
        else
            MF_CHECK_MPI(MPI_Reduce(s, r, count, dt, op, root, comm));
        if (root >= 0 && rank != root)
            continue;
        for (int i = 0; i < count; i++) {
            digits e = {0, 0};
            for (int q = 0; q < n; q++) {
                e.val = e.val * 10 + (q + i) % 9 + 1;
                e.len++;
            }
            if (r[i].val != e.val || r[i].len != e.len) {
                MF_CHECK(0, "noncommutative n=%d root=%d count=%d: [%d]=%lld expected %lld", n,
                         root, count, i, (long long)r[i].val, (long long)e.val);
                break;
            }
        }
    }
    free(s);
    free(r);
    MPI_Op_free(&op);
    MPI_Type_free(&dt);
}

/* every other int: the gaps must keep their values */
static void test_bcast_vector(MPI_Comm comm, int count)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    MPI_Datatype vec;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = malloc((size_t)(2 * count + 1) * sizeof *b);
    int root = n - 1;
    for (int i = 0; i < 2 * count + 1; i++)
        b[i] = rank == root ? i * 7 : -i;
    MF_CHECK_MPI(MPI_Bcast(b, 1, vec, root, comm));
    for (int i = 0; i < 2 * count + 1; i++) {
        int e = i % 2 == 0 && i < 2 * count - 1 ? i * 7 : rank == root ? i * 7 : -i;
        if (b[i] != e) {
            MF_CHECK(0, "bcast vector n=%d count=%d: b[%d]=%d expected %d", n, count, i, b[i], e);
            break;
        }
    }
    free(b);
    MPI_Type_free(&vec);
}

/* alltoall: contiguous ints, and a strided send type (every other int) against contiguous ints */
static void test_alltoall(MPI_Comm comm, int count)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    MPI_Datatype vec, blk;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * count * sizeof(int)), &blk);
    MPI_Type_commit(&blk);
    size_t total = (size_t)n * (size_t)count;
    int *s = malloc((2 * total + 1) * sizeof *s), *r = malloc((total + 1) * sizeof *r);
    for (int strided = 0; strided < 2; strided++) {
        for (size_t i = 0; i < 2 * total + 1; i++)
            s[i] = -5;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < count; i++)
                s[strided ? 2 * ((size_t)j * count + i) : (size_t)j * count + i] =
                    rank * 100000 + j * 1000 + i;
        for (size_t i = 0; i < total + 1; i++)
            r[i] = -1;
        if (strided)
            MF_CHECK_MPI(MPI_Alltoall(s, 1, blk, r, count, MPI_INT, comm));
        else
            MF_CHECK_MPI(MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, comm));
        for (int p = 0; p < n; p++)
            for (int i = 0; i < count; i++)
                if (r[(size_t)p * count + i] != p * 100000 + rank * 1000 + i) {
                    MF_CHECK(0, "alltoall n=%d strided=%d count=%d: from %d [%d]=%d", n, strided,
                             count, p, i, r[(size_t)p * count + i]);
                    p = n;
                    break;
                }
        MF_CHECK(r[total] == -1, "alltoall count=%d wrote past the end", count);
    }
    free(s);
    free(r);
    MPI_Type_free(&blk);
    MPI_Type_free(&vec);
}

/* many operations in a row, roots rotating, each result checked before the next */
static void test_stream(MPI_Comm comm)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    enum { LEN = 700 };
    int *b = malloc(LEN * sizeof *b);
    for (int it = 0; it < 60; it++) {
        int root = it % n, len = it % 3 == 0 ? LEN : it % 7 + 1;
        for (int i = 0; i < len; i++)
            b[i] = rank == root ? it * 1000 + i : -1;
        MF_CHECK_MPI(MPI_Bcast(b, len, MPI_INT, root, comm));
        for (int i = 0; i < len; i++)
            if (b[i] != it * 1000 + i) {
                MF_CHECK(0, "stream bcast it=%d: b[%d]=%d", it, i, b[i]);
                break;
            }
        int x = rank + it, y = -1;
        MF_CHECK_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, comm));
        MF_CHECK(y == n - 1 + it, "stream allreduce it=%d: %d", it, y);
        if (it % 5 == 0)
            MF_CHECK_MPI(MPI_Barrier(comm));
    }
    free(b);
}

static void run_all(MPI_Comm comm)
{
    for (int k = 0; k < NCOUNTS; k++)
        test_sums(comm, counts[k]);
    test_noncommutative(comm, 3);
    test_noncommutative(comm, 300);
    test_bcast_vector(comm, 1);
    test_bcast_vector(comm, 1000);
    for (int k = 1; k < NCOUNTS; k += 3)
        test_alltoall(comm, counts[k]);
    test_stream(comm);
}

static void pretend_hosts(void)
{
    const char *k = getenv("COLL_ALGO_HOSTS"), *lr = getenv("MANIFOLD_LOCAL_RANK");
    const char *ls = getenv("MANIFOLD_LOCAL_SIZE"), *block = getenv("COLL_ALGO_BLOCK");
    if (!k || !lr || !ls || atoi(k) < 1)
        return;
    int hosts = atoi(k), r = atoi(lr), n = atoi(ls), per = (n + hosts - 1) / hosts;
    int host = block && *block == '1' ? r / per : r % hosts;
    char name[32];
    snprintf(name, sizeof name, "coll-host-%d", host);
    setenv("MANIFOLD_HOSTNAME", name, 1);
    /* hosts differ: only the first counts as oversubscribed (algorithm choices must agree) */
    setenv("MANIFOLD_OVERSUBSCRIBED", host == 0 ? "1" : "0", 1);
}

int main(int argc, char **argv)
{
    pretend_hosts();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run_all(MPI_COMM_WORLD);
    /* two halves (odd sizes when size is), each with its own segment, then freed */
    MPI_Comm half;
    MF_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2, size - rank, &half));
    run_all(half);
    MF_CHECK_MPI(MPI_Comm_free(&half));
    test_stream(MPI_COMM_WORLD);
    return mftest_finish();
}
