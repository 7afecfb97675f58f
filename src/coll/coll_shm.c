/*
 * coll_shm.c — barrier, bcast, reduce, allreduce, reduce_scatter, allgather and alltoall
 * through one shared segment per communicator, for communicators whose ranks all live on this
 * host and reach each other over the shm fabric (with MANIFOLD_SHM=0 they take the
 * point-to-point algorithms, as across hosts). Also the per-communicator state both this and
 * the host-leader scheme (coll_hier.c) hang on comm->c_coll, and when each is made.
 *
 * Segment (host_segment.c maps it at the communicator's second eligible collective, so that a
 * communicator used once never costs a mapping): n per-rank flag blocks, then SHM_BUFFERS (B)
 * buffers of n slots of MANIFOLD_COLL_SHM_SLOT bytes each. Every operation is cut into steps of
 * at most one slot; step s (counted alike by every rank, the same sequence on every rank since
 * collectives are ordered) uses buffer s mod B. Per-rank flags hold the last step in which the rank
 *   posted   put its data in its slot (the root's slot carries a bcast),
 *   reduced  folded its part of the vector (below),
 *   done     finished reading anything of the step.
 * Flags only grow, so "flag >= s" is the test. Before writing into buffer s mod B a rank waits
 * until every rank is done with step s-B, the last one that used it; that wait is almost always
 * already over, so consecutive steps pipeline.
 *
 * Reduction in place, by all ranks: every rank copies its chunk into its slot. A short chunk
 * (SHM_FOLD_WHOLE) is then folded whole by each rank that wants the result, into its own
 * buffer: one wait per step, which on an oversubscribed host is one round of context switches
 * instead of two. A longer chunk is cut into n parts and rank p folds part p from left to
 * right, slot[i] = slot[i-1] op slot[i] for i = 1..n-1, so the result (x0 op x1 op ... op x(n-1), in rank order, right for
 * non-commutative ops too) ends in slot[n-1], which the readers copy out. Only types whose
 * packed form is their memory layout (contiguous, extent = size) take this path.
 *
 * Waiting: a few checks of the flags, then the progress engine's wait (its spin, its yields when
 * the host is oversubscribed, then sleeps), which keeps every fabric moving. A flag store rings
 * the doorbell of every other rank that sleeps (shm_wake.h: one load per rank when none does),
 * and a waiter looks at the flags once more after raising its sleeping flag (the progress
 * source's sleep_ns), so a store is never missed; a progress source still bounds each sleep to
 * MANIFOLD_COLL_SHM_SLEEP_US as a safety net.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll/comm_build.h"
#include "coll/coll_impl.h"
#include "core/config.h"
#include "core/progress.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "fabric/shm/shm_wake.h"
#include "tool/mpit.h"

/* One rank's flags, each on its own cache line (written by one rank, read by all). */
struct shm_flags {
    _Alignas(64) _Atomic uint64_t posted;
    _Alignas(64) _Atomic uint64_t reduced;
    _Alignas(64) _Atomic uint64_t done;
};

enum shm_state { SHM_UNDECIDED, SHM_CREATING, SHM_READY, SHM_NEVER };

struct mf_coll_shm {
    enum shm_state state;
    bool multi_host; /* the ranks span hosts: h below is made instead of a segment */
    struct mf_coll_hier h;
    int calls;      /* eligible collectives so far, while undecided */
    uint64_t step;  /* last step taken */
    size_t slot;    /* bytes per slot */
    size_t seg_len; /* mapping length */
    void *seg;      /* the mapping */
    struct shm_flags *flags;
    char *data; /* SHM_BUFFERS buffers of n slots */
    int n;      /* ranks */
    int *world; /* world rank of each rank, for their doorbells */
};

/* The communicators that can never use a segment share this one (no allocation for them). */
static struct mf_coll_shm shm_never = {.state = SHM_NEVER};
/* The same for those whose ranks span hosts (or an intercommunicator's two groups). */
static struct mf_coll_shm shm_never_multi = {.state = SHM_NEVER, .multi_host = true};

/* The mapping is made at this eligible collective (1 = the first). */
#define SHM_CREATE_AT 2
/* Buffers of n slots, used in turn by consecutive steps: a rank may run this many steps ahead
 * of the slowest reader (a root streaming back-to-back bcasts) before it waits. */
