/*
 * shm.c — the shared-memory fabric: ops table, sends, progress, sleeping (see fabric.h).
 *
 * Contract summary (details in shm.h and the other files of this folder):
 *   - open:  reads the configuration and binds the doorbell (needs nothing from peers);
 *   - start: local rank 0 creates the host's segment, the others map it, every rank records
 *            its pid, the last to map unlinks the name; probes CMA (MANIFOLD_SHM_CMA);
 *   - send:  one frame into the SPSC ring to the peer; if the ring is full (or older frames to
 *            that peer are waiting) the frame is queued with its iovecs and MF_FABRIC_PENDING
 *            is returned; progress retries in order and completes through done->fd_fn;
 *   - progress: retries queued frames, then drains up to MF_SHM_BATCH frames per inbound ring
 *            in use (of a peer that announced itself in our sender bitmap, see shm.h),
 *            handing each to the p2p layer (mf_fabric_rx_header) and copying the payload into
 *            the sink it returns;
 *   - rget:  process_vm_readv from the peer, queued and read by progress a chunk per pass
 *            (MF_SHM_PULL_CHUNK), so that a large pull does not hold the rank; receivers use
 *            it only as rget_min_busy says (see mf_shm_cma_setup);
 *   - indirect frames: a queued frame of at least MF_SHM_INDIRECT_MIN payload bytes whose ring
 *            stays full while the receiver does not drain it (MF_SHM_INDIRECT_STALL_NS, or we are
 *            about to sleep) goes into the ring as one line carrying its address instead; the
 *            receiver reads the payload from us with process_vm_readv when it gets to it, and the
 *            send completes when the published tail passes the frame. Why: streaming through the
 *            ring needs both ranks on a core at once; on a loaded host they rarely are, and a
 *            window of large messages crawled ring-full by ring-full (shm bibw 0.4-0.7 GB/s
 *            beside busy processes, MPICH's single-copy 3-7 GB/s). With the address the rank
 *            that runs copies everything, whether or not its peer runs. Off unless
 *            MANIFOLD_SHM_INDIRECT=auto (or 1): a sender waiting for its stall to age polls
 *            instead of sleeping, and quiet medians were not better (docs/PERFORMANCE.md);
 *   - a peer whose pid has vanished while we wait for ring space, or that writes a frame that
 *            fails validation, is reported once through mf_fabric_peer_failed.
 * Frames from one sender are delivered in the order sent: one ring per ordered pair, and queued
 * frames are always retried before a new one is written.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "core/bufcache.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "fabric/fabric_mpit.h"
#include "fabric/shm/shm.h"
#include "fabric/shm/shm_wake.h"

#define MF_SHM_BATCH 32             /* frames taken from one ring per progress pass */
#define MF_SHM_MIN_FRAME (32 << 10) /* max_frame never below this: fewer, larger stream frames */
#define MF_SHM_START_TIMEOUT_MS 60000
#define MF_SHM_CLOSE_FLUSH_MS 200
#define MF_SHM_LIVENESS_PASSES 4096 /* progress passes stuck on a full ring between pid checks */
/* Indirect frames (see the top): payloads from this size (a process_vm_readv costs a few µs,
 * a copy through the ring of 4 KiB far less), after the ring has had no room for the oldest
 * queued frame this long (a receiver that runs frees a 64 KiB frame in about 10 µs; one busy
 * pushing its own window through the other ring and draining 32 frames of ours may not for a
 * few hundred µs; a descheduled one, for milliseconds). */
#define MF_SHM_INDIRECT_MIN 4096
#define MF_SHM_INDIRECT_STALL_NS 2000000ll
/* A sender about to sleep hands its frames over sooner: once the ring has had no room for this
 * long (until then it keeps polling). Not at once: a receiver that drains, only a little later
 * than the sender's spin, copies through the ring at memory speed, two cores at a time, where
 * process_vm_readv moves 4-6 GB/s on one (measured: bibw 64 KiB best-of fell 3x with at-once). */
#define MF_SHM_INDIRECT_SLEEP_NS 1000000ll
/* Bytes handed over per stall (the clock then starts again): enough for a receiver that comes
 * back while we are away to copy for a while, not a whole window of rendezvous data, which
 * would then all go at process_vm_readv's speed once both ranks run again (bibw 1 MiB at load
 * 3.4, median of 6: 5.5 GB/s without a cap against 11.1 with the rings alone). */
#define MF_SHM_INDIRECT_BURST (4u << 20)
/* Bytes an rget reads per progress pass (see mf_shm_rget): large enough that the kernel's
 * per-call cost stays small, small enough that frames of other messages wait at most about
 * 100 µs behind it. */
#define MF_SHM_PULL_CHUNK (1u << 20)

enum mf_shm_indirect_mode { MF_SHM_INDIRECT_OFF, MF_SHM_INDIRECT_AUTO, MF_SHM_INDIRECT_ALWAYS };

/* A frame that did not fit its ring yet: the header is copied, the payload is not. */
typedef struct mf_shm_pending {
    struct mf_shm_pending *next;
    mf_wire_hdr hdr;
    mf_fabric_done *done;
    int niov;
    struct iovec iov[];
} mf_shm_pending;

/* An indirect frame in p's ring whose payload the receiver has not read yet (see the top). */
typedef struct mf_shm_inflight {
    struct mf_shm_inflight *next;
    uint64_t end; /* ring position after the frame: consumed once tail reaches it */
    mf_fabric_done *done;
} mf_shm_inflight;

/* An rget not finished yet: progress reads it MF_SHM_PULL_CHUNK bytes at a time (see rget). */
typedef struct mf_shm_pull {
    struct mf_shm_pull *next;
    struct mf_shm_peer *peer;
    uint64_t raddr;          /* where the peer's bytes start */
    const struct iovec *iov; /* the caller's, alive until done (fabric.h) */
    int niov;
    size_t len, got;
    mf_fabric_done *done;
} mf_shm_pull;

typedef struct mf_shm_peer {
    int rank; /* world rank */
    pid_t pid;
    mf_shm_rank_info *info;
    mf_shm_ring out, in;
    mf_shm_pending *pend_head, *pend_tail;
    mf_shm_inflight *fl_head, *fl_tail; /* indirect frames not yet consumed, oldest first */
    long long stall_since; /* ns: since then the oldest queued frame found no room and the
                              receiver's tail stayed at stall_tail (0: no stall) */
    uint64_t stall_tail;
    size_t stall_handed; /* bytes handed over indirect in this stall */
    int failed;          /* error code once the peer is known to be gone */
    bool unreported;     /* failed outside progress: report on the next pass */
    bool announced;      /* our bit is set in its sender bitmap (before our first frame) */
} mf_shm_peer;

typedef struct mf_shm_state {
    mf_fabric base; /* first: the registry sees only this */
    int doorbell;
    mf_shm_segment seg;
    int nlocal, me;     /* local size and our local index */
    mf_shm_peer *peers; /* by local index; peers[me] unused */
    /* The npoll peers that have sent to us (in the order they announced themselves): the only
     * inbound rings progress and sleeps look at (see shm.h, the sender bitmaps). */
    mf_shm_peer **poll;
    int npoll;
    _Atomic uint64_t *senders; /* our sender bitmap in the segment */
    uint64_t *known;           /* its bits already in poll */
    int nwords;
    int *local_of; /* by world rank: local index, or -1 on another host */
    int world_size;
    size_t pending;                     /* frames queued over all peers */
    size_t inflight;                    /* indirect frames not yet consumed, over all peers */
    mf_shm_pull *pull_head, *pull_tail; /* rgets in the order asked, over all peers */
    int indirect;   /* enum mf_shm_indirect_mode, after the probe (OFF if it failed) */
    int unreported; /* peers with a failure not yet reported (see mf_shm_peer) */
    unsigned stuck_passes;
    bool in_progress;
    bool no_doorbell; /* some peer cannot reach our socket: sleep with a timeout instead */
    /* Every local rank registered for membarrier(GLOBAL_EXPEDITED): sleepers pay the barrier
     * that producers then skip (see shm.h, "Wake-ups"). */
    bool membarrier_registered, asym_fence;
    uint64_t copies_streamed; /* payloads our rings took with streaming stores (MPI_T) */
} mf_shm_state;

