/*
 * segment.c — the host's shared segment: geometry, creation, mapping, early unlink.
 *
 * Contract (see shm.h for the layout):
 *   - Local rank 0 creates the segment with memfd_create and reserves its pages with
 *     posix_fallocate, so a shortage is a clear MPI error, never a SIGBUS on first touch. The
 *     other local ranks ask for its descriptor over the doorbells (doorbell.c: only our uid is
 *     answered) until every one has counted itself in `arrived`; then the creator closes it. The
 *     segment is never in /dev/shm, so a job killed at any moment leaves nothing behind.
 *   - Fallback (no memfd_create, or a doorbell out of reach: ranks of one host in different
 *     network namespaces): a /dev/shm file (O_CREAT|O_EXCL, mode 0600), created after checking
 *     that /dev/shm has room. If creation fails after the file exists, it leaves a header with
 *     status FAILED and the reason so that the other local ranks fail with the same message
 *     instead of timing out. Waiters look for both, bounded in time; a stale file of the same
 *     name from a crashed job is replaced by the creator and ignored by the waiters, who re-open
 *     the name until the fresh one appears. The last rank to count itself in unlinks the name;
 *     detach unlinks if nobody did (a rank that never arrived). A job killed before all its
 *     local ranks mapped such a file leaves the name behind; the next creator on the host reaps
 *     such leftovers (mf_shm_segment_reap), and mpiexec removes its job's at the end. The reaper
 *     also takes the communicators' host segments (src/coll/host_segment.c) whose creator died,
 *     for the case where mpiexec was killed with its ranks.
 *   - Every rank checks that a segment it maps is owned by its uid and carries this job's secret.
 * Why the creator is chosen by local rank rather than by an O_EXCL race: local rank 0 is known
 * to every rank after the fence, and a fixed creator makes the stale-file case decidable.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "core/clock.h"
#include "core/error.h"
#include "fabric/shm/shm.h"
#include "fabric/shm/shm_name.h"

/* Linux 5.14's madvise advice (the kernel's values), for C libraries before glibc 2.35. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MF_SHM_HDR_BYTES MF_SHM_PAGE
/* All rings together should stay within this budget (half of Docker's default /dev/shm);
 * each ring is clamped to [min, max]. A 1 MiB ring holds 16 frames of 64 KiB (the default eager
 * limit): measured against 256 KiB rings, streaming 16-64 KiB messages went from 9 to 23-28 GB/s
 * and both ways from 8 to 15-25 GB/s, the producer no longer waiting on the consumer's tail. With
 * up to 6 local ranks every ring gets the maximum. */
#define MF_SHM_RING_BUDGET ((size_t)32 << 20)
#define MF_SHM_RING_MAX ((size_t)1 << 20)

static size_t mf_shm_round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

static size_t mf_shm_pow2_at_least(size_t v)
{
    size_t p = MF_SHM_PAGE;
    while (p < v)
        p <<= 1;
    return p;
}

size_t mf_shm_ring_cap_for(int nlocal, size_t max_frame)
{
    /* Room for one maximal frame plus small ones: with few local ranks the budget gives
     * several maximal frames (a sender fills one while the receiver drains another); with many,
     * memory (n^2 rings) matters more than streaming overlap. */
    size_t min = mf_shm_pow2_at_least(mf_shm_frame_bytes(max_frame) + MF_SHM_PAGE);
    size_t rings = nlocal > 1 ? (size_t)nlocal * (size_t)(nlocal - 1) : 1;
    size_t cap = MF_SHM_RING_MAX;
    while (cap > MF_SHM_PAGE && cap * rings > MF_SHM_RING_BUDGET)
        cap >>= 1;
    return cap < min ? min : cap;
}

/* Bytes of one rank's sender bitmap: a bit per local rank, whole cache lines. */
static size_t mf_shm_bitmap_stride(int nlocal)
{
    return mf_shm_round_up((size_t)(nlocal + 63) / 64 * sizeof(uint64_t), MF_SHM_CACHELINE);
}