#define SHM_BUFFERS 4
/* Reductions of at most this many bytes per step are folded whole by every rank that needs the
 * result, right after all posted (one wait per step); longer ones are folded in parts, one per
 * rank, then read back (two waits, but each rank reads only 1/n of the slots to fold). */
#define SHM_FOLD_WHOLE 2048

void mf_coll_comm_free(mf_comm *comm)
{
    struct mf_coll_shm *s = comm->c_coll;
    comm->c_coll = NULL;
    if (!s || s == &shm_never || s == &shm_never_multi)
        return;
    if (s->seg)
        munmap(s->seg, s->seg_len);
    if (s->h.node)
        mf_comm_release(s->h.node);
    if (s->h.leaders)
        mf_comm_release(s->h.leaders);
    free(s->h.leader_of_node);
    free(s->world);
    free(s);
}

size_t mf_coll_shm_bcast_min(void)
{
    static size_t v;
    return mf_coll_size_setting(&v, "MANIFOLD_COLL_SHM_BCAST_MIN");
}

size_t mf_coll_shm_max(void)
{
    static size_t v;
    return mf_coll_size_setting(&v, "MANIFOLD_COLL_SHM_MAX");
}

/* Bytes per slot for n ranks: MANIFOLD_COLL_SHM_SLOT, or by default SHM_SLOT_MAX while the
 * data part stays within SHM_DATA_BUDGET, smaller beyond (at least SHM_SLOT_MIN). Whole cache
 * lines. Fewer, longer steps pay: each costs every rank one or two waits for all the others,
 * a round of context switches when oversubscribed (allreduce of 1 MiB at 16 ranks on 2 cores:
 * 32 KiB slots 3.0 ms, 128 KiB 1.5 ms; 256 KiB at 8 ranks 331 against 82 us). */
#define SHM_SLOT_MAX (128 * 1024)
#define SHM_SLOT_MIN (4 * 1024)
#define SHM_DATA_BUDGET (8 * 1024 * 1024)
static size_t shm_slot_bytes(int n)
{
    static size_t set;
    if (!set)
        set = mf_config_size_or("MANIFOLD_COLL_SHM_SLOT", 0) + 1; /* 1: automatic */
    if (set > 1)
        return (set - 1 + 63) & ~(size_t)63;
    size_t slot = SHM_DATA_BUDGET / (SHM_BUFFERS * (size_t)n);
    slot = slot > SHM_SLOT_MAX ? SHM_SLOT_MAX : slot < SHM_SLOT_MIN ? SHM_SLOT_MIN : slot;
    return slot & ~(size_t)63;
}

enum coll_kind { KIND_NONE, KIND_SEGMENT, KIND_HIER };

/* What comm may ever use: a segment (an intracommunicator of several ranks, all on this host,
 * every other rank reached over shm), the host-leader scheme (ranks on several hosts, at least
 * one host with two of them), or neither; *multi: whether its ranks span hosts. */
static enum coll_kind coll_kind_of(const mf_comm *comm, bool *multi)
{
    int n = comm->c_size;
    *multi = comm->c_is_inter;
    if (comm->c_is_inter || n < 2 || !mf_g.node_of)
        return KIND_NONE;
    bool one_host = true, over_shm = true;
    for (int i = 0; i < n; i++) {
        int w = mf_comm_peer(comm, i);
        one_host &= mf_g.node_of[w] == mf_g.node;
        const struct mf_fabric *f = mf_comm_fabric(comm, w);
        over_shm &= i == comm->c_rank || (f && f->cls && strcmp(f->cls->name, "shm") == 0);
    }
    if (one_host)
        return over_shm && mf_config_bool("MANIFOLD_COLL_SHM") ? KIND_SEGMENT : KIND_NONE;
    *multi = true;
    if (n < 3 || !mf_config_bool("MANIFOLD_COLL_HIER"))
        return KIND_NONE;
    /* one rank per host: the leaders would be everyone */
    bool *seen = calloc((size_t)mf_g.num_nodes, sizeof *seen), shared = false;
    for (int i = 0; i < n && seen && !shared; i++) {
        int node = mf_g.node_of[mf_comm_peer(comm, i)];
        shared = seen[node];
        seen[node] = true;
    }
    free(seen);
    return shared ? KIND_HIER : KIND_NONE;
}