static int mf_shm_membarrier(int cmd)
{
    return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static mf_shm_state *mf_shm_of(mf_fabric *f)
{
    return MF_FABRIC_CONTAINER(f, mf_shm_state, base);
}

static mf_shm_peer *mf_shm_peer_of(mf_shm_state *s, int peer)
{
    if (!s->peers || peer < 0 || peer >= s->world_size)
        return NULL;
    int li = s->local_of[peer];
    return li < 0 || li == s->me ? NULL : &s->peers[li];
}

/* Wakes p if it sleeps, after we made work visible to it (a published frame or tail). */
static void mf_shm_wake(mf_shm_state *s, mf_shm_peer *p)
{
    mf_shm_doorbell_ring(s->doorbell, p->info, mf_g.job_hash, p->rank);
}

/* The same after publishing a frame: orders the publication before the load of p's sleeping
 * flag, with a fence unless sleepers take care of it (membarrier). */
static void mf_shm_notify(mf_shm_state *s, mf_shm_peer *p)
{
    if (!s->asym_fence)
        atomic_thread_fence(memory_order_seq_cst);
    else
        /* The CPU may reorder the load below before the marker's store (membarrier settles
         * that), but the compiler must not: a relaxed load may otherwise move above a release
         * store, e.g. once the push is inlined. */
        atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&p->info->sleeping, memory_order_relaxed))
        mf_shm_wake(s, p);
}

/* The instance whose segment the local ranks share, for mf_shm_wake_rank (one per process:
 * set once it has peers, cleared when it closes). */
static mf_shm_state *mf_shm_live;
static unsigned long long mf_shm_unrung_count;

void mf_shm_wake_rank(int rank)
{
    mf_shm_state *s = mf_shm_live;
    mf_shm_peer *p = s ? mf_shm_peer_of(s, rank) : NULL;
    if (!p || p->failed)
        return;
    if (!s->asym_fence)
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst); /* see mf_shm_notify */
    if (atomic_load_explicit(&p->info->sleeping, memory_order_relaxed))
        mf_shm_wake(s, p);
}

unsigned long long mf_shm_unrung_sleeps(void)
{
    return mf_shm_unrung_count;
}

/* ---- peer failure ---- */

/* Unlinks p's oldest indirect frame in flight (there is one) and returns it. */
static mf_shm_inflight *mf_shm_inflight_pop(mf_shm_state *s, mf_shm_peer *p)
{
    mf_shm_inflight *q = p->fl_head;
    p->fl_head = q->next;
    if (!p->fl_head)
        p->fl_tail = NULL;
    s->inflight--;
    return q;
}

static void mf_shm_fail_pulls(mf_shm_state *s, mf_shm_peer *p, int code);
static void mf_shm_pull_step(mf_shm_state *s);

static void mf_shm_fail_pending(mf_shm_state *s, mf_shm_peer *p, int code)
{
    mf_shm_fail_pulls(s, p, code);
    while (p->fl_head) {
        mf_shm_inflight *q = mf_shm_inflight_pop(s, p);
        q->done->fd_fn(q->done, code);
        free(q);
    }
    while (p->pend_head) {
        mf_shm_pending *q = p->pend_head;
        p->pend_head = q->next;
        if (!p->pend_head)
            p->pend_tail = NULL;
        s->pending--;
        if (q->done)
            q->done->fd_fn(q->done, code);
        free(q);
    }
}

static void mf_shm_peer_fail(mf_shm_state *s, mf_shm_peer *p, int code)
{
    if (p->failed)
        return;
    p->failed = code;
    mf_fabric_peer_failed(&s->base, p->rank, code);
    mf_shm_fail_pending(s, p, code);
}

static bool mf_shm_peer_dead(const mf_shm_peer *p)
{
    return kill(p->pid, 0) != 0 && errno == ESRCH;
}

static int mf_shm_died_error(const mf_shm_peer *p)
{
    return mf_error(MPI_ERR_OTHER, "shm: rank %d (pid %d) on this host died", p->rank, (int)p->pid);
}

/* ---- sending ---- */

/* Sets our bit in p's sender bitmap, once, before our first frame to p is published (the frame's
 * release store orders it; seq_cst for the sleep protocol, like the frame). */
static void mf_shm_announce(mf_shm_state *s, mf_shm_peer *p)
{
    int li = (int)(p - s->peers);
    mf_shm_segment_prefault(&s->seg, s->me, li, true);
    atomic_fetch_or_explicit(&mf_shm_segment_senders(&s->seg, li)[s->me / 64],
                             (uint64_t)1 << (s->me % 64), memory_order_seq_cst);
    p->announced = true;
}

static int mf_shm_queue(mf_shm_state *s, mf_shm_peer *p, const mf_wire_hdr *hdr,
                        const struct iovec *iov, int niov, mf_fabric_done *done)
{
    mf_shm_pending *q = malloc(sizeof *q + (size_t)niov * sizeof q->iov[0]);
    if (!q)
        return mf_error(MPI_ERR_NO_MEM, "shm: no memory to queue a frame for rank %d", p->rank);
    q->next = NULL;
    q->hdr = *hdr;
    q->done = done;
    q->niov = niov;
    if (niov > 0)
        memcpy(q->iov, iov, (size_t)niov * sizeof q->iov[0]);
    if (p->pend_tail)
        p->pend_tail->next = q;
    else
        p->pend_head = q;
    p->pend_tail = q;
    s->pending++;
    /* Ask the receiver to wake us when it frees space (see sleep_prepare). */
    mf_shm_ring_set_blocked(&p->out);
    return MF_FABRIC_PENDING;
}

/* Whether a frame may travel indirect: its payload is one piece that stays put until done. */
static bool mf_shm_indirect_ok(const mf_shm_state *s, const mf_wire_hdr *hdr,
                               const struct iovec *iov, int niov, const mf_fabric_done *done)
{
    return s->indirect != MF_SHM_INDIRECT_OFF && done && niov == 1 &&
           (hdr->type == MF_MSG_DATA || s->indirect == MF_SHM_INDIRECT_ALWAYS) &&
           hdr->len >= MF_SHM_INDIRECT_MIN && iov[0].iov_len >= hdr->len;
}

/* Writes an indirect frame for hdr (payload at iov[0]) to p and records it in flight; done
 * runs once the receiver has read it. Returns false when even one line does not fit. */
static bool mf_shm_push_indirect(mf_shm_state *s, mf_shm_peer *p, const mf_wire_hdr *hdr,
                                 const struct iovec *iov, mf_fabric_done *done)
{
    mf_shm_inflight *q = malloc(sizeof *q);
    if (!q)
        return false; /* stays queued: it will go through the ring */
    if (!mf_shm_ring_push_indirect(&p->out, hdr, (uint64_t)(uintptr_t)iov[0].iov_base, &q->end)) {
        free(q);
        return false;
    }
    q->next = NULL;
    q->done = done;
    if (p->fl_tail)
        p->fl_tail->next = q;
    else
        p->fl_head = q;
    p->fl_tail = q;
    s->inflight++;
    return true;
}

