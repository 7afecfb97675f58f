/*
 * nbc_algo.c — the size-dependent algorithms of nonblocking collectives, as schedules
 * (nbc_impl.h). They are the blocking collectives' point-to-point algorithms, chosen by the
 * same functions (coll_impl.h: mf_coll_allreduce_algo and its siblings) from the same
 * thresholds and MANIFOLD_COLL_* settings, so that MPI_Iallreduce and MPI_Allreduce of one
 * size run the same exchange pattern:
 *
 *   allreduce        recursive doubling (short, or non-commutative: canonical operand order),
 *                    Rabenseifner reduce-scatter + allgather (medium, commutative), ring (long,
 *                    commutative); n not a power of two: the first 2*rem ranks fold pairwise
 *   reduce_scatter   recursive halving (short, commutative; the blocking code's reduce +
 *                    scatterv moves the whole vector through a tree), ring (long, commutative);
 *                    non-commutative ops stay with reduce + scatterv (nbc_build.c)
 *   bcast            binomial (nbc_build.c), scatter + ring allgather, pipelined chain
 *   allgather        recursive doubling (power of two), Bruck, ring
 *   alltoall         Bruck, linear in windows of MF_COLL_ALLTOALL_WINDOW peers per round,
 *                    pairwise (one peer per round); alltoallv/w: linear in windows
 *
 * What does not carry over: the shared-segment and host-leader schemes block inside one call
 * (every rank of the host steps through the segment together), so schedules always take the
 * point-to-point algorithm the chooser names. Rounds are the blocking algorithms' sendrecv
 * steps; a local reduction or copy that needs a step's data opens the next round, before that
 * round's transfers (nbc_impl.h: operations start in the order appended).
 */
#include <stdlib.h>

#include "coll/coll_impl.h"
#include "coll/nbc_impl.h"

/* ---- Allreduce --------------------------------------------------------------------------- */

/* Folds the first 2*rem ranks pairwise (even into odd, the even's data the left operand);
 * returns this rank's participant index, or -1 if it sits out until nbc_fold_out. */
static int nbc_fold_in(mf_nbc_sched *s, void *rbuf, void *tmp, MPI_Count count, mf_datatype *dt,
                       mf_op *op, mf_comm *c, int rem)
{
    int r = c->c_rank;
    if (r >= 2 * rem)
        return r - rem;
    if (r % 2 == 0) {
        mf_nbc_send(s, rbuf, count, dt, r + 1, c);
        mf_nbc_round(s);
        return -1;
    }
    mf_nbc_recv(s, tmp, count, dt, r - 1, c);
    mf_nbc_round(s);
    mf_nbc_reduce(s, tmp, rbuf, count, dt, op);
    return r / 2;
}

static void nbc_fold_out(mf_nbc_sched *s, void *rbuf, MPI_Count count, mf_datatype *dt, mf_comm *c,
                         int rem)
{
    int r = c->c_rank;
    if (r >= 2 * rem)
        return;
    if (r % 2)
        mf_nbc_send(s, rbuf, count, dt, r - 1, c);
    else
        mf_nbc_recv(s, rbuf, count, dt, r + 1, c);
    mf_nbc_round(s);
}

static void nbc_allreduce_rd(mf_nbc_sched *s, void *rbuf, void *tmp, MPI_Count count,
                             mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size, p2 = mf_coll_pow2_floor(n), rem = n - p2;
    int v = nbc_fold_in(s, rbuf, tmp, count, dt, op, c, rem);
    for (int mask = 1; v >= 0 && mask < p2; mask <<= 1) {
        int pv = v ^ mask, peer = mf_coll_fold_rank(pv, rem);
        mf_nbc_recv(s, tmp, count, dt, peer, c);
        mf_nbc_send(s, rbuf, count, dt, peer, c);
        mf_nbc_round(s);
        if (pv < v || op->op_commute) {
            mf_nbc_reduce(s, tmp, rbuf, count, dt, op);
        } else {
            /* the peer's ranks are above ours: ours is the left operand */
            mf_nbc_reduce(s, rbuf, tmp, count, dt, op);
            mf_nbc_copy(s, tmp, count, dt, rbuf, count, dt);
        }
    }
    nbc_fold_out(s, rbuf, count, dt, c, rem);
}

