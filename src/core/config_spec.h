/*
 * config_spec.h — the table of Manifold's environment variables (config_vars.def) and the
 * checks of their values, shared by the library (config.c: every MPI_Init) and by mpiexec
 * (options.c: before any rank starts), which compiles this header in as it does shm_name.h.
 * Pure functions of their arguments: no logging, no MPI, no allocation.
 *
 * A variable's `check` column is one of
 *   "bool"               1, 0, yes, no, true, false, on, off (any case)
 *   "int LO HI"          a decimal integer in [LO, HI]
 *   "size LO HI"         a byte count in [LO, HI]: digits with an optional K, M or G suffix
 *                        (powers of 1024); LO and HI are written the same way
 *   "seconds HI"         a decimal number of seconds, above 0 and at most HI
 *   "enum A|B|C"         exactly one of the words
 *   "interfaces"         comma-separated interface names (shell patterns) or IPv4 CIDRs
 *                        (core/netif.h)
 *   "fabrics A|B"        fabric entries CLASS[:IFACE+IFACE], comma-separated, CLASS one of the
 *                        words (core/fabric_spec.h)
 *   "ports"              a TCP port, or LOW-HIGH with 1 <= LOW <= HIGH <= 65535
 *   "string"             anything
 * An unset or empty variable always means its default and is never checked.
 */
#ifndef MF_CORE_CONFIG_SPEC_H
#define MF_CORE_CONFIG_SPEC_H

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fabric_spec.h"
#include "core/netif.h"

typedef struct mf_config_var {
    const char *name;
    const char *def;
    const char *check;
    const char *meaning;
} mf_config_var;

static const mf_config_var mf_config_vars[] = {
#define MF_CONFIG_VAR(name, def, check, meaning) {#name, def, check, meaning},
#include "core/config_vars.def"
};
#define MF_CONFIG_NVARS (sizeof mf_config_vars / sizeof mf_config_vars[0])

/* Names the library does not read but that are Manifold's all the same; a trailing '_' makes a
 * prefix. */
static const char *const mf_config_others[] = {
#define MF_CONFIG_OTHER(name, meaning) #name,
#include "core/config_vars.def"
};
#define MF_CONFIG_NOTHERS (sizeof mf_config_others / sizeof mf_config_others[0])

static inline const mf_config_var *mf_config_var_find(const char *name)
{
    for (size_t i = 0; i < MF_CONFIG_NVARS; i++)
        if (strcmp(mf_config_vars[i].name, name) == 0)
            return &mf_config_vars[i];
    return NULL;
}

