/* Argument checks of the collective entry points: see coll_check.h. */
#include "api/coll_check.h"

#include <stdint.h>
#include <stdlib.h>

int mf_coll_check_root(const mf_comm *c, int root, const char *fn)
{
    if (c->c_is_inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->c_remote->g_size))
            return MPI_SUCCESS;
        return mf_error(MPI_ERR_ROOT,
                        "%s: root=%d is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group "
                        "(size %d)",
                        fn, root, c->c_remote->g_size);
    }
    if (root < 0 || root >= c->c_size)
        return mf_error(MPI_ERR_ROOT, "%s: root=%d is not a rank of comm (size %d)", fn, root,
                        c->c_size);
    return MPI_SUCCESS;
}

enum mf_coll_role mf_coll_role(const mf_comm *c, int root)
{
    if (c->c_is_inter)
        return root == MPI_ROOT        ? MF_ROLE_ROOT
               : root == MPI_PROC_NULL ? MF_ROLE_NONE
                                       : MF_ROLE_LEAF;
    return c->c_rank == root ? MF_ROLE_ROOT : MF_ROLE_LEAF;
}

int mf_coll_check_type(MPI_Datatype type, mf_datatype **dt, const char *fn, const char *typename_)
{
    if (type == MPI_DATATYPE_NULL)
        return mf_error(MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL", fn, typename_);
    mf_datatype *d = mf_datatype_get(type);
    if (!d)
        return mf_error(MPI_ERR_TYPE, "%s: %s=0x%x is not a valid datatype", fn, typename_,
                        (unsigned)type);
    if (!mf_datatype_info(d)->dt_committed)
        return mf_error(MPI_ERR_TYPE, "%s: %s=0x%x is not committed", fn, typename_,
                        (unsigned)type);
    *dt = d;
    return MPI_SUCCESS;
}

int mf_coll_check_data(const void *buf, MPI_Count count, MPI_Datatype type, mf_datatype **dt,
                       const char *fn, const char *bufname, const char *countname,
                       const char *typename_)
{
    if (count < 0)
        return mf_error(MPI_ERR_COUNT, "%s: %s=%lld is negative", fn, countname, (long long)count);
    int rc = mf_coll_check_type(type, dt, fn, typename_);
    if (rc)
        return rc;
    return mf_check_buffer(buf, count, *dt, fn, bufname, countname);
}

int mf_coll_check_counts(const MPI_Count *counts, int n, const char *fn, const char *name)
{
    if (!counts && n > 0)
        return mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, name);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return mf_error(MPI_ERR_COUNT, "%s: %s[%d]=%lld is negative", fn, name, i,
                            (long long)counts[i]);
    return MPI_SUCCESS;
}

int mf_coll_check_displs(const MPI_Aint *displs, int n, const char *fn, const char *name)
{
    if (!displs && n > 0)
        return mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, name);
    return MPI_SUCCESS;
}

int mf_coll_check_in_place_intra(const mf_comm *c, const char *fn, const char *bufname)
{
    if (c->c_is_inter)
        return mf_error(MPI_ERR_BUFFER,
                        "%s: %s is MPI_IN_PLACE, which intercommunicators do not allow", fn,
                        bufname);
    return MPI_SUCCESS;
}

int mf_coll_check_alias(const void *sbuf, const void *rbuf, bool has_data, const char *fn)
{
    if (has_data && sbuf && sbuf == rbuf && sbuf != MPI_IN_PLACE)
        return mf_error(MPI_ERR_BUFFER,
                        "%s: sendbuf and recvbuf are the same buffer (pass MPI_IN_PLACE as "
                        "sendbuf instead)",
                        fn);
    return MPI_SUCCESS;
}

/* First byte of block i of b; NULL when the block holds no data (nothing to overlap). */
static const char *block_first(const mf_coll_blocks *b, int i)
{
    const mf_datatype *dt = b->dts ? b->dts[i] : b->dt;
    MPI_Count count = b->counts ? b->counts[i] : b->count;
    if (!dt || count <= 0)
        return NULL;
    const struct mf_datatype_public *info = mf_datatype_info(dt);
    if (!info->dt_size)
        return NULL;
    MPI_Aint at = b->displs ? b->displs[i] : (MPI_Aint)i * (MPI_Aint)count;
    MPI_Aint offset = b->dts ? at : at * info->dt_extent;
    return (const char *)b->buf + offset + info->dt_true_lb;
}

static int alias_error(const char *fn, int sblock, int rblock)
{
    if (sblock < 0)
        return mf_error(
            MPI_ERR_BUFFER,
            "%s: the send and receive buffers overlap: this process's data begins where "
            "block %d of the other buffer does (pass MPI_IN_PLACE instead)",
            fn, rblock);
    return mf_error(MPI_ERR_BUFFER,
                    "%s: sendbuf and recvbuf overlap: send block %d begins where receive block %d "
                    "does (pass MPI_IN_PLACE instead)",
                    fn, sblock, rblock);
}

