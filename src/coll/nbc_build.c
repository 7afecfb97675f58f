/*
 * nbc_build.c — the algorithms of nonblocking collectives, written as schedules (nbc_impl.h).
 *
 * They follow the blocking algorithms' structure where it carries over to rounds; the
 * size-dependent choices (bcast, allgather, alltoall, allreduce, reduce_scatter) are made by the
 * blocking collectives' choosers and their other algorithms are in nbc_algo.c:
 *   barrier          dissemination, ceil(log2 n) rounds (as mf_coll_barrier)
 *   bcast            binomial tree from the root (the blocking bcast's tree, coll_impl.h);
 *                    scatter + allgather or chain for long messages (nbc_algo.c)
 *   reduce           binomial tree; children's data arrive in one round and are combined in
 *                    rank order, so non-commutative ops are reduced in canonical order (their
 *                    tree is rooted at rank 0 and the result forwarded to the root)
 *   allreduce        nbc_algo.c (recursive doubling, Rabenseifner, ring)
 *   gather(v), scatter(v)  linear at the root (one round of n-1 transfers)
 *   allgather(v)     ring: n-1 rounds, each passing on the block received in the previous one;
 *                    allgather also recursive doubling or Bruck (nbc_algo.c)
 *   alltoall(v,w)    linear in windows of peers (receives first), alltoall also pairwise or
 *                    Bruck (nbc_algo.c); MPI_IN_PLACE copies the outgoing blocks aside in a
 *                    first round
 *   reduce_scatter(_block)  commutative ops: recursive halving or ring (nbc_algo.c); others:
 *                    reduce of the whole vector to rank 0, then scatterv
 *   scan, exscan     a chain: rank r waits for the prefix of ranks 0..r-1 from r-1
 *   neighbor         every block to or from a neighbour in one round (receives first)
 * Intercommunicators: barrier (local barrier, leaders exchange, local bcast), bcast (root to
 * the remote leader, then a binomial bcast in the remote group), allreduce (local reduces,
 * leaders swap results, local bcasts), reduce (local reduce, leader to the root),
 * reduce_scatter(_block) (local reduces, leaders swap, local scatters); gather(v), scatter(v),
 * allgather(v) and alltoall(v,w) straight between the processes, in one round; the local steps
 * run on the intercommunicator's local communicator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "coll/nbc_impl.h"
#include "comm/topo.h"
#include "core/error.h"

static mf_datatype *nbc_byte(void)
{
    return mf_coll_byte();
}

static void *nbc_at(const void *buf, MPI_Aint elems, const mf_datatype *dt)
{
    return (char *)buf + elems * mf_datatype_info(dt)->dt_extent;
}

static void *nbc_byte_at(const void *base, MPI_Aint disp)
{
    return (void *)((uintptr_t)base + (uintptr_t)disp);
}

static void nbc_barrier_intra(mf_nbc_sched *s, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    for (int k = 1; k < n; k <<= 1) {
        mf_nbc_recv(s, NULL, 0, nbc_byte(), (r - k + n) % n, c);
        mf_nbc_send(s, NULL, 0, nbc_byte(), (r + k) % n, c);
        mf_nbc_round(s);
    }
}

static void nbc_bcast_intra(mf_nbc_sched *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                            mf_comm *c)
{
    int n = c->c_size, vr = (c->c_rank - root + n) % n;
    if (vr != 0) {
        mf_nbc_recv(s, buf, count, dt, (mf_coll_tree_parent(vr) + root) % n, c);
        mf_nbc_round(s);
    }
    for (int mask = mf_coll_tree_first_child_mask(vr); vr + mask < n; mask <<= 1)
        mf_nbc_send(s, buf, count, dt, (vr + mask + root) % n, c);
    mf_nbc_round(s);
}

/* Reduces every process's `mine` into `result` at `root` (result is not used elsewhere; it
 * may be `mine` at the root). */
