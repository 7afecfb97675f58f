/*
 * cpu_quota_test.c — the pieces of core/cpu_quota.c on the texts the kernel writes (cpu.max,
 * /proc/self/cgroup of v1, v2 and hybrid hosts, and of a container), and the reading of this
 * process's real groups: whatever limit it finds must be one that the files say. The effect of a
 * real limit on a job is tested by tests/launcher/cpu_quota.sh, which makes one.
 * Exits 0 on success.
 */
#include <stdio.h>
#include <string.h>

#include "core/cpu_quota.h"

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                             \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void check_group(const char *text, const char *controller, const char *want)
{
    char out[256] = "unchanged";
    bool ok = mf_cpu_quota_group(text, controller, out, sizeof out);
    if (want ? !ok || strcmp(out, want) != 0 : ok) {
        fprintf(stderr, "group(%s) of \"%s\": got %s \"%s\", want %s\n",
                controller ? controller : "v2", text, ok ? "found" : "none", out,
                want ? want : "none");
        failures++;
    }
}

int main(void)
{
    /* quota and period */
    CHECK(mf_cpu_quota_of(-1, 100000) == 0);     /* v1: no limit */
    CHECK(mf_cpu_quota_of(200000, 100000) == 2); /* docker --cpus=2 */
    CHECK(mf_cpu_quota_of(150000, 100000) == 1); /* 1.5 cores: two spinners would be throttled */
    CHECK(mf_cpu_quota_of(50000, 100000) == 1);  /* half a core still runs one */
    CHECK(mf_cpu_quota_of(100000, 0) == 0);
    CHECK(mf_cpu_quota_of(6400000, 100000) == 64);

    /* v2 cpu.max */
    CHECK(mf_cpu_quota_parse_max("max 100000\n") == 0);
    CHECK(mf_cpu_quota_parse_max("250000 100000\n") == 2);
    CHECK(mf_cpu_quota_parse_max("100000 100000") == 1);
    CHECK(mf_cpu_quota_parse_max("") == -1);
    CHECK(mf_cpu_quota_parse_max("max") == -1);
    CHECK(mf_cpu_quota_parse_max("12x 100000") == -1);
    CHECK(mf_cpu_quota_parse_max("-5 100000") == -1);
    CHECK(mf_cpu_quota_parse_max("100000 0") == -1);

    /* /proc/self/cgroup: a v2 host, a hybrid host, a v1 host, a namespaced container */
    const char *v2 = "0::/user.slice/user-1000.slice/session-3.scope\n";
    check_group(v2, NULL, "/user.slice/user-1000.slice/session-3.scope");
    check_group(v2, "cpu", NULL);
    const char *hybrid = "12:cpuset:/\n11:cpu,cpuacct:/system.slice/job.service\n"
                         "4:memory:/system.slice/job.service\n1:name=systemd:/x\n0::/x\n";
    check_group(hybrid, NULL, "/x");
    check_group(hybrid, "cpu", "/system.slice/job.service");
    check_group(hybrid, "cpuacct", "/system.slice/job.service");
    check_group(hybrid, "cpuset", "/");
    check_group(hybrid, "memory", "/system.slice/job.service");
    const char *v1 = "3:cpuacct,cpu:/docker/0123abcd\n2:cpuset:/docker/0123abcd";
    check_group(v1, "cpu", "/docker/0123abcd"); /* last line without a newline */
    check_group(v1, "cp", NULL);                /* whole items only */
    check_group(v1, NULL, NULL);
    check_group("0::/\n", NULL, "/");
    check_group("", NULL, NULL);
    check_group("garbage\n0:x\n", "cpu", NULL);
    check_group("0::relative\n", NULL, NULL);
    char small[4];
    CHECK(!mf_cpu_quota_group(v2, NULL, small, sizeof small)); /* does not fit */

    /* This process's real groups: a limit, if any, lies between 1 and a huge number, and is the
     * same on the second call (remembered). */
    int cores = mf_cpu_quota_cores();
    CHECK(cores >= 0 && cores < 1 << 20);
    CHECK(mf_cpu_quota_cores() == cores);
    printf("cpu_quota_test: this process's CPU limit: %d cores (0: none)\n", cores);

    printf("cpu_quota_test: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