/* Uniform blocks (one count, one type, no displacements) are evenly spaced: the checks below
 * find the block by arithmetic instead of a loop over the communicator. Their distance apart,
 * in bytes. */
static bool block_uniform(const mf_coll_blocks *b, intptr_t *stride)
{
    if (b->counts || b->displs || b->dts || !b->dt)
        return false;
    *stride = (intptr_t)b->count * (intptr_t)mf_datatype_info(b->dt)->dt_extent;
    return true;
}

/* The i in [0, n) with a + i * step == b, or -1. Buffers far apart (the usual case) fail the
 * range test and cost no division. */
static int block_index(uintptr_t a, uintptr_t b, intptr_t step, int n)
{
    uintptr_t d = b - a, unit = (uintptr_t)step;
    if (step < 0) {
        d = a - b;
        unit = (uintptr_t)0 - unit;
    }
    if (unit == 0)
        return d == 0 && n > 0 ? 0 : -1;
    uintptr_t span;
    if (!__builtin_mul_overflow(unit, (uintptr_t)n, &span) && d >= span)
        return -1;
    if (d % unit != 0 || d / unit >= (uintptr_t)n)
        return -1;
    return (int)(d / unit);
}

int mf_coll_check_alias_one(const void *buf, MPI_Count count, const mf_datatype *dt,
                            const mf_coll_blocks *blocks, int own, const char *fn)
{
    if (buf == MPI_IN_PLACE || blocks->buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    mf_coll_blocks one = {.buf = buf, .dt = dt, .n = 1, .count = count};
    const char *first = block_first(&one, 0), *b0;
    intptr_t stride;
    if (first && block_uniform(blocks, &stride)) {
        /* two comparisons, no division: this is on every small Allgather's path */
        if (!(b0 = block_first(blocks, 0)))
            return MPI_SUCCESS;
        if (first == b0)
            return alias_error(fn, -1, 0);
        if (own > 0 && own < blocks->n &&
            (uintptr_t)first == (uintptr_t)b0 + (uintptr_t)own * (uintptr_t)stride)
            return alias_error(fn, -1, own);
        return MPI_SUCCESS;
    }
    for (int i = 0; first && i < blocks->n; i++)
        if (block_first(blocks, i) == first)
            return alias_error(fn, -1, i);
    return MPI_SUCCESS;
}

int mf_coll_check_alias_pairs(const mf_coll_blocks *s, const mf_coll_blocks *r, const char *fn)
{
    if (s->buf == MPI_IN_PLACE || r->buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    intptr_t ss, rs;
    if (block_uniform(s, &ss) && block_uniform(r, &rs)) {
        /* s0 + i * ss == r0 + i * rs: the i with (s0 - r0) == i * (rs - ss) */
        const char *s0 = block_first(s, 0), *r0 = block_first(r, 0);
        int n = s->n < r->n ? s->n : r->n;
        int i = s0 && r0 ? block_index((uintptr_t)r0, (uintptr_t)s0, rs - ss, n) : -1;
        return i >= 0 ? alias_error(fn, i, i) : MPI_SUCCESS;
    }
    for (int i = 0; i < s->n && i < r->n; i++) {
        const char *sf = block_first(s, i);
        if (sf && sf == block_first(r, i))
            return alias_error(fn, i, i);
    }
    return MPI_SUCCESS;
}

int mf_coll_check_op(MPI_Op handle, const mf_datatype *dt, mf_op **op, const char *fn)
{
    if (handle == MPI_OP_NULL)
        return mf_error(MPI_ERR_OP, "%s: op is MPI_OP_NULL", fn);
    mf_op *o = mf_op_get(handle);
    if (!o)
        return mf_error(MPI_ERR_OP, "%s: op=0x%x is not a valid operation", fn, (unsigned)handle);
    *op = o;
    return mf_op_check(o, dt, fn);
}

MPI_Count *mf_coll_widen_counts(const int *a, int n, bool *failed)
{
    if (!a)
        return NULL;
    MPI_Count *w = malloc(((size_t)n + 1) * sizeof *w);
    if (!w) {
        *failed = true;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

MPI_Aint *mf_coll_widen_displs(const int *a, int n, bool *failed)
{
    if (!a)
        return NULL;
    MPI_Aint *w = malloc(((size_t)n + 1) * sizeof *w);
    if (!w) {
        *failed = true;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

/* Both run before their entry point's MF_API_ENTER, so they take the lock for the look-up: the
 * progress thread retains and releases communicators (and their handles) under it. */
int mf_coll_vec_len(MPI_Comm handle)
{
    MF_API_ENTER();
    mf_comm *c = mf_g.initialized ? mf_comm_get(handle) : NULL;
    int n = c ? mf_comm_peer_size(c) : 0;
    MF_API_EXIT();
    return n;
}

int mf_coll_local_len(MPI_Comm handle)
{
    MF_API_ENTER();
    mf_comm *c = mf_g.initialized ? mf_comm_get(handle) : NULL;
    int n = c ? c->c_size : 0;
    MF_API_EXIT();
    return n;
}