/* Reduce-scatter by recursive halving among the p2 participants (this one is v): in each step
 * keep the half of the current participant range that our bit at distance d selects, send the
 * other half's elements, fold in the peer's. bound[i] is the element where participant i's
 * part starts (bound[p2] the end). Leaves the range kept, [*lo, *hi) = [v, v + 1). */
static void nbc_halving(mf_nbc_sched *s, void *acc, void *got, const MPI_Count *bound, int v,
                        int p2, int rem, mf_datatype *dt, mf_op *op, mf_comm *c, int *lo, int *hi)
{
    *lo = 0;
    *hi = p2;
    for (int d = p2 / 2; d >= 1; d /= 2) {
        int peer = mf_coll_fold_rank(v ^ d, rem), mid = *lo + d;
        int klo = (v & d) ? mid : *lo, khi = (v & d) ? *hi : mid;
        int slo = (v & d) ? *lo : mid, shi = (v & d) ? mid : *hi;
        MPI_Count ka = bound[klo], kb = bound[khi], sa = bound[slo], sb = bound[shi];
        mf_nbc_recv(s, mf_coll_at(got, ka, dt), kb - ka, dt, peer, c);
        mf_nbc_send(s, mf_coll_at(acc, sa, dt), sb - sa, dt, peer, c);
        mf_nbc_round(s);
        mf_nbc_reduce(s, mf_coll_at(got, ka, dt), mf_coll_at(acc, ka, dt), kb - ka, dt, op);
        *lo = klo;
        *hi = khi;
    }
}

/* Scratch for p2 + 1 element bounds. */
static MPI_Count *nbc_bounds(mf_nbc_sched *s, int p2)
{
    return mf_nbc_tmp(s, (MPI_Count)(((size_t)p2 + 1) * sizeof(MPI_Count)), mf_coll_byte());
}

static void nbc_allreduce_rabenseifner(mf_nbc_sched *s, void *rbuf, void *tmp, MPI_Count count,
                                       mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size, p2 = mf_coll_pow2_floor(n), rem = n - p2;
    MPI_Count *bound = nbc_bounds(s, p2);
    if (!bound)
        return;
    for (int i = 0; i <= p2; i++)
        bound[i] = mf_coll_block_at(i, p2, count);
    int v = nbc_fold_in(s, rbuf, tmp, count, dt, op, c, rem);
    if (v >= 0) {
        int lo, hi;
        nbc_halving(s, rbuf, tmp, bound, v, p2, rem, dt, op, c, &lo, &hi);
        /* allgather by recursive doubling: the owned range doubles with the sibling's */
        for (int d = 1; d < p2; d *= 2) {
            int peer = mf_coll_fold_rank(v ^ d, rem);
            int plo = (v & d) ? lo - d : hi, phi = plo + d;
            MPI_Count ma = bound[lo], mb = bound[hi], pa = bound[plo], pb = bound[phi];
            mf_nbc_recv(s, mf_coll_at(rbuf, pa, dt), pb - pa, dt, peer, c);
            mf_nbc_send(s, mf_coll_at(rbuf, ma, dt), mb - ma, dt, peer, c);
            mf_nbc_round(s);
            lo = plo < lo ? plo : lo;
            hi = phi > hi ? phi : hi;
        }
    }
    nbc_fold_out(s, rbuf, count, dt, c, rem);
}

