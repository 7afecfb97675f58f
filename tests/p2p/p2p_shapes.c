/*
 * Messages into and out of non-contiguous datatypes, eager and rendezvous-sized: every shape
 * here is checked against its block list, including shapes whose bytes (or whose accepted part)
 * form one contiguous piece although the type is not contiguous — a 1 MiB receive into one
 * element of MPI_Type_vector(2, N, 2N, MPI_INT) once wrote to address 0.
 *
 * Each rank sends to the next and receives from the previous (itself when alone), with
 * blocking and nonblocking receives, then broadcasts with the same shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define SENTINEL (-7)
#define MAX_BLOCKS 4

/* A datatype (count elements of it) and where its ints lie in the buffer, in type order. */
typedef struct shape {
    const char *name;
    MPI_Datatype type;
    int count;
    int nblocks;
    int off[MAX_BLOCKS], len[MAX_BLOCKS]; /* in ints */
    int span;                             /* ints the buffer needs */
} shape;

static int rank, size;

static int shape_ints(const shape *s)
{
    int n = 0;
    for (int b = 0; b < s->nblocks; b++)
        n += s->len[b];
    return n;
}

/* Builds shape k for block length n; returns 0 when there is no shape k. */
static int shape_make(int k, int n, shape *s)
{
    memset(s, 0, sizeof *s);
    s->count = 1;
    switch (k) {
    case 0: /* vector: two blocks with a gap */
        s->name = "vector(2,n,2n)";
        MPI_Type_vector(2, n, 2 * n, MPI_INT, &s->type);
        s->nblocks = 2;
        s->off[1] = 2 * n;
        s->len[0] = s->len[1] = n;
        s->span = 3 * n;
        break;
    case 1: { /* hindexed: two blocks, the first not at 0 */
        s->name = "hindexed";
        int lens[2] = {n, n};
        MPI_Aint disp[2] = {3 * (MPI_Aint)sizeof(int), (MPI_Aint)(n + 10) * (MPI_Aint)sizeof(int)};
        MPI_Type_create_hindexed(2, lens, disp, MPI_INT, &s->type);
        s->nblocks = 2;
        s->off[0] = 3;
        s->off[1] = n + 10;
        s->len[0] = s->len[1] = n;
        s->span = 2 * n + 10;
        break;
    }
    case 2: { /* subarray of whole rows: one piece inside a larger extent */
        s->name = "subarray(rows)";
        int sizes[2] = {4, n}, subs[2] = {2, n}, starts[2] = {1, 0};
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &s->type);
        s->nblocks = 1;
        s->off[0] = n;
        s->len[0] = 2 * n;
        s->span = 4 * n;
        break;
    }
    case 3: /* `count` elements of n ints resized to twice their extent: 1 or 2 pieces */
    case 4: {
        s->count = k - 2;
        s->name = s->count == 1 ? "resized(1)" : "resized(2)";
        MPI_Datatype c;
        MPI_Type_contiguous(n, MPI_INT, &c);
        MPI_Type_create_resized(c, 0, 2 * (MPI_Aint)n * (MPI_Aint)sizeof(int), &s->type);
        MPI_Type_free(&c);
        s->nblocks = s->count;
        for (int b = 0; b < s->count; b++) {
            s->off[b] = 2 * n * b;
            s->len[b] = n;
        }
        s->span = 2 * n * s->count;
        break;
    }
    case 5: { /* subarray of a column block: many small pieces (packed) */
        s->name = "subarray(cols)";
        int rows = n < 4 ? 1 : 4, cols = n / rows;
        int sizes[2] = {rows, 2 * cols}, subs[2] = {rows, cols}, starts[2] = {0, 1};
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &s->type);
        s->span = rows * 2 * cols;
        /* Rows are separate blocks; only the first MAX_BLOCKS are listed, so keep rows small. */
        s->nblocks = rows;
        for (int r = 0; r < rows; r++) {
            s->off[r] = r * 2 * cols + 1;
            s->len[r] = cols;
        }
        break;
    }
    default:
        return 0;
    }
    MPI_Type_commit(&s->type);
    return 1;
}

static int value(int src, int i)
{
    return src * 7919 + i * 3 + 1;
}

/* Expected content of a shaped buffer that received the first `m` ints sent by `src`. */
static void expect_shaped(const shape *s, int src, int m, int *ref)
{
    for (int i = 0; i < s->span; i++)
        ref[i] = SENTINEL;
    int v = 0;
    for (int b = 0; b < s->nblocks && v < m; b++)
        for (int i = 0; i < s->len[b] && v < m; i++, v++)
            ref[s->off[b] + i] = value(src, v);
}

static void fill_shaped(const shape *s, int src, int *buf)
{
    expect_shaped(s, src, shape_ints(s), buf);
}

static int first_bad(const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            return i;
    return -1;
}