/* Segment waits that found their flags reached right after a sleep nobody rang for (MPI_T
 * coll_shm_late_wakeups): a flag store that did not wake its waiter, which then slept until the
 * safety-net bound. */
static mf_t_counter shm_late_wakeups;

static void shm_publish_counters(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    mf_t_pvar_register(&(mf_t_pvar_desc){
        .name = "coll_shm_late_wakeups",
        .desc = "waits of the shared-memory collectives that found what they waited for right "
                "after a sleep no doorbell ended (it ran to MANIFOLD_COLL_SHM_SLEEP_US, or "
                "something else woke it): flag stores that did not wake their waiter",
        .category = "coll",
        .var_class = MPI_T_PVAR_CLASS_COUNTER,
        .datatype = MPI_UNSIGNED_LONG_LONG,
        .verbosity = MPI_T_VERBOSITY_TUNER_BASIC,
        .counter = &shm_late_wakeups,
    });
}

/* Maps the segment (collective over comm); on failure the communicator keeps the
 * point-to-point algorithms. */
static void shm_create(mf_comm *comm, struct mf_coll_shm *s)
{
    int n = comm->c_size;
    s->state = SHM_CREATING; /* the exchanges below take the point-to-point algorithms */
    s->slot = shm_slot_bytes(n);
    size_t flags = (size_t)n * sizeof(struct shm_flags);
    s->seg_len = flags + SHM_BUFFERS * (size_t)n * s->slot;
    /* every rank allocates before the collective mapping, so a failure here is local and the
     * mapping's agreement makes it everyone's */
    s->world = malloc((size_t)n * sizeof *s->world);
    if (s->world)
        for (int i = 0; i < n; i++)
            s->world[i] = mf_comm_peer(comm, i);
    s->n = n;
    void *seg = NULL;
    int rc = mf_host_segment_map(comm, s->world ? s->seg_len : 0, "coll", &seg);
    if (rc != MPI_SUCCESS || !s->world) {
        if (seg)
            munmap(seg, s->seg_len);
        free(s->world);
        s->world = NULL;
        s->state = SHM_NEVER;
        return;
    }
    s->seg = seg;
    shm_publish_counters();
    s->flags = s->seg;
    s->data = (char *)s->seg + flags;
    s->state = SHM_READY;
}

/* The host-leader communicators (collective over comm): ranks of this host, in comm's order,
 * and the first rank of every host, in comm's order. */
static void hier_create(mf_comm *comm, struct mf_coll_shm *s)
{
    struct mf_coll_hier *h = &s->h;
    s->state = SHM_CREATING; /* the splits' exchanges take the flat algorithms */
    int rc = mf_comm_split(comm, mf_g.node, comm->c_rank, &h->node);
    if (!rc)
        rc = mf_comm_split(comm, h->node->c_rank == 0 ? 0 : MPI_UNDEFINED, comm->c_rank,
                           &h->leaders);
    if (!rc && !(h->leader_of_node = malloc((size_t)mf_g.num_nodes * sizeof(int))))
        rc = MPI_ERR_NO_MEM;
    if (rc) { /* an error here is an error of every rank's split: all fall back alike */
        s->state = SHM_NEVER;
        return;
    }
    for (int i = 0; i < mf_g.num_nodes; i++)
        h->leader_of_node[i] = -1;
    int nl = 0;
    for (int i = 0; i < comm->c_size; i++) {
        int node = mf_g.node_of[mf_comm_peer(comm, i)];
        if (h->leader_of_node[node] < 0)
            h->leader_of_node[node] = nl++;
    }
    h->leader = mf_group_rank_of(comm->c_group, h->node->c_group->g_world_ranks[0]);
    s->state = SHM_READY;
}

/* comm's state, made on first use (possibly one of the shared "never" ones). */
static struct mf_coll_shm *coll_info(mf_comm *comm)
{
    struct mf_coll_shm *s = comm->c_coll;
    if (s)
        return s;
    bool multi;
    enum coll_kind k = coll_kind_of(comm, &multi);
    s = k != KIND_NONE ? calloc(1, sizeof *s) : NULL;
    if (s) {
        s->multi_host = multi;
        comm->c_coll_free = mf_coll_comm_free;
    }
    comm->c_coll = s ? s : multi ? &shm_never_multi : &shm_never;
    return comm->c_coll;
}