static void nbc_allreduce_ring(mf_nbc_sched *s, void *rbuf, void *tmp, MPI_Count count,
                               mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank, right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sb = (r - k - 1 + 2 * n) % n, rb = (r - k - 2 + 2 * n) % n;
        MPI_Count sa = mf_coll_block_at(sb, n, count), se = mf_coll_block_at(sb + 1, n, count);
        MPI_Count ra = mf_coll_block_at(rb, n, count), re = mf_coll_block_at(rb + 1, n, count);
        mf_nbc_recv(s, tmp, re - ra, dt, left, c);
        mf_nbc_send(s, mf_coll_at(rbuf, sa, dt), se - sa, dt, right, c);
        mf_nbc_round(s);
        mf_nbc_reduce(s, tmp, mf_coll_at(rbuf, ra, dt), re - ra, dt, op);
    }
    /* block r is complete here; pass the complete blocks around */
    for (int k = 0; k < n - 1; k++) {
        int sb = (r - k + n) % n, rb = (r - k - 1 + n) % n;
        MPI_Count sa = mf_coll_block_at(sb, n, count), se = mf_coll_block_at(sb + 1, n, count);
        MPI_Count ra = mf_coll_block_at(rb, n, count), re = mf_coll_block_at(rb + 1, n, count);
        mf_nbc_recv(s, mf_coll_at(rbuf, ra, dt), re - ra, dt, left, c);
        mf_nbc_send(s, mf_coll_at(rbuf, sa, dt), se - sa, dt, right, c);
        mf_nbc_round(s);
    }
}

void mf_nbc_allreduce_intra(mf_nbc_sched *s, const void *sbuf, void *rbuf, MPI_Count count,
                            mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size;
    if (sbuf != MPI_IN_PLACE && sbuf != rbuf)
        mf_nbc_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1 || count == 0)
        return;
    int algo = mf_coll_allreduce_algo(count, dt, op, c);
    void *tmp = mf_nbc_tmp(s, algo == MF_ALLREDUCE_RING ? count / n + 1 : count, dt);
    if (!tmp)
        return;
    if (algo == MF_ALLREDUCE_RD)
        nbc_allreduce_rd(s, rbuf, tmp, count, dt, op, c);
    else if (algo == MF_ALLREDUCE_RABENSEIFNER)
        nbc_allreduce_rabenseifner(s, rbuf, tmp, count, dt, op, c);
    else
        nbc_allreduce_ring(s, rbuf, tmp, count, dt, op, c);
}

/* ---- Reduce-scatter (commutative ops) ---------------------------------------------------- */

/* Recursive halving over the participants of the fold; participant v stands for the real
 * ranks [first(v), first(v + 1)), so the element ranges it keeps are whole blocks of displs. */
static int nbc_fold_first(int v, int rem)
{
    return v < rem ? 2 * v : v + rem;
}

static void nbc_reduce_scatter_halving(mf_nbc_sched *s, const void *mine, void *rbuf,
                                       const MPI_Count *rcounts, const MPI_Aint *displs,
                                       mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank, p2 = mf_coll_pow2_floor(n), rem = n - p2;
    MPI_Count total = displs[n];
    if (r < 2 * rem && r % 2 == 0) {
        /* folded out: hand the whole vector to r + 1, get our block back at the end */
        mf_nbc_send(s, mine, total, dt, r + 1, c);
        mf_nbc_round(s);
        mf_nbc_recv(s, rbuf, rcounts[r], dt, r + 1, c);
        mf_nbc_round(s);
        return;
    }
    void *acc = mf_nbc_tmp(s, total, dt), *got = acc ? mf_nbc_tmp(s, total, dt) : NULL;
    if (!got)
        return;
    mf_nbc_copy(s, mine, total, dt, acc, total, dt);
    int v = r - rem;
    if (r < 2 * rem) {
        mf_nbc_recv(s, got, total, dt, r - 1, c);
        mf_nbc_round(s);
        mf_nbc_reduce(s, got, acc, total, dt, op);
        v = r / 2;
    }
    MPI_Count *bound = nbc_bounds(s, p2);
    if (!bound)
        return;
    for (int i = 0; i <= p2; i++)
        bound[i] = displs[nbc_fold_first(i, rem)];
    int lo, hi;
    nbc_halving(s, acc, got, bound, v, p2, rem, dt, op, c, &lo, &hi);
    mf_nbc_copy(s, mf_coll_at(acc, displs[r], dt), rcounts[r], dt, rbuf, rcounts[r], dt);
    if (r < 2 * rem) /* the folded-out partner's block */
        mf_nbc_send(s, mf_coll_at(acc, displs[r - 1], dt), rcounts[r - 1], dt, r - 1, c);
    mf_nbc_round(s);
}

