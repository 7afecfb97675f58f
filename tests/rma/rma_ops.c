/*
 * rma_ops.c — every one-sided operation under every synchronisation mode, with predefined and
 * derived datatypes on both sides (a struct type against a strided vector: where accumulate
 * returns wrong data when the two sides' layouts are mixed up).
 *
 * Origin r works on target t = (r+1) % n, in region r of t's window (2K ints), and everyone
 * accumulates into a common region of rank 0. After each phase every rank checks its own
 * memory and each origin its fetched data.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define K 8
#define REGION (2 * K)

enum { M_FENCE, M_PSCW, M_LOCK, M_LOCKALL, M_REQ, M_NMODES };
enum { OP_PUT, OP_GET, OP_ACC, OP_GACC, OP_REPLACE, OP_NOOP, OP_NOPS };
static const char *mode_name[] = {"fence", "pscw", "lock", "lock_all", "request"};
static const char *op_name[] = {"put", "get", "acc", "get_acc", "acc_replace", "get_acc_noop"};

static int rank, size;
static int *mem; /* window memory */
static int nwin;
static MPI_Win win;
static MPI_Group prev_g, next_g;

/* A layout: the datatype, count, and the int index of each of the K packed elements. */
typedef struct {
    MPI_Datatype dt;
    int count;
    int pos[K];
    int span; /* ints the buffer needs */
} layout;

static layout lay_contig, lay_struct, lay_vector;

static void make_layouts(void)
{
    lay_contig.dt = MPI_INT;
    lay_contig.count = K;
    lay_contig.span = K;
    for (int j = 0; j < K; j++)
        lay_contig.pos[j] = j;
    /* struct: 3 ints at 0, 1 int at byte 20; extent 24 (6 ints); 2 of them = K ints */
    int bl[2] = {3, 1};
    MPI_Aint disp[2] = {0, 20};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, s;
    MPI_Type_create_struct(2, bl, disp, types, &s);
    MPI_Type_create_resized(s, 0, 24, &lay_struct.dt);
    MPI_Type_free(&s);
    MPI_Type_commit(&lay_struct.dt);
    lay_struct.count = 2;
    int sp[K] = {0, 1, 2, 5, 6, 7, 8, 11};
    memcpy(lay_struct.pos, sp, sizeof sp);
    lay_struct.span = 12;
    /* vector: K ints with stride 2 */
    MPI_Type_vector(K, 1, 2, MPI_INT, &lay_vector.dt);
    MPI_Type_commit(&lay_vector.dt);
    lay_vector.count = 1;
    for (int j = 0; j < K; j++)
        lay_vector.pos[j] = 2 * j;
    lay_vector.span = 2 * K - 1;
}

static int initial(int owner, int i)
{
    return owner * 1000 + i;
}
static int value(int origin, int j)
{
    return origin * 100 + j + 1;
}

static void open_epoch(int mode, int target)
{
    switch (mode) {
    case M_FENCE:
        MF_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        break;
    case M_PSCW:
        MF_CHECK_MPI(MPI_Win_post(prev_g, 0, win));
        MF_CHECK_MPI(MPI_Win_start(next_g, 0, win));
        break;
    case M_LOCK:
        MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        break;
    default:
        MF_CHECK_MPI(MPI_Win_lock_all(0, win));
        break;
    }
}

