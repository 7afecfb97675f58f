/*
 * coll_util.c — scratch buffers, local copies, packing and algorithm selection shared by the
 * collective algorithms (see coll_impl.h).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"

mf_datatype *mf_coll_byte(void)
{
    return mf_datatype_get(MPI_BYTE);
}

int mf_coll_nomem(void)
{
    return mf_error(MPI_ERR_NO_MEM, "collective: out of memory for request bookkeeping");
}

void *mf_coll_malloc(size_t bytes, int *rc)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        *rc =
            mf_error(MPI_ERR_NO_MEM, "collective: no memory for a %zu-byte scratch buffer", bytes);
    return p;
}

/* Bytes from true_lb of the first of count elements to the true end of the last. */
static size_t tmp_span(MPI_Count count, const struct mf_datatype_public *i)
{
    return count > 0 ? (size_t)(count - 1) * (size_t)i->dt_extent + (size_t)i->dt_true_extent : 0;
}

void *mf_coll_tmp(MPI_Count count, const mf_datatype *dt, void **raw, int *rc)
{
    const struct mf_datatype_public *i = mf_datatype_info(dt);
    *raw = mf_coll_malloc(tmp_span(count, i), rc);
    if (!*raw)
        return NULL;
    return (char *)*raw - i->dt_true_lb;
}

void *mf_coll_tmp_in(MPI_Count count, const mf_datatype *dt, mf_coll_stackbuf *stack, void **raw,
                     int *rc)
{
    const struct mf_datatype_public *i = mf_datatype_info(dt);
    if (tmp_span(count, i) > sizeof stack->sb_bytes)
        return mf_coll_tmp(count, dt, raw, rc);
    *raw = NULL;
    return stack->sb_bytes - i->dt_true_lb;
}

void mf_coll_pack(const void *buf, MPI_Count count, const mf_datatype *dt, void *out)
{
    const struct mf_datatype_public *i = mf_datatype_info(dt);
    size_t bytes = mf_coll_bytes(count, dt);
    if (!bytes)
        return;
    if (i->dt_contig)
        memcpy(out, (const char *)buf + i->dt_true_lb, bytes);
    else
        mf_datatype_pack(dt, buf, (size_t)count, 0, out, bytes);
}

void mf_coll_unpack(const void *in, void *buf, MPI_Count count, const mf_datatype *dt)
{
    const struct mf_datatype_public *i = mf_datatype_info(dt);
    size_t bytes = mf_coll_bytes(count, dt);
    if (!bytes)
        return;
    if (i->dt_contig)
        memcpy((char *)buf + i->dt_true_lb, in, bytes);
    else
        mf_datatype_unpack(dt, buf, (size_t)count, 0, in, bytes);
}

#define COPY_CHUNK (64 * 1024)

int mf_coll_copy(const void *src, MPI_Count scount, const mf_datatype *sdt, void *dst,
                 MPI_Count rcount, const mf_datatype *rdt)
{
    size_t sbytes = mf_coll_bytes(scount, sdt), rbytes = mf_coll_bytes(rcount, rdt);
    if (sbytes > rbytes)
        return mf_error(MPI_ERR_TRUNCATE,
                        "collective: %zu bytes sent but the receive buffer holds %zu", sbytes,
                        rbytes);
    if (!sbytes)
        return MPI_SUCCESS;
    const struct mf_datatype_public *si = mf_datatype_info(sdt), *ri = mf_datatype_info(rdt);
    if (si->dt_contig && ri->dt_contig) {
        memmove((char *)dst + ri->dt_true_lb, (const char *)src + si->dt_true_lb, sbytes);
        return MPI_SUCCESS;
    }
    if (si->dt_contig) {
        mf_datatype_unpack(rdt, dst, (size_t)rcount, 0, (const char *)src + si->dt_true_lb, sbytes);
        return MPI_SUCCESS;
    }
    if (ri->dt_contig) {
        mf_datatype_pack(sdt, src, (size_t)scount, 0, (char *)dst + ri->dt_true_lb, sbytes);
        return MPI_SUCCESS;
    }
    /* both scattered: stream through a bounded bounce buffer */
    int rc = MPI_SUCCESS;
    size_t chunk = sbytes < COPY_CHUNK ? sbytes : COPY_CHUNK;
    char *bounce = mf_coll_malloc(chunk, &rc);
    if (!bounce)
        return rc;
    for (size_t off = 0; off < sbytes; off += chunk) {
        size_t len = sbytes - off < chunk ? sbytes - off : chunk;
        mf_datatype_pack(sdt, src, (size_t)scount, off, bounce, len);
        mf_datatype_unpack(rdt, dst, (size_t)rcount, off, bounce, len);
    }
    free(bounce);
    return MPI_SUCCESS;
}

int mf_coll_waitall_free(int n, mf_request **reqs)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int r = mf_request_wait(reqs[i], MPI_STATUS_IGNORE);
        if (r && !rc)
            rc = r;
        mf_request_free(reqs[i]);
        reqs[i] = NULL;
    }
    return rc;
}

/* Cached choices of the override variables, keyed by the variable's name pointer (callers pass
 * string literals). A handful of variables exist; a full table just reads the environment. */
#define FORCED_CACHE 16
static struct {
    const char *var;
    int choice;
} forced_cache[FORCED_CACHE];
static int forced_cached;

static int forced_lookup(const char *var, const char *const *names, int n)
{
    const char *v = mf_config_str(var);
    if (!v[0] || strcmp(v, "auto") == 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i + 1;
    mf_warn("%s=%s is not a known algorithm; choosing automatically", var, v);
    return 0;
}

int mf_coll_forced(const char *var, const char *const *names, int n)
{
    for (int i = 0; i < forced_cached; i++)
        if (forced_cache[i].var == var)
            return forced_cache[i].choice;
    int choice = forced_lookup(var, names, n);
    if (forced_cached < FORCED_CACHE) {
        forced_cache[forced_cached].var = var;
        forced_cache[forced_cached].choice = choice;
        forced_cached++;
    }
    return choice;
}

size_t mf_coll_size_setting(size_t *cache, const char *var)
{
    if (!*cache)
        *cache = mf_config_size(var) + 1; /* +1: 0 means not read yet */
    return *cache - 1;
}

size_t mf_coll_short_msg(void)
{
    static size_t v;
    return mf_coll_size_setting(&v, "MANIFOLD_COLL_SHORT_MSG");
}

size_t mf_coll_long_msg(void)
{
    static size_t v;
    return mf_coll_size_setting(&v, "MANIFOLD_COLL_LONG_MSG");
}

size_t mf_coll_chain_min(void)
{
    static size_t v;
    return mf_coll_size_setting(&v, "MANIFOLD_COLL_CHAIN_MIN");
}

size_t mf_coll_chain_chunk(void)
{
    static size_t v;
    size_t c = mf_coll_size_setting(&v, "MANIFOLD_COLL_CHAIN_CHUNK");
    return c ? c : 1;
}
