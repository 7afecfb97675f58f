/*
 * ofi_atomic.c — native atomics of the ofi fabric (fabric.h: atomic_max, ratomic; used by
 * src/rma/rma_native.c for MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and
 * MPI_Compare_and_swap).
 *
 * What the provider does is asked once, when the domain is open: fi_query_atomic for every
 * (op, type) in its plain, fetching (FI_FETCH_ATOMIC) and compare (FI_COMPARE_ATOMIC) forms;
 * the answer's count is the most elements one operation may carry, and ratomic cuts longer
 * operations into pieces of that many. A plain atomic goes with fi_atomicmsg and
 * FI_DELIVERY_COMPLETE (its completion is the remote completion a flush needs), a fetching one
 * with fi_fetch_atomic, compare-and-swap with fi_compare_atomic (their completions carry the old
 * values, so the update is done too). On providers whose plain atomics complete early (shm,
 * o_afetch) the plain ones go as fetching ones into a scratch buffer.
 *
 * Order: MPI orders accumulates from one origin to one target location by default
 * (accumulate_ordering rar,raw,war,waw). Providers that promise FI_ORDER_ATOMIC_RAR, _RAW, _WAR
 * and _WAW (udp;ofi_rxd) get every piece at once; for the others (tcp;ofi_rxm lacks WAR, shm
 * orders none) the pieces to one peer wait in a per-peer queue (o_aq) and start one at a time,
 * each after the previous one completed.
 *
 * The own rank is a peer like the others (o_self, its own address in the AV): an origin updates
 * its own window part through the provider too, so that one mechanism applies every atomic
 * update of that memory (see rma_native.c on the atomicity domain).
 */
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/state.h"
#include "fabric/ofi/ofi.h"

/* fabric.h's enums are libfabric's order: the values pass through unchanged. */
_Static_assert(MF_AOP_MIN == (int)FI_MIN && MF_AOP_BXOR == (int)FI_BXOR &&
                   MF_AOP_READ == (int)FI_ATOMIC_READ && MF_AOP_WRITE == (int)FI_ATOMIC_WRITE &&
                   MF_AOP_CSWAP == (int)FI_CSWAP,
               "mf_fabric_aop follows enum fi_op");
_Static_assert(MF_AT_I8 == (int)FI_INT8 && MF_AT_U64 == (int)FI_UINT64 &&
                   MF_AT_FLOAT == (int)FI_FLOAT && MF_AT_DOUBLE == (int)FI_DOUBLE,
               "mf_fabric_atype follows enum fi_datatype");

