/*
 * host_segment.c — one shared-memory segment mapped by every rank of a communicator whose ranks
 * all live on this host (coll.h: mf_host_segment_map).
 *
 * Used by the shared-memory collectives (coll_shm.c) and by the one-sided layer's direct windows
 * (src/rma/rma_win.c, which agrees on the outcome over the whole window after it). The
 * communicator's rank 0 creates a named POSIX shared-memory object (O_EXCL, mode 0600,
 * zero-filled by ftruncate), tells the others its name, every rank maps it, and once all ranks
 * agreed that they have it mapped rank 0 unlinks it, so nothing stays in /dev/shm even if the
 * job dies later. A job killed before that unlink leaves the name; it carries the job's prefix
 * and the creator's pid (fabric/shm/shm_name.h), so mpiexec removes it at the job's end, and the
 * next job's shm creator on the host if mpiexec was killed too (mf_shm_segment_reap). The exchanges use point-to-point collectives, never a segment.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll/coll_impl.h"
#include "core/error.h"
#include "core/state.h"
#include "fabric/shm/shm_name.h"

int mf_host_segment_map(mf_comm *node, size_t len, const char *kind, void **out)
{
    static unsigned seq;
    struct {
        char name[96];
        int err;
    } msg = {.err = 0};
    int fd = -1, rc;
    *out = NULL;
    if (node->c_rank == 0) {
        mf_shm_host_segment_name(msg.name, sizeof msg.name, (unsigned)getuid(), mf_g.job_hash, kind,
                                 (int)getpid(), seq++);
        fd = shm_open(msg.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0)
            msg.err = 1;
    }
    rc = mf_coll_bcast_binomial(&msg, sizeof msg, mf_coll_byte(), 0, node);
    int err = rc != MPI_SUCCESS || msg.err;
    if (!err && node->c_rank != 0 && (fd = shm_open(msg.name, O_RDWR, 0)) < 0)
        err = 1;
    if (!err) {
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            err = 1;
        else
            *out = p;
    }
    if (fd >= 0)
        close(fd);
    /* agreed by all: a rank that failed must not leave the others using the segment */
    int any = 1;
    int rc2 =
        mf_coll_allreduce_p2p(&err, &any, 1, mf_datatype_get(MPI_INT), mf_op_get(MPI_MAX), node);
    if (node->c_rank == 0 && fd >= 0)
        shm_unlink(msg.name);
    if (!rc)
        rc = rc2;
    if (rc || any) {
        if (*out)
            munmap(*out, len);
        *out = NULL;
    }
    if (!rc && any)
        rc = mf_error(MPI_ERR_NO_MEM, "cannot map a shared segment of %zu bytes for %s", len, kind);
    return rc;
}