/* Completes p's indirect frames that the receiver has consumed (tail passed them), in order.
 * Returns how many. */
static int mf_shm_complete_indirect(mf_shm_state *s, mf_shm_peer *p)
{
    int n = 0;
    if (!p->fl_head)
        return 0;
    uint64_t tail = mf_shm_ring_tail(&p->out);
    while (p->fl_head && p->fl_head->end <= tail) {
        mf_shm_inflight *q = mf_shm_inflight_pop(s, p);
        n++;
        /* Unlinked first: the completion may send again, to this very peer. */
        q->done->fd_fn(q->done, MPI_SUCCESS);
        free(q);
    }
    return n;
}

/* The peer a frame of hdr goes to, announced to it; or NULL and why it cannot go (*rc). */
static inline __attribute__((always_inline)) mf_shm_peer *
mf_shm_tx_peer(mf_shm_state *s, int peer, const mf_wire_hdr *hdr, int *rc)
{
    mf_shm_peer *p = mf_shm_peer_of(s, peer);
    if (!p) {
        *rc = mf_error(MPI_ERR_INTERN, "shm: rank %d is not a local peer", peer);
        return NULL;
    }
    if (p->failed) {
        *rc = p->failed;
        return NULL;
    }
    if (hdr->len > s->base.max_frame) {
        *rc = mf_error(MPI_ERR_INTERN, "shm: frame of %llu bytes to rank %d exceeds max_frame %zu",
                       (unsigned long long)hdr->len, peer, s->base.max_frame);
        return NULL;
    }
    if (!p->announced)
        mf_shm_announce(s, p);
    return p;
}

static int mf_shm_send(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                       int niov, mf_fabric_done *done)
{
    mf_shm_state *s = mf_shm_of(f);
    int rc;
    mf_shm_peer *p = mf_shm_tx_peer(s, peer, hdr, &rc);
    if (!p)
        return rc;
    if (s->indirect == MF_SHM_INDIRECT_ALWAYS && !p->pend_head &&
        mf_shm_indirect_ok(s, hdr, iov, niov, done) && mf_shm_push_indirect(s, p, hdr, iov, done)) {
        mf_shm_notify(s, p);
        mf_fabric_count_tx(f, hdr);
        return MF_FABRIC_PENDING;
    }
    if (!p->pend_head && mf_shm_ring_push(&p->out, hdr, iov, niov)) {
        mf_shm_notify(s, p);
        mf_fabric_count_tx(f, hdr);
        return MF_FABRIC_DONE;
    }
    if (!done)
        return MF_FABRIC_BUSY; /* an inject (MF_FABRIC_INJECT) that must not be queued */
    rc = mf_shm_queue(s, p, hdr, iov, niov, done);
    if (rc == MF_FABRIC_PENDING)
        mf_fabric_count_tx(f, hdr);
    return rc;
}

/* fabric.h send_in_place: straight into the ring, or not at all (frames queued ahead keep
 * their order; a job that sends everything indirect keeps doing so). */
static int mf_shm_send_in_place(mf_fabric *f, int peer, const mf_wire_hdr *hdr,
                                const mf_fabric_mover *m)
{
    mf_shm_state *s = mf_shm_of(f);
    int rc;
    mf_shm_peer *p = mf_shm_tx_peer(s, peer, hdr, &rc);
    if (!p)
        return rc;
    if (s->indirect == MF_SHM_INDIRECT_ALWAYS || p->pend_head ||
        !mf_shm_ring_push_with(&p->out, hdr, m->fn, m->arg))
        return MF_FABRIC_BUSY;
    mf_shm_notify(s, p);
    mf_fabric_count_tx(f, hdr);
    return MF_FABRIC_DONE;
}

/* Whether p's queued frames should go indirect now: always, or the ring has had no room for
 * the oldest of them and p has not consumed a byte for MF_SHM_INDIRECT_STALL_NS
 * (MF_SHM_INDIRECT_SLEEP_NS if `sleepy`: we are about to sleep). A moving tail restarts the
 * clock: a receiver that drains, however slowly, is served through the ring (without this,
 * once frames went indirect every later one did too, the ring never having room when looked
 * at: all of a quiet bibw's data went through process_vm_readv). */
static bool mf_shm_go_indirect(mf_shm_state *s, mf_shm_peer *p, bool sleepy)
{
    if (s->indirect == MF_SHM_INDIRECT_OFF)
        return false;
    if (s->indirect == MF_SHM_INDIRECT_ALWAYS)
        return true;
    long long now = mf_clock_ns();
    uint64_t tail = mf_shm_ring_tail(&p->out);
    if (p->stall_since == 0 || tail != p->stall_tail || p->stall_handed >= MF_SHM_INDIRECT_BURST) {
        p->stall_since = now;
        p->stall_tail = tail;
        p->stall_handed = 0;
        return false;
    }
    return now - p->stall_since >= (sleepy ? MF_SHM_INDIRECT_SLEEP_NS : MF_SHM_INDIRECT_STALL_NS);
}

/* Whether a frame queued to some peer could go indirect but its stall is still younger than
 * MF_SHM_INDIRECT_SLEEP_NS: then the sender keeps polling instead of sleeping. */
static bool mf_shm_indirect_soon(mf_shm_state *s)
{
    for (int li = 0; li < s->nlocal; li++) {
        mf_shm_peer *p = &s->peers[li];
        mf_shm_pending *q = p->pend_head;
        if (li != s->me && q && !p->failed &&
            mf_shm_indirect_ok(s, &q->hdr, q->iov, q->niov, q->done) &&
            (p->stall_since == 0 || mf_clock_ns() - p->stall_since < MF_SHM_INDIRECT_SLEEP_NS))
            return true;
    }
    return false;
}

/* Writes queued frames to p in order while they fit, the large ones indirect when p does not
 * drain its ring (mf_shm_go_indirect; `sleepy`: we are about to sleep). Returns frames
 * written. */
static int mf_shm_flush_peer(mf_shm_state *s, mf_shm_peer *p, bool sleepy)
{
    int n = 0;
    while (p->pend_head && !p->failed) {
        mf_shm_pending *q = p->pend_head;
        bool indirect = false;
        if (mf_shm_ring_push(&p->out, &q->hdr, q->iov, q->niov)) {
            p->stall_since = 0; /* the receiver drains */
        } else if (mf_shm_indirect_ok(s, &q->hdr, q->iov, q->niov, q->done) &&
                   mf_shm_go_indirect(s, p, sleepy) &&
                   mf_shm_push_indirect(s, p, &q->hdr, q->iov, q->done)) {
            indirect = true;
            p->stall_handed += (size_t)q->hdr.len;
        } else {
            mf_shm_ring_set_blocked(&p->out);
            break;
        }
        p->pend_head = q->next;
        if (!p->pend_head)
            p->pend_tail = NULL;
        s->pending--;
        n++;
        mf_shm_notify(s, p);
        /* Unlinked first: the completion may send again, to this very peer. An indirect frame
         * completes once the receiver has read it (mf_shm_complete_indirect). */
        if (q->done && !indirect)
            q->done->fd_fn(q->done, MPI_SUCCESS);
        free(q);
    }
    return n;
}

