/*
 * mpit_internal.h — the MPI_T registry as the entry points (src/api/mpit.c) see it.
 *
 * Everything here is guarded by one mutex, mf_t_lock(): MPI_T is usable from any thread, before
 * MPI_Init and after MPI_Finalize, so it cannot rely on the library lock (which exists only
 * under MPI_THREAD_MULTIPLE). Variables and categories live for the whole process; their indices
 * are positions in the arrays below and never change.
 */
#ifndef MF_TOOL_MPIT_INTERNAL_H
#define MF_TOOL_MPIT_INTERNAL_H

#include <stddef.h>

#include "tool/mpit.h"

/* One value of a pvar or cvar: which member is used follows the variable's datatype. */
typedef union mf_t_val {
    uint64_t u;
    double d;
    int i;
} mf_t_val;

/* MPI_T_enum points at one of these; validated by membership in the registry (mf_t_enum_ok). */
struct mf_t_enum {
    const char *name;
    int n;
    char **items; /* item i has value i */
};

/* A growable list of indices (members of a category). */
typedef struct mf_t_ilist {
    int *v;
    int n, cap;
} mf_t_ilist;

typedef struct mf_t_category_var {
    char *name, *desc;
    mf_t_ilist cvars, pvars, cats, events;
} mf_t_category_var;

typedef struct mf_t_pvar_var {
    mf_t_pvar_desc d; /* name and desc owned */
    int cat;
    bool accumulating; /* COUNTER, TIMER, AGGREGATE: per-handle value from 0 while started */
    bool attached;     /* the source exists; otherwise `last` is the value */
    mf_t_val last;
    mf_t_val offset; /* added to the source: continuity across rebinding (mf_t_pvar_register) */
} mf_t_pvar_var;

typedef struct mf_t_cvar_var {
    const char *name, *def, *desc;
    MPI_Datatype datatype;      /* MPI_INT, MPI_UNSIGNED_LONG, MPI_DOUBLE or MPI_CHAR */
    struct mf_t_enum *enumtype; /* with MPI_INT, or NULL */
    int verbosity;
    int cat;
    bool boolean; /* MPI_INT holding 0 or 1 */
    bool secret;  /* the value is never shown */
} mf_t_cvar_var;

void mf_t_lock(void);
void mf_t_unlock(void);

/* The registry, built on first use (under the lock). */
void mf_t_setup_locked(void);
extern mf_t_category_var **mf_t_cats;
extern int mf_t_ncats;
extern mf_t_pvar_var **mf_t_pvars;
extern int mf_t_npvars;
extern mf_t_cvar_var *mf_t_cvars;
extern int mf_t_ncvars;
extern int mf_t_stamp; /* MPI_T_category_changed */

bool mf_t_enum_ok(const struct mf_t_enum *e);
/* The current value of a pvar's source. */
mf_t_val mf_t_pvar_source(const mf_t_pvar_var *v);

/* Control variables (mpit_cvar.c): mf_t_cvars_setup_locked builds the table; a cvar's value as
 * the library sees it is mf_t_cvar_value (member i for MPI_INT, u for MPI_UNSIGNED_LONG, d for
 * MPI_DOUBLE) or, for MPI_CHAR, the text mf_t_cvar_string returns. */
void mf_t_cvars_setup_locked(void);
mf_t_val mf_t_cvar_value(const mf_t_cvar_var *v);
const char *mf_t_cvar_string(const mf_t_cvar_var *v);

/* Events (mpit_event.c). The table is fixed; its indices are the mf_t_event_kind values. */
typedef struct mf_t_event_def {
    const char *name, *desc, *category;
    int verbosity;
    int nelements; /* each an MPI_INT */
} mf_t_event_def;
extern const mf_t_event_def mf_t_events[MF_T_EVENT_N];

/* MPI_T_event_instance: exists only while its callbacks run, on the raising thread. */
struct mf_t_event_instance {
    int kind;
    int elements[MF_T_EVENT_MAX_ELEMENTS];
    MPI_Count timestamp; /* mf_t_event_clock */
};
typedef struct mf_t_event_instance mf_t_event_instance;

enum { MF_T_CB_LEVELS = MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE + 1 };
/* MPI_T_event_registration: in mf_t_event_regs (checked by membership) until freed. */
struct mf_t_event_registration {
    struct mf_t_event_registration *next;
    int kind;
    struct {
        MPI_T_event_cb_function *fn;
        void *user_data;
    } cb[MF_T_CB_LEVELS]; /* by the safety level it was registered with */
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped; /* not delivered since the dropped handler last heard */
    int busy;           /* callbacks of it running now */
    bool freed;         /* unlinked; the last running callback's thread frees it */
    MPI_T_event_free_cb_function *free_cb;
    void *free_user_data;
};
typedef struct mf_t_event_registration mf_t_event_reg;
extern mf_t_event_reg *mf_t_event_regs;

MPI_Count mf_t_event_clock(void);
/* The instance being delivered on this thread, or NULL. */
const mf_t_event_instance *mf_t_event_current(void);
/* Sets (fn NULL: clears) r's callback for a safety level, keeping the listener counts. */
void mf_t_event_reg_set_cb_locked(mf_t_event_reg *r, int safety, MPI_T_event_cb_function *fn,
                                  void *user_data);
/* The last MPI_T_finalize: every registration left goes (without its free callback, which the
 * tool never asked for), those with a callback running once it returns. */
void mf_t_event_regs_drop_locked(void);
/* Unlinks r and stops its callbacks: 1 when none of them is running, so the caller frees it
 * (after calling its free callback); 0 when one is, whose thread will; -1 when r is no
 * registration. */
int mf_t_event_reg_unlink_locked(mf_t_event_reg *r);

/* Registry helpers shared by both files (under the lock). */
int mf_t_category_locked(const char *name, const char *desc, const char *parent);
int mf_t_ilist_add(mf_t_ilist *l, int x);

#endif
