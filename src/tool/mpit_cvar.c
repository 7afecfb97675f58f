/*
 * MPI_T control variables: every row of src/core/config_vars.def, in its order, with the value
 * the library reads through config.h.
 *
 * Every setting is read once, at start-up or at first use (fabrics at MPI_Init, collectives at
 * their first call), so none can change at run time: all have scope MPI_T_SCOPE_READONLY and
 * MPI_T_cvar_write answers MPI_T_ERR_CVAR_SET_NEVER.
 *
 * Datatypes follow the kind of value the setting accepts: bool and int settings are MPI_INT,
 * byte sizes MPI_UNSIGNED_LONG, seconds MPI_DOUBLE, word lists an MPI_T enumeration (MPI_INT
 * holding the item's index), the rest MPI_CHAR strings. A numeric setting whose default the
 * library computes at start-up (listed with an empty default, e.g. MANIFOLD_SHM_EAGER_LIMIT) is a
 * string: empty when unset, which its description explains.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "tool/mpit_internal.h"

static const struct {
    const char *name, *def, *check, *meaning;
} mf_t_config_rows[] = {
#define MF_CONFIG_VAR(name, def, check, meaning) {#name, def, check, meaning},
#include "core/config_vars.def"
#undef MF_CONFIG_VAR
};

/* What MPI_T says about each setting beyond the table (whose check column gives the datatype):
 * its category and verbosity. A setting missing here is in category "manifold" for users. */
#define UB MPI_T_VERBOSITY_USER_BASIC
#define UD MPI_T_VERBOSITY_USER_DETAIL
#define TB MPI_T_VERBOSITY_TUNER_BASIC
#define TD MPI_T_VERBOSITY_TUNER_DETAIL
#define DB MPI_T_VERBOSITY_MPIDEV_BASIC
#define DD MPI_T_VERBOSITY_MPIDEV_DETAIL
static const struct {
    const char *name, *category;
    int verbosity;
} mf_t_cvar_meta[] = {
    {"MANIFOLD_FABRIC", "fabric", UB},
    {"MANIFOLD_RMA_FABRIC", "fabric", UD},
    {"MANIFOLD_SHM", "shm", UB},
    {"MANIFOLD_VERBOSE", "manifold", UB},
    {"MANIFOLD_IF", "tcp", UB},
    {"MANIFOLD_SHM_EAGER_LIMIT", "shm", TB},
    {"MANIFOLD_TCP_EAGER_LIMIT", "tcp", TB},
    {"MANIFOLD_SHM_CMA", "shm", TD},
    {"MANIFOLD_SHM_PULL_BUSY", "shm", TD},
    {"MANIFOLD_SHM_PULL_SHARED", "shm", TD},
    {"MANIFOLD_SHM_STREAM_STORES", "shm", TD},
    {"MANIFOLD_SHM_INDIRECT", "shm", TD},
    {"MANIFOLD_SHM_MEMBARRIER", "shm", DD},
    {"MANIFOLD_SPIN_US", "progress", TB},
    {"MANIFOLD_YIELD_US", "progress", TD},
    {"MANIFOLD_OVERSUBSCRIBED", "progress", DB},
    {"MANIFOLD_JOB_SECRET", "launcher", DD},
    {"MANIFOLD_LOCAL_RANK", "launcher", DB},
    {"MANIFOLD_LOCAL_SIZE", "launcher", DB},
    {"MANIFOLD_HOSTNAME", "launcher", UD},
    {"MANIFOLD_HOST_TIMEOUT", "launcher", UD},
    {"MPIEXEC_TIMEOUT", "launcher", UB},
    {"MANIFOLD_COLL_BCAST", "coll", TB},
    {"MANIFOLD_COLL_ALLREDUCE", "coll", TB},
    {"MANIFOLD_COLL_ALLGATHER", "coll", TB},
    {"MANIFOLD_COLL_ALLTOALL", "coll", TB},
    {"MANIFOLD_COLL_GATHER", "coll", TB},
    {"MANIFOLD_COLL_REDUCE_SCATTER", "coll", TB},
    {"MANIFOLD_COLL_SHORT_MSG", "coll", TD},
    {"MANIFOLD_COLL_LONG_MSG", "coll", TD},
    {"MANIFOLD_PORT_RANGE", "tcp", UD},
    {"MANIFOLD_TCP_SOCKBUF", "tcp", TD},
    {"MANIFOLD_PM", "launcher", UD},
    {"MANIFOLD_TCP_AUTH_TIMEOUT", "tcp", UD},
    {"MANIFOLD_TCP_AUTH_PENDING", "tcp", TD},
    {"MANIFOLD_ASYNC_PROGRESS", "progress", UB},
    {"MANIFOLD_REPORT", "fabric", UB},
    {"MANIFOLD_FAULT", "fabric", DD},
};
#undef UB
#undef UD
#undef TB
#undef TD
#undef DB
#undef DD

#define MF_T_NROWS ((int)(sizeof mf_t_config_rows / sizeof mf_t_config_rows[0]))

mf_t_cvar_var *mf_t_cvars;
int mf_t_ncvars;
static struct mf_t_enum *mf_t_enums; /* one per enumerated setting, at most one per row */
static int mf_t_nenums;

