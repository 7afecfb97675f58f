/*
 * ofi_rma.c — registrations and RMA of the ofi fabric: the rendezvous by fi_read (rkey_make,
 * rget) and native put (rma_key, rput) that src/rma/rma_native.c uses.
 *
 * Contract: rkey_make registers a sender's buffer for remote reads, rma_key a window for remote
 * reads and writes, both into one table of MF_OFI_MAX_KEYS slots; the rkey handed out packs
 * (key + 1) above MF_OFI_KEY_BITS and, under FI_MR_VIRT_ADDR, the address below (ofi.h). A
 * buffer that cannot be described that way (no slot, address too high, a provider key over 16
 * bits, fi_mr_reg failing) is refused and counted in o_rkey_fallbacks; the p2p layer then sends by push.
 * rkey_release closes the registration. rget/rput cut the transfer into one fi_read or
 * fi_writemsg (FI_DELIVERY_COMPLETE) per local iovec, all prepared (and registered under
 * FI_MR_LOCAL) before any is posted, and call `done` once with the first error when the last
 * piece completed (mf_ofi_piece_end). A window exposed by rma_key bounds the instance's sleeps
 * (mf_ofi_sleep_bound) until released, since peers' one-sided operations need our progress.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "fabric/ofi/ofi.h"

/* Registers len bytes at addr for the peers' `access` (FI_REMOTE_READ, | FI_REMOTE_WRITE) in a
 * free key slot; the rkey packs the key and, under FI_MR_VIRT_ADDR, the address (ofi.h). */
