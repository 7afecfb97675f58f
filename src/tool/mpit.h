/*
 * mpit.h — the library side of the MPI tool information interface (MPI_T): how Manifold's layers
 * publish performance variables (pvars) and group them into categories. The MPI_T_* entry points
 * (src/api/mpit.c) read this registry; control variables (cvars) are the settings of
 * src/core/config_vars.def and need no registration (src/tool/mpit_cvar.c).
 *
 * Registration may happen at any time, before or after MPI_T_init_thread and MPI_Init, from any
 * thread. Indices handed to tools never change and never disappear: registering a name that
 * exists again rebinds the existing variable (a fabric instance opened by a second MPI_Init after
 * a finished session keeps its index), and mf_t_pvar_detach() freezes a variable at its last value
 * when its source goes away (MPI_Finalize closes the fabrics, tools may still read).
 *
 * Each new category, new variable or new member of a category advances the number that
 * MPI_T_category_changed returns.
 *
 * Hooks still to be placed (issue #12): the p2p engine (src/p2p/protocol.c) and each fabric
 * instance register their counters here when they start, e.g.
 *     static mf_t_counter eager_sends;            // in the instance
 *     mf_t_pvar_register(&(mf_t_pvar_desc){.name = "tcp0_eager_sends", .category = "tcp",
 *                        .var_class = MPI_T_PVAR_CLASS_COUNTER, .counter = &eager_sends, ...});
 *     mf_t_count(&eager_sends, 1);                // where an eager frame leaves
 * A counter that nothing increments yet must not be registered: tools would believe it.
 */
#ifndef MF_TOOL_MPIT_H
#define MF_TOOL_MPIT_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A monotonic event or byte count, safe to bump from any thread without the library lock. */
typedef struct mf_t_counter {
    _Atomic uint64_t v;
} mf_t_counter;

static inline void mf_t_count(mf_t_counter *c, uint64_t n)
{
    atomic_fetch_add_explicit(&c->v, n, memory_order_relaxed);
}

/* The same on a hot path whose writers are serialized (the caller holds the library lock, or
 * the thread level lets one thread at a time into MPI): a plain load and store, no locked
 * instruction; MPI_T readers on other threads still never see a torn value. */
static inline void mf_t_count_serial(mf_t_counter *c, uint64_t n)
{
    atomic_store_explicit(&c->v, atomic_load_explicit(&c->v, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline uint64_t mf_t_counter_value(const mf_t_counter *c)
{
    return atomic_load_explicit(&((mf_t_counter *)c)->v, memory_order_relaxed);
}

/* Reads a variable's current value through a callback: into *out as uint64_t (integer datatypes)
 * or double (MPI_DOUBLE). Called without any library lock and possibly from any thread, so it
 * must only read what is safe to read concurrently (atomics, values fixed after start-up). */
typedef void (*mf_t_pvar_read_fn)(void *arg, void *out);

typedef struct mf_t_pvar_desc {
    const char *name;     /* unique with var_class; [a-z0-9_], prefixed by its area */
    const char *desc;     /* what it measures, in which unit, what it includes and excludes */
    const char *category; /* existing category name (mf_t_category) */
    int var_class;        /* MPI_T_PVAR_CLASS_* */
    /* MPI_UNSIGNED_LONG_LONG, MPI_UNSIGNED_LONG or MPI_DOUBLE (count 1, MPI_T_BIND_NO_OBJECT) */
    MPI_Datatype datatype;
    int verbosity; /* MPI_T_VERBOSITY_* */
    /* Classes COUNTER, TIMER and AGGREGATE accumulate per session handle (starting at 0, counting
     * while started); the others show the source's current value and are read-only. */
    bool continuous; /* always counting: cannot be started or stopped by a tool */
    /* The source: exactly one of counter and read. */
    const mf_t_counter *counter;
    mf_t_pvar_read_fn read;
    void *arg;
} mf_t_pvar_desc;

/* Registers (or rebinds, when name and class exist) a performance variable. Returns its MPI_T
 * index, or -1 for an invalid description or no memory (reported with mf_warn). */
int mf_t_pvar_register(const mf_t_pvar_desc *d);
/* One of a layer's plain counters (class COUNTER, MPI_UNSIGNED_LONG_LONG, fed by mf_t_count),
 * registered as a table by mf_t_counters_register. */
typedef struct mf_t_counter_def {
    const char *name, *desc;
    const mf_t_counter *counter;
} mf_t_counter_def;
/* Registers defs[0..n) in `category` at `verbosity`, each as by mf_t_pvar_register. */
void mf_t_counters_register(const char *category, int verbosity, const mf_t_counter_def *defs,
                            size_t n);
/* The source of pvar `index` goes away: reads give its last value from now on. */
void mf_t_pvar_detach(int index);

/* Returns the index of category `name`, creating it under `parent` (NULL: a top-level category)
 * with `desc` if it does not exist yet; -1 when out of memory. */
int mf_t_category(const char *name, const char *desc, const char *parent);

/* ---- Events (MPI-4 MPI_T events; mpit_event.c) ----
 * What a layer raises when something happens that a tool may want to see as it happens. Every
 * element of an event is an MPI_INT. The table of events (names, descriptions, elements) is
 * mpit_event.c's; an event is listed only where code raises it. */
typedef enum mf_t_event_kind {
    MF_T_EVENT_PEER_LOST,          /* p2p: a peer is unreachable (peer, error class) */
    MF_T_EVENT_CONNECTION_REFUSED, /* tcp, sctp: a stranger's connection refused (claimed rank) */
    MF_T_EVENT_RAIL_FAILOVER,      /* rail: a rail to a peer failed, the others carry on */
    MF_T_EVENT_RAIL_REVIVED,       /* rail: a rail to a peer is back in use */
    MF_T_EVENT_N
} mf_t_event_kind;
enum { MF_T_EVENT_MAX_ELEMENTS = 4 };
/* Raises `kind` with its elements: each callback a tool registered for it is called before this
 * returns, on this thread, if its safety level suits this one (MPI_T_CB_REQUIRE_MPI_RESTRICTED
 * on the thread that initialized MPI below MPI_THREAD_MULTIPLE, THREAD_SAFE elsewhere);
 * otherwise the event is counted as dropped for that registration. One relaxed load when no
 * tool listens. Call it from library code, never from a signal handler. */
void mf_t_event_raise(mf_t_event_kind kind, const int *elements);
extern _Atomic int mf_t_event_listeners[MF_T_EVENT_N];
static inline bool mf_t_event_wanted(mf_t_event_kind kind)
{
    return atomic_load_explicit(&mf_t_event_listeners[kind], memory_order_relaxed) > 0;
}

/* Counters kept here until the p2p engine has its own (see above): messages and bytes handed to
 * the MPI_Send family. src/api/p2p_send.c counts them inside its MF_API_ENTER/EXIT section, so
 * writers are serialized. */
void mf_t_count_api_send(uint64_t bytes);

#endif