/* A decimal integer, nothing around it (no blanks, no '+'). */
static inline int mf_config_parse_long(const char *s, long long *out)
{
    const char *d = *s == '-' ? s + 1 : s;
    if (!isdigit((unsigned char)*d))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Digits with an optional K, M or G suffix (powers of 1024), no overflow. */
static inline int mf_config_parse_size(const char *s, unsigned long long *out)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        break;
    }
    if (shift)
        end++;
    if (*end || v > (~0ull >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

static inline int mf_config_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false",
                                                                                "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
            *out = strcasecmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return -1;
}

/* A decimal number of seconds in (0, max]: digits, optionally a fraction. */
static inline int mf_config_parse_seconds(const char *s, double max, double *out)
{
    size_t whole = strspn(s, "0123456789"), frac = 0;
    if (s[whole] == '.')
        frac = strspn(s + whole + 1, "0123456789");
    size_t end = whole + (s[whole] == '.' ? 1 + frac : 0);
    if (whole + frac == 0 || s[end])
        return -1;
    double v = strtod(s, NULL);
    if (!(v > 0) || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "LOW-HIGH" or one port. */
static inline int mf_config_parse_ports(const char *s, int *lo, int *hi)
{
    char first[16];
    const char *dash = strchr(s, '-');
    size_t n = dash ? (size_t)(dash - s) : strlen(s);
    long long a, b;
    if (n >= sizeof first)
        return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    if (first[0] == '-' || mf_config_parse_long(first, &a) != 0)
        return -1;
    b = a;
    if (dash && (dash[1] == '-' || mf_config_parse_long(dash + 1, &b) != 0))
        return -1;
    if (a < 1 || b > 65535 || a > b)
        return -1;
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

/* Whether `value` passes `check`; if not, `accepted` says what would (always filled). */
static inline bool mf_config_value_ok(const char *check, const char *value, char *accepted,
                                      size_t len)
{
    char lo_s[32] = "", hi_s[32] = "";
    if (strcmp(check, "bool") == 0) {
        bool b;
        snprintf(accepted, len, "1, 0, yes, no, true, false, on or off");
        return mf_config_parse_bool(value, &b) == 0;
    }
    if (sscanf(check, "int %31s %31s", lo_s, hi_s) == 2) {
        long long lo = strtoll(lo_s, NULL, 10), hi = strtoll(hi_s, NULL, 10), v;
        snprintf(accepted, len, "an integer from %s to %s", lo_s, hi_s);
        return mf_config_parse_long(value, &v) == 0 && v >= lo && v <= hi;
    }
    if (sscanf(check, "size %31s %31s", lo_s, hi_s) == 2) {
        unsigned long long lo = 0, hi = 0, v;
        mf_config_parse_size(lo_s, &lo);
        mf_config_parse_size(hi_s, &hi);
        snprintf(accepted, len,
                 "a number of bytes from %s to %s, digits with an optional K, M or G suffix", lo_s,
                 hi_s);
        return mf_config_parse_size(value, &v) == 0 && v >= lo && v <= hi;
    }
    if (sscanf(check, "seconds %31s", hi_s) == 1) {
        double v;
        snprintf(accepted, len, "a number of seconds above 0, at most %s", hi_s);
        return mf_config_parse_seconds(value, strtod(hi_s, NULL), &v) == 0;
    }
    if (strncmp(check, "enum ", 5) == 0) {
        const char *words = check + 5;
        size_t vl = strlen(value), used = 0;
        bool ok = false;
        accepted[0] = '\0';
        for (const char *w = words; *w;) {
            size_t n = strcspn(w, "|");
            ok |= n == vl && strncmp(w, value, n) == 0;
            if (used < len)
                used += (size_t)snprintf(accepted + used, len - used, "%s%.*s",
                                         w == words ? "" : (w[n] ? ", " : " or "), (int)n, w);
            w += n + (w[n] == '|');
        }
        return ok;
    }
    if (strcmp(check, "interfaces") == 0) {
        snprintf(accepted, len,
                 "comma-separated interface names (shell patterns such as eth*) or IPv4 CIDRs "
                 "such as 10.1.0.0/16");
        return mf_netif_spec_ok(value, NULL, 0);
    }
    if (strncmp(check, "fabrics ", 8) == 0) {
        mf_fabric_spec_entry e[MF_FABRIC_SPEC_MAX];
        char why[160];
        bool ok =
            mf_fabric_spec_parse(value, check + 8, e, MF_FABRIC_SPEC_MAX, why, sizeof why) > 0;
        snprintf(accepted, len,
                 "FABRIC or FABRIC:IFACE+IFACE, comma-separated, FABRIC one of %s%s%.96s",
                 check + 8, ok ? "" : " (here: ", ok ? "" : why);
        if (!ok && strlen(accepted) + 1 < len)
            strcat(accepted, ")");
        return ok;
    }
    if (strcmp(check, "ports") == 0) {
        int lo, hi;
        snprintf(accepted, len, "a port or LOW-HIGH, with 1 <= LOW <= HIGH <= 65535");
        return mf_config_parse_ports(value, &lo, &hi) == 0;
    }
    snprintf(accepted, len, "any text");
    return true; /* "string" */
}

/* Checks one variable's value (unset or empty is always fine): true, or false with msg saying
 * "NAME='value' is not valid: accepted values are ...". */
static inline bool mf_config_check_one(const mf_config_var *v, const char *value, char *msg,
                                       size_t len)
{
    char accepted[256];
    if (!value || !*value || mf_config_value_ok(v->check, value, accepted, sizeof accepted))
        return true;
    snprintf(msg, len, "%s='%.64s' is not valid: accepted values are %s", v->name, value, accepted);
    return false;
}

/* Levenshtein distance, for names of at most 63 characters (longer ones: far from all). */
static inline size_t mf_config_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 64 || lb >= 64)
        return 64;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Whether `name` (a MANIFOLD_* environment name) is one of ours. */
static inline bool mf_config_known(const char *name)
{
    if (mf_config_var_find(name))
        return true;
    for (size_t i = 0; i < MF_CONFIG_NOTHERS; i++) {
        const char *o = mf_config_others[i];
        size_t n = strlen(o);
        if (o[n - 1] == '_' ? strncmp(name, o, n) == 0 : strcmp(name, o) == 0)
            return true;
    }
    return false;
}

/* The variable of the table whose name is closest to `name`, or NULL if none is close: at most
 * one edit per three characters after the "MANIFOLD_" prefix, and at least one. */
static inline const char *mf_config_closest(const char *name)
{
    const char *best = mf_config_vars[0].name;
    size_t bestd = (size_t)-1;
    for (size_t i = 0; i < MF_CONFIG_NVARS; i++) {
        size_t d = mf_config_distance(name, mf_config_vars[i].name);
        if (d < bestd) {
            bestd = d;
            best = mf_config_vars[i].name;
        }
    }
    size_t len = strlen(name), tail = len > 9 ? len - 9 : 0;
    return bestd <= 1 + tail / 3 ? best : NULL;
}

#endif