static int mf_shm_flush(mf_shm_state *s, bool sleepy)
{
    int n = 0;
    for (int li = 0; li < s->nlocal; li++)
        if (li != s->me && s->peers[li].pend_head)
            n += mf_shm_flush_peer(s, &s->peers[li], sleepy);
    if (n > 0 || s->pending == 0) {
        s->stuck_passes = 0;
        return n;
    }
    /* Nothing moved: if that lasts, look whether the receivers still exist. */
    if (++s->stuck_passes % MF_SHM_LIVENESS_PASSES == 0)
        for (int li = 0; li < s->nlocal; li++) {
            mf_shm_peer *p = &s->peers[li];
            if (li != s->me && p->pend_head && mf_shm_peer_dead(p))
                mf_shm_peer_fail(s, p, mf_shm_died_error(p));
        }
    return 0;
}

/* ---- receiving ---- */

/* Adds the peers that announced themselves since we last looked to the poll list. `order`:
 * relaxed in progress (a sender seen a pass later costs nothing), seq_cst around sleeps. Returns
 * whether any was added. */
static bool mf_shm_discover(mf_shm_state *s, memory_order order)
{
    bool added = false;
    for (int w = 0; w < s->nwords; w++) {
        uint64_t now = atomic_load_explicit(&s->senders[w], order), fresh = now & ~s->known[w];
        if (!fresh)
            continue;
        s->known[w] = now;
        added = true;
        for (; fresh; fresh &= fresh - 1) {
            int li = w * 64 + __builtin_ctzll(fresh);
            if (li < s->nlocal && li != s->me) {
                mf_shm_segment_prefault(&s->seg, li, s->me, false);
                s->poll[s->npoll++] = &s->peers[li];
            }
        }
    }
    return added;
}

/* Records p's failure, found by a read of its memory: upcalls belong in progress, outside the
 * operation that found it, so the next pass reports it and fails p's other work. Returns the
 * peer's error (an earlier one stands). */
static int mf_shm_fail_later(mf_shm_state *s, mf_shm_peer *p, int code)
{
    if (!p->failed) {
        p->failed = code;
        p->unreported = true;
        s->unreported++;
    }
    return p->failed;
}

/* mf_shm_take's indirect case: reads the payload from the sender's memory, at most what the
 * sink holds. Out of line, with its error report, so that the ring case needs no stack frame. */
static __attribute__((noinline)) int mf_shm_take_indirect(mf_shm_state *s, mf_shm_peer *p,
                                                          const mf_wire_hdr *h,
                                                          const struct iovec *iov, int niov)
{
    size_t room = 0, len = (size_t)h->len;
    for (int i = 0; i < niov; i++)
        room += iov[i].iov_len;
    int e = mf_shm_cma_read(p->pid, p->in.peek_addr, iov, niov, 0, len < room ? len : room);
    if (e == 0)
        return MPI_SUCCESS;
    if (p->failed)
        return p->failed;
    return mf_shm_fail_later(s, p,
                             e == ESRCH ? mf_shm_died_error(p)
                                        : mf_error(MPI_ERR_OTHER,
                                                   "shm: reading a %zu-byte frame from rank %d "
                                                   "(pid %d) failed: %s",
                                                   len, p->rank, (int)p->pid, strerror(e)));
}

/* Copies the oldest inbound frame of p (header h, as peeked) into iov and releases it. */
static int mf_shm_take(mf_shm_state *s, mf_shm_peer *p, const mf_wire_hdr *h,
                       const struct iovec *iov, int niov)
{
    int rc = MPI_SUCCESS;
    mf_fabric_count_rx(&s->base, h);
    if (p->in.peek_addr != 0 && niov > 0)
        rc = mf_shm_take_indirect(s, p, h, iov, niov);
    else if (h->len > 0 && niov > 0)
        mf_shm_ring_copy_out(&p->in, h, iov, niov);
    if (mf_shm_ring_pop(&p->in, h))
        mf_shm_wake(s, p); /* its producer waits for the space we just freed */
    return rc;
}

/* mf_shm_take with the first len bytes of the payload handed to m where they lie in the ring
 * (fabric.h mf_fabric_mover); false, with nothing done, for an indirect frame, whose payload is
 * in the sender. */
static bool mf_shm_take_in_ring(mf_shm_state *s, mf_shm_peer *p, const mf_wire_hdr *h, size_t len,
                                const mf_fabric_mover *m)
{
    if (p->in.peek_addr != 0)
        return false;
    mf_shm_ring_read_with(&p->in, h, len, m->fn, m->arg);
    (void)mf_shm_take(s, p, h, NULL, 0); /* counts and releases: fails only for indirect ones */
    return true;
}

/* mf_shm_take for a sink with a mover (fabric.h): the payload handed over where it lies in
 * the ring, or, for an indirect frame, from a copy read from the sender into a cached buffer. */
static __attribute__((noinline)) int
mf_shm_take_moved(mf_shm_state *s, mf_shm_peer *p, const mf_wire_hdr *h, const mf_fabric_sink *sink)
{
    size_t n = sink->fs_move_len < h->len ? sink->fs_move_len : (size_t)h->len;
    if (mf_shm_take_in_ring(s, p, h, n, &sink->fs_mover))
        return MPI_SUCCESS;
    void *copy = mf_bufcache_get(n);
    int rc = mf_shm_take(s, p, h, &(struct iovec){copy, copy ? n : 0}, 1);
    if (!copy && !rc)
        rc = mf_error(MPI_ERR_NO_MEM, "shm: no memory for a %zu-byte frame from rank %d", n,
                      p->rank);
    else if (!rc && n > 0)
        sink->fs_mover.fn(sink->fs_mover.arg, 0, copy, n);
    mf_bufcache_put(copy);
    return rc;
}

static int mf_shm_drain_peer(mf_shm_state *s, mf_shm_peer *p)
{
    int n = 0;
    for (; n < MF_SHM_BATCH; n++) {
        mf_wire_hdr h;
        const char *why;
        int got = mf_shm_ring_peek(&p->in, &h, &why);
        if (got == 0) {
            /* Empty: a producer waiting for room must not wait for our lazy tail. */
            if (mf_shm_ring_serve_blocked(&p->in))
                mf_shm_wake(s, p);
            break;
        }
        if (got < 0) {
            mf_shm_peer_fail(
                s, p, mf_error(MPI_ERR_OTHER, "shm: bad frame from rank %d: %s", p->rank, why));
            break;
        }
        mf_fabric_sink sink = {0};
        mf_fabric_rx_header(&s->base, p->rank, &h, &sink);
        int rc = sink.fs_mover.fn ? mf_shm_take_moved(s, p, &h, &sink)
                                  : mf_shm_take(s, p, &h, sink.fs_iov, sink.fs_niov);
        if (sink.fs_done)
            sink.fs_done(&sink, rc);
        if (p->failed)
            break;
    }
    return n;
}

static int mf_shm_progress_pass(mf_shm_state *s)
{
    if (s->in_progress || !s->peers)
        return 0; /* an upcall re-entered progress: the outer pass continues */
    s->in_progress = true;
    int n = 0;
    for (int li = 0; s->unreported > 0 && li < s->nlocal; li++) {
        mf_shm_peer *p = &s->peers[li];
        if (li != s->me && p->unreported) {
            s->unreported--;
            /* Upcalls belong in progress, not inside the op (rget) that found the failure. */
            p->unreported = false;
            mf_fabric_peer_failed(&s->base, p->rank, p->failed);
            mf_shm_fail_pending(s, p, p->failed);
            n++;
        }
    }
    if (s->pending)
        n += mf_shm_flush(s, false);
    for (int li = 0; s->inflight && li < s->nlocal; li++)
        if (li != s->me && !s->peers[li].failed)
            n += mf_shm_complete_indirect(s, &s->peers[li]);
    mf_shm_discover(s, memory_order_relaxed); /* a busy ring must not hide a new sender */
    for (int i = 0; i < s->npoll; i++)
        if (!s->poll[i]->failed)
            n += mf_shm_drain_peer(s, s->poll[i]);
    if (s->pull_head) {
        mf_shm_pull_step(s);
        n++;
    }
    s->in_progress = false;
    return n;
}