static void nbc_reduce_intra(mf_nbc_sched *s, const void *mine, void *result, MPI_Count count,
                             mf_datatype *dt, mf_op *op, int root, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    /* commutative: a tree rooted at `root`; otherwise at 0, in rank order */
    int tree_root = op->op_commute ? root : 0;
    int vr = (r - tree_root + n) % n;
    if (n == 1) {
        if (mine != result)
            mf_nbc_copy(s, mine, count, dt, result, count, dt);
        mf_nbc_round(s);
        return;
    }
    /* children vr+1, vr+2, vr+4, ... below our lowest set bit; parent vr - that bit */
    int mask = 1;
    while (mask < n && !(vr & mask))
        mask <<= 1;
    int nchild = 0;
    void *tmp[32];
    for (int m = 1; m < mask && vr + m < n; m <<= 1) {
        tmp[nchild] = mf_nbc_tmp(s, count, dt);
        mf_nbc_recv(s, tmp[nchild], count, dt, (vr + m + tree_root) % n, c);
        nchild++;
    }
    mf_nbc_round(s);
    const void *acc = mine;
    for (int i = 0; i < nchild; i++) {
        /* the child's block covers ranks above ours: acc is the left operand */
        mf_nbc_reduce(s, acc, tmp[i], count, dt, op);
        acc = tmp[i];
    }
    if (vr != 0) {
        mf_nbc_send(s, acc, count, dt, (vr - mask + tree_root) % n, c);
        mf_nbc_round(s);
    }
    if (tree_root == root) {
        if (vr == 0 && acc != result)
            mf_nbc_copy(s, acc, count, dt, result, count, dt);
        mf_nbc_round(s);
        return;
    }
    /* non-commutative with root != 0: rank 0 forwards the result */
    mf_nbc_round(s);
    if (r == 0)
        mf_nbc_send(s, acc, count, dt, root, c);
    else if (r == root)
        mf_nbc_recv(s, result, count, dt, 0, c);
    mf_nbc_round(s);
}

/* ---- Rooted data movement ---------------------------------------------------------------- */

static MPI_Count nbc_cnt(const MPI_Count *counts, MPI_Count uniform, int i)
{
    return counts ? counts[i] : uniform;
}

static MPI_Aint nbc_disp(const MPI_Aint *displs, MPI_Count uniform, int i)
{
    return displs ? displs[i] : (MPI_Aint)(uniform * i);
}

static void nbc_gather(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    if (r != a->a_root) {
        mf_nbc_send(s, a->a_sbuf, a->a_scount, a->a_sdt, a->a_root, c);
        return;
    }
    for (int i = 0; i < n; i++) {
        void *at = nbc_at(a->a_rbuf, nbc_disp(a->a_rdispls, a->a_rcount, i), a->a_rdt);
        MPI_Count cnt = nbc_cnt(a->a_rcounts, a->a_rcount, i);
        if (i != r)
            mf_nbc_recv(s, at, cnt, a->a_rdt, i, c);
        else if (a->a_sbuf != MPI_IN_PLACE)
            mf_nbc_copy(s, a->a_sbuf, a->a_scount, a->a_sdt, at, cnt, a->a_rdt);
    }
}

static void nbc_scatter(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    if (r != a->a_root) {
        mf_nbc_recv(s, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_root, c);
        return;
    }
    for (int i = 0; i < n; i++) {
        const void *at = nbc_at(a->a_sbuf, nbc_disp(a->a_sdispls, a->a_scount, i), a->a_sdt);
        MPI_Count cnt = nbc_cnt(a->a_scounts, a->a_scount, i);
        if (i != r)
            mf_nbc_send(s, at, cnt, a->a_sdt, i, c);
        else if (a->a_rbuf != MPI_IN_PLACE)
            mf_nbc_copy(s, at, cnt, a->a_sdt, a->a_rbuf, a->a_rcount, a->a_rdt);
    }
}