static size_t mf_shm_bitmaps_off(int nlocal)
{
    return MF_SHM_HDR_BYTES +
           mf_shm_round_up((size_t)nlocal * sizeof(mf_shm_rank_info), MF_SHM_PAGE);
}

static size_t mf_shm_rings_off(int nlocal)
{
    return mf_shm_bitmaps_off(nlocal) +
           mf_shm_round_up((size_t)nlocal * mf_shm_bitmap_stride(nlocal), MF_SHM_PAGE);
}

size_t mf_shm_segment_size(int nlocal, size_t ring_cap)
{
    size_t rings = (size_t)nlocal * (size_t)(nlocal > 0 ? nlocal - 1 : 0);
    return mf_shm_rings_off(nlocal) + rings * (MF_SHM_PAGE + ring_cap);
}

void mf_shm_segment_name(char *buf, size_t len, uint64_t job_hash, int node)
{
    char prefix[64];
    mf_shm_job_prefix(prefix, sizeof prefix, (unsigned)getuid(), job_hash);
    snprintf(buf, len, "/%s%d", prefix, node);
}

int mf_shm_space_check(const char *dir, size_t need)
{
    struct statvfs st;
    if (statvfs(dir, &st) != 0)
        return MPI_SUCCESS; /* cannot tell: posix_fallocate still catches a shortage */
    unsigned long long avail = (unsigned long long)st.f_bavail * st.f_frsize;
    if (avail >= need)
        return MPI_SUCCESS;
    return mf_error(MPI_ERR_NO_MEM,
                    "shm: %s has %llu KiB free but the shared segment for this host needs %zu KiB; "
                    "enlarge it (e.g. docker --shm-size) or set MANIFOLD_SHM=0",
                    dir, avail >> 10, (need + 1023) >> 10);
}

static void mf_shm_segment_layout(mf_shm_segment *s, int nlocal, size_t ring_cap)
{
    s->nlocal = nlocal;
    s->ring_cap = ring_cap;
    s->bitmaps_off = mf_shm_bitmaps_off(nlocal);
    s->bitmap_stride = mf_shm_bitmap_stride(nlocal);
    s->rings_off = mf_shm_rings_off(nlocal);
    s->ring_stride = MF_SHM_PAGE + ring_cap;
    s->size = mf_shm_segment_size(nlocal, ring_cap);
}

bool mf_shm_segment_populated(int nlocal)
{
    return nlocal <= MF_SHM_POPULATE_RANKS;
}

/* Maps the whole segment. Small ones with MAP_POPULATE: page faults now, not one per 4 KiB of
 * ring traffic during the first lap, where they made the first small messages 2x slower. Large
 * ones lazily: every rank would otherwise map (and count as resident) all nlocal^2 rings, and
 * start-up waited on one rank zeroing them (1 GiB at 128 ranks); a ring's pages now come when
 * its sender first writes them, and nobody looks at a ring before its sender announced itself
 * (mf_shm_segment_senders). */
static void *mf_shm_segment_mmap(const mf_shm_segment *s, int fd)
{
    int populate = mf_shm_segment_populated(s->nlocal) ? MAP_POPULATE : 0;
    return mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED | populate, fd, 0);
}

/* Leaves a FAILED header in the (already created) file so waiters learn why. */
static void mf_shm_segment_fail(int fd, uint64_t secret, int code)
{
    if (ftruncate(fd, MF_SHM_HDR_BYTES) != 0)
        return;
    mf_shm_seg_hdr *h = mmap(NULL, MF_SHM_HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        return;
    int len = MF_SHM_ERRLEN;
    char msg[MPI_MAX_ERROR_STRING];
    if (mf_error_string(code, msg, &len) != 0)
        snprintf(msg, sizeof msg, "error %d", code);
    size_t n = strnlen(msg, sizeof h->error - 1);
    memcpy(h->error, msg, n);
    h->error[n] = '\0';
    h->secret = secret;
    h->version = MF_SHM_LAYOUT_VERSION;
    atomic_store_explicit(&h->status, MF_SHM_SEG_FAILED, memory_order_relaxed);
    atomic_store_explicit(&h->magic, MF_SHM_MAGIC, memory_order_release);
    munmap(h, MF_SHM_HDR_BYTES);
}

/* The named file (mode 0600 from its creation: the umask only removes bits). */
static int mf_shm_segment_open_named(const char *name)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* A namesake left by a crashed job of the same id: ours replaces it. */
        shm_unlink(name);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    return fd;
}