static void nbc_reduce_scatter_ring(mf_nbc_sched *s, const void *mine, void *rbuf,
                                    const MPI_Count *rcounts, const MPI_Aint *displs,
                                    mf_datatype *dt, mf_op *op, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank, right = (r + 1) % n, left = (r - 1 + n) % n;
    MPI_Count maxc = 0;
    for (int i = 0; i < n; i++)
        maxc = rcounts[i] > maxc ? rcounts[i] : maxc;
    void *acc = mf_nbc_tmp(s, displs[n], dt), *got = acc ? mf_nbc_tmp(s, maxc, dt) : NULL;
    if (!got)
        return;
    mf_nbc_copy(s, mine, displs[n], dt, acc, displs[n], dt);
    /* step k: pass on the partial of block r-k-1, fold our data into block r-k-2; after n-1
     * steps the block arriving is our own, with every rank's contribution */
    for (int k = 0; k < n - 1; k++) {
        int sb = (r - k - 1 + 2 * n) % n, rb = (r - k - 2 + 2 * n) % n;
        mf_nbc_recv(s, got, rcounts[rb], dt, left, c);
        mf_nbc_send(s, mf_coll_at(acc, displs[sb], dt), rcounts[sb], dt, right, c);
        mf_nbc_round(s);
        mf_nbc_reduce(s, got, mf_coll_at(acc, displs[rb], dt), rcounts[rb], dt, op);
    }
    mf_nbc_copy(s, mf_coll_at(acc, displs[r], dt), rcounts[r], dt, rbuf, rcounts[r], dt);
    mf_nbc_round(s);
}

bool mf_nbc_reduce_scatter_commutative(mf_nbc_sched *s, const void *mine, void *rbuf,
                                       const MPI_Count *rcounts, mf_datatype *dt, mf_op *op,
                                       mf_comm *c)
{
    int n = c->c_size;
    MPI_Aint *displs = mf_nbc_tmp(s, (MPI_Count)(((size_t)n + 1) * sizeof *displs), mf_coll_byte());
    if (!displs)
        return true;
    displs[0] = 0;
    for (int i = 0; i < n; i++)
        displs[i + 1] = displs[i] + rcounts[i];
    int algo = mf_coll_reduce_scatter_algo(mf_coll_bytes(displs[n], dt), op);
    if (algo == MF_RS_REDUCE_SCATTERV)
        return false;
    if (algo == MF_RS_RING)
        nbc_reduce_scatter_ring(s, mine, rbuf, rcounts, displs, dt, op, c);
    else
        nbc_reduce_scatter_halving(s, mine, rbuf, rcounts, displs, dt, op, c);
    return true;
}

/* ---- Bcast ------------------------------------------------------------------------------- */

/* The message as bytes: the user's buffer when contiguous, else a scratch copy (packed at the
 * root first, unpacked elsewhere by nbc_bytes_done). */
static char *nbc_bytes_of(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, bool fill)
{
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    if (di->dt_contig)
        return (char *)buf + di->dt_true_lb;
    size_t total = mf_coll_bytes(count, dt);
    char *data = mf_nbc_tmp(s, (MPI_Count)total, mf_coll_byte());
    if (data && fill)
        mf_nbc_copy(s, buf, count, dt, data, (MPI_Count)total, mf_coll_byte());
    return data;
}

static void nbc_bytes_done(mf_nbc_sched *s, char *data, void *buf, MPI_Count count, mf_datatype *dt,
                           bool unpack)
{
    if (unpack && !mf_coll_dt(dt)->dt_contig)
        mf_nbc_copy(s, data, (MPI_Count)mf_coll_bytes(count, dt), mf_coll_byte(), buf, count, dt);
}

/* Byte offset where piece v starts (pieces of `chunk` bytes, the last ones short or empty). */
static size_t nbc_piece_at(int v, size_t chunk, size_t total)
{
    size_t off = (size_t)v * chunk;
    return off < total ? off : total;
}