static void nbc_allgather(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    mf_datatype *dt = a->a_rdt;
#define BLOCK(i) nbc_at(a->a_rbuf, nbc_disp(a->a_rdispls, a->a_rcount, (i)), dt)
#define COUNT(i) nbc_cnt(a->a_rcounts, a->a_rcount, (i))
    if (a->a_sbuf != MPI_IN_PLACE)
        mf_nbc_copy(s, a->a_sbuf, a->a_scount, a->a_sdt, BLOCK(r), COUNT(r), dt);
    if (a->a_kind == MF_NBC_ALLGATHER && n > 1 &&
        mf_nbc_allgather_log(s, a->a_rbuf, a->a_rcount, dt, c))
        return;
    for (int k = 0; k < n - 1; k++) {
        int sb = (r - k + n) % n, rb = (r - k - 1 + n) % n;
        mf_nbc_recv(s, BLOCK(rb), COUNT(rb), dt, (r - 1 + n) % n, c);
        mf_nbc_send(s, BLOCK(sb), COUNT(sb), dt, (r + 1) % n, c);
        mf_nbc_round(s);
    }
#undef BLOCK
#undef COUNT
}

/* Block i of an alltoall(v, w)'s send side (`send`) or receive side, in the buffer at `base`,
 * as its kind describes it: its start (alltoallw's displacements are bytes, the others'
 * elements of the type), count and type. */
static void *nbc_alltoall_block(const mf_nbc_args *a, const void *base, int i, bool send,
                                MPI_Count *cnt, mf_datatype **dt)
{
    bool w = a->a_kind == MF_NBC_ALLTOALLW, v = a->a_kind == MF_NBC_ALLTOALLV;
    MPI_Count uniform = send ? a->a_scount : a->a_rcount;
    const MPI_Aint *displs = send ? a->a_sdispls : a->a_rdispls;
    *dt = w ? (send ? a->a_sdts : a->a_rdts)[i] : (send ? a->a_sdt : a->a_rdt);
    *cnt = v || w ? (send ? a->a_scounts : a->a_rcounts)[i] : uniform;
    return w ? nbc_byte_at(base, displs[i])
             : nbc_at(base, v ? displs[i] : (MPI_Aint)(uniform * i), *dt);
}

/* Alltoall, v and w through one description: counts, byte displacements, a type per peer. */
static void nbc_alltoall(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    bool in_place = a->a_sbuf == MPI_IN_PLACE;
    bool w = a->a_kind == MF_NBC_ALLTOALLW, v = a->a_kind == MF_NBC_ALLTOALLV;
    const void *sbuf = in_place ? a->a_rbuf : a->a_sbuf;
    const void *sblk[n > 0 ? n : 1];
    MPI_Count scnt[n > 0 ? n : 1], rcnt[n > 0 ? n : 1];
    mf_datatype *sdt[n > 0 ? n : 1], *rdt[n > 0 ? n : 1];
    void *rblk[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        rblk[i] = nbc_alltoall_block(a, a->a_rbuf, i, false, &rcnt[i], &rdt[i]);
        if (in_place) {
            /* the outgoing data is the receive layout of the same peer */
            sdt[i] = rdt[i];
            scnt[i] = rcnt[i];
            sblk[i] = rblk[i];
            continue;
        }
        sblk[i] = nbc_alltoall_block(a, sbuf, i, true, &scnt[i], &sdt[i]);
    }
    /* uniform blocks: the blocking alltoall's choice; v and w: linear */
    int algo = MF_ALLTOALL_LINEAR;
    if (!v && !w && n > 1)
        algo = mf_coll_alltoall_algo(mf_coll_bytes(scnt[0], sdt[0]), c);
    if (in_place) {
        for (int i = 0; i < n; i++) {
            if (i == r)
                continue;
            void *t = mf_nbc_tmp(s, rcnt[i], rdt[i]);
            mf_nbc_copy(s, rblk[i], rcnt[i], rdt[i], t, rcnt[i], rdt[i]);
            sblk[i] = t;
        }
        mf_nbc_round(s);
    } else if (algo != MF_ALLTOALL_BRUCK) {
        mf_nbc_copy(s, sblk[r], scnt[r], sdt[r], rblk[r], rcnt[r], rdt[r]);
    }
    mf_nbc_blocks b = {sblk, scnt, sdt, rblk, rcnt, rdt};
    if (algo == MF_ALLTOALL_BRUCK)
        mf_nbc_alltoall_bruck(s, &b, c);
    else
        mf_nbc_alltoall_windows(s, &b, algo == MF_ALLTOALL_PAIRWISE ? 1 : MF_COLL_ALLTOALL_WINDOW,
                                c);
}

