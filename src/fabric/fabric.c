/*
 * The fabric registry: opens the fabrics this job uses, binds every peer to one of them, and
 * closes them at finalize. See fabric.h for the lifecycle.
 *
 * Policy: self for the own rank; shm for peers on the same host unless MANIFOLD_SHM=0; the
 * network fabric named by MANIFOLD_FABRIC for everything else.
 */
#include "fabric/fabric.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"

static mf_fabric *(*const mf_fabric_ctors[])(void) = {
#define MF_FABRIC(name) mf_##name##_fabric,
#include "fabric/fabrics.def"
#undef MF_FABRIC
};
#define MF_NUM_FABRICS ((int)(sizeof mf_fabric_ctors / sizeof mf_fabric_ctors[0]))

static mf_fabric *mf_fabric_open_list[MF_NUM_FABRICS];
static int mf_fabric_nopen;
/* The opened fabrics that carry traffic to at least one peer: only these are polled. Peers bind
 * symmetrically (same host layout and settings everywhere), so a fabric no peer of ours uses is
 * not used by any peer to reach us either. */
static mf_fabric *mf_fabric_used[MF_NUM_FABRICS];
static int mf_fabric_nused;
static mf_fabric **mf_fabric_bound; /* by world rank */

/* Registration check: a fabric with a missing mandatory op is a programming error. */
static int mf_fabric_validate(const mf_fabric *f)
{
    const mf_fabric_ops *o = f->ops;
    if (!o || o->size < sizeof *o || !f->name || !o->open || !o->start || !o->close ||
        !o->reachable || !o->send || !o->progress || !o->wait_fd || !o->sleep_prepare ||
        !o->sleep_end || !o->rkey_make || !o->rkey_release || !o->rget || !o->tx_idle)
        return mf_error(MPI_ERR_INTERN, "fabric %s: incomplete ops table",
                        f->name ? f->name : "(unnamed)");
    if (f->max_frame == 0 || f->max_frame > MF_WIRE_MAX_FRAME)
        return mf_error(MPI_ERR_INTERN, "fabric %s: invalid max_frame", f->name);
    return MPI_SUCCESS;
}

static bool mf_fabric_wanted(const mf_fabric *f, const char *network)
{
    if (strcmp(f->name, "self") == 0)
        return true;
    if (strcmp(f->name, "shm") == 0)
        return mf_config_bool("MANIFOLD_SHM");
    if (f->flags & MF_FABRIC_NETWORK)
        return strcmp(f->name, network) == 0;
    return false;
}

int mf_fabrics_open(void)
{
    const char *network = mf_config_str("MANIFOLD_FABRIC");
    bool known = false;
    char names[128] = "";
    for (int i = 0; i < MF_NUM_FABRICS; i++) {
        mf_fabric *f = mf_fabric_ctors[i]();
        int rc = mf_fabric_validate(f);
        if (rc)
            return rc;
        if (f->flags & MF_FABRIC_NETWORK) {
            known |= strcmp(f->name, network) == 0;
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", f->name);
        }
        if (!mf_fabric_wanted(f, network))
            continue;
        rc = f->ops->open(f);
        if (rc == MF_FABRIC_UNAVAILABLE) {
            mf_verbose("fabric %s is not available on this host", f->name);
            continue;
        }
        if (rc)
            return rc;
        f->opened = true;
        mf_fabric_open_list[mf_fabric_nopen++] = f;
    }
    if (!known && mf_g.size > 1)
        return mf_error(MPI_ERR_ARG,
                        "MPI_Init: MANIFOLD_FABRIC=%s names no network fabric "
                        "(available: %s)",
                        network, names[0] ? names : "none");
    return MPI_SUCCESS;
}

/* Appends formatted text to buf (of size cap, currently holding *len bytes), truncating. */
static void __attribute__((format(printf, 4, 5)))
mf_fabric_append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 ? *len : *len + (size_t)n;
    if (*len >= cap)
        *len = cap - 1;
}

/* One line per rank with MANIFOLD_VERBOSE=1: which fabric carries traffic to which peers, as
 * rank ranges ("peers 0 via self; 1-3 via shm; 4-7 via tcp"). */