static int mf_shm_progress(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    /* Most passes of a spinning rank find nothing: one load per inbound ring decides that, so
     * that a frame arriving meanwhile is picked up a few nanoseconds later, not a full pass. */
    if (!s->pending && !s->unreported && !s->inflight && !s->pull_head) {
        int i = 0;
        while (i < s->npoll && mf_shm_ring_idle(&s->poll[i]->in))
            i++;
        if (i == s->npoll && !mf_shm_discover(s, memory_order_relaxed))
            return 0;
    }
    return mf_shm_progress_pass(s);
}

/* ---- direct receive ---- */

static int mf_shm_rx_peek(mf_fabric *f, int peer, mf_wire_hdr *hdr)
{
    mf_shm_state *s = mf_shm_of(f);
    mf_shm_peer *p = mf_shm_peer_of(s, peer);
    if (!p || p->failed || s->in_progress)
        return -1;
    const char *why;
    /* A bad frame is left for progress, which reports it. */
    int got = mf_shm_ring_peek(&p->in, hdr, &why);
    return got == 0 ? 0 : got == 1 && hdr->type == MF_MSG_EAGER ? 1 : -1;
}

static void mf_shm_rx_take(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                           int niov)
{
    mf_shm_state *s = mf_shm_of(f);
    (void)mf_shm_take(s, mf_shm_peer_of(s, peer), hdr, iov, niov); /* a failure: next pass */
}

/* fabric.h rx_take_in_place: a payload in the ring (an indirect one is in the sender). */
static bool mf_shm_rx_take_in_place(mf_fabric *f, int peer, const mf_wire_hdr *hdr, size_t len,
                                    const mf_fabric_mover *m)
{
    mf_shm_state *s = mf_shm_of(f);
    return mf_shm_take_in_ring(s, mf_shm_peer_of(s, peer), hdr, len, m);
}

/* ---- sleeping ---- */

static int mf_shm_wait_fd(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    return s->no_doorbell ? -1 : s->doorbell;
}

/* Whether our oldest frame queued to p fits now (rereads tail). */
static bool mf_shm_pend_fits(mf_shm_peer *p)
{
    return p->pend_head &&
           mf_shm_ring_fits(&p->out, p->pend_head->hdr.type, (size_t)p->pend_head->hdr.len);
}

/* Whether progress has something to do: a published inbound frame, also from a sender new
 * since progress last looked (seq_cst loads: called around sleeps), or room for a queued
 * frame. */
static bool mf_shm_has_work(mf_shm_state *s)
{
    if (s->pull_head)
        return true;
    mf_shm_discover(s, memory_order_seq_cst); /* a sender's bit precedes its first frame */
    for (int i = 0; i < s->npoll; i++)
        if (!s->poll[i]->failed && mf_shm_ring_nonempty_sc(&s->poll[i]->in))
            return true;
    for (int li = 0; (s->pending || s->inflight) && li < s->nlocal; li++) {
        mf_shm_peer *p = &s->peers[li];
        if (li != s->me && !p->failed &&
            (mf_shm_pend_fits(p) || (p->fl_head && mf_shm_ring_tail(&p->out) >= p->fl_head->end)))
            return true;
    }
    return false;
}

/* A thread that armed and then does not sleep after all (work came, or no barrier) takes the
 * flag down only when no other thread of this process sleeps in the engine on this instance:
 * one that does was armed by the same flag, and would otherwise sleep through every frame
 * still to come until its bound (fabric.h: wake-ups stay armed while `sleepers` > 0). Seen as
 * the progress thread sleeping 100 ms with frames waiting, after an application thread's
 * sleep_prepare found work. */
static void mf_shm_sleep_abandon(mf_fabric *f, mf_shm_rank_info *mine)
{
    if (f->sleepers == 0)
        atomic_store_explicit(&mine->sleeping, 0, memory_order_seq_cst);
}

static bool mf_shm_sleep_prepare(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    if (!s->peers)
        return true;
    /* About to sleep with large frames queued: hand them over as addresses, so that the
     * receiver, when it runs, takes them without waiting for us to run again; until their
     * stall is old enough for that, keep polling instead of sleeping. */
    if (s->pending && s->indirect != MF_SHM_INDIRECT_OFF && !s->in_progress) {
        s->in_progress = true; /* completions may re-enter progress: as in a pass */
        int moved = mf_shm_flush(s, true);
        s->in_progress = false;
        if (moved > 0 || mf_shm_indirect_soon(s))
            return false; /* frames went out (their completions may have made work) */
    }
    mf_shm_rank_info *mine = mf_shm_segment_info(&s->seg, s->me);
    atomic_store_explicit(&mine->sleeping, 1, memory_order_seq_cst);
    /* Producers skip their fence: make every running rank execute one now, so that a frame
     * published before they could see our flag is visible to the re-check below. */
    if (s->asym_fence && mf_shm_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {
        mf_shm_sleep_abandon(f, mine);
        return false; /* cannot sleep safely: keep polling */
    }
    /* Producers waiting for room get our tail first. */
    mf_shm_discover(s, memory_order_seq_cst);
    for (int i = 0; i < s->npoll; i++)
        if (!s->poll[i]->failed && mf_shm_ring_publish(&s->poll[i]->in))
            mf_shm_wake(s, s->poll[i]);
    /* A queued frame: raise `blocked` again before looking at the room. The consumer clears the
     * flag whenever it publishes tail, also when what it freed is still too little for our
     * frame; without a fresh flag it would publish the rest lazily and ring nobody, and we would
     * sleep with our frame queued until something else woke us. */
    /* The same for indirect frames in flight: the consumer publishes tail after each one it
     * reads and wakes us if the flag is up. */
    for (int li = 0; (s->pending || s->inflight) && li < s->nlocal; li++)
        if (li != s->me && !s->peers[li].failed && (s->peers[li].pend_head || s->peers[li].fl_head))
            mf_shm_ring_set_blocked(&s->peers[li].out);
    atomic_thread_fence(memory_order_seq_cst); /* the flags, then tail (a Dekker pair) */
    /* Re-check after raising the flags: anything published before them is seen here, anything
     * after them rings the doorbell (a new sender's bit precedes its frame). */
    if (mf_shm_has_work(s)) {
        mf_shm_sleep_abandon(f, mine);
        return false;
    }
    return true;
}

static void mf_shm_sleep_end(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    /* Still flagged: no peer rang. Work waiting now arrived unannounced (a lost wake-up) unless
     * its producer is between publishing and looking at our flag, a window of a few
     * instructions against a sleep. */
    if (s->peers && atomic_exchange_explicit(&mf_shm_segment_info(&s->seg, s->me)->sleeping, 0,
                                             memory_order_seq_cst) != 0) {
        mf_shm_unrung_count++;
        if (mf_shm_has_work(s))
            mf_progress_missed_wakeup();
    }
    mf_shm_doorbell_drain(s->doorbell);
}

/* ---- single copy ---- */

static int mf_shm_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey)
{
    *rkey = (uint64_t)(uintptr_t)addr;
    return MPI_SUCCESS;
}

