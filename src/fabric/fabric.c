/*
 * The fabric registry: creates the instances the settings ask for, opens them, builds every
 * peer's routes, and closes and frees them at finalize. See fabric.h for the lifecycle.
 *
 * Policy: self for the own rank; shm for peers on the same host unless MANIFOLD_SHM=0; for the
 * others, the instances MANIFOLD_FABRIC names (p2p, control) and MANIFOLD_RMA_FABRIC names
 * (one-sided; default: as p2p). The registry's tables are the process's one routing state, not
 * a fabric's: instances keep theirs in themselves.
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
#include "runtime/pm.h"
#include "core/fabric_spec.h"
#include "fabric/fabric_mpit.h"
#include "fabric/fault/fault.h"
#include "fabric/rail/rail.h"

static const mf_fabric_class *const mf_fabric_classes[] = {
#define MF_FABRIC(name) &mf_##name##_class,
#include "fabric/fabrics.def"
#undef MF_FABRIC
};
#define MF_NUM_CLASSES ((int)(sizeof mf_fabric_classes / sizeof mf_fabric_classes[0]))
/* self, shm, at most MF_FABRIC_SPEC_MAX entries in each of the two settings, their fault
 * wrappers, and a multirail wrapper. */
#define MF_MAX_INSTANCES (2 * (2 + 2 * MF_FABRIC_SPEC_MAX) + 1)

static struct {
    mf_fabric *inst[MF_MAX_INSTANCES]; /* opened, in priority order */
    int ninst;
    /* The opened instances that carry traffic to at least one peer: only these are polled.
     * Routes are symmetric (same host layout and settings everywhere), so an instance no route
     * of ours uses is not used by any peer to reach us either. */
    mf_fabric *used[MF_MAX_INSTANCES];
    int nused;
    mf_fabric *self, *shm;
    /* The network instances each setting names, in its order (NULL: unavailable here). */
    mf_fabric *net[MF_ROUTE_NFN][MF_FABRIC_SPEC_MAX];
    int nnet[MF_ROUTE_NFN];
    mf_route *routes; /* the distinct routes */
    int nroutes, routes_cap;
    int *route_idx;       /* [fn * size + peer]: index into routes */
    mf_fabric **pick;     /* by world rank: the p2p instance (mf_fabric_of) */
    mf_fabric **pick_rma; /* by world rank: the one-sided instance (mf_fabric_picks) */
    /* mf_fabric_picks_via's tables, built on first use, one per instance in use */
    mf_fabric **via[MF_MAX_INSTANCES];
} mf_reg;

/* Registration check: a class with a missing mandatory op is a programming error. */
static bool mf_fabric_class_ok(const mf_fabric_class *c)
{
    const mf_fabric_ops *o = c->ops;
    return c->version == MF_FABRIC_CLASS_VERSION && c->name && c->init &&
           c->instance_size >= sizeof(mf_fabric) && o && o->size >= sizeof *o && o->open &&
           o->start && o->close && o->reachable && o->send && o->progress && o->wait_fd &&
           o->sleep_prepare && o->sleep_end && o->rkey_make && o->rkey_release && o->rget &&
           o->tx_idle && o->break_peer;
}

mf_fabric *mf_fabric_instance_new(const mf_fabric_class *cls, int index, const char *ifaces)
{
    if (!mf_fabric_class_ok(cls)) {
        mf_warn("fabric class %s: incomplete ops table", cls->name ? cls->name : "(unnamed)");
        return NULL;
    }
    ifaces = ifaces ? ifaces : "";
    size_t ilen = strlen(ifaces) + 1;
    mf_fabric *f = calloc(1, cls->instance_size + ilen);
    if (!f)
        return NULL;
    f->ifaces = memcpy((char *)f + cls->instance_size, ifaces, ilen);
    f->cls = cls;
    f->ops = cls->ops;
    f->index = index;
    snprintf(f->iname, sizeof f->iname, "%s%d", cls->name, index);
    f->name = f->iname;
    cls->init(f);
    if (f->max_frame == 0 || f->max_frame > cls->max_message || f->max_frame > MF_WIRE_MAX_FRAME) {
        mf_warn("fabric %s: invalid max_frame", f->name);
        free(f);
        return NULL;
    }
    return f;
}

void mf_fabric_instance_free(mf_fabric *f)
{
    free(f);
}

static const mf_fabric_class *mf_fabric_class_named(const char *name)
{
    for (int i = 0; i < MF_NUM_CLASSES; i++)
        if (strcmp(mf_fabric_classes[i]->name, name) == 0)
            return mf_fabric_classes[i];
    return NULL;
}

