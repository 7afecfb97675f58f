/* The MPI_T registry: categories and performance variables (see mpit.h, mpit_internal.h). */
#include "tool/mpit_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_share.h"
#include "core/counter.h"
#include "core/log.h"
#include "core/progress.h"

static pthread_mutex_t mf_t_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool mf_t_ready;

mf_t_category_var **mf_t_cats;
int mf_t_ncats;
mf_t_pvar_var **mf_t_pvars;
int mf_t_npvars;
int mf_t_stamp;

void mf_t_lock(void)
{
    pthread_mutex_lock(&mf_t_mutex);
}

void mf_t_unlock(void)
{
    pthread_mutex_unlock(&mf_t_mutex);
}

int mf_t_ilist_add(mf_t_ilist *l, int x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        int *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    mf_t_stamp++;
    return 0;
}

/* Appends p to a growable array of pointers; false when out of memory. */
static bool mf_t_push(void ***arr, int *n, void *p)
{
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4...: full, grow to the next power of two */
        void **a = realloc(*arr, (size_t)(*n ? 2 * *n : 1) * sizeof *a);
        if (!a)
            return false;
        *arr = a;
    }
    (*arr)[(*n)++] = p;
    mf_t_stamp++;
    return true;
}

static int mf_t_category_find(const char *name)
{
    for (int i = 0; i < mf_t_ncats; i++)
        if (strcmp(mf_t_cats[i]->name, name) == 0)
            return i;
    return -1;
}

int mf_t_category_locked(const char *name, const char *desc, const char *parent)
{
    int i = mf_t_category_find(name);
    if (i >= 0)
        return i;
    int up = parent ? mf_t_category_find(parent) : -1;
    mf_t_category_var *c = calloc(1, sizeof *c);
    if (c) {
        c->name = strdup(name);
        c->desc = strdup(desc ? desc : "");
    }
    if (!c || !c->name || !c->desc || !mf_t_push((void ***)&mf_t_cats, &mf_t_ncats, c)) {
        if (c) {
            free(c->name);
            free(c->desc);
        }
        free(c);
        return -1;
    }
    if (up >= 0)
        mf_t_ilist_add(&mf_t_cats[up]->cats, mf_t_ncats - 1);
    return mf_t_ncats - 1;
}

/* The areas of the library, in a fixed order so that category indices are the same in every
 * process of a job (tools compare them across ranks). */
static const struct {
    const char *name, *parent, *desc;
} mf_t_areas[] = {
    {"manifold", NULL, "Manifold MPI library: every setting and measurement"},
    {"fabric", "manifold", "transports between processes: selection and common settings"},
    {"self", "fabric", "self fabric: messages a process sends to itself"},
    {"shm", "fabric", "shared-memory fabric between processes of one host"},
    {"tcp", "fabric", "TCP fabric between hosts"},
    {"p2p", "manifold", "point-to-point messaging: matching, eager and rendezvous protocols"},
    {"coll", "manifold", "collective operations: algorithm choice"},
    {"progress", "manifold", "progress engine: polling and sleeping"},
    {"launcher", "manifold", "mpiexec and the process manager: job layout and start-up"},
};

static mf_t_counter mf_t_api_sends, mf_t_api_send_bytes;

void mf_t_count_api_send(uint64_t bytes)
{
    mf_t_count_serial(&mf_t_api_sends, 1);
    mf_t_count_serial(&mf_t_api_send_bytes, bytes);
}

static int mf_t_pvar_register_locked(const mf_t_pvar_desc *d);

/* Variables that measure from the first call on: registered with the areas. */
static void mf_t_builtin_pvars_locked(void)
{
    static const char scope[] =
        "started by MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend, their nonblocking (MPI_I*) and "
        "large-count (_c) forms, to a rank other than MPI_PROC_NULL; not persistent sends, "
        "MPI_Sendrecv or the messages of collective operations";
    static char descs[2][sizeof scope + 48];
    const struct {
        const char *name, *what;
        const mf_t_counter *counter;
    } api[] = {
        {"p2p_api_messages_sent", "messages", &mf_t_api_sends},
        {"p2p_api_bytes_sent", "bytes of data in the messages", &mf_t_api_send_bytes},
    };
    for (int i = 0; i < 2; i++) {
        snprintf(descs[i], sizeof descs[i], "%s %s", api[i].what, scope);
        mf_t_pvar_register_locked(&(mf_t_pvar_desc){
            .name = api[i].name,
            .desc = descs[i],
            .category = "p2p",
            .var_class = MPI_T_PVAR_CLASS_COUNTER,
            .datatype = MPI_UNSIGNED_LONG_LONG,
            .verbosity = MPI_T_VERBOSITY_USER_BASIC,
            .counter = api[i].counter,
        });
    }
}