static void mf_shm_rkey_release(mf_fabric *f, uint64_t rkey)
{
}

/* fabric.h rget: queued, and read by progress MF_SHM_PULL_CHUNK bytes per pass
 * (mf_shm_pull_step), so that neither the call (a receive posted on an RTS that came first)
 * nor one progress pass holds the rank for a whole large message: while it reads, its own
 * RTS, CTS and FIN frames still go out, and the peer's come in. */
static int mf_shm_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset,
                       const struct iovec *iov, int niov, size_t len, mf_fabric_done *done)
{
    mf_shm_state *s = mf_shm_of(f);
    mf_shm_peer *p = mf_shm_peer_of(s, peer);
    if (!p || !(f->flags & MF_FABRIC_RGET))
        return mf_error(MPI_ERR_INTERN, "shm: rget from rank %d is not possible", peer);
    if (p->failed)
        return p->failed;
    if (len == 0)
        return MF_FABRIC_DONE;
    mf_shm_pull *q = malloc(sizeof *q);
    if (!q)
        return mf_error(MPI_ERR_NO_MEM, "shm: no memory to read %zu bytes from rank %d", len, peer);
    *q = (mf_shm_pull){
        .peer = p, .raddr = rkey + offset, .iov = iov, .niov = niov, .len = len, .done = done};
    if (s->pull_tail)
        s->pull_tail->next = q;
    else
        s->pull_head = q;
    s->pull_tail = q;
    return MF_FABRIC_PENDING;
}

/* Unlinks q, whose predecessor in the pull list is prev (NULL: q is the head). */
static void mf_shm_pull_unlink(mf_shm_state *s, mf_shm_pull *prev, mf_shm_pull *q)
{
    if (prev)
        prev->next = q->next;
    else
        s->pull_head = q->next;
    if (s->pull_tail == q)
        s->pull_tail = prev;
}

/* Reads the next chunk of the oldest rget, and completes it once whole or failed. */
static void mf_shm_pull_step(mf_shm_state *s)
{
    mf_shm_pull *q = s->pull_head;
    mf_shm_peer *p = q->peer;
    size_t n = q->len - q->got < MF_SHM_PULL_CHUNK ? q->len - q->got : MF_SHM_PULL_CHUNK;
    int rc = p->failed;
    if (!rc) {
        int e = mf_shm_cma_read(p->pid, q->raddr + q->got, q->iov, q->niov, q->got, n);
        if (e == 0) {
            q->got += n;
        } else if (e == ESRCH) {
            rc = mf_shm_fail_later(s, p, mf_shm_died_error(p));
        } else {
            rc = mf_error(MPI_ERR_OTHER, "shm: reading %zu bytes from rank %d (pid %d) failed: %s",
                          q->len, p->rank, (int)p->pid, strerror(e));
        }
    }
    if (rc || q->got == q->len) {
        mf_shm_pull_unlink(s, NULL, q);
        q->done->fd_fn(q->done, rc);
        free(q);
    }
}

/* Fails every rget from p with code. */
static void mf_shm_fail_pulls(mf_shm_state *s, mf_shm_peer *p, int code)
{
    mf_shm_pull *prev = NULL, *q = s->pull_head;
    while (q) {
        mf_shm_pull *next = q->next;
        if (q->peer == p) {
            mf_shm_pull_unlink(s, prev, q);
            q->done->fd_fn(q->done, code);
            free(q);
        } else {
            prev = q;
        }
        q = next;
    }
}

/* ---- lifecycle ---- */

static void mf_shm_reset(mf_shm_state *s)
{
    if (mf_shm_live == s)
        mf_shm_live = NULL;
    free(s->peers);
    free(s->poll);
    free(s->known);
    free(s->local_of);
    s->peers = NULL;
    s->poll = NULL;
    s->known = NULL;
    s->senders = NULL;
    s->npoll = s->nwords = 0;
    s->local_of = NULL;
    s->nlocal = s->world_size = 0;
    s->pending = 0;
    s->inflight = 0;
    while (s->pull_head) { /* none at a normal close: their requests completed */
        mf_shm_pull *q = s->pull_head;
        s->pull_head = q->next;
        free(q);
    }
    s->pull_tail = NULL;
    s->indirect = MF_SHM_INDIRECT_OFF;
    s->unreported = 0;
    s->stuck_passes = 0;
    s->no_doorbell = false;
    s->asym_fence = false;
    s->base.poll_interval_us = 0;
    s->base.flags &= ~(unsigned)MF_FABRIC_RGET;
}

static int mf_shm_open(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    if (!mf_config_bool("MANIFOLD_SHM"))
        return MF_FABRIC_UNAVAILABLE;
    f->flags &= ~(unsigned)MF_FABRIC_RGET;
    int fd = mf_shm_doorbell_open(mf_g.job_hash, mf_g.rank);
    if (fd < 0)
        return mf_error(MPI_ERR_OTHER, "shm: cannot bind the doorbell socket of rank %d: %s",
                        mf_g.rank, strerror(-fd));
    s->doorbell = fd;
    /* Registering is cheap and must precede any peer's use of the barrier: do it before the
     * fence that comes before start. Kernels before 4.16 or a seccomp filter say no: then
     * producers fence (s->asym_fence stays false on every local rank, see start). */
    s->membarrier_registered = mf_config_bool("MANIFOLD_SHM_MEMBARRIER") &&
                               mf_shm_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
    return MPI_SUCCESS;
}

static int mf_shm_cma_wanted(mf_shm_state *s, const char *var, const char *fallback, bool *on,
                             bool *forced);

/* Decides MF_FABRIC_RGET (mf_shm_cma_wanted) and when receivers use it (rget_min_busy).
 * A lone large message streams through the 1 MiB rings in 64 KiB frames, copied in and out by
 * the two cores at once: measured 1.5-4x faster than a process_vm_readv pull from 128 KiB to
 * 64 MiB (the kernel pins the pages it reads, and one core copies). When both ranks send large
 * messages to each other, both cores copy anyway, twice per byte through the rings against once
 * with a pull; once the data in flight outgrows the caches, the pull wins (docs/PERFORMANCE.md):
 * by default (auto) a receive pulls only while its rank has MANIFOLD_SHM_PULL_BUSY bytes of
 * rendezvous sends of its own in flight. Unless the receiving thread's core is shared with load
 * from outside the job (core/core_share.h): then the two ranks hold a core at the same moment
 * only part of the time, the rings' two-core pipeline runs only then, and a receive pulls from
 * MANIFOLD_SHM_PULL_SHARED bytes in flight (bibw 256 KiB, one busy loop per core: 1.0-1.2 GB/s
 * through the rings in some runs, 5-7.5 in others, against 5.5-8.4 pulled; a loaded ping-pong of
 * 128 KiB was twice as fast through the rings, so a receiver with nothing of its own in flight
 * still asks for a push). Not by that measure when the job itself has more ranks than the host
 * has cores (every rank then waits for its core). There, on a host whose ranks outnumber its
 * cores more than twice, a rank always shares its core with ranks of the job, the two-core
 * pipeline is the exception, and a receive pulls from MANIFOLD_SHM_PULL_SHARED bytes in flight;
 * alltoall (linear, each rank with all its sends in flight), medians of 3-5 interleaved runs,
 * rings / pull: 8 ranks on 2 cores 603 / 426 us at 128 KiB, 1324 / 1257 at 256 KiB, 7231 /
 * 6014 at 1 MiB; 16 ranks 3235 / 3162 at 128 KiB, 7352 / 6340 at 256 KiB. At 4 ranks on 2 cores
 * the rings stayed as good (256 KiB 136 / 155, 512 KiB 354 / 321, 1 MiB 1020 / 1083), and
 * with pairwise alltoall at 8 ranks (before 99589cc) they were better. */