/* ---- Reductions -------------------------------------------------------------------------- */

static void nbc_reduce_scatter(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int n = c->c_size, r = c->c_rank;
    bool block = a->a_kind == MF_NBC_REDUCE_SCATTER_BLOCK;
    MPI_Count total = 0, mydisp = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count cnt = block ? a->a_rcount : a->a_rcounts[i];
        if (i < r)
            mydisp += cnt;
        total += cnt;
    }
    mf_datatype *dt = a->a_rdt;
    const void *mine = a->a_sbuf == MPI_IN_PLACE ? a->a_rbuf : a->a_sbuf;
    if (n > 1 && a->a_op->op_commute) {
        const MPI_Count *counts = a->a_rcounts;
        if (block) {
            MPI_Count *c1 = mf_nbc_tmp(s, (MPI_Count)((size_t)n * sizeof *c1), nbc_byte());
            if (!c1)
                return;
            for (int i = 0; i < n; i++)
                c1[i] = a->a_rcount;
            counts = c1;
        }
        if (mf_nbc_reduce_scatter_commutative(s, mine, a->a_rbuf, counts, dt, a->a_op, c))
            return;
    }
    void *all = r == 0 ? mf_nbc_tmp(s, total, dt) : NULL;
    nbc_reduce_intra(s, mine, all, total, dt, a->a_op, 0, c);
    MPI_Count mycount = block ? a->a_rcount : a->a_rcounts[r];
    if (r != 0) {
        mf_nbc_recv(s, a->a_rbuf, mycount, dt, 0, c);
        return;
    }
    MPI_Count off = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count cnt = block ? a->a_rcount : a->a_rcounts[i];
        if (i == 0)
            mf_nbc_copy(s, all, cnt, dt, a->a_rbuf, cnt, dt);
        else
            mf_nbc_send(s, nbc_at(all, (MPI_Aint)off, dt), cnt, dt, i, c);
        off += cnt;
    }
    (void)mydisp;
}

static void nbc_scan(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c, bool exclusive)
{
    int n = c->c_size, r = c->c_rank;
    mf_datatype *dt = a->a_rdt;
    MPI_Count count = a->a_rcount;
    bool in_place = a->a_sbuf == MPI_IN_PLACE;
    const void *mine = in_place ? a->a_rbuf : a->a_sbuf;
    if (!exclusive) {
        /* rbuf = prefix(r-1) op mine */
        if (!in_place)
            mf_nbc_copy(s, mine, count, dt, a->a_rbuf, count, dt);
        if (r > 0) {
            void *prev = mf_nbc_tmp(s, count, dt);
            mf_nbc_recv(s, prev, count, dt, r - 1, c);
            mf_nbc_round(s);
            mf_nbc_reduce(s, prev, a->a_rbuf, count, dt, a->a_op);
        }
        if (r < n - 1)
            mf_nbc_send(s, a->a_rbuf, count, dt, r + 1, c);
        return;
    }
    /* exclusive: rbuf = prefix(r-1); send prefix(r-1) op mine to r+1 */
    if (r == 0) {
        if (n > 1)
            mf_nbc_send(s, mine, count, dt, 1, c);
        return;
    }
    void *next = r < n - 1 ? mf_nbc_tmp(s, count, dt) : NULL;
    if (next)
        mf_nbc_copy(s, mine, count, dt, next, count, dt); /* before rbuf is overwritten */
    mf_nbc_recv(s, a->a_rbuf, count, dt, r - 1, c);
    mf_nbc_round(s);
    if (next) {
        mf_nbc_reduce(s, a->a_rbuf, next, count, dt, a->a_op);
        mf_nbc_send(s, next, count, dt, r + 1, c);
    }
}

/* ---- Intercommunicators ------------------------------------------------------------------ */

static void nbc_inter_barrier(mf_nbc_sched *s, mf_comm *c)
{
    mf_comm *lc = c->c_local_comm;
    nbc_barrier_intra(s, lc);
    if (lc->c_rank == 0) {
        mf_nbc_recv(s, NULL, 0, nbc_byte(), 0, c);
        mf_nbc_send(s, NULL, 0, nbc_byte(), 0, c);
        mf_nbc_round(s);
    }
    nbc_bcast_intra(s, NULL, 0, nbc_byte(), 0, lc);
}

