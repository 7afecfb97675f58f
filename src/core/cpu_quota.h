/*
 * cpu_quota.h — the CPU time a control group grants this process, in whole cores: the limit of
 * `docker run --cpus`, of a Kubernetes container's CPU limit or of a systemd CPUQuota=, which the
 * affinity mask and the count of online cores do not show (a container limited to 2 cores of a
 * 64-core host sees 64 of each). Ranks that outnumber it are oversubscribed as surely as ranks
 * that outnumber the cores: a rank that spins while it waits uses up the quota its peers need,
 * and the whole group is throttled until the next period.
 *
 * Both cgroup versions: v2's cpu.max ("QUOTA PERIOD", or "max PERIOD" for none) and v1's
 * cpu.cfs_quota_us / cpu.cfs_period_us (quota -1 for none), on the group named in
 * /proc/self/cgroup and on each of its ancestors up to the mount's root, whose limits bind too.
 * A container that does not see its own group's path under the mount (v1 without a cgroup
 * namespace) reaches its own limits at the mount's root, which is its group.
 */
#ifndef MF_CORE_CPU_QUOTA_H
#define MF_CORE_CPU_QUOTA_H

#include <stdbool.h>
#include <stddef.h>

/* Whole cores (quota / period, rounded down, at least 1) of the tightest CPU limit on this
 * process's control group and its ancestors; 0 when none is set or none can be read. Read once per process (a few
 * small files), then remembered. */
int mf_cpu_quota_cores(void);

/* ---- The pieces, for the unit test ---- */

/* Cores of a quota and a period (same unit), rounded down, at least 1; 0 for no limit
 * (quota < 0) or a period that is not positive. */
int mf_cpu_quota_of(long long quota, long long period);

/* Cores of the text of a v2 cpu.max ("250000 100000" is 2; "max 100000" is 0), -1 when the text
 * is not of that form. */
int mf_cpu_quota_parse_max(const char *text);

/* The path of this process's group in the text of /proc/self/cgroup: for cgroup v2 (controller
 * NULL: the "0::/path" line) or for the v1 hierarchy whose controller list (e.g. "cpu,cpuacct")
 * holds `controller`. Copied to out (at most outlen bytes with the NUL); false when there is no
 * such line or the path does not fit. */
bool mf_cpu_quota_group(const char *proc_cgroup, const char *controller, char *out, size_t outlen);

#endif