bool mf_coll_oversubscribed(mf_comm *comm)
{
    /* A host's own property: ranks on other hosts may see theirs differently, and algorithm
     * choices must agree across the communicator, so it counts only within one host. */
    return mf_g.oversubscribed && !coll_info(comm)->multi_host;
}

/* comm's state if it is of `kind` and ready, making it at the SHM_CREATE_AT-th call. */
static struct mf_coll_shm *coll_state(mf_comm *comm, enum coll_kind kind)
{
    struct mf_coll_shm *s = coll_info(comm);
    if (s->multi_host != (kind == KIND_HIER))
        return NULL;
    if (s->state == SHM_READY)
        return s;
    if (s->state != SHM_UNDECIDED || ++s->calls < SHM_CREATE_AT)
        return NULL;
    if (kind == KIND_HIER)
        hier_create(comm, s);
    else
        shm_create(comm, s);
    return s->state == SHM_READY ? s : NULL;
}

struct mf_coll_shm *mf_coll_shm_get(mf_comm *comm)
{
    return coll_state(comm, KIND_SEGMENT);
}

const struct mf_coll_hier *mf_coll_hier_get(mf_comm *comm)
{
    struct mf_coll_shm *s = coll_state(comm, KIND_HIER);
    return s ? &s->h : NULL;
}

/* ---- waiting ---------------------------------------------------------------------------- */

struct shm_wait {
    const struct mf_coll_shm *s;
    size_t field; /* offsetof the flag in struct shm_flags */
    uint64_t want;
    int next;                  /* ranks below it are known to have reached `want` */
    int end;                   /* one past the last rank looked at */
    const void *owner;         /* shm_thread_tag of the waiting thread */
    bool slept;                /* a sleep was allowed since the flags were last looked at */
    unsigned long long unrung; /* mf_shm_unrung_sleeps() when it was */
};

static _Atomic uint64_t *shm_flag(const struct mf_coll_shm *s, int r, size_t field)
{
    return (_Atomic uint64_t *)(void *)((char *)&s->flags[r] + field);
}

static bool shm_reached(void *arg)
{
    struct shm_wait *w = arg;
    while (w->next < w->end &&
           atomic_load_explicit(shm_flag(w->s, w->next, w->field), memory_order_acquire) >= w->want)
        w->next++;
    return w->next == w->end;
}

/* The engine's done(): shm_reached, counting a reach right after an unrung sleep. */
static bool shm_wait_done(void *arg)
{
    struct shm_wait *w = arg;
    bool reached = shm_reached(w);
    if (w->slept) {
        w->slept = false;
        if (reached && mf_shm_unrung_sleeps() != w->unrung)
            mf_t_count_serial(&shm_late_wakeups, 1);
    }
    return reached;
}

/* Its address tells threads apart. */
static _Thread_local char shm_thread_tag;

/* Called by the engine after the fabrics raised their sleeping flags (progress.h): the last
 * look at the flags, so that a store made before our flag was up is seen here and one made
 * after it rings us (shm_wake.h). Only for the waiting thread: another one about to sleep (the
 * progress thread) must not be told to keep polling, which it would do without ever letting
 * the waiter take the lock. */
static long long shm_sleep_ns(void *arg)
{
    struct shm_wait *w = arg;
    if (w->owner == &shm_thread_tag) {
        if (shm_reached(w))
            return 0;
        w->slept = true;
        w->unrung = mf_shm_unrung_sleeps();
    }
    static long long ns;
    if (!ns)
        ns = mf_config_long("MANIFOLD_COLL_SHM_SLEEP_US") * 1000;
    return ns;
}

/* Waits until ranks [lo, hi) have `field` >= want. */
static int shm_wait_range(const struct mf_coll_shm *s, size_t field, uint64_t want, int lo, int hi)
{
    struct shm_wait w = {s, field, want, lo, hi, &shm_thread_tag, false, 0};
    for (int i = 0; i < 32; i++)
        if (shm_reached(&w))
            return MPI_SUCCESS;
    mf_progress_source src = {.fd = -1, .sleep_ns = shm_sleep_ns, .arg = &w};
    int rc = mf_progress_source_add(&src);
    if (rc)
        return rc;
    rc = mf_progress_wait(shm_wait_done, &w);
    mf_progress_source_remove(&src);
    return rc;
}