static void nbc_inter_bcast(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    if (a->a_root == MPI_PROC_NULL)
        return;
    if (a->a_root == MPI_ROOT) {
        mf_nbc_send(s, a->a_rbuf, a->a_rcount, a->a_rdt, 0, c);
        return;
    }
    mf_comm *lc = c->c_local_comm;
    if (lc->c_rank == 0) {
        mf_nbc_recv(s, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_root, c);
        mf_nbc_round(s);
    }
    nbc_bcast_intra(s, a->a_rbuf, a->a_rcount, a->a_rdt, 0, lc);
}

static void nbc_inter_allreduce(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    mf_comm *lc = c->c_local_comm;
    MPI_Count count = a->a_rcount;
    mf_datatype *dt = a->a_rdt;
    void *mine = lc->c_rank == 0 ? mf_nbc_tmp(s, count, dt) : NULL;
    nbc_reduce_intra(s, a->a_sbuf, mine, count, dt, a->a_op, 0, lc);
    if (lc->c_rank == 0) {
        mf_nbc_recv(s, a->a_rbuf, count, dt, 0, c);
        mf_nbc_send(s, mine, count, dt, 0, c);
        mf_nbc_round(s);
    }
    nbc_bcast_intra(s, a->a_rbuf, count, dt, 0, lc);
}

/* Rooted operations across: the root (MPI_ROOT) names the remote ranks, its group mates
 * (MPI_PROC_NULL) take no part, and the other group names the root by its remote rank. */

/* Block i of a gather(v)/allgather(v) from remote rank i, for each rank of the other group. */
static void nbc_inter_recv_blocks(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    for (int i = 0, m = mf_comm_peer_size(c); i < m; i++)
        mf_nbc_recv(s, nbc_at(a->a_rbuf, nbc_disp(a->a_rdispls, a->a_rcount, i), a->a_rdt),
                    nbc_cnt(a->a_rcounts, a->a_rcount, i), a->a_rdt, i, c);
}

/* Gather(v) (`gather`) or scatter(v) across: the root's block i to or from remote rank i, one
 * transfer at each process of the other group. */
static void nbc_inter_linear(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c, bool gather)
{
    if (a->a_root == MPI_PROC_NULL)
        return;
    if (a->a_root != MPI_ROOT) {
        if (gather)
            mf_nbc_send(s, a->a_sbuf, a->a_scount, a->a_sdt, a->a_root, c);
        else
            mf_nbc_recv(s, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_root, c);
        return;
    }
    if (gather) {
        nbc_inter_recv_blocks(s, a, c);
        return;
    }
    for (int i = 0, m = mf_comm_peer_size(c); i < m; i++)
        mf_nbc_send(s, nbc_at(a->a_sbuf, nbc_disp(a->a_sdispls, a->a_scount, i), a->a_sdt),
                    nbc_cnt(a->a_scounts, a->a_scount, i), a->a_sdt, i, c);
}

/* Every process takes block i from remote rank i and gives its own block to each (one round;
 * the blocking form gathers at the leaders instead, with the same result). */
static void nbc_inter_allgather(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    nbc_inter_recv_blocks(s, a, c);
    for (int i = 0, m = mf_comm_peer_size(c); i < m; i++)
        mf_nbc_send(s, a->a_sbuf, a->a_scount, a->a_sdt, i, c);
}

/* Alltoall(v, w) across: block i to and from remote rank i (w's displacements are bytes). */
static void nbc_inter_alltoall(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int m = mf_comm_peer_size(c);
    MPI_Count cnt;
    mf_datatype *dt;
    for (int i = 0; i < m; i++) {
        void *at = nbc_alltoall_block(a, a->a_rbuf, i, false, &cnt, &dt);
        mf_nbc_recv(s, at, cnt, dt, i, c);
    }
    for (int i = 0; i < m; i++) {
        const void *at = nbc_alltoall_block(a, a->a_sbuf, i, true, &cnt, &dt);
        mf_nbc_send(s, at, cnt, dt, i, c);
    }
}

