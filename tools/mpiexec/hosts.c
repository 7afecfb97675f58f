/*
 * hosts.c — the hosts of a job and which rank runs where.
 *
 * --host h1:2,h2:2 and --hostfile FILE (lines "host slots=N", "host:N" or "host"; '#' starts a
 * comment) add hosts; a host named twice is one host with the slots added up, since one proxy
 * runs all ranks of a host. Mapping (--map-by):
 *   slot      fill each host's slots in order, then start over (ranks of a host are consecutive);
 *   node      one rank per host in turn, skipping full hosts until all are full;
 *   ppr:N:node  N ranks on each host, consecutive; more ranks than N per host is an error.
 * More ranks than slots is allowed (the hosts are then oversubscribed, which the ranks are told).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiexec.h"

static int mx_host_add(mx_options *opt, const char *name, size_t namelen, int slots)
{
    if (namelen == 0 || namelen > 255) {
        fprintf(stderr, "mpiexec: bad host name '%.*s'\n", (int)namelen, name);
        return -1;
    }
    for (size_t i = 0; i < namelen; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '-' && c != '.' && c != '_' && c != ':' && c != '@') {
            fprintf(stderr, "mpiexec: bad character in host name '%.*s'\n", (int)namelen, name);
            return -1;
        }
    }
    for (int h = 0; h < opt->nhosts; h++) {
        if (strlen(opt->hosts[h].name) == namelen && !strncmp(opt->hosts[h].name, name, namelen)) {
            opt->hosts[h].slots += slots;
            return 0;
        }
    }
    mx_hostspec *n = realloc(opt->hosts, (size_t)(opt->nhosts + 1) * sizeof *n);
    if (!n)
        return -1;
    opt->hosts = n;
    if (!(n[opt->nhosts].name = strndup(name, namelen)))
        return -1;
    n[opt->nhosts++].slots = slots;
    return 0;
}

static int mx_parse_slots(const char *s, size_t len, int *out)
{
    char buf[16];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end || v < 1 || v > 100000)
        return -1;
    *out = (int)v;
    return 0;
}

int mx_hosts_add_list(mx_options *opt, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        int slots = 1;
        if (colon && mx_parse_slots(colon + 1, len - (size_t)(colon + 1 - p), &slots) != 0) {
            fprintf(stderr, "mpiexec: bad slot count in --host entry '%.*s'\n", (int)len, p);
            return -1;
        }
        if (mx_host_add(opt, p, colon ? (size_t)(colon - p) : len, slots) != 0)
            return -1;
        p += len + (comma != NULL);
    }
    return 0;
}

int mx_hosts_add_file(mx_options *opt, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mpiexec: cannot read hostfile '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0, before = opt->nhosts;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save, *tok = strtok_r(line, " \t\r\n", &save);
        if (!tok)
            continue;
        char *name = tok;
        int slots = 1;
        char *colon = strchr(name, ':');
        if (colon && mx_parse_slots(colon + 1, strlen(colon + 1), &slots) != 0)
            rc = -1;
        while (rc == 0 && (tok = strtok_r(NULL, " \t\r\n", &save))) {
            if (!strncmp(tok, "slots=", 6) && mx_parse_slots(tok + 6, strlen(tok + 6), &slots) == 0)
                continue;
            if (!strncmp(tok, "max_slots=", 10))
                continue; /* Open MPI's; the limit is not enforced */
            rc = -1;
        }
        if (rc == 0)
            rc = mx_host_add(opt, name, colon ? (size_t)(colon - name) : strlen(name), slots);
        if (rc != 0)
            fprintf(stderr, "mpiexec: %s:%d: expected 'host [slots=N]'\n", path, lineno);
    }
    fclose(f);
    if (rc == 0 && opt->nhosts == before) {
        fprintf(stderr, "mpiexec: hostfile '%s' names no host\n", path);
        rc = -1;
    }
    return rc;
}

int mx_hosts_default_np(const mx_options *opt)
{
    if (opt->map_by == MX_MAP_PPR)
        return opt->ppr * opt->nhosts;
    int total = 0;
    for (int h = 0; h < opt->nhosts; h++)
        total += opt->hosts[h].slots;
    return total;
}

int mx_hosts_map(const mx_options *opt, int *host_of)
{
    int nh = opt->nhosts, np = opt->np;
    if (opt->map_by == MX_MAP_PPR) {
        if (np > opt->ppr * nh) {
            fprintf(stderr, "mpiexec: %d processes do not fit ppr:%d:node on %d host%s\n", np,
                    opt->ppr, nh, nh == 1 ? "" : "s");
            return -1;
        }
        for (int r = 0; r < np; r++)
            host_of[r] = r / opt->ppr;
        return 0;
    }
    int total = mx_hosts_default_np(opt);
    if (opt->map_by == MX_MAP_SLOT) {
        for (int r = 0; r < np; r++) {
            int s = r % total, h = 0;
            while (s >= opt->hosts[h].slots)
                s -= opt->hosts[h++].slots;
            host_of[r] = h;
        }
        /* Wrapped rounds interleave hosts; keep each host's ranks consecutive instead. */
        if (np > total) {
            int *count = calloc((size_t)nh, sizeof *count);
            if (!count)
                return -1;
            for (int r = 0; r < np; r++)
                count[host_of[r]]++;
            for (int h = 0, r = 0; h < nh; h++)
                for (int k = 0; k < count[h]; k++)
                    host_of[r++] = h;
            free(count);
        }
        return 0;
    }
    int *used = calloc((size_t)nh, sizeof *used);
    if (!used)
        return -1;
    int cursor = 0;
    for (int r = 0; r < np; r++) {
        int h = -1;
        for (int k = 0; k < nh && h < 0; k++)
            if (used[(cursor + k) % nh] < opt->hosts[(cursor + k) % nh].slots)
                h = (cursor + k) % nh;
        if (h < 0)
            h = cursor;
        used[h]++;
        host_of[r] = h;
        cursor = (h + 1) % nh;
    }
    free(used);
    return 0;
}