int mf_shm_segment_create(mf_shm_segment *s, const char *name, int nlocal, size_t ring_cap,
                          uint64_t secret, bool anonymous)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->name, sizeof s->name, "%s", name);
    mf_shm_segment_layout(s, nlocal, ring_cap);

    /* Anonymous: never in /dev/shm, so no kill at any moment can leave it behind. The memfd
     * carries the segment's name only for /proc/<pid>/maps. Without memfd_create (old kernel,
     * seccomp) the named file is the fallback. */
    int fd = anonymous ? memfd_create(name + 1, MFD_CLOEXEC) : -1;
    s->named = fd < 0;
    if (s->named)
        fd = mf_shm_segment_open_named(name);
    if (fd < 0)
        return mf_error(MPI_ERR_OTHER, "shm: cannot create /dev/shm%s: %s", name, strerror(errno));
    /* A memfd starts 0777: reachable only through our processes' /proc/<pid>/fd, but 0600 all
     * the same, like the named file. */
    if (!s->named && fchmod(fd, 0600) != 0) {
        int e = errno;
        close(fd);
        return mf_error(MPI_ERR_OTHER, "shm: cannot make the segment private: %s", strerror(e));
    }

    int rc = s->named ? mf_shm_space_check("/dev/shm", s->size) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && ftruncate(fd, (off_t)s->size) != 0)
        rc = mf_error(MPI_ERR_NO_MEM, "shm: cannot size %s%s to %zu KiB: %s",
                      s->named ? "/dev/shm" : "the anonymous segment ", name, s->size >> 10,
                      strerror(errno));
    if (rc == MPI_SUCCESS && (s->named || mf_shm_segment_populated(nlocal))) {
        /* Reserve every page now: on tmpfs a shortage is ENOSPC here rather than SIGBUS later.
         * A large anonymous segment is not reserved: its pages come as rings are used (see
         * mf_shm_segment_populated); a shortage then is the memory limit's (OOM) as for any
         * other memory the job touches. */
        int e = posix_fallocate(fd, 0, (off_t)s->size);
        if (e != 0 && e != EOPNOTSUPP && e != EINVAL)
            rc = mf_error(MPI_ERR_NO_MEM,
                          "shm: cannot reserve %zu KiB %s for the shared segment: %s; %s or set "
                          "MANIFOLD_SHM=0",
                          s->size >> 10, s->named ? "in /dev/shm" : "of shared memory", strerror(e),
                          s->named ? "enlarge /dev/shm (e.g. docker --shm-size)"
                                   : "raise the memory limit");
    }
    if (rc == MPI_SUCCESS) {
        s->base = mf_shm_segment_mmap(s, fd);
        if (s->base == MAP_FAILED) {
            s->base = NULL;
            rc = mf_error(MPI_ERR_NO_MEM, "shm: cannot map %zu KiB of shared memory: %s",
                          s->size >> 10, strerror(errno));
        }
    }
    if (rc != MPI_SUCCESS) {
        /* The name stays until the waiters have read the reason; the last of them unlinks it
         * (mf_shm_segment_attach counts failed arrivals too). An anonymous segment reaches
         * nobody: the waiters end with the job this failure ends. */
        if (s->named)
            mf_shm_segment_fail(fd, secret, rc);
        close(fd);
        return rc;
    }
    s->fd = fd; /* handed to the other local ranks by mf_shm_segment_arrive */
    /* The file is zero-filled: every ring starts empty and no rank sleeps. */
    mf_shm_seg_hdr *h = mf_shm_seg_hdr_of(s);
    atomic_store_explicit(&h->unlinked, !s->named, memory_order_relaxed);
    h->secret = secret;
    h->version = MF_SHM_LAYOUT_VERSION;
    h->nlocal = (uint32_t)nlocal;
    h->ring_cap = ring_cap;
    h->total_size = s->size;
    atomic_store_explicit(&h->status, MF_SHM_SEG_READY, memory_order_relaxed);
    atomic_store_explicit(&h->magic, MF_SHM_MAGIC, memory_order_release);
    return MPI_SUCCESS;
}