/* The root receives the other group's reduction, which that group's leader reduced locally. */
static void nbc_inter_reduce(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    if (a->a_root == MPI_PROC_NULL)
        return;
    if (a->a_root == MPI_ROOT) {
        mf_nbc_recv(s, a->a_rbuf, a->a_rcount, a->a_rdt, 0, c);
        return;
    }
    mf_comm *lc = c->c_local_comm;
    void *mine = lc->c_rank == 0 ? mf_nbc_tmp(s, a->a_rcount, a->a_rdt) : NULL;
    nbc_reduce_intra(s, a->a_sbuf, mine, a->a_rcount, a->a_rdt, a->a_op, 0, lc);
    if (lc->c_rank == 0)
        mf_nbc_send(s, mine, a->a_rcount, a->a_rdt, a->a_root, c);
}

/* Each group's vector is reduced at its leader; the leaders swap them; each leader scatters
 * the other group's reduction over its own group by recvcounts (as the blocking form). */
static void nbc_inter_reduce_scatter(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    mf_comm *lc = c->c_local_comm;
    int n = lc->c_size;
    bool block = a->a_kind == MF_NBC_REDUCE_SCATTER_BLOCK;
    mf_datatype *dt = a->a_rdt;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++)
        total += block ? a->a_rcount : a->a_rcounts[i];
    bool leader = lc->c_rank == 0;
    void *mine = leader ? mf_nbc_tmp(s, total, dt) : NULL;
    void *theirs = leader ? mf_nbc_tmp(s, total, dt) : NULL;
    nbc_reduce_intra(s, a->a_sbuf, mine, total, dt, a->a_op, 0, lc);
    if (!leader) {
        mf_nbc_recv(s, a->a_rbuf, block ? a->a_rcount : a->a_rcounts[lc->c_rank], dt, 0, lc);
        return;
    }
    mf_nbc_recv(s, theirs, total, dt, 0, c);
    mf_nbc_send(s, mine, total, dt, 0, c);
    mf_nbc_round(s);
    MPI_Count off = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count cnt = block ? a->a_rcount : a->a_rcounts[i];
        if (i == 0)
            mf_nbc_copy(s, theirs, cnt, dt, a->a_rbuf, cnt, dt);
        else
            mf_nbc_send(s, nbc_at(theirs, (MPI_Aint)off, dt), cnt, dt, i, lc);
        off += cnt;
    }
}

/* ---- Neighbourhoods and building blocks for other schedules ------------------------------ */

/* All transfers in one round. Every tag of a schedule is the same, so blocks between one pair
 * of processes match in posting order: graph blocks in order; a Cartesian receive slot i
 * (from the negative side for even i) takes what the neighbour sent from its slot i ^ 1, so the
 * receives are posted in the order of i ^ 1, which is the sender's order. */
static void nbc_neighbor(mf_nbc_sched *s, const mf_nbc_args *a, mf_comm *c)
{
    int indeg, outdeg, *src, *dst;
    bool owned = false;
    int rc = mf_topo_neighbors(c, &indeg, &src, &outdeg, &dst, &owned);
    if (rc) {
        s->s_error = rc;
        return;
    }
    bool cart = c->c_topo->t_kind == MPI_CART;
    for (int k = 0; k < indeg; k++) {
        int i = cart ? k ^ 1 : k;
        if (src[i] != MPI_PROC_NULL)
            mf_nbc_recv(s, nbc_byte_at(a->a_rbuf, a->a_rdispls[i]), a->a_rcounts[i], a->a_rdts[i],
                        src[i], c);
    }
    for (int j = 0; j < outdeg; j++)
        if (dst[j] != MPI_PROC_NULL)
            mf_nbc_send(s, nbc_byte_at(a->a_sbuf, a->a_sdispls[j]), a->a_scounts[j], a->a_sdts[j],
                        dst[j], c);
    if (owned) {
        free(src);
        free(dst);
    }
}

