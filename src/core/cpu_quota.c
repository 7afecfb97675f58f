/*
 * cpu_quota.c — the control group's CPU limit in whole cores (cpu_quota.h). Reads only: no
 * cgroup is created or changed here.
 */
#include "core/cpu_quota.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mf_cpu_quota_of(long long quota, long long period)
{
    if (quota < 0 || period <= 0)
        return 0;
    /* Rounded down: a rank may only spin where it has a whole core's time (two spinning ranks
     * on 1.5 cores are throttled a quarter of every period); less than a core still runs one. */
    long long cores = quota / period;
    if (cores < 1)
        return 1;
    return cores > INT_MAX ? INT_MAX : (int)cores;
}

int mf_cpu_quota_parse_max(const char *text)
{
    char quota[32];
    long long period;
    if (sscanf(text, "%31s %lld", quota, &period) != 2 || period <= 0)
        return -1;
    if (strcmp(quota, "max") == 0)
        return 0;
    char *end;
    long long q = strtoll(quota, &end, 10);
    if (*end != '\0' || q < 0)
        return -1;
    return mf_cpu_quota_of(q, period);
}

bool mf_cpu_quota_group(const char *proc_cgroup, const char *controller, char *out, size_t outlen)
{
    /* Lines "ID:CONTROLLERS:PATH"; v2's has ID 0 and no controllers. */
    for (const char *line = proc_cgroup; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            size_t clen = (size_t)(c2 - c1 - 1);
            bool match = false;
            if (!controller) {
                match = clen == 0 && c1 - line == 1 && line[0] == '0';
            } else {
                /* the controller as one whole item of the comma-separated list */
                size_t want = strlen(controller);
                for (const char *p = c1 + 1; p < c2 && !match;) {
                    const char *comma = memchr(p, ',', (size_t)(c2 - p));
                    const char *e = comma ? comma : c2;
                    match = (size_t)(e - p) == want && memcmp(p, controller, want) == 0;
                    p = e + 1;
                }
            }
            size_t plen = len - (size_t)(c2 + 1 - line);
            if (match) {
                if (plen == 0 || plen + 1 > outlen || c2[1] != '/')
                    return false;
                memcpy(out, c2 + 1, plen);
                out[plen] = '\0';
                return true;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* Reads a small file into buf (NUL-terminated); false when it cannot be read. */
static bool mf_cpu_quota_read(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0;
}

/* The limit of one group directory: v2 or v1 files, whichever it has; 0 for none. */
static int mf_cpu_quota_dir(const char *dir, bool v2)
{
    char path[PATH_MAX + 32], text[128];
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (!mf_cpu_quota_read(path, text, sizeof text))
            return 0;
        int cores = mf_cpu_quota_parse_max(text);
        return cores > 0 ? cores : 0;
    }
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (!mf_cpu_quota_read(path, text, sizeof text))
        return 0;
    long long quota = strtoll(text, NULL, 10);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (!mf_cpu_quota_read(path, text, sizeof text))
        return 0;
    return mf_cpu_quota_of(quota, strtoll(text, NULL, 10));
}

/* The tightest limit on `group` (a path under the mount `mount`) and its ancestors, the mount's
 * root included; 0 for none. */
static int mf_cpu_quota_walk(const char *mount, const char *group, bool v2)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s%s", mount, strcmp(group, "/") ? group : "") >=
        (int)sizeof dir)
        return 0;
    size_t root = strlen(mount);
    int best = 0;
    for (;;) {
        int cores = mf_cpu_quota_dir(dir, v2);
        if (cores > 0 && (best == 0 || cores < best))
            best = cores;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < root)
            break;
        *slash = '\0'; /* the parent; at the mount's root, slash - dir == root */
    }
    return best;
}

static int mf_cpu_quota_read_now(void)
{
    char text[4096], group[PATH_MAX];
    if (!mf_cpu_quota_read("/proc/self/cgroup", text, sizeof text))
        return 0;
    int best = 0;
    if (mf_cpu_quota_group(text, NULL, group, sizeof group))
        best = mf_cpu_quota_walk("/sys/fs/cgroup", group, true);
    if (mf_cpu_quota_group(text, "cpu", group, sizeof group)) {
        /* v1's cpu controller is mounted alone or together with cpuacct */
        static const char *const mounts[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                             "/sys/fs/cgroup/cpuacct,cpu"};
        for (size_t i = 0; i < sizeof mounts / sizeof mounts[0]; i++) {
            struct stat st;
            if (stat(mounts[i], &st) != 0 || !S_ISDIR(st.st_mode))
                continue;
            int cores = mf_cpu_quota_walk(mounts[i], group, false);
            if (cores > 0 && (best == 0 || cores < best))
                best = cores;
            break;
        }
    }
    return best;
}

int mf_cpu_quota_cores(void)
{
    /* -1: not read yet. Two threads reading at once would both find the same value. */
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        v = mf_cpu_quota_read_now();
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