/* van de Geijn: binomial scatter of n pieces, then a ring allgather of the pieces. */
static void nbc_bcast_scatter_allgather(mf_nbc_sched *s, void *buf, MPI_Count count,
                                        mf_datatype *dt, int root, mf_comm *c)
{
    int n = c->c_size, vr = (c->c_rank - root + n) % n;
    size_t total = mf_coll_bytes(count, dt), chunk = (total + (size_t)n - 1) / (size_t)n;
    mf_datatype *byte = mf_coll_byte();
    char *data = nbc_bytes_of(s, buf, count, dt, vr == 0);
    if (!data)
        return;
#define PIECE(a, b)                                                                                \
    data + nbc_piece_at((a), chunk, total),                                                        \
        (MPI_Count)(nbc_piece_at((b), chunk, total) - nbc_piece_at((a), chunk, total))
    /* relative rank v receives the pieces of its subtree [v, v + lowbit(v)) */
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (vr & mask) {
            mf_nbc_recv(s, PIECE(vr, vr + mask), byte, (vr - mask + root) % n, c);
            mf_nbc_round(s);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            mf_nbc_send(s, PIECE(vr + mask, vr + 2 * mask), byte, (vr + mask + root) % n, c);
    mf_nbc_round(s);
    int right = (c->c_rank + 1) % n, left = (c->c_rank - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sp = (vr - i + n) % n, rp = (vr - i - 1 + n) % n;
        mf_nbc_recv(s, PIECE(rp, rp + 1), byte, left, c);
        mf_nbc_send(s, PIECE(sp, sp + 1), byte, right, c);
        mf_nbc_round(s);
    }
#undef PIECE
    nbc_bytes_done(s, data, buf, count, dt, vr != 0);
}

/* Pipelined chain: in round k relative rank v takes chunk k from v-1 and passes chunk k-1 on
 * (the root sends chunk k), so the chunks stream down the chain one round apart. */
static void nbc_bcast_chain(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                            mf_comm *c)
{
    int n = c->c_size, r = c->c_rank, vr = (r - root + n) % n;
    size_t total = mf_coll_bytes(count, dt), chunk = mf_coll_chain_chunk();
    size_t nck = (total + chunk - 1) / chunk;
    mf_datatype *byte = mf_coll_byte();
    char *data = nbc_bytes_of(s, buf, count, dt, vr == 0);
    if (!data)
        return;
    int prev = (r - 1 + n) % n, next = (r + 1) % n;
#define CHUNK(k) data + (k)*chunk, (MPI_Count)((k) + 1 < nck ? chunk : total - (k)*chunk)
    for (size_t k = 0; k <= nck; k++) {
        if (vr != 0 && k < nck)
            mf_nbc_recv(s, CHUNK(k), byte, prev, c);
        size_t out = vr == 0 ? k : k - 1;
        if (vr != n - 1 && (vr == 0 || k >= 1) && out < nck)
            mf_nbc_send(s, CHUNK(out), byte, next, c);
        mf_nbc_round(s);
    }
#undef CHUNK
    nbc_bytes_done(s, data, buf, count, dt, vr != 0);
}

bool mf_nbc_bcast_large(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                        mf_comm *c)
{
    if (c->c_size == 1 || count == 0 || mf_coll_dt(dt)->dt_size == 0)
        return false;
    int algo = mf_coll_bcast_algo(mf_coll_bytes(count, dt), c);
    if (algo == MF_BCAST_SCATTER_ALLGATHER)
        nbc_bcast_scatter_allgather(s, buf, count, dt, root, c);
    else if (algo == MF_BCAST_CHAIN)
        nbc_bcast_chain(s, buf, count, dt, root, c);
    return algo != MF_BCAST_BINOMIAL;
}

/* ---- Allgather (uniform blocks, own block already in place) ------------------------------ */

static void nbc_allgather_rd(mf_nbc_sched *s, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                             mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = r ^ mask;
        MPI_Count mine = (MPI_Count)(r & ~(mask - 1)), theirs = (MPI_Count)(peer & ~(mask - 1));
        mf_nbc_recv(s, mf_coll_at(rbuf, theirs * rcount, rdt), mask * rcount, rdt, peer, c);
        mf_nbc_send(s, mf_coll_at(rbuf, mine * rcount, rdt), mask * rcount, rdt, peer, c);
        mf_nbc_round(s);
    }
}