static int mf_shm_cma_setup(mf_shm_state *s)
{
    bool on, forced;
    int rc = mf_shm_cma_wanted(s, "MANIFOLD_SHM_CMA", "large messages are streamed", &on, &forced);
    if (on)
        s->base.flags |= MF_FABRIC_RGET;
    bool over = mf_host_oversubscribed(s->nlocal);
    long cores = mf_host_cores();
    bool crowded = over && cores > 0 && s->nlocal > 2 * cores;
    size_t shared = mf_config_size("MANIFOLD_SHM_PULL_SHARED");
    size_t busy = mf_config_size("MANIFOLD_SHM_PULL_BUSY");
    s->base.rget_min_busy = forced ? 0 : crowded && shared < busy ? shared : busy;
    s->base.rget_min_busy_shared = forced ? 0 : over ? SIZE_MAX : shared;
    return rc;
}

/* Decides s->indirect from MANIFOLD_SHM_INDIRECT and the same probe. */
static int mf_shm_indirect_setup(mf_shm_state *s)
{
    bool on, forced;
    int rc = mf_shm_cma_wanted(s, "MANIFOLD_SHM_INDIRECT", "frames always go through the rings",
                               &on, &forced);
    s->indirect = !on      ? MF_SHM_INDIRECT_OFF
                  : forced ? MF_SHM_INDIRECT_ALWAYS
                           : MF_SHM_INDIRECT_AUTO;
    return rc;
}

/* A use of process_vm_readv set by `var` (0, 1 or auto): *on if wanted and a probe of one local
 * peer works (all ranks share uid and restrictions, so every local rank decides the same);
 * *forced if set to 1, which makes a failed probe an error. Else `fallback` says what happens. */
static int mf_shm_cma_wanted(mf_shm_state *s, const char *var, const char *fallback, bool *on,
                             bool *forced)
{
    const char *mode = mf_config_str(var);
    *on = false;
    *forced = strcmp(mode, "1") == 0;
    if (strcmp(mode, "0") == 0)
        return MPI_SUCCESS;
    mf_shm_peer *p = &s->peers[(s->me + 1) % s->nlocal];
    int e = mf_shm_cma_probe(p->pid, p->info->probe_addr);
    if (e == 0) {
        *on = true;
        return MPI_SUCCESS;
    }
    if (*forced)
        return mf_error(MPI_ERR_OTHER,
                        "shm: %s=1 but process_vm_readv from rank %d (pid %d) failed: %s", var,
                        p->rank, (int)p->pid, strerror(e));
    int scope = e == EPERM ? mf_shm_cma_ptrace_scope() : -1;
    const char *why = scope == 1  ? "; kernel.yama.ptrace_scope is 1 and the local ranks do not "
                                    "share a parent process"
                      : scope > 1 ? "; kernel.yama.ptrace_scope allows it only with "
                                    "CAP_SYS_PTRACE"
                                  : "";
    mf_verbose("shm: cross-memory attach unavailable (%s%s); %s", strerror(e), why, fallback);
    return MPI_SUCCESS;
}

/* Sets the eager limit and max_frame for nlocal ranks on this host (every one of them computes
 * the same). By default 64 KiB: up to there a copy into the ring and one out of it beat a
 * cross-memory-attach read plus the rendezvous round trip (about 2x at 32-64 KiB ping-pong on
 * the development machine). Rings grow with the largest frame and there are nlocal^2 of them,
 * so beyond MF_SHM_BIG_EAGER_RANKS local ranks the default drops to 16 KiB. */
#define MF_SHM_BIG_EAGER_RANKS 16
static void mf_shm_set_eager(mf_fabric *f, int nlocal)
{
    /* At most 1 MiB (config_vars.def): larger eager limits would make rings huge. */
    size_t eager = mf_config_size_or("MANIFOLD_SHM_EAGER_LIMIT",
                                     nlocal <= MF_SHM_BIG_EAGER_RANKS ? 65536 : 16384);
    f->eager_limit = eager;
    /* An eager message is one frame, so max_frame covers the eager limit. */
    f->max_frame = eager > MF_SHM_MIN_FRAME ? eager : MF_SHM_MIN_FRAME;
}

