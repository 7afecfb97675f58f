/*
 * bind.c — --bind-to core: local rank i of a host runs on core i (modulo the cores this process
 * may use). A core is the set of CPUs of our affinity mask that share (package, core id) in
 * /sys/devices/system/cpu/cpuN/topology, so hardware threads of one core stay together; without
 * that information every CPU counts as a core.
 *
 * Why not hwloc: linking it made mpiexec's own start-up slower (libhwloc pulls in further shared
 * libraries), which widens the window before mpiexec takes over its signals; reading sysfs is
 * all that mapping ranks to cores needs.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "mpiexec.h"

static cpu_set_t mx_cores[CPU_SETSIZE];
static int mx_core_first[CPU_SETSIZE]; /* lowest CPU of each core, for the report */
static int mx_ncores = -1;

static int mx_topo_id(int cpu, const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

int mx_bind_prepare(int nlocal)
{
    (void)nlocal;
    if (mx_ncores >= 0)
        return mx_ncores > 0 ? 0 : -1;
    cpu_set_t allowed;
    int pkg[CPU_SETSIZE], core[CPU_SETSIZE];
    mx_ncores = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &allowed))
            continue;
        int p = mx_topo_id(c, "physical_package_id"), id = mx_topo_id(c, "core_id"), k;
        for (k = 0; k < mx_ncores; k++)
            if (id >= 0 && pkg[k] == p && core[k] == id)
                break;
        if (k == mx_ncores) {
            CPU_ZERO(&mx_cores[k]);
            pkg[k] = p;
            core[k] = id;
            mx_core_first[k] = c;
            mx_ncores++;
        }
        CPU_SET(c, &mx_cores[k]);
    }
    return mx_ncores > 0 ? 0 : -1;
}

int mx_bind_get(int local, void *cpuset, size_t setsize, char *desc, size_t desclen)
{
    if (mx_ncores <= 0 || setsize < sizeof(cpu_set_t))
        return -1;
    int k = local % mx_ncores;
    memcpy(cpuset, &mx_cores[k], sizeof(cpu_set_t));
    char cpus[128] = "";
    size_t used = 0;
    for (int c = 0; c < CPU_SETSIZE && used + 8 < sizeof cpus; c++)
        if (CPU_ISSET(c, &mx_cores[k]))
            used += (size_t)snprintf(cpus + used, sizeof cpus - used, "%s%d", used ? "," : "", c);
    snprintf(desc, desclen, "core %d (cpu %s)", k, cpus);
    return 0;
}
