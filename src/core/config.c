/* Environment variables, typed: see config.h and config_vars.def. */
#include "core/config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"

typedef struct mf_config_entry {
    const char *name;
    const char *def;
} mf_config_entry;

static const mf_config_entry mf_config_table[] = {
#define MF_CONFIG_VAR(name, def, meaning) {#name, def},
#include "core/config_vars.def"
#undef MF_CONFIG_VAR
};

static const mf_config_entry *mf_config_find(const char *name)
{
    for (size_t i = 0; i < sizeof mf_config_table / sizeof mf_config_table[0]; i++)
        if (strcmp(mf_config_table[i].name, name) == 0)
            return &mf_config_table[i];
    assert(!"environment variable missing from config_vars.def");
    return NULL;
}

const char *mf_config_str(const char *name)
{
    const mf_config_entry *e = mf_config_find(name);
    const char *v = getenv(name);
    return (v && *v) ? v : (e ? e->def : "");
}

static int mf_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

size_t mf_config_size_or(const char *name, size_t def)
{
    size_t v = 0;
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    if (mf_parse_size(s, &v) != 0) {
        mf_warn("%s=%s is not a size (digits with optional K/M/G); using %zu", name, s, def);
        return def;
    }
    return v;
}

size_t mf_config_size(const char *name)
{
    const mf_config_entry *e = mf_config_find(name);
    size_t def = 0;
    int ok = mf_parse_size(e->def, &def);
    assert(ok == 0);
    (void)ok;
    return mf_config_size_or(name, def);
}

long mf_config_long(const char *name)
{
    const mf_config_entry *e = mf_config_find(name);
    const char *s = getenv(name);
    char *end;
    if (s && *s) {
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!errno && end != s && !*end)
            return v;
        mf_warn("%s=%s is not an integer; using \"%s\"", name, s, e->def);
    }
    return *e->def ? strtol(e->def, NULL, 10) : 0;
}

bool mf_config_bool(const char *name)
{
    const char *s = mf_config_str(name);
    return !(strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0 ||
             strcasecmp(s, "off") == 0 || *s == '\0');
}