static const size_t mf_ofi_atype_size[MF_AT_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

void mf_ofi_atomic_setup(mf_ofi *o)
{
    o->o_awhy = o->o_atomic ? NULL : "no FI_ATOMIC";
    /* seen here (libfabric 1.17): udp;ofi_rxd's fetching atomics crash inside fi_cq_read */
    if (o->o_atomic && strstr(o->o_prov, "ofi_rxd"))
        o->o_awhy = "ofi_rxd's fetching atomics crash libfabric 1.17";
    /* ofi_rxm carries an atomic as a message and applies it in software at the target, as
     * Manifold's emulation does; measured here (tcp;ofi_rxm, bench/rma acc_lock), the emulation
     * is as fast up to 16 KiB and 3.5-7x faster from 256 KiB (vectorised kernels and one
     * transfer, against one provider atomic at a time, element by element). So by default such
     * windows keep the emulation; the shm provider's atomics stay native (faster below 1 KiB,
     * slower above: docs/FABRICS.md). */
    const char *want = mf_config_str("MANIFOLD_OFI_ATOMICS");
    if (!o->o_awhy && strcmp(want, "off") == 0)
        o->o_awhy = "MANIFOLD_OFI_ATOMICS=off";
    else if (!o->o_awhy && strcmp(want, "on") != 0 && strstr(o->o_prov, "ofi_rxm"))
        o->o_awhy = "ofi_rxm applies them in software, slower than the emulation; "
                    "MANIFOLD_OFI_ATOMICS=on uses them";
    if (o->o_awhy)
        return;
    uint64_t all =
        FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
    o->o_aordered = (o->o_info->tx_attr->msg_order & all) == all;
    /* A plain atomic's completion is remote completion only where the provider honours
     * FI_DELIVERY_COMPLETE for atomics: rxm does (its atomics wait for the target's response);
     * shm does not (its completion comes once the command is queued: a fence passed before the
     * update landed, and the target then read an origin buffer already reused). Elsewhere plain
     * atomics go as fetching ones, whose completion carries the old values and so follows the
     * update; the old values are dropped. */
    o->o_afetch = !strstr(o->o_prov, "ofi_rxm");
    for (int op = 0; op < MF_AOP_COUNT; op++)
        for (int t = 0; t < MF_AT_COUNT; t++)
            for (int fetch = 0; fetch < 2; fetch++) {
                struct fi_atomic_attr attr = {0};
                uint64_t flags = op == MF_AOP_CSWAP ? FI_COMPARE_ATOMIC
                                 : fetch            ? FI_FETCH_ATOMIC
                                                    : 0;
                /* READ only fetches, CSWAP always does */
                bool valid = !(op == MF_AOP_READ && !fetch) && !(op == MF_AOP_CSWAP && !fetch);
                if (valid &&
                    fi_query_atomic(o->o_domain, (enum fi_datatype)t, (enum fi_op)op, &attr,
                                    flags) == 0 &&
                    attr.size == mf_ofi_atype_size[t])
                    o->o_amax[fetch][op][t] = attr.count;
            }
}

size_t mf_ofi_atomic_max(mf_fabric *f, int op, int type, bool fetch)
{
    mf_ofi *o = mf_ofi_of(f);
    if (o->o_awhy || o->o_self == FI_ADDR_NOTAVAIL || op < 0 || op >= MF_AOP_COUNT || type < 0 ||
        type >= MF_AT_COUNT)
        return 0;
    return o->o_amax[fetch][op][type];
}

/* Starts the next queued piece to `peer` when none is with the provider (unordered). */
static void mf_ofi_atomic_kick(mf_ofi *o, int peer)
{
    mf_ofi_atom *a = o->o_aq_head[peer];
    if (!a || o->o_abusy[peer] > 0)
        return;
    o->o_aq_head[peer] = a->a_qnext;
    if (!o->o_aq_head[peer])
        o->o_aq_tail[peer] = NULL;
    o->o_abusy[peer]++;
    mf_ofi_submit(o, &a->a_op);
}

ssize_t mf_ofi_atomic_post(mf_ofi *o, mf_ofi_atom *a)
{
    const mf_fabric_atomic *x = &a->a_args;
    int peer = a->a_op.o_peer;
    fi_addr_t to = peer == mf_g.rank ? o->o_self : o->o_addr[peer];
    void *desc[3];
    for (int i = 0; i < 3; i++)
        desc[i] = a->a_mr[i] ? fi_mr_desc(a->a_mr[i]) : NULL;
    enum fi_datatype t = (enum fi_datatype)x->fa_type;
    enum fi_op op = (enum fi_op)x->fa_op;
    void *ctx = &a->a_op.o_ctx;
    /* READ has no source: the result buffer stands in (the provider does not read it) */
    const void *src = x->fa_src ? x->fa_src : x->fa_result;
    ssize_t rc;
    if (op == FI_CSWAP) {
        rc = fi_compare_atomic(o->o_ep, src, x->fa_count, desc[0], x->fa_cmp, desc[1], x->fa_result,
                               desc[2], to, a->a_raddr, a->a_key, t, op, ctx);
    } else if (x->fa_result || a->a_scratch) {
        rc = fi_fetch_atomic(o->o_ep, src, x->fa_count, desc[0],
                             x->fa_result ? x->fa_result : a->a_scratch, desc[2], to, a->a_raddr,
                             a->a_key, t, op, ctx);
    } else {
        struct fi_ioc v = {(void *)(uintptr_t)src, x->fa_count};
        struct fi_rma_ioc r = {.addr = a->a_raddr, .count = x->fa_count, .key = a->a_key};
        struct fi_msg_atomic m = {.msg_iov = &v,
                                  .desc = desc,
                                  .iov_count = 1,
                                  .addr = to,
                                  .rma_iov = &r,
                                  .rma_iov_count = 1,
                                  .datatype = t,
                                  .op = op,
                                  .context = ctx};
        rc = fi_atomicmsg(o->o_ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    }
    return rc; /* mf_ofi_post counts it in flight */
}

void mf_ofi_atomic_done(mf_ofi *o, mf_ofi_atom *a, int status)
{
    for (int i = 0; i < 3; i++)
        if (a->a_mr[i])
            fi_close(&a->a_mr[i]->fid);
    free(a->a_scratch);
    int peer = a->a_op.o_peer;
    mf_ofi_get *g = a->a_get;
    if (!o->o_aordered) {
        o->o_abusy[peer]--;
        mf_ofi_atomic_kick(o, peer);
    }
    mf_ofi_piece_end(g, status); /* may free a (the pieces live in g's allocation) */
}

/* Registers a piece's local buffers where the provider wants that (FI_MR_LOCAL). */
static int mf_ofi_atomic_reg(mf_ofi *o, mf_ofi_atom *a, size_t esz)
{
    const mf_fabric_atomic *x = &a->a_args;
    size_t len = x->fa_count * esz;
    if (!x->fa_result && o->o_afetch && !(a->a_scratch = malloc(len)))
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for an atomic", o->o_base.name);
    void *bufs[3] = {(void *)(uintptr_t)x->fa_src, (void *)(uintptr_t)x->fa_cmp,
                     x->fa_result ? x->fa_result : a->a_scratch};
    uint64_t access[3] = {FI_WRITE, FI_WRITE, FI_READ};
    for (int i = 0; i < 3; i++) {
        void *desc;
        int rc = bufs[i] ? mf_ofi_reg_local(o, bufs[i], len, access[i], &a->a_mr[i], &desc) : 0;
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

int mf_ofi_ratomic(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const mf_fabric_atomic *x,
                   mf_fabric_done *done)
{
    mf_ofi *o = mf_ofi_of(f);
    bool self = peer == mf_g.rank;
    bool fetch = x->fa_result != NULL;
    size_t max = mf_ofi_atomic_max(f, x->fa_op, x->fa_type, fetch);
    if (peer < 0 || peer >= o->o_npeers ||
        (self ? o->o_self : o->o_addr[peer]) == FI_ADDR_NOTAVAIL || max == 0)
        return mf_error(MPI_ERR_INTERN, "%s: ratomic (op %d, type %d) with rank %d not possible",
                        f->name, x->fa_op, x->fa_type, peer);
    if (o->o_fails.code[peer])
        return o->o_fails.code[peer];
    if (x->fa_count == 0)
        return MF_FABRIC_DONE;
    size_t esz = mf_ofi_atype_size[x->fa_type];
    size_t npieces = (x->fa_count + max - 1) / max;
    mf_ofi_get *g = calloc(1, sizeof *g + npieces * sizeof(mf_ofi_atom));
    if (!g)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for an atomic", f->name);
    mf_ofi_atom *atoms = (mf_ofi_atom *)(void *)(g + 1);
    g->g_done = done;
    g->g_left = (int)npieces;
    uint64_t raddr = ((o->o_mr_mode & FI_MR_VIRT_ADDR) ? rkey & MF_OFI_ADDR_MASK : 0) + offset;
    uint64_t key = (rkey >> MF_OFI_KEY_BITS) - 1;
    for (size_t i = 0; i < npieces; i++) {
        mf_ofi_atom *a = &atoms[i];
        size_t first = i * max, skip = first * esz;
        a->a_op.o_kind = MF_OFI_ATOMIC;
        a->a_op.o_peer = peer;
        a->a_get = g;
        a->a_args = *x;
        a->a_args.fa_count = x->fa_count - first < max ? x->fa_count - first : max;
        if (x->fa_src)
            a->a_args.fa_src = (const char *)x->fa_src + skip;
        if (x->fa_cmp)
            a->a_args.fa_cmp = (const char *)x->fa_cmp + skip;
        if (x->fa_result)
            a->a_args.fa_result = (char *)x->fa_result + skip;
        a->a_raddr = raddr + skip;
        a->a_key = key;
        int rc = mf_ofi_atomic_reg(o, a, esz);
        if (rc) {
            for (size_t k = 0; k <= i; k++) {
                for (int m = 0; m < 3; m++)
                    if (atoms[k].a_mr[m])
                        fi_close(&atoms[k].a_mr[m]->fid);
                free(atoms[k].a_scratch);
            }
            free(g);
            return rc;
        }
    }
    o->o_atomics++;
    for (size_t i = 0; i < npieces; i++) {
        mf_ofi_atom *a = &atoms[i];
        if (o->o_aordered) {
            mf_ofi_submit(o, &a->a_op);
            continue;
        }
        a->a_qnext = NULL;
        if (o->o_aq_tail[peer])
            o->o_aq_tail[peer]->a_qnext = a;
        else
            o->o_aq_head[peer] = a;
        o->o_aq_tail[peer] = a;
    }
    if (!o->o_aordered)
        mf_ofi_atomic_kick(o, peer);
    return MF_FABRIC_PENDING;
}
