/* Memory allocation kinds: parsing, support and narrowing (see memkind.h). */
#include "comm/memkind.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Every kind Manifold supports: all of them the CPU reaches by loads and stores. */
static const char *const mf_memkind_known[] = {
    "system", "mpi", "mpi:alloc_mem", "mpi:win_allocate", "mpi:win_allocate_shared",
};

/* A list's next entry, spaces trimmed: *tok and *len; false at the end. Empty entries are
 * skipped. */
static bool memkind_next(const char **p, const char **tok, size_t *len)
{
    for (;;) {
        const char *s = *p;
        if (!*s)
            return false;
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        *p = *end ? end + 1 : end;
        while (s < end && *s == ' ')
            s++;
        const char *e = end;
        while (e > s && e[-1] == ' ')
            e--;
        if (e > s) {
            *tok = s;
            *len = (size_t)(e - s);
            return true;
        }
    }
}

static bool memkind_is(const char *tok, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(tok, name, len) == 0;
}

static bool memkind_known(const char *tok, size_t len)
{
    for (size_t i = 0; i < sizeof mf_memkind_known / sizeof mf_memkind_known[0]; i++)
        if (memkind_is(tok, len, mf_memkind_known[i]))
            return true;
    return false;
}

/* Whether list `l` has the entry tok[0..len). */
static bool memkind_has(const char *l, const char *tok, size_t len)
{
    const char *t;
    size_t n;
    while (memkind_next(&l, &t, &n))
        if (n == len && memcmp(t, tok, len) == 0)
            return true;
    return false;
}

/* Appends tok[0..len) to `out` (room for it is there: every entry comes from an input at most
 * as long as the output's allocation) unless already in it. */
static void memkind_add(char *out, const char *tok, size_t len)
{
    if (memkind_has(out, tok, len))
        return;
    size_t at = strlen(out);
    if (at)
        out[at++] = ',';
    memcpy(out + at, tok, len);
    out[at + len] = '\0';
}

char *mf_memkind_supported(const char *requested)
{
    if (!requested)
        requested = MF_MEMKIND_DEFAULT;
    char *out = calloc(1, strlen(requested) + 1);
    const char *t;
    size_t n;
    while (out && memkind_next(&requested, &t, &n))
        if (memkind_known(t, n))
            memkind_add(out, t, n);
    return out;
}

char *mf_memkind_narrow(const char *kinds, const char *asserted)
{
    if (!asserted)
        return strdup(kinds);
    /* Each output entry is an asserted one or an inherited one, at most once each. */
    char *out = calloc(1, strlen(kinds) + strlen(asserted) + 2);
    const char *t;
    size_t n;
    while (out && memkind_next(&asserted, &t, &n)) {
        const char *colon = memchr(t, ':', n);
        if (memkind_has(kinds, t, n)) {
            memkind_add(out, t, n);
        } else if (colon) { /* restricted: covered by its whole kind, if a known restriction */
            if (memkind_known(t, n) && memkind_has(kinds, t, (size_t)(colon - t)))
                memkind_add(out, t, n);
        } else { /* whole: keeps the restricted forms inherited */
            const char *l = kinds, *k;
            size_t kn;
            while (memkind_next(&l, &k, &kn))
                if (kn > n && k[n] == ':' && memcmp(k, t, n) == 0)
                    memkind_add(out, k, kn);
        }
    }
    return out;
}