static void mf_shm_pause(void)
{
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
}

/* Maps the segment behind fd (closed here) if it is this job's and ready. MPI_SUCCESS; 1 when it
 * is not (yet): not written, or a stale namesake the creator is about to replace; or an error
 * (the creator failed, inconsistent layout, no memory). */
static int mf_shm_segment_map(mf_shm_segment *s, int fd, const char *name, uint64_t secret)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < MF_SHM_HDR_BYTES || st.st_uid != getuid()) {
        close(fd);
        return 1;
    }
    mf_shm_seg_hdr *h = mmap(NULL, MF_SHM_HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        close(fd);
        return 1;
    }
    if (atomic_load_explicit(&h->magic, memory_order_acquire) != MF_SHM_MAGIC ||
        h->secret != secret || h->version != MF_SHM_LAYOUT_VERSION) {
        munmap(h, MF_SHM_HDR_BYTES);
        close(fd);
        return 1;
    }
    if (atomic_load_explicit(&h->status, memory_order_relaxed) == MF_SHM_SEG_FAILED) {
        char why[MF_SHM_ERRLEN];
        snprintf(why, sizeof why, "%s", h->error);
        munmap(h, MF_SHM_HDR_BYTES);
        close(fd);
        shm_unlink(name); /* nobody will use it */
        return mf_error(MPI_ERR_NO_MEM, "shm: local rank 0 could not create the segment: %s", why);
    }
    int nlocal = (int)h->nlocal;
    size_t cap = (size_t)h->ring_cap, total = (size_t)h->total_size;
    munmap(h, MF_SHM_HDR_BYTES);
    mf_shm_segment_layout(s, nlocal, cap);
    if (total != s->size || (size_t)st.st_size < total) {
        close(fd);
        return mf_error(MPI_ERR_INTERN, "shm: /dev/shm%s has an inconsistent layout", name);
    }
    s->base = mf_shm_segment_mmap(s, fd);
    close(fd);
    if (s->base == MAP_FAILED) {
        s->base = NULL;
        return mf_error(MPI_ERR_NO_MEM, "shm: cannot map %zu KiB of shared memory: %s",
                        s->size >> 10, strerror(errno));
    }
    return MPI_SUCCESS;
}

#define MF_SHM_REQUEST_MS 10 /* a lost request (full queue, creator not there yet) is repeated */

int mf_shm_segment_attach(mf_shm_segment *s, const char *name, uint64_t secret, int timeout_ms,
                          const mf_shm_channel *ch)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->name, sizeof s->name, "%s", name);
    long deadline = mf_clock_ms() + timeout_ms, next_request = 0;
    for (;; mf_shm_pause()) {
        long now = mf_clock_ms();
        if (now > deadline)
            return mf_error(MPI_ERR_OTHER,
                            "shm: local rank 0 did not create /dev/shm%s within %d s", name,
                            timeout_ms / 1000);
        int rc = 1;
        if (ch) {
            if (now >= next_request) {
                mf_shm_doorbell_request(ch->fd, ch->job_hash, ch->creator);
                next_request = now + MF_SHM_REQUEST_MS;
            }
            int fd = mf_shm_doorbell_recv_fd(ch->fd);
            if (fd >= 0)
                rc = mf_shm_segment_map(s, fd, name, secret);
        }
        if (rc == 1) {
            /* The creator fell back to a named segment (no memfd_create, or some local rank's
             * doorbell out of its reach). */
            int fd = shm_open(name, O_RDWR, 0);
            if (fd >= 0) {
                s->named = true;
                rc = mf_shm_segment_map(s, fd, name, secret);
            } else if (errno != ENOENT) {
                return mf_error(MPI_ERR_OTHER, "shm: cannot open /dev/shm%s: %s", name,
                                strerror(errno));
            }
        }
        if (rc != 1)
            return rc;
    }
}