static void mf_fabric_report(void)
{
    char line[1024] = "";
    size_t n = 0;
    for (int i = 0; i < mf_fabric_nopen; i++) {
        mf_fabric *f = mf_fabric_open_list[i];
        bool any = false;
        for (int r = 0; r < mf_g.size; r++) {
            if (mf_fabric_bound[r] != f)
                continue;
            int start = r;
            while (r + 1 < mf_g.size && mf_fabric_bound[r + 1] == f)
                r++;
            const char *sep = any ? "," : (n ? "; " : "");
            mf_fabric_append(line, sizeof line, &n, "%s", sep);
            if (start == r)
                mf_fabric_append(line, sizeof line, &n, "%d", start);
            else
                mf_fabric_append(line, sizeof line, &n, "%d-%d", start, r);
            any = true;
        }
        if (any)
            mf_fabric_append(line, sizeof line, &n, " via %s", f->name);
    }
    mf_info("peers %s (host %s, %d rank%s here)", line, mf_g.hostname, mf_g.local_size,
            mf_g.local_size == 1 ? "" : "s");
}

int mf_fabrics_start(void)
{
    for (int i = 0; i < mf_fabric_nopen; i++) {
        int rc = mf_fabric_open_list[i]->ops->start(mf_fabric_open_list[i]);
        if (rc)
            return rc;
    }
    mf_fabric_bound = calloc((size_t)mf_g.size, sizeof *mf_fabric_bound);
    if (!mf_fabric_bound)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for the peer table");
    for (int r = 0; r < mf_g.size; r++) {
        for (int i = 0; i < mf_fabric_nopen && !mf_fabric_bound[r]; i++) {
            mf_fabric *f = mf_fabric_open_list[i];
            if (f->ops->reachable(f, r))
                mf_fabric_bound[r] = f;
        }
        if (!mf_fabric_bound[r])
            return mf_error(MPI_ERR_OTHER,
                            "MPI_Init: no fabric reaches rank %d (host %d); "
                            "opened fabrics: %d, MANIFOLD_FABRIC=%s",
                            r, mf_g.node_of[r], mf_fabric_nopen, mf_config_str("MANIFOLD_FABRIC"));
    }
    for (int i = 0; i < mf_fabric_nopen; i++) {
        for (int r = 0; r < mf_g.size; r++) {
            if (mf_fabric_bound[r] == mf_fabric_open_list[i]) {
                mf_fabric_used[mf_fabric_nused++] = mf_fabric_open_list[i];
                break;
            }
        }
    }
    if (mf_verbose_level >= 1)
        mf_fabric_report();
    return MPI_SUCCESS;
}

int mf_fabrics_finalize(void)
{
    int first = MPI_SUCCESS;
    for (int i = mf_fabric_nopen - 1; i >= 0; i--) {
        int rc = mf_fabric_open_list[i]->ops->close(mf_fabric_open_list[i]);
        if (rc && !first)
            first = rc;
        mf_fabric_open_list[i]->opened = false;
    }
    mf_fabric_nopen = 0;
    mf_fabric_nused = 0;
    free(mf_fabric_bound);
    mf_fabric_bound = NULL;
    return first;
}

bool mf_fabrics_tx_idle(void)
{
    for (int i = 0; i < mf_fabric_nused; i++)
        if (!mf_fabric_used[i]->ops->tx_idle(mf_fabric_used[i]))
            return false;
    return true;
}

mf_fabric *mf_fabric_of(int peer)
{
    return mf_fabric_bound[peer];
}

int mf_fabrics_active(mf_fabric ***list)
{
    *list = mf_fabric_used;
    return mf_fabric_nused;
}

/* ---- Stubs for optional ops ---- */

int mf_fabric_no_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    return mf_error(MPI_ERR_INTERN, "fabric %s: rkey_make is not supported", f->name);
}

void mf_fabric_no_rkey_release(mf_fabric *f, uint64_t rkey)
{
}

int mf_fabric_no_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                      int niov, size_t len, mf_fabric_done *done)
{
    return mf_error(MPI_ERR_INTERN, "fabric %s: rget is not supported", f->name);
}

int mf_fabric_no_wait_fd(mf_fabric *f)
{
    return -1;
}

bool mf_fabric_always_sleep(mf_fabric *f)
{
    return true;
}

void mf_fabric_no_sleep_end(mf_fabric *f)
{
}