static void nbc_allgather_bruck(mf_nbc_sched *s, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                                mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    MPI_Count blk = (MPI_Count)mf_coll_bytes(rcount, rdt);
    mf_datatype *byte = mf_coll_byte();
    char *tmp = mf_nbc_tmp(s, n * blk, byte);
    if (!tmp)
        return;
    /* tmp[i] will hold the block of rank r + i */
    mf_nbc_copy(s, mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt), rcount, rdt, tmp, blk, byte);
    for (int k = 1; k < n; k <<= 1) {
        int cnt = k < n - k ? k : n - k;
        mf_nbc_recv(s, tmp + k * blk, cnt * blk, byte, (r + k) % n, c);
        mf_nbc_send(s, tmp, cnt * blk, byte, (r - k + n) % n, c);
        mf_nbc_round(s);
    }
    for (int i = 1; i < n; i++)
        mf_nbc_copy(s, tmp + i * blk, blk, byte,
                    mf_coll_at(rbuf, (MPI_Count)((r + i) % n) * rcount, rdt), rcount, rdt);
}

bool mf_nbc_allgather_log(mf_nbc_sched *s, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                          mf_comm *c)
{
    int n = c->c_size;
    int algo = mf_coll_allgather_algo((size_t)n * mf_coll_bytes(rcount, rdt), c);
    if (algo == MF_ALLGATHER_RD)
        nbc_allgather_rd(s, rbuf, rcount, rdt, c);
    else if (algo == MF_ALLGATHER_BRUCK)
        nbc_allgather_bruck(s, rbuf, rcount, rdt, c);
    return algo != MF_ALLGATHER_RING;
}

/* ---- Alltoall ---------------------------------------------------------------------------- */

void mf_nbc_alltoall_windows(mf_nbc_sched *s, const mf_nbc_blocks *b, int window, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    for (int base = 1; base < n; base += window) {
        for (int i = base; i < n && i < base + window; i++) {
            int from = (r - i + n) % n;
            mf_nbc_recv(s, b->b_rblk[from], b->b_rcnt[from], b->b_rdt[from], from, c);
        }
        for (int i = base; i < n && i < base + window; i++) {
            int to = (r + i) % n;
            mf_nbc_send(s, b->b_sblk[to], b->b_scnt[to], b->b_sdt[to], to, c);
        }
        mf_nbc_round(s);
    }
}

/* Bruck on uniform blocks (every b_scnt/b_sdt alike, every b_rcnt/b_rdt alike): step k moves
 * every block whose rotated index has bit k set k ranks further. */
void mf_nbc_alltoall_bruck(mf_nbc_sched *s, const mf_nbc_blocks *b, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    mf_datatype *byte = mf_coll_byte();
    MPI_Count blk = (MPI_Count)mf_coll_bytes(b->b_scnt[0], b->b_sdt[0]);
    char *tmp = mf_nbc_tmp(s, n * blk, byte);
    char *out = tmp ? mf_nbc_tmp(s, (n / 2 + 1) * blk, byte) : NULL;
    char *in = out ? mf_nbc_tmp(s, (n / 2 + 1) * blk, byte) : NULL;
    if (!in)
        return;
    /* rotate: tmp[i] is the block for rank r + i */
    for (int i = 0; i < n; i++) {
        int to = (r + i) % n;
        mf_nbc_copy(s, b->b_sblk[to], b->b_scnt[to], b->b_sdt[to], tmp + i * blk, blk, byte);
    }
    for (int k = 1; k < n; k <<= 1) {
        MPI_Count m = 0;
        for (int i = 1; i < n; i++)
            if (i & k)
                mf_nbc_copy(s, tmp + i * blk, blk, byte, out + (m++) * blk, blk, byte);
        mf_nbc_recv(s, in, m * blk, byte, (r - k + n) % n, c);
        mf_nbc_send(s, out, m * blk, byte, (r + k) % n, c);
        mf_nbc_round(s);
        m = 0;
        for (int i = 1; i < n; i++)
            if (i & k)
                mf_nbc_copy(s, in + (m++) * blk, blk, byte, tmp + i * blk, blk, byte);
    }
    /* tmp[i] holds what rank r - i sent to r */
    for (int i = 0; i < n; i++) {
        int from = (r - i + n) % n;
        mf_nbc_copy(s, tmp + i * blk, blk, byte, b->b_rblk[from], b->b_rcnt[from], b->b_rdt[from]);
    }
}