static int mf_shm_start(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    int nlocal = mf_g.local_size, me = mf_g.local_rank;
    mf_shm_set_eager(f, nlocal);
    if (nlocal <= 1)
        return MPI_SUCCESS; /* nobody to reach: reachable() says false to everyone */
    s->world_size = mf_g.size;
    s->local_of = malloc((size_t)mf_g.size * sizeof *s->local_of);
    s->peers = calloc((size_t)nlocal, sizeof *s->peers);
    s->poll = calloc((size_t)nlocal, sizeof *s->poll);
    s->nwords = (nlocal + 63) / 64;
    s->known = calloc((size_t)s->nwords, sizeof *s->known);
    if (!s->local_of || !s->peers || !s->poll || !s->known) {
        mf_shm_reset(s);
        return mf_error(MPI_ERR_NO_MEM, "shm: no memory for %d local peers", nlocal);
    }
    for (int r = 0; r < mf_g.size; r++)
        s->local_of[r] = -1;
    for (int li = 0; li < nlocal; li++)
        s->local_of[mf_g.local_ranks[li]] = li;
    s->nlocal = nlocal;
    s->me = me;

    char name[96];
    mf_shm_segment_name(name, sizeof name, mf_g.job_hash, mf_g.node);
    size_t cap = mf_shm_ring_cap_for(nlocal, f->max_frame);
    if (me == 0) {
        int n = mf_shm_segment_reap("/dev/shm", 2 * MF_SHM_START_TIMEOUT_MS / 1000);
        if (n > 0)
            mf_debug("shm: removed %d segments left in /dev/shm by killed jobs", n);
    }
    /* The segment goes from rank 0 to the others over the doorbells when every one of them is
     * within reach of rank 0 (all were bound before the fence that precedes start); the others
     * look for both forms. */
    mf_shm_channel ch = {s->doorbell, mf_g.job_hash, mf_g.local_ranks[0]};
    bool handout = true;
    for (int li = 1; me == 0 && li < nlocal; li++)
        handout &= mf_shm_doorbell_check(mf_g.job_hash, mf_g.local_ranks[li]) == 0;
    int rc = me == 0
                 ? mf_shm_segment_create(&s->seg, name, nlocal, cap, mf_g.job_tag, handout)
                 : mf_shm_segment_attach(&s->seg, name, mf_g.job_tag, MF_SHM_START_TIMEOUT_MS, &ch);
    if (rc == MPI_SUCCESS &&
        (s->seg.nlocal != nlocal || s->seg.ring_cap < mf_shm_frame_bytes(f->max_frame)))
        rc = mf_error(MPI_ERR_OTHER,
                      "shm: the segment made by local rank 0 does not fit this "
                      "rank (%d local ranks, max frame %zu): do all ranks have the same "
                      "MANIFOLD_SHM_EAGER_LIMIT?",
                      nlocal, f->max_frame);
    if (rc == MPI_SUCCESS) {
        mf_shm_rank_info *mine = mf_shm_segment_info(&s->seg, me);
        mf_shm_cma_allow_launcher(); /* before peers can see the pid and probe */
        mine->pid = (int32_t)getpid();
        mine->probe_addr = (uint64_t)(uintptr_t)&mf_shm_cma_probe_word;
        mine->membarrier_ok = s->membarrier_registered;
        rc = mf_shm_segment_arrive(&s->seg, MF_SHM_START_TIMEOUT_MS, &ch);
    }
    if (rc != MPI_SUCCESS) {
        mf_shm_segment_detach(&s->seg);
        mf_shm_reset(s);
        return rc;
    }
    /* The same answer on every local rank: each read every record after all arrived. */
    s->asym_fence = true;
    for (int li = 0; li < nlocal; li++)
        s->asym_fence &= mf_shm_segment_info(&s->seg, li)->membarrier_ok != 0;
    const char *stream = mf_config_str("MANIFOLD_SHM_STREAM_STORES");
    int copy_policy = strcmp(stream, "1") == 0   ? MF_SHM_COPY_ALWAYS
                      : strcmp(stream, "0") == 0 ? MF_SHM_COPY_NEVER
                                                 : MF_SHM_COPY_AUTO;
    for (int li = 0; li < nlocal; li++) {
        if (li == me)
            continue;
        mf_shm_peer *p = &s->peers[li];
        unsigned char *data;
        mf_shm_ring_ctl *ctl;
        p->rank = mf_g.local_ranks[li];
        p->info = mf_shm_segment_info(&s->seg, li);
        p->pid = (pid_t)p->info->pid;
        ctl = mf_shm_segment_ring(&s->seg, me, li, &data);
        mf_shm_ring_attach(&p->out, ctl, data, s->seg.ring_cap, f->max_frame);
        mf_shm_ring_set_copy_policy(&p->out, copy_policy);
        p->out.streamed = &s->copies_streamed;
        ctl = mf_shm_segment_ring(&s->seg, li, me, &data);
        mf_shm_ring_attach(&p->in, ctl, data, s->seg.ring_cap, f->max_frame);
    }
    s->senders = mf_shm_segment_senders(&s->seg, me);
    /* A doorbell we cannot ring would leave a peer asleep with work waiting (ranks of one host
     * in different network namespaces): then nobody relies on it and sleeps are bounded. */
    for (int li = 0; li < nlocal; li++) {
        int e = li == me ? 0 : mf_shm_doorbell_check(mf_g.job_hash, s->peers[li].rank);
        if (e != 0 && !s->no_doorbell) {
            mf_verbose("shm: doorbell of rank %d unreachable (%s); sleeping ranks poll every "
                       "100 us",
                       s->peers[li].rank, strerror(e));
            s->no_doorbell = true;
            f->poll_interval_us = 100;
        }
    }
    rc = mf_shm_cma_setup(s);
    if (rc == MPI_SUCCESS)
        rc = mf_shm_indirect_setup(s);
    if (rc != MPI_SUCCESS) {
        mf_shm_segment_detach(&s->seg);
        mf_shm_reset(s);
        return rc;
    }
    mf_shm_live = s;
    mf_debug("shm: %d local ranks, rings of %zu KiB, eager %zu, max frame %zu, cma %s, "
             "wake-up barrier %s",
             nlocal, s->seg.ring_cap >> 10, f->eager_limit, f->max_frame,
             (f->flags & MF_FABRIC_RGET) ? "on" : "off",
             s->asym_fence ? "membarrier" : "per frame");
    return MPI_SUCCESS;
}

static bool mf_shm_reachable(mf_fabric *f, int peer)
{
    mf_shm_state *s = mf_shm_of(f);
    return mf_config_bool("MANIFOLD_SHM") && mf_shm_peer_of(s, peer) != NULL &&
           mf_g.node_of[peer] == mf_g.node;
}

static int mf_shm_close(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    if (s->peers) {
        /* Close comes after MPI_Finalize's fence: every peer has finished its communication, so
         * what is still queued are protocol leftovers (acks) nobody waits for. Push them out
         * while the rings have room for a short while, but deliver nothing inbound any more: the
         * p2p layer above is already torn down. */
        long deadline = mf_clock_ms() + MF_SHM_CLOSE_FLUSH_MS;
        while ((s->pending || s->inflight) && mf_clock_ms() < deadline) {
            mf_shm_flush(s, false);
            for (int li = 0; s->inflight && li < s->nlocal; li++)
                if (li != s->me)
                    mf_shm_complete_indirect(s, &s->peers[li]);
        }
        if (s->pending || s->inflight) {
            mf_debug("shm: dropping %zu frames still queued to local peers at finalize",
                     s->pending + s->inflight);
            int code = mf_error(MPI_ERR_OTHER, "shm: frame dropped at finalize");
            for (int li = 0; li < s->nlocal; li++)
                if (li != s->me)
                    mf_shm_fail_pending(s, &s->peers[li], code);
        }
        mf_shm_segment_detach(&s->seg);
    }
    mf_shm_reset(s);
    if (s->doorbell >= 0)
        close(s->doorbell);
    s->doorbell = -1;
    return MPI_SUCCESS;
}

/* Frames that did not fit a ring wait in per-peer pending lists until progress moves them. */
static bool mf_shm_tx_idle(mf_fabric *f)
{
    return mf_shm_of(f)->pending == 0 && mf_shm_of(f)->inflight == 0;
}

/* shm's own MPI_T counter, beside every instance's (fabric_mpit.h). */
static void mf_shm_mpit_publish(mf_fabric *f)
{
    mf_fabric_mpit_counter(f, "copies_streamed",
                           "payloads written into this rank's outbound rings with streaming "
                           "(non-temporal) stores, as the rings' producers choose when they "
                           "measure the two cores far apart (MANIFOLD_SHM_STREAM_STORES)",
                           &mf_shm_of(f)->copies_streamed);
}

static const mf_fabric_ops mf_shm_ops = {
    .size = sizeof(mf_fabric_ops),
    .open = mf_shm_open,
    .start = mf_shm_start,
    .close = mf_shm_close,
    .reachable = mf_shm_reachable,
    .send = mf_shm_send,
    .rkey_make = mf_shm_rkey_make,
    .rkey_release = mf_shm_rkey_release,
    .rget = mf_shm_rget,
    .progress = mf_shm_progress,
    .wait_fd = mf_shm_wait_fd,
    .sleep_prepare = mf_shm_sleep_prepare,
    .sleep_end = mf_shm_sleep_end,
    .tx_idle = mf_shm_tx_idle,
    .rx_peek = mf_shm_rx_peek,
    .rx_take = mf_shm_rx_take,
    .send_in_place = mf_shm_send_in_place,
    .rx_take_in_place = mf_shm_rx_take_in_place,
    .break_peer = mf_fabric_no_break_peer,
    .mpit_publish = mf_shm_mpit_publish,
};

/* Defaults of a zeroed instance. */
static void mf_shm_init(mf_fabric *f)
{
    mf_shm_state *s = mf_shm_of(f);
    f->flags = MF_FABRIC_INJECT;
    f->eager_limit = 16384;
    f->max_frame = MF_SHM_MIN_FRAME;
    s->doorbell = -1;
}

const mf_fabric_class mf_shm_class = {
    .version = MF_FABRIC_CLASS_VERSION,
    .name = "shm",
    .ops = &mf_shm_ops,
    .caps = MF_FABRIC_CAP_RELIABLE | MF_FABRIC_CAP_ORDERED | MF_FABRIC_CAP_RMA_READ,
    .max_message = MF_WIRE_MAX_FRAME,
    .instance_size = sizeof(mf_shm_state),
    .init = mf_shm_init,
};