#define MF_T_STR_(x) #x
#define MF_T_STR(x) MF_T_STR_(x)
#define MF_T_SLEEP_CAP MF_T_STR(MF_PROGRESS_MAX_SLEEP_MS) " ms cap"

/* A field of the progress engine's live counters (mf_progress_stats_live). */
static void mf_t_read_progress(void *arg, void *out)
{
    *(uint64_t *)out = mf_counter_read(arg);
}

/* The progress engine's counters (issue #17: lost wake-ups made visible). Read from the engine's
 * own statistics: nothing is added to its loop. */
static void mf_t_progress_pvars_locked(void)
{
    const mf_progress_stats *st = mf_progress_stats_live();
    const struct {
        const char *name, *desc;
        const uint64_t *field;
    } pv[] = {
        {"progress_sleeps",
         "times a waiting thread slept in the progress engine (epoll) after polling found nothing",
         &st->sleeps},
        {"progress_sleep_ns",
         "nanoseconds of sleep the progress engine asked for, summed over its sleeps (a sleep "
         "with no bound counts the " MF_T_SLEEP_CAP "; one woken early what it asked for)",
         &st->sleep_ns},
        {"progress_late_wakeups",
         "sleeps of the progress engine that ran out at the " MF_T_SLEEP_CAP " while work was "
         "waiting (the first pass after them found work): lost wake-ups, each costing latency",
         &st->late_wakeups},
        {"progress_missed_wakeups",
         "sleeps of the progress engine at whose end a fabric found work that had arrived "
         "without ringing its wake-up descriptor (shm: a frame, or room for a queued frame, and "
         "no doorbell), whatever ended the sleep: lost wake-ups, including those another event "
         "hid from progress_late_wakeups",
         &st->missed_wakeups},
        {"progress_spins_expired",
         "waits whose spin (MANIFOLD_SPIN_US) ran out before work came, so that the wait went on "
         "to yield or sleep",
         &st->spins_expired},
        {"progress_spin_budget_ns",
         "nanoseconds of spin budget the waits counted by progress_spins_expired had, summed: "
         "with MANIFOLD_SPIN_US unset the budget halves after each such wait counted by "
         "progress_spins_preempted (down to 1/16) and doubles back when a spin finds work",
         &st->spin_budget_ns},
        {"progress_spins_preempted",
         "waits counted by progress_spins_expired whose thread had been preempted (an "
         "involuntary context switch: other load wanted its core) since the previous one: with "
         "MANIFOLD_SPIN_US unset, each halves the spin budget",
         &st->spins_preempted},
        {"progress_spins_grown",
         "spins that found work while the adaptive spin budget was below its full size "
         "(MANIFOLD_SPIN_US unset), each doubling it back up to that size",
         &st->spins_grown},
        {"progress_core_shared",
         "windows of 20 ms of a thread's runnable time in which it waited for its core at least "
         "a quarter of it (other load shares the core; from /proc/thread-self/schedstat, read "
         "when shm decides how to receive a rendezvous message): until a window finds otherwise, "
         "shm pulls from MANIFOLD_SHM_PULL_SHARED bytes of own sends in flight",
         &mf_core_shared_windows},
    };
    for (size_t i = 0; i < sizeof pv / sizeof pv[0]; i++)
        mf_t_pvar_register_locked(&(mf_t_pvar_desc){
            .name = pv[i].name,
            .desc = pv[i].desc,
            .category = "progress",
            .var_class = MPI_T_PVAR_CLASS_COUNTER,
            .datatype = MPI_UNSIGNED_LONG_LONG,
            .verbosity = MPI_T_VERBOSITY_TUNER_BASIC,
            .read = mf_t_read_progress,
            .arg = (void *)pv[i].field,
        });
}

void mf_t_setup_locked(void)
{
    if (mf_t_ready)
        return;
    mf_t_ready = true;
    for (size_t i = 0; i < sizeof mf_t_areas / sizeof mf_t_areas[0]; i++)
        mf_t_category_locked(mf_t_areas[i].name, mf_t_areas[i].desc, mf_t_areas[i].parent);
    for (int e = 0; e < MF_T_EVENT_N; e++) {
        int cat = mf_t_category_find(mf_t_events[e].category);
        if (cat >= 0)
            mf_t_ilist_add(&mf_t_cats[cat]->events, e);
    }
    mf_t_cvars_setup_locked();
    mf_t_builtin_pvars_locked();
    mf_t_progress_pvars_locked();
}

int mf_t_category(const char *name, const char *desc, const char *parent)
{
    mf_t_lock();
    mf_t_setup_locked();
    int i = mf_t_category_locked(name, desc, parent);
    mf_t_unlock();
    return i;
}