bool mf_t_enum_ok(const struct mf_t_enum *e)
{
    /* Compare addresses as integers: a tool's garbage pointer is not an error in C terms. */
    uintptr_t p = (uintptr_t)e, lo = (uintptr_t)mf_t_enums,
              hi = (uintptr_t)(mf_t_enums + mf_t_nenums);
    return e && p >= lo && p < hi && (p - lo) % sizeof *mf_t_enums == 0;
}

static bool mf_t_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    return strncmp(s, w, n) == 0 && (s[n] == '\0' || s[n] == ' ');
}

/* Builds the enumeration "A|B|C" for setting `name`; NULL when out of memory. */
static struct mf_t_enum *mf_t_enum_make(const char *name, const char *items)
{
    int n = 1;
    for (const char *p = items; *p; p++)
        n += *p == '|';
    struct mf_t_enum *e = &mf_t_enums[mf_t_nenums];
    e->items = calloc((size_t)n, sizeof *e->items);
    if (!e->items)
        return NULL;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(items, "|");
        e->items[i] = strndup(items, len);
        if (!e->items[i]) {
            while (i--)
                free(e->items[i]);
            free(e->items);
            return NULL;
        }
        items += len + (items[len] == '|');
    }
    e->name = name;
    e->n = n;
    mf_t_nenums++;
    return e;
}

static void mf_t_cvar_type(mf_t_cvar_var *v, const char *kind)
{
    v->datatype = MPI_CHAR;
    if (!*v->def) /* computed at start-up: see the top of the file */
        return;
    v->boolean = mf_t_word(kind, "bool");
    if (v->boolean || mf_t_word(kind, "int"))
        v->datatype = MPI_INT;
    else if (mf_t_word(kind, "size"))
        v->datatype = MPI_UNSIGNED_LONG;
    else if (mf_t_word(kind, "seconds"))
        v->datatype = MPI_DOUBLE;
    else if (mf_t_word(kind, "enum") && (v->enumtype = mf_t_enum_make(v->name, kind + 5)))
        v->datatype = MPI_INT;
}

void mf_t_cvars_setup_locked(void)
{
    mf_t_cvars = calloc(MF_T_NROWS, sizeof *mf_t_cvars);
    mf_t_enums = calloc(MF_T_NROWS, sizeof *mf_t_enums);
    if (!mf_t_cvars || !mf_t_enums) {
        free(mf_t_cvars);
        free(mf_t_enums);
        mf_t_cvars = NULL;
        mf_t_enums = NULL;
        return; /* MPI_T then lists no control variables */
    }
    for (int i = 0; i < MF_T_NROWS; i++) {
        mf_t_cvar_var *v = &mf_t_cvars[i];
        const char *kind = mf_t_config_rows[i].check, *category = "manifold";
        v->name = mf_t_config_rows[i].name;
        v->def = mf_t_config_rows[i].def;
        v->desc = mf_t_config_rows[i].meaning;
        v->verbosity = MPI_T_VERBOSITY_USER_BASIC;
        for (size_t m = 0; m < sizeof mf_t_cvar_meta / sizeof mf_t_cvar_meta[0]; m++) {
            if (strcmp(mf_t_cvar_meta[m].name, v->name) == 0) {
                category = mf_t_cvar_meta[m].category;
                v->verbosity = mf_t_cvar_meta[m].verbosity;
            }
        }
        mf_t_cvar_type(v, kind ? kind : "string");
        v->secret = strcmp(v->name, "MANIFOLD_JOB_SECRET") == 0;
        v->cat = mf_t_category_locked(category, NULL, "manifold");
        if (v->cat >= 0)
            mf_t_ilist_add(&mf_t_cats[v->cat]->cvars, i);
    }
    mf_t_ncvars = MF_T_NROWS;
}

const char *mf_t_cvar_string(const mf_t_cvar_var *v)
{
    const char *s = mf_config_str(v->name);
    /* The job secret proves membership in the job to its peers: a tool that logs every
     * setting must not leak it. */
    if (v->secret)
        return *s ? "(set, not shown)" : "";
    return s;
}

mf_t_val mf_t_cvar_value(const mf_t_cvar_var *v)
{
    mf_t_val x = {0};
    if (v->enumtype) {
        const char *s = mf_config_str(v->name);
        int def = 0;
        x.i = -1;
        for (int k = 0; k < v->enumtype->n; k++) {
            if (strcmp(s, v->enumtype->items[k]) == 0)
                x.i = k;
            if (strcmp(v->def, v->enumtype->items[k]) == 0)
                def = k;
        }
        if (x.i < 0) /* a word the library does not know: it uses the default (and warns) */
            x.i = def;
    } else if (v->boolean) {
        x.i = mf_config_bool(v->name);
    } else if (v->datatype == MPI_INT) {
        long l = mf_config_long(v->name);
        x.i = l > INT_MAX ? INT_MAX : l < INT_MIN ? INT_MIN : (int)l;
    } else if (v->datatype == MPI_UNSIGNED_LONG) {
        x.u = mf_config_size(v->name);
    } else if (v->datatype == MPI_DOUBLE) {
        x.d = strtod(mf_config_str(v->name), NULL);
    }
    return x;
}
