/*
 * cleanup.c — removes what a job may leave on a host when its ranks were killed: shared-memory
 * segments in /dev/shm (see src/fabric/shm/shm_name.h). The shm fabric unlinks its segment as
 * soon as every local rank has mapped it, so after a normal run there is nothing to remove; a
 * rank killed during MPI_Init can leave one, and mpiexec (or the host's proxy) removes it when
 * the job is over. The same goes for the regions libfabric's shm provider creates for the ofi
 * fabric, named "<pid>:<n>:<n>" after the process that made them and unlinked only by its
 * fi_close: a killed rank leaves its own (16 MiB each, seen after cluster.lost-style kills).
 * Only names that parse that way, name a pid of one of this host's ranks, and belong to us are
 * removed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric/shm/shm_name.h"
#include "mpiexec.h"

/* Whether `name` is a libfabric shm region ("<pid>:<digits>:<digits>") of a rank this process
 * forked. */
static bool mx_ofi_shm_region_of_ours(const char *name, const mx_job *job)
{
    char *end;
    long pid = strtol(name, &end, 10);
    if (end == name || *end != ':' || pid <= 0)
        return false;
    /* then exactly two ":<digits>" groups, none empty */
    const char *c = end;
    for (int group = 0; group < 2; group++) {
        if (*c++ != ':' || *c < '0' || *c > '9')
            return false;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    if (*c)
        return false;
    for (int i = 0; i < job->n; i++)
        if (!job->ranks[i].remote && job->ranks[i].pid == (pid_t)pid)
            return true;
    return false;
}

void mx_cleanup_host(const mx_job *job)
{
    char prefix[64];
    int n = mf_shm_job_prefix(prefix, sizeof prefix, (unsigned)getuid(), mf_job_hash(job->kvsname));
    DIR *d = opendir("/dev/shm");
    if (!d || n <= 0)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, prefix, (size_t)n) == 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
        else if (mx_ofi_shm_region_of_ours(e->d_name, job) &&
                 fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                 st.st_uid == getuid() && S_ISREG(st.st_mode))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}