static void close_epoch(int mode, int target)
{
    switch (mode) {
    case M_FENCE:
        MF_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        break;
    case M_PSCW:
        MF_CHECK_MPI(MPI_Win_complete(win));
        if (rank % 2) { /* odd ranks poll with MPI_Win_test, even ones block in MPI_Win_wait */
            int flag = 0;
            while (!flag)
                MF_CHECK_MPI(MPI_Win_test(win, &flag));
        } else {
            MF_CHECK_MPI(MPI_Win_wait(win));
        }
        break;
    case M_LOCK:
        MF_CHECK_MPI(MPI_Win_unlock(target, win));
        break;
    default:
        if (mode == M_REQ) {
            MF_CHECK_MPI(MPI_Win_flush_local(target, win));
            MF_CHECK_MPI(MPI_Win_flush_local_all(win));
            MF_CHECK_MPI(MPI_Win_flush(target, win));
        }
        MF_CHECK_MPI(MPI_Win_flush_all(win));
        MF_CHECK_MPI(MPI_Win_sync(win));
        MF_CHECK_MPI(MPI_Win_unlock_all(win));
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase(int mode, int op, const layout *ol, const layout *tl)
{
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int i = 0; i < nwin; i++)
        mem[i] = initial(rank, i);
    int *obuf = calloc((size_t)ol->span, sizeof(int)),
        *rbuf = calloc((size_t)ol->span, sizeof(int));
    for (int j = 0; j < K; j++) {
        obuf[ol->pos[j]] = value(rank, j);
        rbuf[ol->pos[j]] = -7;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    open_epoch(mode, t);
    MPI_Aint disp = (MPI_Aint)rank * REGION;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *rq = mode == M_REQ ? &req : NULL;
    switch (op) {
    case OP_PUT:
        if (rq)
            MF_CHECK_MPI(MPI_Rput(obuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, win, rq));
        else
            MF_CHECK_MPI(MPI_Put(obuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, win));
        break;
    case OP_GET:
        if (rq)
            MF_CHECK_MPI(MPI_Rget(rbuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, win, rq));
        else
            MF_CHECK_MPI(MPI_Get(rbuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, win));
        break;
    case OP_ACC:
    case OP_REPLACE: {
        MPI_Op o = op == OP_ACC ? MPI_SUM : MPI_REPLACE;
        if (rq)
            MF_CHECK_MPI(
                MPI_Raccumulate(obuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, o, win, rq));
        else
            MF_CHECK_MPI(
                MPI_Accumulate(obuf, ol->count, ol->dt, t, disp, tl->count, tl->dt, o, win));
        break;
    }
    default: {
        MPI_Op o = op == OP_GACC ? MPI_SUM : MPI_NO_OP;
        if (rq)
            MF_CHECK_MPI(MPI_Rget_accumulate(obuf, ol->count, ol->dt, rbuf, ol->count, ol->dt, t,
                                             disp, tl->count, tl->dt, o, win, rq));
        else
            MF_CHECK_MPI(MPI_Get_accumulate(obuf, ol->count, ol->dt, rbuf, ol->count, ol->dt, t,
                                            disp, tl->count, tl->dt, o, win));
        break;
    }
    }
    if (rq)
        MF_CHECK_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
    close_epoch(mode, t);

    /* fetched data at the origin */
    if (op == OP_GET || op == OP_GACC || op == OP_NOOP)
        for (int j = 0; j < K; j++) {
            int want = initial(t, rank * REGION + tl->pos[j]);
            MF_CHECK(rbuf[ol->pos[j]] == want, "%s %s: fetched[%d]=%d, want %d", mode_name[mode],
                     op_name[op], j, rbuf[ol->pos[j]], want);
        }
    /* my memory: region `from` changed at tl's positions only */
    for (int i = 0; i < nwin; i++) {
        int want = initial(rank, i), rel = i - from * REGION;
        for (int j = 0; j < K && rel >= 0 && rel < REGION; j++) {
            if (tl->pos[j] != rel)
                continue;
            if (op == OP_PUT || op == OP_REPLACE)
                want = value(from, j);
            else if (op == OP_ACC || op == OP_GACC)
                want = initial(rank, i) + value(from, j);
        }
        MF_CHECK(mem[i] == want, "%s %s: mem[%d]=%d, want %d (np %d)", mode_name[mode], op_name[op],
                 i, mem[i], want, size);
    }
    free(obuf);
    free(rbuf);
}

/* Everyone accumulates into rank 0's common region at once; then compare-and-swap and
 * fetch-and-op on single elements. */
static void concurrent(int mode)
{
    for (int i = 0; i < nwin; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    open_epoch(mode == M_PSCW ? M_FENCE : mode, 0);
    int v[K];
    for (int j = 0; j < K; j++)
        v[j] = rank + 1 + j;
    MPI_Aint common = (MPI_Aint)size * REGION;
    MF_CHECK_MPI(MPI_Accumulate(v, K, MPI_INT, 0, common, 1, lay_vector.dt, MPI_SUM, win));
    int one = 1, res = -1;
    MF_CHECK_MPI(MPI_Fetch_and_op(&one, &res, MPI_INT, 0, common + 1, MPI_SUM, win));
    close_epoch(mode == M_PSCW ? M_FENCE : mode, 0);
    int *all = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&res, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    /* fetched values are 0..n-1 in some order, each once */
    int seen = 0;
    for (int i = 0; i < size; i++)
        if (all[i] >= 0 && all[i] < size)
            seen |= 1 << all[i];
    MF_CHECK(seen == (1 << size) - 1, "%s fetch_and_op: fetched values not a permutation",
             mode_name[mode]);
    free(all);
    if (rank == 0) {
        int tri = size * (size + 1) / 2;
        /* the vector covers the even ints; the counter at index 1 lies between them */
        for (int j = 0; j < K; j++)
            MF_CHECK(mem[common + 2 * j] == tri + size * j, "%s concurrent acc[%d]=%d, want %d",
                     mode_name[mode], j, mem[common + 2 * j], tri + size * j);
        MF_CHECK(mem[common + 1] == size, "%s fetch_and_op counter=%d, want %d", mode_name[mode],
                 mem[common + 1], size);
    }
}

/* A transfer far above any eager limit (rendezvous underneath the emulation), put then get. */
static void big(void)
{
    enum { NB = 1 << 18 };
    int *src = malloc(NB * sizeof(int)), *back = malloc(NB * sizeof(int)), *wm;
    MPI_Win bw;
    MF_CHECK_MPI(MPI_Win_create(wm = malloc(NB * sizeof(int)), NB * sizeof(int), sizeof(int),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &bw));
    for (int i = 0; i < NB; i++)
        src[i] = rank * 7 + i;
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Win_fence(0, bw);
    MF_CHECK_MPI(MPI_Put(src, NB, MPI_INT, t, 0, NB, MPI_INT, bw));
    MPI_Win_fence(0, bw);
    MF_CHECK_MPI(MPI_Get(back, NB, MPI_INT, t, 0, NB, MPI_INT, bw));
    MPI_Win_fence(0, bw);
    for (int i = 0; i < NB; i += 997)
        MF_CHECK(wm[i] == from * 7 + i && back[i] == rank * 7 + i, "big [%d]: %d %d", i, wm[i],
                 back[i]);
    MF_CHECK_MPI(MPI_Win_free(&bw));
    free(src);
    free(back);
    free(wm);
}

/* Accumulates from one origin to one target land in issue order (MPI's default
 * accumulate_ordering), whatever their size: on the emulated back end the largest travel as a
 * header and a payload message of their own, smaller ones inline with their header (up to about
 * 16 KiB), and a target must not apply an inline one that arrives while an earlier one waits for
 * its payload. Each origin replaces ever shorter prefixes of its target's window, from 64 KiB
 * down across the inline bound to 1 KiB, in one epoch; every int must hold the value of the last
 * (shortest) replace that covered it. Then gets of the same sizes read it back. */
static void ordered(void)
{
    enum { NO = 16 * 1024, NSTEP = 6 };
    static const int len[NSTEP] = {NO, 5000, 4090, 3000, 1024, 256}; /* ints: 64 KiB .. 1 KiB */
    /* One source buffer per replace: an origin buffer may not change until its operation
     * completes locally (here: at unlock_all), and a back end may still read it until then
     * (ofi's native atomics queue behind earlier ones). */
    int *wm = calloc(NO, sizeof(int)), *src = malloc((size_t)NSTEP * NO * sizeof(int));
    int *back = malloc(NO * sizeof(int));
    MPI_Win ow;
    MF_CHECK_MPI(MPI_Win_create(wm, NO * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &ow));
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Win_lock_all(0, ow);
    for (int k = 0; k < NSTEP; k++) {
        int *sk = src + (size_t)k * NO;
        for (int i = 0; i < len[k]; i++)
            sk[i] = rank * 1000000 + k * 100000 + i;
        MF_CHECK_MPI(MPI_Accumulate(sk, len[k], MPI_INT, t, 0, len[k], MPI_INT, MPI_REPLACE, ow));
    }
    MPI_Win_unlock_all(ow);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < NO && bad < 5; i++) {
        int k = NSTEP - 1;
        while (len[k] <= i)
            k--;
        int want = from * 1000000 + k * 100000 + i;
        if (wm[i] != want) {
            MF_CHECK(0, "ordered: int %d holds %d, want %d (replace %d of %d ints)", i, wm[i], want,
                     k, len[k]);
            bad++;
        }
    }
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, ow);
    for (int k = 0; k < NSTEP; k++) {
        memset(back, 0xff, (size_t)len[k] * sizeof(int));
        MF_CHECK_MPI(MPI_Get(back, len[k], MPI_INT, t, 0, len[k], MPI_INT, ow));
        MPI_Win_flush(t, ow);
        for (int i = 0; i < len[k]; i += 97) {
            int j = NSTEP - 1;
            while (len[j] <= i)
                j--;
            MF_CHECK(back[i] == rank * 1000000 + j * 100000 + i,
                     "ordered: get of %d ints, [%d] = %d", len[k], i, back[i]);
        }
    }
    MPI_Win_unlock(t, ow);
    MF_CHECK_MPI(MPI_Win_free(&ow));
    free(wm);
    free(src);
    free(back);
}

/* Large accumulates from every rank into rank 0 at once, on both back ends (flavor 0: create,
 * emulated; 1: allocate, direct on one host): the in-place reductions must stay atomic per
 * element against each other and against get_accumulate, for int sums, double maxima and
 * MPI_REPLACE. Rank r adds r+1+i%5 to ints[i], raises dbl[i] to r+i, and every rank then
 * replaces a block with its own rank. */
static void big_acc(int flavor)
{
    enum { NI = 1 << 16 };
    int *ints, *add = malloc(NI * sizeof(int)), *old = malloc(NI * sizeof(int));
    double *dbl = malloc(NI * sizeof(double)), *mine = malloc(NI * sizeof(double));
    MPI_Win iw, dw;
    MPI_Aint isz = rank == 0 ? NI * (MPI_Aint)sizeof(int) : 0;
    MPI_Aint dsz = rank == 0 ? NI * (MPI_Aint)sizeof(double) : 0;
    if (flavor == 0) {
        ints = malloc(NI * sizeof(int));
        MF_CHECK_MPI(MPI_Win_create(ints, isz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &iw));
    } else {
        MF_CHECK_MPI(MPI_Win_allocate(isz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &ints, &iw));
    }
    MF_CHECK_MPI(MPI_Win_create(dbl, dsz, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
    if (rank == 0)
        for (int i = 0; i < NI; i++)
            ints[i] = 1, dbl[i] = -1.0;
    for (int i = 0; i < NI; i++)
        add[i] = rank + 1 + i % 5, mine[i] = rank + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, iw);
    MPI_Win_lock_all(0, dw);
    /* half by accumulate, half by get_accumulate (whose fetched values are checked below) */
    MF_CHECK_MPI(MPI_Accumulate(add, NI / 2, MPI_INT, 0, 0, NI / 2, MPI_INT, MPI_SUM, iw));
    MF_CHECK_MPI(MPI_Get_accumulate(add + NI / 2, NI / 2, MPI_INT, old, NI / 2, MPI_INT, 0, NI / 2,
                                    NI / 2, MPI_INT, MPI_SUM, iw));
    MF_CHECK_MPI(MPI_Accumulate(mine, NI, MPI_DOUBLE, 0, 0, NI, MPI_DOUBLE, MPI_MAX, dw));
    MPI_Win_unlock_all(dw);
    MPI_Win_unlock_all(iw);
    /* fetched values are what rank 0 held before this rank's addition: at least the initial 1 */
    for (int i = 0; i < NI / 2; i += 331)
        MF_CHECK(old[i] >= 1, "big_acc: get_accumulate fetched %d at %d", old[i], i);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < NI; i++) {
            int want = 1 + size * (size + 1) / 2 + size * (i % 5);
            MF_CHECK(ints[i] == want, "big_acc flavor %d: ints[%d]=%d, want %d", flavor, i, ints[i],
                     want);
            MF_CHECK(dbl[i] == size - 1 + i, "big_acc flavor %d: dbl[%d]=%g, want %d", flavor, i,
                     dbl[i], size - 1 + i);
            if (ints[i] != want || dbl[i] != size - 1 + i)
                break;
        }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 has looked before anyone replaces */
    /* every rank replaces the same block: afterwards every element is one rank's value. MPI
     * makes concurrent accumulates atomic per element ("to the same location"), not per call:
     * the emulation applies a call as a whole, but native atomics (ofi) go in pieces of the
     * provider's count (4072 ints on tcp;ofi_rxm), so the block may mix ranks' values */
    for (int i = 0; i < NI; i++)
        add[i] = rank;
    MPI_Win_lock_all(0, iw);
    MF_CHECK_MPI(MPI_Accumulate(add, NI, MPI_INT, 0, 0, NI, MPI_INT, MPI_REPLACE, iw));
    MPI_Win_unlock_all(iw);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < NI; i++)
            if (ints[i] < 0 || ints[i] >= size) {
                MF_CHECK(0, "big_acc flavor %d: replace torn at %d (%d, not a rank)", flavor, i,
                         ints[i]);
                break;
            }
    MF_CHECK_MPI(MPI_Win_free(&iw));
    MF_CHECK_MPI(MPI_Win_free(&dw));
    if (flavor == 0)
        free(ints);
    free(add);
    free(old);
    free(dbl);
    free(mine);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_layouts();
    nwin = (size + 1) * REGION;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int p = (rank + size - 1) % size, nx = (rank + 1) % size;
    MPI_Group_incl(world, 1, &p, &prev_g);
    MPI_Group_incl(world, 1, &nx, &next_g);
    /* contiguous target with a strided origin, and the reverse: the same-host one-block path
     * packs the origin (or unpacks into it) around its single copy or in-place reduction */
    const layout *pairs[][2] = {{&lay_contig, &lay_contig},
                                {&lay_struct, &lay_vector},
                                {&lay_vector, &lay_struct},
                                {&lay_vector, &lay_contig},
                                {&lay_contig, &lay_struct}};
    for (int flavor = 0; flavor < 2; flavor++) {
        if (flavor == 0) {
            mem = malloc((size_t)nwin * sizeof(int));
            MF_CHECK_MPI(MPI_Win_create(mem, (MPI_Aint)nwin * (MPI_Aint)sizeof(int), sizeof(int),
                                        MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else {
            MF_CHECK_MPI(MPI_Win_allocate((MPI_Aint)nwin * (MPI_Aint)sizeof(int), sizeof(int),
                                          MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        }
        for (int mode = 0; mode < M_NMODES; mode++)
            for (int op = 0; op < OP_NOPS; op++)
                for (int pr = 0; pr < 5; pr++)
                    phase(mode, op, pairs[pr][0], pairs[pr][1]);
        for (int mode = 0; mode < M_NMODES; mode++)
            if (mode != M_REQ)
                concurrent(mode);
        MF_CHECK_MPI(MPI_Win_free(&win));
        MF_CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
        if (flavor == 0)
            free(mem);
        big_acc(flavor);
    }
    big();
    ordered();
    MPI_Group_free(&prev_g);
    MPI_Group_free(&next_g);
    MPI_Group_free(&world);
    MPI_Type_free(&lay_struct.dt);
    MPI_Type_free(&lay_vector.dt);
    return mftest_finish();
}