static int shm_wait_all(const struct mf_coll_shm *s, int n, size_t field, uint64_t want)
{
    return shm_wait_range(s, field, want, 0, n);
}

/* Publishes our flag and wakes the ranks that sleep waiting (any of them may wait for it). */
static void shm_set(struct mf_coll_shm *s, int r, size_t field, uint64_t v)
{
    atomic_store_explicit(shm_flag(s, r, field), v, memory_order_release);
    for (int i = 0; i < s->n; i++)
        if (i != r)
            mf_shm_wake_rank(s->world[i]);
}

#define POSTED offsetof(struct shm_flags, posted)
#define REDUCED offsetof(struct shm_flags, reduced)
#define DONE offsetof(struct shm_flags, done)

/* Starts a step: its number, once every rank is done with the step that last used its buffer. */
static int shm_step(struct mf_coll_shm *s, int n, uint64_t *step)
{
    *step = ++s->step;
    return *step > SHM_BUFFERS ? shm_wait_all(s, n, DONE, *step - SHM_BUFFERS) : MPI_SUCCESS;
}

static char *shm_slot(const struct mf_coll_shm *s, int n, uint64_t step, int r)
{
    return s->data + ((size_t)(step % SHM_BUFFERS) * (size_t)n + (size_t)r) * s->slot;
}

/* ---- operations --------------------------------------------------------------------------- */

/* Bytes [off, off + len) of the data stream of count elements of dt at buf, to (pack) or from
 * shared memory at mem: memcpy for contiguous types, the datatype engine for the others. */
static void stream_move(const mf_datatype *dt, const void *buf, MPI_Count count, size_t off,
                        char *mem, size_t len, bool pack)
{
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    char *at = (char *)(uintptr_t)buf + di->dt_true_lb + off;
    if (di->dt_contig && pack)
        memcpy(mem, at, len);
    else if (di->dt_contig)
        memcpy(at, mem, len);
    else if (pack)
        mf_datatype_pack(dt, buf, (size_t)count, off, mem, len);
    else
        mf_datatype_unpack(dt, (void *)(uintptr_t)buf, (size_t)count, off, mem, len);
}

int mf_coll_shm_barrier(struct mf_coll_shm *s, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank;
    uint64_t step = ++s->step; /* touches no buffer */
    shm_set(s, r, POSTED, step);
    int rc = shm_wait_all(s, n, POSTED, step);
    shm_set(s, r, DONE, step);
    return rc;
}

int mf_coll_shm_bcast(struct mf_coll_shm *s, void *buf, MPI_Count count, mf_datatype *dt, int root,
                      mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t total = mf_coll_bytes(count, dt);
    for (size_t off = 0; off < total && !rc; off += s->slot) {
        size_t len = total - off < s->slot ? total - off : s->slot;
        uint64_t step;
        if (r == root) {
            rc = shm_step(s, n, &step);
            if (rc)
                break;
            stream_move(dt, buf, count, off, shm_slot(s, n, step, root), len, true);
            shm_set(s, r, POSTED, step);
        } else {
            step = ++s->step; /* only the root writes; it does the buffer's wait */
            rc = shm_wait_range(s, POSTED, step, root, root + 1);
            if (rc)
                break;
            stream_move(dt, buf, count, off, shm_slot(s, n, step, root), len, false);
        }
        shm_set(s, r, DONE, step);
    }
    return rc;
}

struct mf_coll_shm *mf_coll_shm_reduction(mf_comm *comm, MPI_Count count, const mf_datatype *dt,
                                          bool forced)
{
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    size_t bytes = mf_coll_bytes(count, dt);
    /* the packed form must be the layout, and an element must fit a slot */
    if (count == 0 || comm->c_size < 2 || !di->dt_contig || di->dt_size == 0 ||
        (size_t)di->dt_extent != di->dt_size || di->dt_size > shm_slot_bytes(comm->c_size))
        return NULL;
    /* the segment won at every size measured, 8 B - 4 MiB, 2-16 ranks (docs/PERFORMANCE.md) */
    if (!forced && bytes > mf_coll_shm_max())
        return NULL;
    return mf_coll_shm_get(comm);
}