/* Creates and opens an instance; *out is NULL when it is unavailable here. */
static int mf_fabric_instance_open(const mf_fabric_class *cls, const char *ifaces, mf_fabric **out)
{
    *out = NULL;
    int index = 0;
    for (int i = 0; i < mf_reg.ninst; i++)
        index += mf_reg.inst[i]->cls == cls;
    mf_fabric *f = mf_fabric_instance_new(cls, index, ifaces);
    if (!f)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: cannot create a %s fabric instance", cls->name);
    int rc = f->ops->open(f);
    if (rc == MF_FABRIC_UNAVAILABLE) {
        mf_verbose("fabric %s is not available on this host", f->name);
        free(f);
        return MPI_SUCCESS;
    }
    if (rc) {
        free(f);
        return rc;
    }
    f->opened = true;
    mf_reg.inst[mf_reg.ninst++] = f;
    mf_fabric_mpit_publish(f);
    *out = f;
    return MPI_SUCCESS;
}

/* The network classes' names, "tcp|sctp", for the settings' grammar. */
static void mf_fabric_network_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < MF_NUM_CLASSES; i++)
        if ((mf_fabric_classes[i]->caps & MF_FABRIC_CAP_NETWORK) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
                                  mf_fabric_classes[i]->name);
}

/* Adds the instance of `cls` over `ifaces` to setting fn's list, opening it unless an earlier
 * entry (of either setting) asked for the same. */
static int mf_fabric_setting_add(enum mf_route_fn fn, const char *var, const mf_fabric_class *cls,
                                 const char *ifaces)
{
    if (mf_reg.nnet[fn] == MF_FABRIC_SPEC_MAX)
        return mf_error(MPI_ERR_ARG, "MPI_Init: %s with MANIFOLD_IF makes more than %d instances",
                        var, MF_FABRIC_SPEC_MAX);
    mf_fabric *f = NULL;
    bool found = false;
    for (int k = 0; k < MF_ROUTE_NFN && !found; k++)
        for (int j = 0; j < mf_reg.nnet[k] && !found; j++) {
            mf_fabric *g = mf_reg.net[k][j];
            /* A setting's entry that was unavailable stays so: NULL, found. */
            if (g ? g->cls == cls && strcmp(g->ifaces, ifaces) == 0 : false) {
                f = g;
                found = true;
            }
        }
    if (!found) {
        int rc = mf_fabric_instance_open(cls, ifaces, &f);
        if (rc)
            return rc;
    }
    mf_reg.net[fn][mf_reg.nnet[fn]++] = f;
    return MPI_SUCCESS;
}

