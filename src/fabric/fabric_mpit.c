/* Fabric instances' counters as MPI_T performance variables: see fabric_mpit.h. */
#include "fabric/fabric_mpit.h"

#include <stdio.h>
#include <stdlib.h>

#include "tool/mpit.h"

/* Indices of the variables published since the last detach. */
static int *mf_fabric_mpit_idx;
static int mf_fabric_mpit_n, mf_fabric_mpit_cap;

/* A counter of mf_fabric_counters (or a class's own): written under the library lock, read
 * here from any thread (core/counter.h). */
static void mf_fabric_mpit_read(void *arg, void *out)
{
    *(uint64_t *)out = mf_counter_read(arg);
}

/* All frames of one direction: arg is tx_frames or rx_frames. */
static void mf_fabric_mpit_read_frames(void *arg, void *out)
{
    uint64_t n = 0;
    for (int i = 0; i < MF_FABRIC_COUNT_TYPES; i++)
        n += mf_counter_read((uint64_t *)arg + i);
    *(uint64_t *)out = n;
}

static void mf_fabric_mpit_one(mf_fabric *f, const char *what, const char *desc,
                               mf_t_pvar_read_fn read, uint64_t *src)
{
    char name[64], text[256];
    snprintf(name, sizeof name, "%s_%s", f->iname, what);
    snprintf(text, sizeof text, "%s, on fabric instance %s (class %s%s%s)", desc, f->iname,
             f->cls->name, f->ifaces && *f->ifaces ? ", interfaces " : "",
             f->ifaces ? f->ifaces : "");
    int i = mf_t_pvar_register(&(mf_t_pvar_desc){.name = name,
                                                 .desc = text,
                                                 .category = f->iname,
                                                 .var_class = MPI_T_PVAR_CLASS_COUNTER,
                                                 .datatype = MPI_UNSIGNED_LONG_LONG,
                                                 .verbosity = MPI_T_VERBOSITY_USER_DETAIL,
                                                 .read = read,
                                                 .arg = src});
    if (i < 0)
        return;
    if (mf_fabric_mpit_n == mf_fabric_mpit_cap) {
        int cap = mf_fabric_mpit_cap ? 2 * mf_fabric_mpit_cap : 32;
        int *p = realloc(mf_fabric_mpit_idx, (size_t)cap * sizeof *p);
        if (!p) {
            mf_t_pvar_detach(i); /* never read the instance after it is freed */
            return;
        }
        mf_fabric_mpit_idx = p;
        mf_fabric_mpit_cap = cap;
    }
    mf_fabric_mpit_idx[mf_fabric_mpit_n++] = i;
}

void mf_fabric_mpit_publish(mf_fabric *f)
{
    char desc[128];
    snprintf(desc, sizeof desc, "fabric instance %s", f->iname);
    /* Under the class's category (self, shm, tcp); a class without one goes under "fabric". */
    if (mf_t_category(f->iname, desc, f->cls->name) < 0 &&
        mf_t_category(f->iname, desc, "fabric") < 0)
        return;
    mf_fabric_counters *c = &f->counters;
    mf_t_pvar_read_fn one = mf_fabric_mpit_read, all = mf_fabric_mpit_read_frames;
    mf_fabric_mpit_one(f, "bytes_sent", "payload bytes sent", one, &c->tx_bytes);
    mf_fabric_mpit_one(f, "bytes_received", "payload bytes received", one, &c->rx_bytes);
    mf_fabric_mpit_one(f, "frames_sent", "frames sent (data and control)", all, c->tx_frames);
    mf_fabric_mpit_one(f, "frames_received", "frames received (data and control)", all,
                       c->rx_frames);
    mf_fabric_mpit_one(f, "eager_sent", "messages sent eagerly", one, &c->tx_frames[MF_MSG_EAGER]);
    mf_fabric_mpit_one(f, "eager_received", "messages received eagerly", one,
                       &c->rx_frames[MF_MSG_EAGER]);
    mf_fabric_mpit_one(f, "rendezvous_sent", "rendezvous transfers started as sender", one,
                       &c->tx_frames[MF_MSG_RTS]);
    mf_fabric_mpit_one(f, "rendezvous_received", "rendezvous transfers announced by peers", one,
                       &c->rx_frames[MF_MSG_RTS]);
    mf_fabric_mpit_one(f, "rendezvous_pulled",
                       "rendezvous messages received by reading the sender's memory (rget)", one,
                       &c->tx_frames[MF_MSG_FIN]);
    if (f->cls->caps & MF_FABRIC_CAP_NETWORK)
        mf_fabric_mpit_one(f, "connections", "connections set up", one, &c->connections);
    if (f->ops->mpit_publish)
        f->ops->mpit_publish(f);
}

void mf_fabric_mpit_counter(mf_fabric *f, const char *what, const char *desc, uint64_t *src)
{
    mf_fabric_mpit_one(f, what, desc, mf_fabric_mpit_read, src);
}

void mf_fabric_mpit_detach_all(void)
{
    for (int i = 0; i < mf_fabric_mpit_n; i++)
        mf_t_pvar_detach(mf_fabric_mpit_idx[i]);
    mf_fabric_mpit_n = 0;
}