/* Element offset of part i when `count` elements are cut into `nb` nearly equal parts. */
static MPI_Count part_at(int i, int nb, MPI_Count count)
{
    MPI_Count q = count / nb, rest = count % nb;
    return (MPI_Count)i * q + (i < rest ? i : rest);
}

/* Reduce (root >= 0: only the root gets the result) or allreduce (root < 0). The caller checked
 * mf_coll_shm_reducible. */
int mf_coll_shm_reduce(struct mf_coll_shm *s, const void *sbuf, void *rbuf, MPI_Count count,
                       mf_datatype *dt, mf_op *op, int root, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    size_t esz = di->dt_size;
    MPI_Count per = (MPI_Count)(s->slot / esz);
    const char *in = (const char *)(sbuf == MPI_IN_PLACE ? rbuf : sbuf) + di->dt_true_lb;
    bool gets = root < 0 || r == root; /* rbuf matters only there */
    char *out = gets ? (char *)rbuf + di->dt_true_lb : NULL;
    for (MPI_Count e0 = 0; e0 < count && !rc; e0 += per) {
        MPI_Count cnt = count - e0 < per ? count - e0 : per;
        uint64_t step;
        if ((rc = shm_step(s, n, &step)))
            break;
        memcpy(shm_slot(s, n, step, r), in + (size_t)e0 * esz, (size_t)cnt * esz);
        shm_set(s, r, POSTED, step);
        if ((rc = shm_wait_all(s, n, POSTED, step)))
            break;
        if ((size_t)cnt * esz <= SHM_FOLD_WHOLE) {
            /* right to left into the own result: x(i) op (x(i+1) op ...), slots untouched */
            char *acc = gets ? out + (size_t)e0 * esz : NULL;
            if (acc)
                memcpy(acc, shm_slot(s, n, step, n - 1), (size_t)cnt * esz);
            for (int i = n - 2; i >= 0 && acc && !rc; i--)
                rc = mf_op_apply(op, shm_slot(s, n, step, i) - di->dt_true_lb, acc - di->dt_true_lb,
                                 cnt, dt);
            shm_set(s, r, DONE, step);
            continue;
        }
        MPI_Count pa = part_at(r, n, cnt), pb = part_at(r + 1, n, cnt);
        for (int i = 1; i < n && pb > pa && !rc; i++)
            rc = mf_op_apply(op, shm_slot(s, n, step, i - 1) + (size_t)pa * esz - di->dt_true_lb,
                             shm_slot(s, n, step, i) + (size_t)pa * esz - di->dt_true_lb, pb - pa,
                             dt);
        shm_set(s, r, REDUCED, step);
        if (gets && !rc && !(rc = shm_wait_all(s, n, REDUCED, step)))
            memcpy(out + (size_t)e0 * esz, shm_slot(s, n, step, n - 1), (size_t)cnt * esz);
        shm_set(s, r, DONE, step);
    }
    return rc;
}

/* Alltoall: in each step every rank puts, for every destination j, the next piece of its block
 * for j at piece j of its slot, and takes piece r of every rank's slot as soon as that rank has
 * posted (one copy in, one copy out; pieces of slot/n bytes). */
int mf_coll_shm_alltoall(struct mf_coll_shm *s, const void *sbuf, MPI_Count scount,
                         mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                         mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t blk = mf_coll_bytes(scount, sdt), piece = mf_coll_shm_alltoall_piece(s, n);
    for (size_t off = 0; off < blk && !rc; off += piece) {
        size_t len = blk - off < piece ? blk - off : piece;
        uint64_t step;
        if ((rc = shm_step(s, n, &step)))
            break;
        char *mine = shm_slot(s, n, step, r);
        for (int j = 0; j < n; j++)
            stream_move(sdt, mf_coll_at(sbuf, (MPI_Count)j * scount, sdt), scount, off,
                        mine + (size_t)j * piece, len, true);
        shm_set(s, r, POSTED, step);
        for (int k = 0; k < n && !rc; k++) {
            int i = (r + k) % n; /* each rank starts with a different source */
            if (!(rc = shm_wait_range(s, POSTED, step, i, i + 1)))
                stream_move(rdt, mf_coll_at(rbuf, (MPI_Count)i * rcount, rdt), rcount, off,
                            shm_slot(s, n, step, i) + (size_t)r * piece, len, false);
        }
        shm_set(s, r, DONE, step);
    }
    return rc;
}

