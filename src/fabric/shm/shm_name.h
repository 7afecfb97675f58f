/*
 * shm_name.h — how a job's shared-memory segments are named, shared by the shm fabric (which
 * creates them) and mpiexec (which removes any a killed job left behind).
 *
 * /dev/shm/manifold-<uid>-<job hash>-<node>, where the job hash is the 64-bit FNV-1a digest of
 * the job id (the PMI kvsname) — see mf_job_hash(). Only a fallback uses that name: the host's
 * segment is normally a memfd, never in /dev/shm.
 *
 * /dev/shm/manifold-<uid>-<job hash>-<kind>-<creator pid>-<seq>: a segment one communicator's
 * ranks on a host share (src/coll/host_segment.c; kind "coll" or "rma"). It is unlinked once
 * all of them have it mapped. Both names start with the job's prefix, so mpiexec's end-of-job
 * cleanup removes either if the job was killed before the unlink; the creator's pid in the
 * second lets the next job on the host remove it when mpiexec itself was killed too.
 */
#ifndef MF_FABRIC_SHM_SHM_NAME_H
#define MF_FABRIC_SHM_SHM_NAME_H

#include <stdint.h>
#include <stdio.h>

/* The digest of a job id that names its segments and is checked in fabric handshakes. */
static inline uint64_t mf_job_hash(const char *jobid)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *jobid; jobid++)
        h = (h ^ (unsigned char)*jobid) * 0x100000001b3ull;
    return h;
}

/* "manifold-<uid>-<hash>-": every segment of the job starts with this (no leading slash). */
static inline int mf_shm_job_prefix(char *buf, size_t len, unsigned uid, uint64_t job_hash)
{
    return snprintf(buf, len, "manifold-%u-%016llx-", uid, (unsigned long long)job_hash);
}

/* "/manifold-<uid>-<hash>-<kind>-<pid>-<seq>": a communicator's host segment (kind: lower-case
 * letters). */
static inline int mf_shm_host_segment_name(char *buf, size_t len, unsigned uid, uint64_t job_hash,
                                           const char *kind, int pid, unsigned seq)
{
    return snprintf(buf, len, "/manifold-%u-%016llx-%s-%d-%u", uid, (unsigned long long)job_hash,
                    kind, pid, seq);
}

#endif