/* Opens (or finds, when an earlier entry asked for the same) the instances one setting names. */
static int mf_fabric_open_setting(enum mf_route_fn fn, const char *var, const char *spec)
{
    char classes[128], why[256];
    mf_fabric_network_names(classes, sizeof classes);
    mf_fabric_spec_entry e[MF_FABRIC_SPEC_MAX];
    int n = mf_fabric_spec_parse(spec, classes, e, MF_FABRIC_SPEC_MAX, why, sizeof why);
    if (n < 0)
        return mf_error(MPI_ERR_ARG, "MPI_Init: %s='%s': %s", var, spec, why);
    const char *dflt = mf_config_str("MANIFOLD_IF");
    for (int i = 0; i < n; i++) {
        const mf_fabric_class *cls = mf_fabric_class_named(e[i].cls);
        /* MANIFOLD_IF naming several interfaces or networks makes one rail of each for a class
         * whose instances can be rails (and that does not use several interfaces at once
         * itself): "tcp" with MANIFOLD_IF=10.1.0.0/16,10.2.0.0/16 is tcp:10.1.0.0/16,
         * tcp:10.2.0.0/16. Each rail pairs the hosts' interfaces by subnet (tcp_if.c). Entries
         * are split at commas only: "eth0+ens3" stays one entry (whichever of them a host has),
         * as '+' joins interfaces in one instance in MANIFOLD_FABRIC's grammar. */
        char parts[MF_FABRIC_SPEC_IFACES];
        int nparts = 0;
        if (!e[i].ifaces[0] && (cls->caps & MF_FABRIC_CAP_RAIL) &&
            !(cls->caps & MF_FABRIC_CAP_MULTIHOME) && mf_config_bool("MANIFOLD_RAILS")) {
            snprintf(parts, sizeof parts, "%s", dflt);
            for (char *q = parts; *q; q++)
                if (*q == ',')
                    *q = '\0', nparts++;
            nparts = *dflt ? nparts + 1 : 0;
        }
        if (nparts < 2) {
            int rc = mf_fabric_setting_add(fn, var, cls, e[i].ifaces[0] ? e[i].ifaces : dflt);
            if (rc)
                return rc;
            continue;
        }
        for (const char *q = parts; nparts-- > 0; q += strlen(q) + 1) {
            int rc = mf_fabric_setting_add(fn, var, cls, q);
            if (rc)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Replaces instance `inner` by `by` wherever the settings put it. */
static void mf_fabric_substitute(mf_fabric *inner, mf_fabric *by)
{
    if (mf_reg.self == inner)
        mf_reg.self = by;
    if (mf_reg.shm == inner)
        mf_reg.shm = by;
    for (int fn = 0; fn < MF_ROUTE_NFN; fn++)
        for (int i = 0; i < mf_reg.nnet[fn]; i++)
            if (mf_reg.net[fn][i] == inner)
                mf_reg.net[fn][i] = by;
}

/* MANIFOLD_FAULT (tests): wraps the instances it names in fault-injection instances. */
static int mf_fabric_open_faults(void)
{
    const char *spec = mf_config_str("MANIFOLD_FAULT");
    if (!*spec)
        return MPI_SUCCESS;
    mf_fault_entry e[MF_FAULT_MAX];
    char why[256];
    int n = mf_fault_parse(spec, e, MF_FAULT_MAX, why, sizeof why);
    if (n < 0)
        return mf_error(MPI_ERR_ARG, "MPI_Init: MANIFOLD_FAULT='%s': %s", spec, why);
    for (int k = 0; k < n; k++) {
        mf_fabric *inner = NULL;
        for (int i = 0; i < mf_reg.ninst && !inner; i++)
            if (strcmp(mf_reg.inst[i]->name, e[k].instance) == 0 &&
                mf_reg.inst[i]->cls != &mf_fault_class)
                inner = mf_reg.inst[i];
        if (!inner)
            return mf_error(MPI_ERR_ARG,
                            "MPI_Init: MANIFOLD_FAULT names %s, which this job does not open "
                            "(MANIFOLD_REPORT=fabrics lists the instances)",
                            e[k].instance);
        if ((e[k].set.break_after_bytes >= 0 || e[k].set.break_after_ms >= 0) &&
            inner->ops->break_peer == mf_fabric_no_break_peer)
            return mf_error(MPI_ERR_ARG, "MPI_Init: MANIFOLD_FAULT: %s cannot break connections",
                            inner->name);
        int index = 0;
        for (int i = 0; i < mf_reg.ninst; i++)
            index += mf_reg.inst[i]->cls == &mf_fault_class;
        mf_fabric *w = mf_fabric_instance_new(&mf_fault_class, index, "");
        if (!w)
            return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for a fault wrapper");
        mf_fault_wrap(w, inner, &e[k].set);
        w->opened = true;
        mf_reg.inst[mf_reg.ninst++] = w;
        mf_fabric_substitute(inner, w);
        mf_warn("fault injection: %s wraps %s (MANIFOLD_FAULT)", w->name, inner->name);
    }
    return MPI_SUCCESS;
}

static void __attribute__((format(printf, 4, 5)))
mf_fabric_append(char *buf, size_t cap, size_t *len, const char *fmt, ...);

/* MANIFOLD_RAILS: the network instances MANIFOLD_FABRIC names, when there are several and all
 * can be rails (MF_FABRIC_CAP_RAIL; fault wrappers over them too), become the rails of one
 * multirail wrapper (rail/), which takes their place in every setting's list: every peer's
 * traffic is striped over all of them and survives the loss of all but one. */
static int mf_fabric_open_rails(void)
{
    mf_fabric *rails[MF_ROUTE_MAX_RAILS];
    int n = 0;
    bool all = true;
    for (int i = 0; i < mf_reg.nnet[MF_ROUTE_P2P]; i++) {
        mf_fabric *f = mf_reg.net[MF_ROUTE_P2P][i];
        bool dup = false;
        for (int k = 0; k < n; k++)
            dup |= rails[k] == f;
        if (!f || dup)
            continue;
        all &= (f->cls->caps & MF_FABRIC_CAP_RAIL) != 0 && n < MF_ROUTE_MAX_RAILS;
        if (n < MF_ROUTE_MAX_RAILS)
            rails[n++] = f;
    }
    if (n < 2 || !all || !mf_config_bool("MANIFOLD_RAILS"))
        return MPI_SUCCESS;
    char names[96] = "";
    size_t len = 0;
    for (int k = 0; k < n; k++)
        mf_fabric_append(names, sizeof names, &len, "%s%s", k ? "/" : "",
                         rails[k]->cls == &mf_fault_class ? rails[k]->inner->name : rails[k]->name);
    int index = 0;
    for (int i = 0; i < mf_reg.ninst; i++)
        index += mf_reg.inst[i]->cls == &mf_rail_class;
    mf_fabric *w = mf_fabric_instance_new(&mf_rail_class, index, names);
    if (!w)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for a multirail wrapper");
    int rc = mf_rail_wrap(w, rails, n);
    if (rc) {
        mf_fabric_instance_free(w);
        return rc;
    }
    w->opened = true;
    mf_reg.inst[mf_reg.ninst++] = w;
    mf_fabric_mpit_publish(w);
    /* The rails leave every list; the wrapper takes the place of the first. */
    for (int fn = 0; fn < MF_ROUTE_NFN; fn++) {
        int m = 0;
        bool placed = false;
        for (int i = 0; i < mf_reg.nnet[fn]; i++) {
            mf_fabric *f = mf_reg.net[fn][i];
            bool rail = false;
            for (int k = 0; k < n; k++)
                rail |= rails[k] == f;
            if (rail && placed)
                continue;
            mf_reg.net[fn][m++] = rail ? w : f;
            placed |= rail;
        }
        mf_reg.nnet[fn] = m;
    }
    return MPI_SUCCESS;
}

int mf_fabrics_open(void)
{
    int rc = mf_fabric_instance_open(&mf_self_class, "", &mf_reg.self);
    if (rc == MPI_SUCCESS && mf_config_bool("MANIFOLD_SHM"))
        rc = mf_fabric_instance_open(&mf_shm_class, "", &mf_reg.shm);
    /* A job of one process needs no network. */
    if (rc == MPI_SUCCESS && mf_g.size > 1)
        rc = mf_fabric_open_setting(MF_ROUTE_P2P, "MANIFOLD_FABRIC",
                                    mf_config_str("MANIFOLD_FABRIC"));
    const char *rma = mf_config_str("MANIFOLD_RMA_FABRIC");
    if (rc == MPI_SUCCESS && mf_g.size > 1 && *rma)
        rc = mf_fabric_open_setting(MF_ROUTE_RMA, "MANIFOLD_RMA_FABRIC", rma);
    if (rc == MPI_SUCCESS && !*rma) {
        memcpy(mf_reg.net[MF_ROUTE_RMA], mf_reg.net[MF_ROUTE_P2P], sizeof mf_reg.net[0]);
        mf_reg.nnet[MF_ROUTE_RMA] = mf_reg.nnet[MF_ROUTE_P2P];
    }
    if (rc == MPI_SUCCESS) {
        mf_reg.net[MF_ROUTE_CTRL][0] = mf_reg.net[MF_ROUTE_P2P][0];
        mf_reg.nnet[MF_ROUTE_CTRL] = mf_reg.nnet[MF_ROUTE_P2P] > 0;
        rc = mf_fabric_open_faults();
    }
    if (rc == MPI_SUCCESS)
        rc = mf_fabric_open_rails();
    return rc;
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

/* The instance carrying fn to peer r, as reported: the pick of p2p and one-sided traffic, else
 * the route's first rail. */
static mf_fabric *mf_fabric_report_pick(int r, enum mf_route_fn fn)
{
    return fn == MF_ROUTE_CTRL ? mf_route_of(r, fn)->rails[0] : mf_fabric_picks(fn)[r];
}

/* One line per rank with MANIFOLD_VERBOSE=1: which instance carries
 * `fn` to which peers, as rank ranges ("peers 0 via self0; 1-3 via shm0; 4-7 via tcp0"). */
static void mf_fabric_report(enum mf_route_fn fn)
{
    char line[1024] = "";
    size_t n = 0;
    for (int i = 0; i < mf_reg.ninst; i++) {
        mf_fabric *f = mf_reg.inst[i];
        bool any = false;
        for (int r = 0; r < mf_g.size; r++) {
            if (mf_fabric_report_pick(r, fn) != f)
                continue;
            int start = r;
            while (r + 1 < mf_g.size && mf_fabric_report_pick(r + 1, fn) == f)
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
    mf_info("%speers %s (host %s, %d rank%s here)", fn == MF_ROUTE_P2P ? "" : "one-sided: ", line,
            mf_g.hostname, mf_g.local_size, mf_g.local_size == 1 ? "" : "s");
}

/* MANIFOLD_VERBOSE=1, at finalize: what each instance in use carried, per rank. */
static void mf_fabric_report_counters(void)
{
    for (int i = 0; i < mf_reg.nused; i++) {
        const mf_fabric *f = mf_reg.used[i];
        const mf_fabric_counters *c = &f->counters;
        mf_info("fabric %s (%s%s%s): sent %llu frames, %llu bytes (eager %llu, rendezvous %llu); "
                "received %llu frames, %llu bytes (eager %llu, rendezvous %llu); "
                "%llu connections",
                f->name, f->cls->name, *f->ifaces ? " over " : "", f->ifaces,
                (unsigned long long)mf_fabric_frames(c->tx_frames), (unsigned long long)c->tx_bytes,
                (unsigned long long)c->tx_frames[MF_MSG_EAGER],
                (unsigned long long)c->tx_frames[MF_MSG_RTS],
                (unsigned long long)mf_fabric_frames(c->rx_frames), (unsigned long long)c->rx_bytes,
                (unsigned long long)c->rx_frames[MF_MSG_EAGER],
                (unsigned long long)c->rx_frames[MF_MSG_RTS], (unsigned long long)c->connections);
    }
}

static bool mf_fabric_reporting(void)
{
    return strcmp(mf_config_str("MANIFOLD_REPORT"), "fabrics") == 0;
}

/* ---- The job's report (MANIFOLD_REPORT=fabrics, mpiexec --report-fabrics) ----
 *
 * At finalize every rank publishes what it used and carried through the process manager, one
 * value per rank ("mf.report.<rank>"):
 *   <hostname>|<fn>.<node>=<inst>+<inst>;...|<inst>=<txf>/<txb>/<rxf>/<rxb>;...
 * and after a fence rank 0 prints, once for the job, one line per host pair and function (the
 * instances used from ranks of the first host to ranks of the second) and one per host and
 * instance with what the host's ranks sent and received through it. */

#define MF_REPORT_MAX_NODES 256
#define MF_REPORT_MAX_LINES 512

typedef struct mf_report_route {
    int from, to, fn;
    char insts[96]; /* "tcp0+tcp1", a union over the ranks of `from` */
} mf_report_route;

typedef struct mf_report_count {
    int node;
    char inst[16];
    unsigned long long txf, txb, rxf, rxb;
} mf_report_count;

/* Adds name to the '+'-separated set (when not in it). */
static void mf_report_union(char *set, size_t cap, const char *name, size_t len)
{
    for (const char *p = set; *p;) {
        size_t n = strcspn(p, "+");
        if (n == len && strncmp(p, name, len) == 0)
            return;
        p += n + (p[n] == '+');
    }
    size_t used = strlen(set);
    snprintf(set + used, cap - used, "%s%.*s", used ? "+" : "", (int)len, name);
}

static void mf_fabric_report_publish(void)
{
    char val[MF_PM_VAL_MAX], key[MF_PM_KEY_MAX];
    size_t n = 0;
    mf_fabric_append(val, sizeof val, &n, "%s|", mf_g.hostname);
    for (int fn = 0; fn < MF_ROUTE_NFN; fn++)
        for (int node = 0; node < mf_g.num_nodes && node < MF_REPORT_MAX_NODES; node++) {
            char insts[96] = "";
            for (int r = 0; r < mf_g.size; r++)
                if (mf_g.node_of[r] == node) {
                    mf_fabric *one = mf_fabric_report_pick(r, (enum mf_route_fn)fn);
                    char name[96];
                    if (one->cls == &mf_rail_class) /* with its rails: "rail0(tcp0/tcp1)" */
                        mf_rail_describe(one, name, sizeof name);
                    else
                        snprintf(name, sizeof name, "%s", one->name);
                    mf_report_union(insts, sizeof insts, name, strlen(name));
                }
            if (*insts)
                mf_fabric_append(val, sizeof val, &n, "%d.%d=%s;", fn, node, insts);
        }
    mf_fabric_append(val, sizeof val, &n, "|");
    /* The instances in use, and the rails under a multirail wrapper (upcalls installed). */
    for (int i = 0; i < mf_reg.ninst; i++) {
        const mf_fabric *f = mf_reg.inst[i];
        bool used = f->upcalls && f->cls != &mf_fault_class;
        for (int k = 0; k < mf_reg.nused && !used; k++)
            used = mf_reg.used[k] == f;
        if (!used)
            continue;
        const mf_fabric_counters *c = &f->counters;
        mf_fabric_append(
            val, sizeof val, &n, "%s=%llu/%llu/%llu/%llu;", f->name,
            (unsigned long long)mf_fabric_frames(c->tx_frames), (unsigned long long)c->tx_bytes,
            (unsigned long long)mf_fabric_frames(c->rx_frames), (unsigned long long)c->rx_bytes);
    }
    snprintf(key, sizeof key, "mf.report.%d", mf_g.rank);
    if (mf_pm_put(key, val) != MPI_SUCCESS)
        mf_warn("fabric report: cannot publish this rank's part");
}

/* Rank 0: merges one rank's value into the tables. */
static void mf_fabric_report_merge(int rank, const char *val, char (*hosts)[64],
                                   mf_report_route *routes, int *nroutes, mf_report_count *counts,
                                   int *ncounts)
{
    int from = mf_g.node_of[rank];
    size_t hl = strcspn(val, "|");
    if (from < MF_REPORT_MAX_NODES)
        snprintf(hosts[from], sizeof hosts[from], "%.*s", (int)hl, val);
    const char *p = val + hl + (val[hl] == '|');
    while (*p && *p != '|') { /* fn.node=insts; */
        int fn, node, used = 0;
        size_t len = strcspn(p, ";|");
        if (sscanf(p, "%d.%d=%n", &fn, &node, &used) == 2 && used > 0 && (size_t)used <= len) {
            int k = 0;
            while (k < *nroutes &&
                   !(routes[k].from == from && routes[k].to == node && routes[k].fn == fn))
                k++;
            if (k == *nroutes && *nroutes < MF_REPORT_MAX_LINES)
                routes[(*nroutes)++] = (mf_report_route){from, node, fn, ""};
            if (k < *nroutes)
                for (const char *q = p + used; q < p + len;) {
                    size_t nl = strcspn(q, "+;|");
                    mf_report_union(routes[k].insts, sizeof routes[k].insts, q, nl);
                    q += nl + (q[nl] == '+');
                }
        }
        p += len + (p[len] == ';');
    }
    p += *p == '|';
    while (*p) { /* inst=txf/txb/rxf/rxb; */
        size_t len = strcspn(p, ";"), nl = strcspn(p, "=;");
        unsigned long long v[4];
        if (nl < len && nl < 16 &&
            sscanf(p + nl + 1, "%llu/%llu/%llu/%llu", &v[0], &v[1], &v[2], &v[3]) == 4) {
            int k = 0;
            while (k < *ncounts && !(counts[k].node == from && strlen(counts[k].inst) == nl &&
                                     strncmp(counts[k].inst, p, nl) == 0))
                k++;
            if (k == *ncounts && *ncounts < MF_REPORT_MAX_LINES) {
                counts[k] = (mf_report_count){.node = from};
                snprintf(counts[k].inst, sizeof counts[k].inst, "%.*s", (int)nl, p);
                (*ncounts)++;
            }
            if (k < *ncounts) {
                counts[k].txf += v[0];
                counts[k].txb += v[1];
                counts[k].rxf += v[2];
                counts[k].rxb += v[3];
            }
        }
        p += len + (p[len] == ';');
    }
}

/* Collective (every rank calls it at finalize, the settings being the same everywhere). */
static void mf_fabric_job_report(void)
{
    mf_fabric_report_publish();
    if (mf_pm_fence() != MPI_SUCCESS) {
        mf_warn("fabric report: the process manager's fence failed; no report");
        return;
    }
    if (mf_g.rank != 0)
        return;
    static char hosts[MF_REPORT_MAX_NODES][64];
    static mf_report_route routes[MF_REPORT_MAX_LINES];
    static mf_report_count counts[MF_REPORT_MAX_LINES];
    int nroutes = 0, ncounts = 0;
    memset(hosts, 0, sizeof hosts);
    for (int r = 0; r < mf_g.size; r++) {
        char key[MF_PM_KEY_MAX], val[MF_PM_VAL_MAX];
        snprintf(key, sizeof key, "mf.report.%d", r);
        if (mf_pm_get(key, val, sizeof val) == MPI_SUCCESS)
            mf_fabric_report_merge(r, val, hosts, routes, &nroutes, counts, &ncounts);
    }
    for (int k = 0; k < nroutes; k++)
        mf_info("fabrics: %s %s -> %s: %s", mf_route_fn_name(routes[k].fn),
                routes[k].from < MF_REPORT_MAX_NODES ? hosts[routes[k].from] : "?",
                routes[k].to < MF_REPORT_MAX_NODES ? hosts[routes[k].to] : "?", routes[k].insts);
    for (int k = 0; k < ncounts; k++)
        mf_info("fabrics: %s %s: sent %llu frames, %llu bytes; received %llu frames, %llu bytes",
                counts[k].node < MF_REPORT_MAX_NODES ? hosts[counts[k].node] : "?", counts[k].inst,
                counts[k].txf, counts[k].txb, counts[k].rxf, counts[k].rxb);
    /* What rank 0's instances run on, where the class can say (ofi: provider, data path). */
    for (int i = 0; i < mf_reg.nused; i++) {
        mf_fabric *f = mf_reg.used[i];
        char what[1024];
        if (!f->ops->describe)
            continue;
        f->ops->describe(f, what, sizeof what);
        mf_info("fabrics: %s %s: %s", mf_g.hostname, f->name, what);
    }
}

/* The index of the route equal to r, added if new; -1 without memory. */
static int mf_route_intern(const mf_route *r)
{
    for (int i = 0; i < mf_reg.nroutes; i++)
        if (mf_reg.routes[i].nrails == r->nrails &&
            memcmp(mf_reg.routes[i].rails, r->rails, (size_t)r->nrails * sizeof r->rails[0]) == 0)
            return i;
    if (mf_reg.nroutes == mf_reg.routes_cap) {
        int cap = mf_reg.routes_cap ? 2 * mf_reg.routes_cap : 8;
        mf_route *n = realloc(mf_reg.routes, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        mf_reg.routes = n;
        mf_reg.routes_cap = cap;
    }
    mf_reg.routes[mf_reg.nroutes] = *r;
    return mf_reg.nroutes++;
}

/* The route of fn to peer r, from the policy above. */
static int mf_route_build(int r, enum mf_route_fn fn, mf_route *out)
{
    out->nrails = 0;
    mf_fabric *only = NULL;
    if (r == mf_g.rank && mf_reg.self)
        only = mf_reg.self;
    else if (mf_reg.shm && mf_reg.shm->ops->reachable(mf_reg.shm, r))
        only = mf_reg.shm;
    if (only) {
        out->rails[out->nrails++] = only;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < mf_reg.nnet[fn]; i++) {
        mf_fabric *f = mf_reg.net[fn][i];
        bool dup = false;
        for (int k = 0; k < out->nrails; k++)
            dup |= out->rails[k] == f;
        if (f && !dup && out->nrails < MF_ROUTE_MAX_RAILS && f->ops->reachable(f, r))
            out->rails[out->nrails++] = f;
    }
    if (out->nrails == 0)
        return mf_error(MPI_ERR_OTHER,
                        "MPI_Init: no fabric reaches rank %d (host %d) for %s traffic; "
                        "opened fabrics: %d, MANIFOLD_FABRIC=%s, MANIFOLD_RMA_FABRIC=%s",
                        r, mf_g.node_of[r], mf_route_fn_name(fn), mf_reg.ninst,
                        mf_config_str("MANIFOLD_FABRIC"), mf_config_str("MANIFOLD_RMA_FABRIC"));
    return MPI_SUCCESS;
}

int mf_fabrics_start(void)
{
    for (int i = 0; i < mf_reg.ninst; i++) {
        int rc = mf_reg.inst[i]->ops->start(mf_reg.inst[i]);
        if (rc)
            return rc;
    }
    int size = mf_g.size;
    mf_reg.route_idx = malloc((size_t)MF_ROUTE_NFN * (size_t)size * sizeof *mf_reg.route_idx);
    mf_reg.pick = calloc((size_t)size, sizeof *mf_reg.pick);
    mf_reg.pick_rma = calloc((size_t)size, sizeof *mf_reg.pick_rma);
    if (!mf_reg.route_idx || !mf_reg.pick || !mf_reg.pick_rma)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for the routing table");
    for (int r = 0; r < size; r++) {
        for (int fn = 0; fn < MF_ROUTE_NFN; fn++) {
            mf_route route;
            int rc = mf_route_build(r, fn, &route);
            if (rc)
                return rc;
            int idx = mf_route_intern(&route);
            if (idx < 0)
                return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for the routing table");
            mf_reg.route_idx[fn * size + r] = idx;
        }
        const mf_route *p2p = mf_route_of(r, MF_ROUTE_P2P), *rma = mf_route_of(r, MF_ROUTE_RMA);
        mf_reg.pick[r] = p2p->rails[(mf_g.rank + r) % p2p->nrails];
        mf_reg.pick_rma[r] = rma->rails[(mf_g.rank + r) % rma->nrails];
    }
    for (int i = 0; i < mf_reg.ninst; i++) {
        bool in_use = false;
        for (int k = 0; k < mf_reg.nroutes && !in_use; k++)
            for (int j = 0; j < mf_reg.routes[k].nrails; j++)
                in_use |= mf_reg.routes[k].rails[j] == mf_reg.inst[i];
        if (in_use)
            mf_reg.used[mf_reg.nused++] = mf_reg.inst[i];
    }
    if (mf_verbose_level >= 1) {
        mf_fabric_report(MF_ROUTE_P2P);
        bool rma_differs = false;
        for (int r = 0; r < size; r++)
            rma_differs |= mf_reg.pick_rma[r] != mf_reg.pick[r];
        if (rma_differs)
            mf_fabric_report(MF_ROUTE_RMA);
    }
    return MPI_SUCCESS;
}

int mf_fabrics_finalize(void)
{
    int first = MPI_SUCCESS;
    if (mf_reg.pick && mf_fabric_reporting())
        mf_fabric_job_report();
    for (int i = mf_reg.ninst - 1; i >= 0; i--) {
        mf_fabric *f = mf_reg.inst[i];
        int rc = f->ops->close(f);
        if (rc && !first)
            first = rc;
        f->opened = false;
    }
    if (mf_reg.pick && mf_verbose_level >= 1)
        mf_fabric_report_counters();
    mf_fabric_mpit_detach_all(); /* tools may read them after MPI_Finalize */
    for (int i = 0; i < mf_reg.ninst; i++)
        mf_fabric_instance_free(mf_reg.inst[i]);
    free(mf_reg.routes);
    free(mf_reg.route_idx);
    free(mf_reg.pick);
    free(mf_reg.pick_rma);
    for (int i = 0; i < MF_MAX_INSTANCES; i++)
        free(mf_reg.via[i]);
    memset(&mf_reg, 0, sizeof mf_reg);
    return first;
}

bool mf_fabrics_tx_idle(void)
{
    for (int i = 0; i < mf_reg.nused; i++)
        if (!mf_reg.used[i]->ops->tx_idle(mf_reg.used[i]))
            return false;
    return true;
}

mf_fabric *mf_fabric_of(int peer)
{
    return mf_reg.pick[peer];
}

mf_fabric *const *mf_fabric_picks(enum mf_route_fn fn)
{
    return fn == MF_ROUTE_RMA ? mf_reg.pick_rma : mf_reg.pick;
}

mf_fabric *const *mf_fabric_picks_via(const char *iname)
{
    for (int i = 0; i < mf_reg.nused; i++) {
        mf_fabric *f = mf_reg.used[i];
        if (strcmp(f->name, iname) != 0)
            continue;
        if (mf_reg.via[i])
            return mf_reg.via[i];
        mf_fabric **t = malloc((size_t)mf_g.size * sizeof *t);
        if (!t)
            return NULL;
        for (int r = 0; r < mf_g.size; r++) {
            t[r] = mf_reg.pick_rma[r];
            for (int fn = MF_ROUTE_P2P; fn <= MF_ROUTE_RMA; fn++) {
                const mf_route *rt = mf_route_of(r, (enum mf_route_fn)fn);
                for (int k = 0; k < rt->nrails; k++)
                    if (rt->rails[k] == f)
                        t[r] = f;
            }
        }
        return mf_reg.via[i] = t;
    }
    return NULL;
}

const mf_route *mf_route_of(int peer, enum mf_route_fn fn)
{
    return &mf_reg.routes[mf_reg.route_idx[(int)fn * mf_g.size + peer]];
}

const char *mf_route_fn_name(enum mf_route_fn fn)
{
    static const char *const names[MF_ROUTE_NFN] = {"p2p", "rma", "ctrl"};
    return (unsigned)fn < MF_ROUTE_NFN ? names[fn] : "?";
}

int mf_fabrics_active(mf_fabric ***list)
{
    *list = mf_reg.used;
    return mf_reg.nused;
}

int mf_fabrics_all(mf_fabric ***list)
{
    *list = mf_reg.inst;
    return mf_reg.ninst;
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

int mf_fabric_no_break_peer(mf_fabric *f, int peer)
{
    return mf_error(MPI_ERR_UNSUPPORTED_OPERATION, "fabric %s: cannot break a connection", f->name);
}

bool mf_fabric_always_sleep(mf_fabric *f)
{
    return true;
}

void mf_fabric_no_sleep_end(mf_fabric *f)
{
}

/* ---- Address exchange ---- */

/* The one place that names an instance's address key (see mf_fabric_addr_publish). */
static void mf_fabric_addr_key(const mf_fabric *f, int rank, char *key, size_t len)
{
    snprintf(key, len, "mf.%s.%d", f->name, rank);
}

int mf_fabric_addr_publish(const mf_fabric *f, const char *value)
{
    char key[MF_PM_KEY_MAX];
    mf_fabric_addr_key(f, mf_g.rank, key, sizeof key);
    int rc = mf_pm_put(key, value);
    if (rc == MPI_SUCCESS)
        mf_debug("%s: published %s=%s", f->name, key, value);
    return rc;
}

int mf_fabric_addr_lookup(const mf_fabric *f, int rank, char *buf, size_t len)
{
    char key[MF_PM_KEY_MAX];
    mf_fabric_addr_key(f, rank, key, sizeof key);
    if (mf_pm_get(key, buf, len) != MPI_SUCCESS)
        return mf_error(MPI_ERR_OTHER,
                        "%s: rank %d published no address (%s missing from the process manager)",
                        f->name, rank, key);
    return MPI_SUCCESS;
}

/* ---- Deferred peer failures ---- */

int mf_fabric_failures_init(mf_fabric_failures *s, int npeers, const char *who)
{
    s->code = calloc((size_t)npeers, sizeof *s->code);
    s->reported = calloc((size_t)npeers, sizeof *s->reported);
    s->npeers = npeers;
    s->npending = 0;
    if (s->code && s->reported)
        return MPI_SUCCESS;
    mf_fabric_failures_free(s);
    return mf_error(MPI_ERR_NO_MEM, "%s: no memory for %d peers", who, npeers);
}

void mf_fabric_failures_free(mf_fabric_failures *s)
{
    free(s->code);
    free(s->reported);
    *s = (mf_fabric_failures){0};
}

bool mf_fabric_failures_mark(mf_fabric_failures *s, int peer, int code)
{
    if (peer < 0 || peer >= s->npeers || s->code[peer])
        return false;
    s->code[peer] = code;
    s->reported[peer] = false;
    s->npending++;
    return true;
}

bool mf_fabric_failures_take(mf_fabric_failures *s, int peer)
{
    if (!s->code[peer] || s->reported[peer])
        return false;
    s->reported[peer] = true;
    s->npending--;
    return true;
}

int mf_fabric_failures_report(mf_fabric_failures *s, mf_fabric *f, mf_fabric_fail_report_fn *report)
{
    int n = 0;
    for (int r = 0; r < s->npeers && s->npending > 0; r++)
        if (mf_fabric_failures_take(s, r)) {
            report(f, r, s->code[r]);
            n++;
        }
    return n;
}

void mf_fabric_failures_forget(mf_fabric_failures *s, int peer)
{
    if (s->code[peer] && !s->reported[peer])
        s->npending--;
    s->code[peer] = 0;
    s->reported[peer] = false;
}