static int mf_ofi_key_new(mf_fabric *f, void *addr, size_t len, uint64_t access, uint64_t *rkey)
{
    mf_ofi *o = mf_ofi_of(f);
    *rkey = 0;
    if (!o->o_keys && !(o->o_keys = calloc(MF_OFI_MAX_KEYS, sizeof *o->o_keys)))
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for registrations", f->name);
    int slot = -1;
    for (int i = 0; i < MF_OFI_MAX_KEYS && slot < 0; i++) {
        int s = (o->o_key_hint + i) % MF_OFI_MAX_KEYS;
        if (!o->o_keys[s].k_rkey)
            slot = s;
    }
    uint64_t base = (o->o_mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)addr : 0;
    if (slot < 0 || base > MF_OFI_ADDR_MASK) {
        o->o_rkey_fallbacks++;
        return mf_error(MPI_ERR_OTHER, "%s: cannot describe %p for a remote read", f->name, addr);
    }
    struct fid_mr *mr = NULL;
    int rc = fi_mr_reg(o->o_domain, addr, len, access, 0, (uint64_t)slot, 0, &mr, NULL);
    if (rc == 0 && (o->o_mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(mr, &o->o_ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(mr);
    }
    uint64_t key = rc == 0 ? fi_mr_key(mr) : 0;
    if (rc || key >= MF_OFI_MAX_KEYS) {
        if (mr)
            fi_close(&mr->fid);
        o->o_rkey_fallbacks++;
        return rc ? mf_ofi_err(o, MPI_ERR_OTHER, rc, "fi_mr_reg of %zu bytes", len)
                  : mf_error(MPI_ERR_OTHER, "%s: provider key %llu does not fit 16 bits", f->name,
                             (unsigned long long)key);
    }
    o->o_keys[slot].k_mr = mr;
    o->o_keys[slot].k_rkey = ((key + 1) << MF_OFI_KEY_BITS) | base;
    o->o_key_hint = slot + 1;
    *rkey = o->o_keys[slot].k_rkey;
    return MPI_SUCCESS;
}

int mf_ofi_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    return mf_ofi_key_new(f, addr, len, FI_REMOTE_READ, rkey);
}

/* The slot of a registration handed out, or -1: our own keys are slot numbers; a provider's
 * are looked for. */
static int mf_ofi_key_slot(mf_ofi *o, uint64_t rkey)
{
    uint64_t key = (rkey >> MF_OFI_KEY_BITS) - 1;
    if (key < MF_OFI_MAX_KEYS && o->o_keys[key].k_rkey == rkey)
        return (int)key;
    for (int i = 0; i < MF_OFI_MAX_KEYS; i++)
        if (o->o_keys[i].k_rkey == rkey)
            return i;
    return -1;
}

int mf_ofi_rma_key(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    mf_ofi *o = mf_ofi_of(f);
    if (!o->o_rma)
        return mf_error(MPI_ERR_OTHER, "%s (libfabric provider %s): no FI_RMA", f->name, o->o_prov);
    int rc = mf_ofi_key_new(f, addr, len, FI_REMOTE_READ | FI_REMOTE_WRITE, rkey);
    if (rc == MPI_SUCCESS) {
        o->o_keys[mf_ofi_key_slot(o, *rkey)].k_exposed = true;
        o->o_nexposed++;
        mf_ofi_sleep_bound(o);
    }
    return rc;
}

void mf_ofi_rkey_release(mf_fabric *f, uint64_t rkey)
{
    mf_ofi *o = mf_ofi_of(f);
    if (!o->o_keys || !rkey)
        return;
    int slot = mf_ofi_key_slot(o, rkey);
    if (slot < 0)
        return;
    if (o->o_keys[slot].k_exposed) {
        o->o_nexposed--;
        mf_ofi_sleep_bound(o);
    }
    fi_close(&o->o_keys[slot].k_mr->fid);
    o->o_keys[slot] = (mf_ofi_key){0};
}

void mf_ofi_read_piece_done(mf_ofi *o, mf_ofi_piece *p, int status)
{
    (void)o;
    if (p->p_mr)
        fi_close(&p->p_mr->fid);
    mf_ofi_piece_end(p->p_get, status);
}

void mf_ofi_piece_end(mf_ofi_get *g, int status)
{
    if (status && !g->g_status)
        g->g_status = status;
    if (--g->g_left == 0) {
        mf_fabric_done *done = g->g_done;
        int st = g->g_status;
        free(g); /* the pieces live in the same allocation */
        done->fd_fn(done, st);
    }
}

/* rget (write false) and rput (write true): one fi_read or fi_write per local piece. */
static int mf_ofi_rma(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                      int niov, size_t len, mf_fabric_done *done, bool write)
{
    mf_ofi *o = mf_ofi_of(f);
    if (peer < 0 || peer >= o->o_npeers || o->o_addr[peer] == FI_ADDR_NOTAVAIL)
        return mf_error(MPI_ERR_INTERN, "%s: %s with unreachable rank %d", f->name,
                        write ? "rput" : "rget", peer);
    if (o->o_fails.code[peer])
        return o->o_fails.code[peer];
    int npieces = 0;
    for (size_t left = len; npieces < niov && left > 0; npieces++)
        left -= iov[npieces].iov_len < left ? iov[npieces].iov_len : left;
    if (npieces == 0)
        return MF_FABRIC_DONE;
    mf_ofi_get *g = calloc(1, sizeof *g + (size_t)npieces * sizeof(mf_ofi_piece));
    if (!g)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a read", f->name);
    mf_ofi_piece *pieces = (mf_ofi_piece *)(g + 1);
    g->g_done = done;
    g->g_left = npieces;
    uint64_t raddr = ((o->o_mr_mode & FI_MR_VIRT_ADDR) ? rkey & MF_OFI_ADDR_MASK : 0) + offset;
    uint64_t key = (rkey >> MF_OFI_KEY_BITS) - 1;
    size_t left = len;
    /* Prepare every piece before posting any: a failure then leaves nothing in flight. */
    for (int i = 0; i < npieces; i++) {
        mf_ofi_piece *p = &pieces[i];
        p->p_op.o_kind = MF_OFI_READ;
        p->p_op.o_peer = peer;
        p->p_write = write;
        p->p_get = g;
        p->p_buf = iov[i].iov_base;
        p->p_len = iov[i].iov_len < left ? iov[i].iov_len : left;
        p->p_raddr = raddr;
        p->p_key = key;
        raddr += p->p_len;
        left -= p->p_len;
        void *desc;
        int rc =
            mf_ofi_reg_local(o, p->p_buf, p->p_len, write ? FI_WRITE : FI_READ, &p->p_mr, &desc);
        if (rc) {
            for (int k = 0; k < i; k++)
                if (pieces[k].p_mr)
                    fi_close(&pieces[k].p_mr->fid);
            free(g);
            return rc;
        }
    }
    if (write)
        o->o_writes++;
    else
        o->o_reads++;
    for (int i = 0; i < npieces; i++)
        mf_ofi_submit(o, &pieces[i].p_op);
    return MF_FABRIC_PENDING;
}

int mf_ofi_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done)
{
    return mf_ofi_rma(f, peer, rkey, offset, iov, niov, len, done, false);
}

int mf_ofi_rput(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done)
{
    return mf_ofi_rma(f, peer, rkey, offset, iov, niov, len, done, true);
}
