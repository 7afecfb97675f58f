/* Environment variables, typed and checked: see config.h, config_spec.h and config_vars.def. */
#include "core/config.h"

#include <assert.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/config_spec.h"
#include "core/error.h"
#include "core/log.h"

extern char **environ;

static const mf_config_var *mf_config_find(const char *name)
{
    const mf_config_var *v = mf_config_var_find(name);
    assert(v && "environment variable missing from config_vars.def");
    return v;
}

int mf_config_check(void)
{
    char msg[512];
    for (size_t i = 0; i < MF_CONFIG_NVARS; i++)
        if (!mf_config_check_one(&mf_config_vars[i], getenv(mf_config_vars[i].name), msg,
                                 sizeof msg))
            return mf_error(MPI_ERR_ARG, "MPI_Init: %s", msg);
    return MPI_SUCCESS;
}

int mf_config_warn_unknown(void)
{
    int n = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "MANIFOLD_", 9) != 0)
            continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), *e);
        if (mf_config_known(name))
            continue;
        const char *close = mf_config_closest(name);
        if (close)
            mf_warn("%s is not a Manifold variable and is ignored; did you mean %s? "
                    "(mpiexec --info lists them)",
                    name, close);
        else
            mf_warn("%s is not a Manifold variable and is ignored (mpiexec --info lists them)",
                    name);
        n++;
    }
    return n;
}

/* The variable's value if set and accepted by its check; otherwise (warning about a refused one)
 * NULL: the caller uses the default. */
static const char *mf_config_value(const mf_config_var *v)
{
    const char *s = getenv(v->name);
    if (!s || !*s)
        return NULL;
    char msg[512];
    if (mf_config_check_one(v, s, msg, sizeof msg))
        return s;
    mf_warn("%s; using the default", msg);
    return NULL;
}

/* As it is: a string's reader may have a better message for a bad one (mf_pm_select). */
const char *mf_config_str(const char *name)
{
    const mf_config_var *v = mf_config_find(name);
    const char *s = getenv(name);
    return s && *s ? s : v->def;
}

size_t mf_config_size_or(const char *name, size_t def)
{
    const char *s = mf_config_value(mf_config_find(name));
    unsigned long long v;
    return s && mf_config_parse_size(s, &v) == 0 ? (size_t)v : def;
}

/* The typed value's text: the variable's if accepted, else the default. */
static const char *mf_config_typed(const char *name)
{
    const mf_config_var *v = mf_config_find(name);
    const char *s = mf_config_value(v);
    return s ? s : v->def;
}

size_t mf_config_size(const char *name)
{
    const mf_config_var *e = mf_config_find(name);
    unsigned long long def = 0;
    int ok = mf_config_parse_size(e->def, &def);
    assert(ok == 0);
    (void)ok;
    return mf_config_size_or(name, (size_t)def);
}

long mf_config_long(const char *name)
{
    const char *s = mf_config_typed(name);
    long long v = 0;
    return *s && mf_config_parse_long(s, &v) == 0 ? (long)v : 0;
}

bool mf_config_bool(const char *name)
{
    bool b = false;
    return mf_config_parse_bool(mf_config_typed(name), &b) == 0 && b;
}