int mf_shm_segment_arrive(mf_shm_segment *s, int timeout_ms, const mf_shm_channel *ch)
{
    mf_shm_seg_hdr *h = mf_shm_seg_hdr_of(s);
    uint32_t n = atomic_fetch_add_explicit(&h->arrived, 1, memory_order_acq_rel) + 1;
    if (n == (uint32_t)s->nlocal && s->named) {
        shm_unlink(s->name);
        s->unlinked_by_us = true;
        atomic_store_explicit(&h->unlinked, 1, memory_order_release);
    }
    long deadline = mf_clock_ms() + timeout_ms;
    while (atomic_load_explicit(&h->arrived, memory_order_acquire) < (uint32_t)s->nlocal) {
        if (mf_clock_ms() > deadline)
            return mf_error(MPI_ERR_OTHER,
                            "shm: only %u of %d local ranks mapped the shared segment within %d s",
                            atomic_load(&h->arrived), s->nlocal, timeout_ms / 1000);
        if (ch && s->fd >= 0)
            mf_shm_doorbell_serve(ch->fd, s->fd);
        mf_shm_pause();
    }
    if (s->fd >= 0)
        close(s->fd); /* everyone has it: nothing more to hand out */
    s->fd = -1;
    return MPI_SUCCESS;
}

void mf_shm_segment_detach(mf_shm_segment *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (!s->base)
        return;
    mf_shm_seg_hdr *h = mf_shm_seg_hdr_of(s);
    if (atomic_exchange_explicit(&h->unlinked, 1, memory_order_acq_rel) == 0)
        shm_unlink(s->name);
    munmap(s->base, s->size);
    s->base = NULL;
}

mf_shm_rank_info *mf_shm_segment_info(const mf_shm_segment *s, int local)
{
    return (mf_shm_rank_info *)((unsigned char *)s->base + MF_SHM_HDR_BYTES) + local;
}

_Atomic uint64_t *mf_shm_segment_senders(const mf_shm_segment *s, int local)
{
    return (_Atomic uint64_t *)(void *)((unsigned char *)s->base + s->bitmaps_off +
                                        (size_t)local * s->bitmap_stride);
}

mf_shm_ring_ctl *mf_shm_segment_ring(const mf_shm_segment *s, int sender, int receiver,
                                     unsigned char **data)
{
    /* Rings of one sender are consecutive; the diagonal (to itself) is not stored. */
    size_t k = (size_t)sender * (size_t)(s->nlocal - 1) +
               (size_t)(receiver < sender ? receiver : receiver - 1);
    unsigned char *ring = (unsigned char *)s->base + s->rings_off + k * s->ring_stride;
    *data = ring + MF_SHM_PAGE;
    return (mf_shm_ring_ctl *)ring;
}

/* Up to this many local ranks a rank maps each of its rings whole on first use. A rank that
 * talks to every peer then holds 2 (nlocal - 1) rings: at most 10 MiB (6 ranks, 1 MiB rings),
 * 7.1 MiB at 8, 3.9 MiB at 16, 4.1 MiB at 32 (64 KiB rings beyond 16 ranks). Beyond, memory
 * stays proportional to traffic, as many ranks per host need (issue #17: 64 and 128). */
#define MF_SHM_PREFAULT_RANKS 32

/* Whether rings are mapped whole on first use here: a segment mapped page by page (not
 * populated) of at most MF_SHM_PREFAULT_RANKS ranks. */