static bool mf_t_class_accumulates(int var_class)
{
    return var_class == MPI_T_PVAR_CLASS_COUNTER || var_class == MPI_T_PVAR_CLASS_TIMER ||
           var_class == MPI_T_PVAR_CLASS_AGGREGATE;
}

static bool mf_t_desc_ok(const mf_t_pvar_desc *d)
{
    return d && d->name && *d->name && d->desc && d->category &&
           d->var_class >= MPI_T_PVAR_CLASS_STATE && d->var_class <= MPI_T_PVAR_CLASS_GENERIC &&
           (d->datatype == MPI_UNSIGNED_LONG_LONG || d->datatype == MPI_UNSIGNED_LONG ||
            d->datatype == MPI_DOUBLE) &&
           (!d->counter != !d->read) && !(d->counter && d->datatype == MPI_DOUBLE);
}

static int mf_t_pvar_register_locked(const mf_t_pvar_desc *d)
{
    int cat = mf_t_desc_ok(d) ? mf_t_category_find(d->category) : -1;
    if (cat < 0) {
        mf_warn("MPI_T: performance variable %s: invalid description or unknown category",
                d && d->name ? d->name : "(null)");
        return -1;
    }
    for (int i = 0; i < mf_t_npvars; i++) {
        mf_t_pvar_var *v = mf_t_pvars[i];
        if (v->d.var_class == d->var_class && strcmp(v->d.name, d->name) == 0) {
            /* The same variable from a new source. An accumulating one goes on from where the
             * old source left it, so session handles never see it jump back. */
            mf_t_val prev = mf_t_pvar_source(v);
            v->d.counter = d->counter;
            v->d.read = d->read;
            v->d.arg = d->arg;
            v->attached = true;
            v->offset = (mf_t_val){0};
            if (v->accumulating) {
                mf_t_val now = mf_t_pvar_source(v);
                if (v->d.datatype == MPI_DOUBLE)
                    v->offset.d = prev.d - now.d;
                else
                    v->offset.u = prev.u - now.u; /* modulo 2^64, undone by the addition */
            }
            return i;
        }
    }
    mf_t_pvar_var *v = calloc(1, sizeof *v);
    if (v) {
        v->d = *d;
        v->d.name = strdup(d->name);
        v->d.desc = strdup(d->desc);
        v->d.category = mf_t_cats[cat]->name;
        v->cat = cat;
        v->accumulating = mf_t_class_accumulates(d->var_class);
        /* Values that are not accumulated cannot be started or stopped: they just are. */
        v->d.continuous = d->continuous || !v->accumulating;
        v->attached = true;
    }
    if (!v || !v->d.name || !v->d.desc || !mf_t_push((void ***)&mf_t_pvars, &mf_t_npvars, v)) {
        if (v) {
            free((char *)v->d.name);
            free((char *)v->d.desc);
        }
        free(v);
        mf_warn("MPI_T: no memory to register performance variable %s", d->name);
        return -1;
    }
    mf_t_ilist_add(&mf_t_cats[cat]->pvars, mf_t_npvars - 1);
    return mf_t_npvars - 1;
}

int mf_t_pvar_register(const mf_t_pvar_desc *d)
{
    mf_t_lock();
    mf_t_setup_locked();
    int i = mf_t_pvar_register_locked(d);
    mf_t_unlock();
    return i;
}

void mf_t_counters_register(const char *category, int verbosity, const mf_t_counter_def *defs,
                            size_t n)
{
    for (size_t i = 0; i < n; i++)
        mf_t_pvar_register(&(mf_t_pvar_desc){
            .name = defs[i].name,
            .desc = defs[i].desc,
            .category = category,
            .var_class = MPI_T_PVAR_CLASS_COUNTER,
            .datatype = MPI_UNSIGNED_LONG_LONG,
            .verbosity = verbosity,
            .counter = defs[i].counter,
        });
}

mf_t_val mf_t_pvar_source(const mf_t_pvar_var *v)
{
    mf_t_val x = {0};
    if (!v->attached)
        return v->last;
    if (v->d.counter)
        x.u = mf_t_counter_value(v->d.counter);
    else
        v->d.read(v->d.arg, &x);
    if (v->d.datatype == MPI_DOUBLE)
        x.d += v->offset.d;
    else
        x.u += v->offset.u;
    return x;
}

void mf_t_pvar_detach(int index)
{
    mf_t_lock();
    if (index >= 0 && index < mf_t_npvars && mf_t_pvars[index]->attached) {
        mf_t_pvar_var *v = mf_t_pvars[index];
        v->last = mf_t_pvar_source(v);
        v->attached = false;
    }
    mf_t_unlock();
}