void mf_nbc_allreduce(mf_nbc_sched *s, const void *sbuf, void *rbuf, MPI_Count count,
                      mf_datatype *dt, mf_op *op, mf_comm *c)
{
    if (c->c_is_inter) {
        mf_nbc_args a = {.a_kind = MF_NBC_ALLREDUCE,
                         .a_sbuf = sbuf,
                         .a_rbuf = rbuf,
                         .a_rcount = count,
                         .a_rdt = dt,
                         .a_op = op};
        nbc_inter_allreduce(s, &a, c);
        return;
    }
    mf_nbc_allreduce_intra(s, sbuf, rbuf, count, dt, op, c);
}

/* ---- Entry ------------------------------------------------------------------------------- */

int mf_nbc_build(mf_nbc_sched *s, const mf_nbc_args *a, const char *fn)
{
    mf_comm *c = s->s_comm;
    (void)fn;
    if (c->c_is_inter) {
        switch (a->a_kind) {
        case MF_NBC_BARRIER:
            nbc_inter_barrier(s, c);
            break;
        case MF_NBC_BCAST:
            nbc_inter_bcast(s, a, c);
            break;
        case MF_NBC_ALLREDUCE:
            nbc_inter_allreduce(s, a, c);
            break;
        case MF_NBC_GATHER:
        case MF_NBC_GATHERV:
            nbc_inter_linear(s, a, c, true);
            break;
        case MF_NBC_SCATTER:
        case MF_NBC_SCATTERV:
            nbc_inter_linear(s, a, c, false);
            break;
        case MF_NBC_ALLGATHER:
        case MF_NBC_ALLGATHERV:
            nbc_inter_allgather(s, a, c);
            break;
        case MF_NBC_ALLTOALL:
        case MF_NBC_ALLTOALLV:
        case MF_NBC_ALLTOALLW:
            nbc_inter_alltoall(s, a, c);
            break;
        case MF_NBC_REDUCE:
            nbc_inter_reduce(s, a, c);
            break;
        case MF_NBC_REDUCE_SCATTER:
        case MF_NBC_REDUCE_SCATTER_BLOCK:
            nbc_inter_reduce_scatter(s, a, c);
            break;
        default: /* scans and neighbourhoods are not defined on intercommunicators */
            return mf_error(MPI_ERR_COMM, "%s: not defined on intercommunicators", fn);
        }
        return s->s_error;
    }
    const void *mine = a->a_sbuf == MPI_IN_PLACE ? a->a_rbuf : a->a_sbuf;
    switch (a->a_kind) {
    case MF_NBC_BARRIER:
        nbc_barrier_intra(s, c);
        break;
    case MF_NBC_BCAST:
        if (!mf_nbc_bcast_large(s, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_root, c))
            nbc_bcast_intra(s, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_root, c);
        break;
    case MF_NBC_GATHER:
    case MF_NBC_GATHERV:
        nbc_gather(s, a, c);
        break;
    case MF_NBC_SCATTER:
    case MF_NBC_SCATTERV:
        nbc_scatter(s, a, c);
        break;
    case MF_NBC_ALLGATHER:
    case MF_NBC_ALLGATHERV:
        nbc_allgather(s, a, c);
        break;
    case MF_NBC_ALLTOALL:
    case MF_NBC_ALLTOALLV:
    case MF_NBC_ALLTOALLW:
        nbc_alltoall(s, a, c);
        break;
    case MF_NBC_REDUCE:
        nbc_reduce_intra(s, mine, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_op, a->a_root, c);
        break;
    case MF_NBC_ALLREDUCE:
        mf_nbc_allreduce_intra(s, a->a_sbuf, a->a_rbuf, a->a_rcount, a->a_rdt, a->a_op, c);
        break;
    case MF_NBC_REDUCE_SCATTER:
    case MF_NBC_REDUCE_SCATTER_BLOCK:
        nbc_reduce_scatter(s, a, c);
        break;
    case MF_NBC_SCAN:
        nbc_scan(s, a, c, false);
        break;
    case MF_NBC_EXSCAN:
        nbc_scan(s, a, c, true);
        break;
    case MF_NBC_NEIGHBOR:
        nbc_neighbor(s, a, c);
        break;
    }
    return s->s_error;
}