size_t mf_coll_shm_alltoall_piece(const struct mf_coll_shm *s, int n)
{
    return (s->slot / (size_t)n) & ~(size_t)63;
}

/* Allgather: in each step every rank puts the next piece (a slot) of its block in its slot and
 * copies every rank's piece out as soon as that rank has posted. */
int mf_coll_shm_allgather(struct mf_coll_shm *s, const void *sbuf, MPI_Count scount,
                          mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt,
                          mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    size_t blk = mf_coll_bytes(rcount, rdt);
    if (sbuf == MPI_IN_PLACE) { /* our block is already in place: send it from there */
        sbuf = mf_coll_at(rbuf, (MPI_Count)r * rcount, rdt);
        scount = rcount;
        sdt = rdt;
    }
    for (size_t off = 0; off < blk && !rc; off += s->slot) {
        size_t len = blk - off < s->slot ? blk - off : s->slot;
        uint64_t step;
        if ((rc = shm_step(s, n, &step)))
            break;
        stream_move(sdt, sbuf, scount, off, shm_slot(s, n, step, r), len, true);
        shm_set(s, r, POSTED, step);
        for (int k = 1; k < n && !rc; k++) {
            int i = (r + k) % n;
            if (!(rc = shm_wait_range(s, POSTED, step, i, i + 1)))
                stream_move(rdt, mf_coll_at(rbuf, (MPI_Count)i * rcount, rdt), rcount, off,
                            shm_slot(s, n, step, i), len, false);
        }
        shm_set(s, r, DONE, step);
    }
    return rc;
}

/* Reduce_scatter: in each step every rank puts the next chunk of its whole vector in its slot;
 * once all have, each folds, right to left, the part of the chunk that falls in its own block
 * straight into its result (one wait per step; the fold keeps rank order). The caller checked
 * the type with mf_coll_shm_reduction. With MPI_IN_PLACE a result element never lands before
 * the input element it overwrites has been copied in (it lies at or after it). */
int mf_coll_shm_reduce_scatter(struct mf_coll_shm *s, const void *sbuf, void *rbuf,
                               const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *dt,
                               mf_op *op, mf_comm *comm)
{
    int n = comm->c_size, r = comm->c_rank, rc = MPI_SUCCESS;
    const struct mf_datatype_public *di = mf_coll_dt(dt);
    size_t esz = di->dt_size;
    MPI_Count per = (MPI_Count)(s->slot / esz), total = displs[n];
    MPI_Count lo = displs[r], hi = displs[r] + rcounts[r]; /* our block in the vector */
    const char *in = (const char *)(sbuf == MPI_IN_PLACE ? rbuf : sbuf) + di->dt_true_lb;
    char *out = (char *)rbuf + di->dt_true_lb;
    for (MPI_Count e0 = 0; e0 < total && !rc; e0 += per) {
        MPI_Count cnt = total - e0 < per ? total - e0 : per;
        uint64_t step;
        if ((rc = shm_step(s, n, &step)))
            break;
        memcpy(shm_slot(s, n, step, r), in + (size_t)e0 * esz, (size_t)cnt * esz);
        shm_set(s, r, POSTED, step);
        if ((rc = shm_wait_all(s, n, POSTED, step)))
            break;
        MPI_Count a = lo > e0 ? lo : e0, b = hi < e0 + cnt ? hi : e0 + cnt;
        if (a < b) {
            char *acc = out + (size_t)(a - lo) * esz;
            size_t at = (size_t)(a - e0) * esz;
            memcpy(acc, shm_slot(s, n, step, n - 1) + at, (size_t)(b - a) * esz);
            for (int i = n - 2; i >= 0 && !rc; i--)
                rc = mf_op_apply(op, shm_slot(s, n, step, i) + at - di->dt_true_lb,
                                 acc - di->dt_true_lb, b - a, dt);
        }
        shm_set(s, r, DONE, step);
    }
    return rc;
}