/* Receives `m` contiguous ints from prev into shape s (blocking or not). */
static void recv_into_shape(const shape *s, int n, int m, int blocking, int *buf, int *ref,
                            int *contig)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < m; i++)
        contig[i] = value(rank, i);
    for (int i = 0; i < s->span; i++)
        buf[i] = SENTINEL;
    MPI_Request rr, sr;
    MPI_Status st;
    if (!blocking)
        MF_CHECK_MPI(MPI_Irecv(buf, s->count, s->type, prev, 5, MPI_COMM_WORLD, &rr));
    MF_CHECK_MPI(MPI_Isend(contig, m, MPI_INT, next, 5, MPI_COMM_WORLD, &sr));
    if (blocking)
        MF_CHECK_MPI(MPI_Recv(buf, s->count, s->type, prev, 5, MPI_COMM_WORLD, &st));
    else
        MF_CHECK_MPI(MPI_Wait(&rr, &st));
    MF_CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    MF_CHECK(c == m, "%s n=%d: received %d ints, sent %d", s->name, n, c, m);
    expect_shaped(s, prev, m, ref);
    int bad = first_bad(buf, ref, s->span);
    MF_CHECK(bad < 0, "%s n=%d m=%d %s: int %d is %d, expected %d", s->name, n, m,
             blocking ? "Recv" : "Irecv", bad, bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : ref[bad]);
}

/* Sends shape s to next, received as contiguous ints. */
static void send_from_shape(const shape *s, int n, int *buf, int *contig)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int m = shape_ints(s);
    fill_shaped(s, rank, buf);
    for (int i = 0; i < m; i++)
        contig[i] = SENTINEL;
    MPI_Request sr;
    MF_CHECK_MPI(MPI_Isend(buf, s->count, s->type, next, 6, MPI_COMM_WORLD, &sr));
    MF_CHECK_MPI(MPI_Recv(contig, m, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    int bad = -1;
    for (int i = 0; i < m && bad < 0; i++)
        if (contig[i] != value(prev, i))
            bad = i;
    MF_CHECK(bad < 0, "%s n=%d send: int %d is %d, expected %d", s->name, n, bad,
             bad < 0 ? 0 : contig[bad], bad < 0 ? 0 : value(prev, bad));
    /* Again with a blocking send (small ones are packed on the stack, blocking.c). */
    for (int i = 0; i < m; i++)
        contig[i] = SENTINEL;
    MF_CHECK_MPI(MPI_Irecv(contig, m, MPI_INT, prev, 7, MPI_COMM_WORLD, &sr));
    MF_CHECK_MPI(MPI_Send(buf, s->count, s->type, next, 7, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    for (int i = 0; i < m && bad < 0; i++)
        if (contig[i] != value(prev, i))
            bad = i;
    MF_CHECK(bad < 0, "%s n=%d blocking send: int %d is %d, expected %d", s->name, n, bad,
             bad < 0 ? 0 : contig[bad], bad < 0 ? 0 : value(prev, bad));
}

/* One int more than shape s holds, sent eagerly into it: MPI_ERR_TRUNCATE, and the job goes on. */
static void truncate_into_shape(const shape *s, int n, int *buf, int *contig)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int m = shape_ints(s) + 1;
    for (int i = 0; i < m; i++)
        contig[i] = value(rank, i);
    MPI_Request sr;
    MF_CHECK_MPI(MPI_Isend(contig, m, MPI_INT, next, 8, MPI_COMM_WORLD, &sr));
    int rc = MPI_Recv(buf, s->count, s->type, prev, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_TRUNCATE, "%s n=%d: %d ints into %d gave %s", s->name, n, m, m - 1,
             mftest_error_text(rc));
    MF_CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
}

static void bcast_shape(const shape *s, int n, int *buf, int *ref)
{
    for (int root = 0; root < size && root < 2; root++) {
        if (rank == root)
            fill_shaped(s, root, buf);
        else
            for (int i = 0; i < s->span; i++)
                buf[i] = SENTINEL;
        MF_CHECK_MPI(MPI_Bcast(buf, s->count, s->type, root, MPI_COMM_WORLD));
        expect_shaped(s, root, shape_ints(s), ref);
        int bad = first_bad(buf, ref, s->span);
        MF_CHECK(bad < 0, "%s n=%d bcast root %d: int %d is %d, expected %d", s->name, n, root, bad,
                 bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : ref[bad]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* for truncate_into_shape */
    /* Eager on every fabric, around the eager limits (16K, 64K bytes), rendezvous, 1 MiB. */
    static const int sizes[] = {1, 100, 3000, 4100, 17000, 262144};
    const int max_n = 262144;
    int *buf = malloc(sizeof(int) * 4 * (size_t)max_n + 64);
    int *ref = malloc(sizeof(int) * 4 * (size_t)max_n + 64);
    int *contig = malloc(sizeof(int) * 4 * (size_t)max_n + 64);
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        int n = sizes[z];
        shape s;
        for (int k = 0; shape_make(k, n, &s); k++) {
            /* Only the first block's worth arrives: the accepted bytes are one piece. */
            recv_into_shape(&s, n, s.len[0], 1, buf, ref, contig);
            recv_into_shape(&s, n, s.len[0], 0, buf, ref, contig);
            recv_into_shape(&s, n, shape_ints(&s), 1, buf, ref, contig);
            recv_into_shape(&s, n, shape_ints(&s), 0, buf, ref, contig);
            send_from_shape(&s, n, buf, contig);
            if (shape_ints(&s) * (int)sizeof(int) < 12000) /* eager everywhere */
                truncate_into_shape(&s, n, buf, contig);
            bcast_shape(&s, n, buf, ref);
            MPI_Type_free(&s.type);
        }
    }
    free(buf);
    free(ref);
    free(contig);
    return mftest_finish();
}
