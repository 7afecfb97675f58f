/*
 * cleanup.c — removes what a job may leave on a host when its ranks were killed: shared-memory
 * segments in /dev/shm (see src/fabric/shm/shm_name.h). The shm fabric unlinks its segment as
 * soon as every local rank has mapped it, so after a normal run there is nothing to remove; a
 * rank killed during MPI_Init can leave one, and mpiexec (or the host's proxy) removes it when
 * the job is over.
 */
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "fabric/shm/shm_name.h"
#include "mpiexec.h"

void mx_cleanup_host(const mx_job *job)
{
    char prefix[64];
    int n = mf_shm_job_prefix(prefix, sizeof prefix, (unsigned)getuid(), mf_job_hash(job->kvsname));
    DIR *d = opendir("/dev/shm");
    if (!d || n <= 0)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)n) == 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}