static bool mf_shm_segment_prefaults(const mf_shm_segment *s)
{
    return !mf_shm_segment_populated(s->nlocal) && s->nlocal <= MF_SHM_PREFAULT_RANKS;
}

void mf_shm_segment_prefault(const mf_shm_segment *s, int sender, int receiver, bool writer)
{
    if (!mf_shm_segment_prefaults(s))
        return;
    unsigned char *data;
    void *ring = mf_shm_segment_ring(s, sender, receiver, &data);
    /* Errors are left alone: a kernel before 5.14 (EINVAL) or a full /dev/shm (the populate
     * stops short instead of raising SIGBUS) leaves the pages to fault in one by one. */
    (void)madvise(ring, s->ring_stride, writer ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

/* The creator's pid if `rest` (a name after "manifold-<uid>-") is a host segment's
 * "<16 hex>-<kind>-<pid>-<seq>" (shm_name.h), else 0. */
static pid_t host_segment_creator(const char *rest)
{
    const char *c = rest;
    for (int i = 0; i < 16; i++, c++)
        if (!isxdigit((unsigned char)*c))
            return 0;
    if (*c++ != '-' || !islower((unsigned char)*c))
        return 0;
    while (islower((unsigned char)*c))
        c++;
    if (*c++ != '-' || !isdigit((unsigned char)*c))
        return 0;
    char *end;
    long pid = strtol(c, &end, 10);
    if (*end != '-' || !isdigit((unsigned char)end[1]) || pid <= 0 || pid > INT_MAX)
        return 0;
    for (c = end + 1; isdigit((unsigned char)*c); c++)
        ;
    return *c ? 0 : (pid_t)pid;
}

/* Whether a leftover of the given age, uid and creator may go: old enough that no live job can
 * still be attaching (that wait is bounded), ours, and its creator is gone. */
static bool leftover_is_stale(const struct stat *st, time_t now, int min_age_s, pid_t creator)
{
    return st->st_uid == getuid() && now - st->st_mtime >= min_age_s && creator > 0 &&
           kill(creator, 0) != 0 && errno == ESRCH;
}

int mf_shm_segment_reap(const char *dir, int min_age_s)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "manifold-%u-", (unsigned)getuid());
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int reaped = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        char name[300];
        snprintf(name, sizeof name, "/%s", e->d_name);
        struct stat st;
        /* A communicator's host segment names its creator; it has no header to read. */
        pid_t host_creator = host_segment_creator(e->d_name + plen);
        if (host_creator) {
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode) && leftover_is_stale(&st, now, min_age_s, host_creator) &&
                shm_unlink(name) == 0)
                reaped++;
            continue;
        }
        int fd = shm_open(name, O_RDONLY, 0);
        if (fd < 0)
            continue;
        bool stale = false;
        if (fstat(fd, &st) == 0 && st.st_uid == getuid() && now - st.st_mtime >= min_age_s &&
            (size_t)st.st_size >= MF_SHM_HDR_BYTES) {
            /* A failed creation left only the header page; a real segment has rank records. */
            size_t len = MF_SHM_HDR_BYTES + sizeof(mf_shm_rank_info);
            bool full = (size_t)st.st_size >= len;
            if (!full)
                len = MF_SHM_HDR_BYTES;
            void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                const mf_shm_seg_hdr *h = m;
                const mf_shm_rank_info *creator =
                    (const mf_shm_rank_info *)((const unsigned char *)m + MF_SHM_HDR_BYTES);
                /* ...a segment that failed, or whose creator is gone. */
                if (atomic_load(&h->magic) == MF_SHM_MAGIC) {
                    pid_t pid = full ? (pid_t)creator->pid : 0;
                    stale = atomic_load(&h->status) == MF_SHM_SEG_FAILED ||
                            leftover_is_stale(&st, now, min_age_s, pid);
                }
                munmap(m, len);
            }
        }
        close(fd);
        if (stale && shm_unlink(name) == 0)
            reaped++;
    }
    closedir(d);
    return reaped;
}
