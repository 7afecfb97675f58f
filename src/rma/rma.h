/*
 * rma.h — one-sided communication (MPI-3 RMA): windows, operations and epochs.
 *
 * A window is created collectively over a communicator; it duplicates that communicator
 * (w_comm) and carries all of its own traffic there, so it never matches user messages. That
 * duplicate sends over the one-sided route (fabric.h: MF_ROUTE_RMA, MANIFOLD_RMA_FABRIC), or
 * what info key manifold_fabric chose at creation ("p2p", "rma", an instance name): its
 * c_fabrics table, set before its first message and kept for its life.
 *
 * Back end "emulated" (any target; the only one for create and dynamic windows): active
 * messages over point-to-point.
 * An origin sends each operation as a fixed header (tag MF_RMA_TAG_HDR) followed, when it has
 * one, by a payload (MF_RMA_TAG_DATA): the target layout as (byte offset, length) segments of
 * the target datatype, then the origin's data as a packed stream. The target applies the
 * operation when it makes progress — a progress source (core/progress.h) serves every window in
 * every MPI call that progresses, so a target inside any blocking MPI call serves its window —
 * and answers on a tag the origin chose (the fetched data, or an empty acknowledgement). The
 * target applies operations one at a time, so every accumulate is atomic per target as a
 * whole: the window's atomicity domain. Every operation is acknowledged; an origin's flush
 * waits for the acknowledgements of its operations to that target, which is remote
 * completion (and so local completion too).
 *
 * Synchronisation builds on that: fence = flush all + barrier on w_comm; PSCW = empty messages
 * post (target to origins) and complete (origins to target, after their flush); passive target
 * = lock requests queued at the target's lock manager, granted by an empty reply.
 *
 * Back end "direct", chosen per target: windows of flavor MPI_WIN_FLAVOR_SHARED and
 * MPI_WIN_FLAVOR_ALLOCATE live in one mapping per host (shm_open) for the window's ranks on
 * that host, rank i's part right after the previous same-host rank's, behind one slot per rank
 * (struct mf_rma_slot). The application loads and stores through it (shared flavor); an origin
 * applies its operations to a same-host target itself, with the same code the target of the
 * emulation runs (so with the same semantics), complete when the call returns; targets on
 * other hosts get active messages. Every accumulating operation on a mapped part (accumulate,
 * get_accumulate, fetch-and-op, compare-and-swap), direct or served for a remote origin, takes
 * the target's spin lock in its slot: one atomicity domain per target, whichever back end
 * carried the operation. A same-host put or get whose target datatype is one block is a single
 * memcpy without that lock (a put or get that overlaps another origin's access is erroneous in
 * MPI, so there is nothing to order), and an accumulate of such a block reduces the origin's
 * data into the window in place; the flush after direct operations is one memory fence, and
 * needs no engine pass. Passive-target locks are a reader/writer word in
 * the slot, which the target's lock manager also takes for remote origins, so a same-host
 * lock/put/unlock needs nothing from the target.
 *
 * Back end "native", chosen per target that is not direct when the window's instance for it
 * writes remote memory (fabric.h: rma_key, rput; the ofi fabric), and for accumulating
 * operations per window and element type when the fabric does atomics (fabric.h: ratomic):
 * see rma_native.c.
 *
 * All functions are called with the library lock held, the progress source included: a
 * progress thread (issue 12, MANIFOLD_ASYNC_PROGRESS) that polls sources must hold it too. With
 * one, the emulated passive target stops depending on the target's MPI calls
 * (tests/rma/rma_passive.c, "compute create", registered disabled until then).
 */
#ifndef MF_RMA_RMA_H
#define MF_RMA_RMA_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "comm/comm.h"
#include "core/errhandler.h"
#include "core/handle.h"
#include "datatype/datatype.h"
#include "p2p/p2p.h"
#include "rma/rma_wire.h"

struct mf_info; /* comm/info.h (not included: its typedef clashes with core/log.h's mf_info) */
struct mf_rma_op;
struct mf_rma_tgt;
struct mf_rma_send;

enum mf_rma_epoch {
    MF_RMA_EPOCH_NONE = 0,
    MF_RMA_EPOCH_FENCE = 1,  /* between fences (an access epoch may be open) */
    MF_RMA_EPOCH_START = 2,  /* MPI_Win_start .. complete */
    MF_RMA_EPOCH_LOCK = 4,   /* some MPI_Win_lock is held */
    MF_RMA_EPOCH_LOCKALL = 8 /* MPI_Win_lock_all .. unlock_all */
};

/* A target's locks: in the host's mapping for mapped windows (one per rank, at its head), in
 * the window object otherwise. s_acc is held while an operation is applied to the target's
 * memory (by a same-host origin or by the target serving a remote one); s_rw is the
 * passive-target lock: 0 free, n > 0 shared holders, -1 exclusive. s_queued is set by the
 * target while lock requests of remote origins wait in its queue: a same-host origin that
 * releases s_rw then wakes the target (mf_rma_direct_unlock), which would otherwise sleep on
 * with a grantable request, since releasing the word sends no frame. */
struct mf_rma_slot {
    int s_acc;
    int s_rw;
    int s_queued;
    char s_pad[52];
};

typedef struct mf_win {
    MPI_Win w_handle;
    mf_comm *w_comm; /* private duplicate of the creating communicator */
    int w_flavor;    /* MPI_WIN_FLAVOR_* */
    void *w_base;    /* this rank's memory (MPI_BOTTOM for dynamic windows) */
    MPI_Aint w_size;
    MPI_Aint w_disp_unit;
    MPI_Aint *w_sizes; /* per rank of w_comm: size and displacement unit (allgathered) */
    MPI_Aint *w_units;
    /* shared flavor: the node's mapping and each rank's offset into it */
    char *w_seg;
    size_t w_seg_len;
    size_t *w_seg_off;
    /* direct back end: the ranks of the window on this host share one mapping, so origins
     * load and store into a same-host target's part themselves; w_slots (at the start of the
     * mapping, one per rank of this host) hold each target's accumulate lock and its
     * passive-target lock word; w_slot_of[rank] is rank's slot, -1 for other hosts' ranks */
    struct mf_rma_slot *w_slots;
    int *w_slot_of;

    mf_errhandler *w_errhandler;
    struct mf_info *w_info; /* the hints in use (MPI_Win_get_info) */
    char w_name[MPI_MAX_OBJECT_NAME];
    /* what the predefined attributes point at (MPI_WIN_SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL) */
    MPI_Aint w_a_size;
    int w_a_unit, w_a_flavor, w_a_model;

    /* target side: the posted header receive and the operations waiting to be applied */
    mf_request *w_hdr_req;
    unsigned char *w_hdr_in; /* MF_RMA_MSG_MAX bytes: a header and its inline payload */
    struct mf_rma_tgt *w_tq_head, *w_tq_tail;
    bool w_closing;
    /* lock manager of this rank's window part: requests from remote origins waiting for the
     * lock word of this rank's slot (w_own unless mapped) */
    struct mf_rma_slot w_own;
    struct mf_rma_tgt *w_lq_head, *w_lq_tail;
    /* replies and payloads in flight from this rank */
    struct mf_rma_send *w_sends;

    /* origin side */
    struct mf_rma_op *w_ops; /* operations not yet acknowledged */
    int *w_pending;          /* per target: count of those */
    unsigned w_seq;          /* reply tags */
    int w_epoch;             /* enum mf_rma_epoch bits */
    bool w_direct_dirty;     /* direct operations since the last flush (it fences once) */
    bool w_ops_since_fence;  /* an operation was issued since the last fence: the fence opened
                                an access epoch (see mf_rma_end_unused_fence) */
    unsigned w_idle_flushes; /* flushes that found nothing in flight */
    int *w_locked;           /* per target: lock type held (0 none) */
    int w_nlocked;
    int *w_start_ranks, w_nstart; /* access group of MPI_Win_start (ranks of w_comm) */
    mf_request **w_done_reqs;     /* exposure epoch of MPI_Win_post: completes awaited */
    int w_ndone;

    struct mf_win *w_next; /* all windows, for the progress source */

    /* native back end (rma_native.c): per rank, the instance that would carry native
     * operations to it (NULL: emulated or direct) and its descriptor (0: none); this rank's
     * registration; operations in flight; the first error a completion reported; counts */
    struct mf_fabric **w_nat_f;
    uint64_t *w_nat_key;
    struct mf_fabric *w_nat_fabric;
    uint64_t w_nat_mine;
    long w_nat_inflight;
    int w_nat_err;
    bool w_nat_any, w_nat_off;
    /* native atomics: the element types (bits by enum mf_fabric_atype) whose every
     * accumulating operation, to every target, goes through w_nat_fabric (agreed by all ranks
     * at creation); why it is none, for the report */
    uint32_t w_nat_amask;
    const char *w_nat_awhy;
    uint64_t w_nat_n[8]; /* by rma_native.c's counter kinds */
} mf_win;

/* The window behind a user handle, or NULL: inline, every one-sided call starts with it. */
extern mf_handle_table mf_win_table;
static inline mf_win *mf_win_get(MPI_Win handle)
{
    if (MF_HANDLE_KIND(handle) != MF_HANDLE_USER || MF_HANDLE_CLASS(handle) != MF_CLASS_WIN ||
        MF_HANDLE_INDEX(handle) >= mf_win_table.ht_size)
        return NULL;
    return mf_win_table.ht_slots[MF_HANDLE_INDEX(handle)];
}

/* Window creation (collective over comm). base/size/disp_unit as in MPI; flavor chooses
 * the memory: CREATE uses base, ALLOCATE and SHARED allocate (the address is returned in
 * *base_out), DYNAMIC has none. info may be NULL. */
int mf_win_create(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, struct mf_info *info,
                  mf_comm *comm, void **base_out, mf_win **out, const char *fn);
/* Collective; completes every operation first. */
int mf_win_free(mf_win *w, const char *fn);
/* Rank's part of the window if this process can load and store it (MPI-4.1: any flavor but
 * dynamic): its own part, and with allocated memory the parts of the ranks on this host;
 * otherwise size 0, disp_unit 0 and NULL. An empty part reachable from here gives its
 * disp_unit, size 0 and NULL. Rank MPI_PROC_NULL: the lowest rank with size > 0
 * (whose part this process may not reach: then size 0 and NULL). */
int mf_win_shared_query(mf_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base,
                        const char *fn);
/* Replaces the recognised hints with those in info (MPI_Win_set_info). */
int mf_win_set_info(mf_win *w, const struct mf_info *info);

/* Operations (rma_am.c). kind selects the operation; op is NULL for put and get. For
 * compare-and-swap `compare` is the compare buffer. With `req`, a user request that completes
 * with the operation is returned in *req. */
struct mf_op;
typedef struct mf_rma_args {
    enum mf_rma_kind kind;
    const void *origin;
    MPI_Count origin_count;
    mf_datatype *origin_dt;
    void *result;
    MPI_Count result_count;
    mf_datatype *result_dt;
    const void *compare;
    int target;
    MPI_Aint target_disp;
    MPI_Count target_count;
    mf_datatype *target_dt;
    const struct mf_op *op;
    bool single; /* MPI_Fetch_and_op, MPI_Compare_and_swap: one element of a predefined type */
} mf_rma_args;
int mf_rma_op(mf_win *w, const mf_rma_args *a, mf_request **req, const char *fn);
/* The request of a request-based operation on `w` (MPI_Rput and kin), held once: an error it
 * completes with goes to w's handler. NULL when out of memory. */
mf_request *mf_rma_request_new(mf_win *w);

/* Synchronisation (rma_sync.c). */
int mf_rma_flush(mf_win *w, int target); /* target -1: all */
int mf_rma_fence(mf_win *w, int assert_, const char *fn);
/* Called by the calls that open another kind of access epoch (start, lock, lock_all). A fence
 * starts an epoch only if RMA operations follow it: with none since, the fence's epoch is dropped
 * and operations after the new epoch ends are refused again; with some, the fence epoch is still
 * open and the new one is MPI_ERR_RMA_SYNC. */
int mf_rma_end_unused_fence(mf_win *w, const char *fn);
int mf_rma_post(mf_win *w, mf_group *g, const char *fn);
int mf_rma_start(mf_win *w, mf_group *g, const char *fn);
int mf_rma_complete(mf_win *w, const char *fn);
int mf_rma_wait(mf_win *w, bool test_only, bool *done, const char *fn);
/* MPI_ERR_LOCKTYPE unless type is MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE (mf_rma_lock checks
 * it; the API layer too, for a lock of MPI_PROC_NULL, which reaches no window). */
int mf_rma_check_lock_type(int type, const char *fn);
int mf_rma_lock(mf_win *w, int type, int rank, const char *fn);
int mf_rma_unlock(mf_win *w, int rank, const char *fn);
int mf_rma_lock_all(mf_win *w, const char *fn);
int mf_rma_unlock_all(mf_win *w, const char *fn);

/* Internals shared by the rma files. */
/* Sends an operation header (and payload) to target; the origin op tracks the reply. */
int mf_rma_control(mf_win *w, enum mf_rma_kind kind, int target);
/* Starts serving the window (posts the header receive, joins the progress source) / completes
 * every operation from and to this rank and stops serving it (the ranks agree first). */
int mf_rma_window_open(mf_win *w);
int mf_rma_window_close(mf_win *w);

/* memcpy for the direct back end's copies. glibc's x86 memcpy switches from `rep movsb` to a
 * vector loop above a threshold that is the L2 size on AMD cores (1 MiB here), and that loop
 * is 15% slower for data that stays in the caches: pieces of 256 KiB keep every copy up to a few
 * MiB on the fast path; larger ones are left whole for glibc's non-temporal stores. */
#define MF_RMA_COPY_PIECE ((size_t)256 * 1024)
static inline void mf_rma_copy(void *dst, const void *src, size_t n)
{
    if (n <= MF_RMA_COPY_PIECE || n > 32 * MF_RMA_COPY_PIECE) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t at = 0; at < n; at += MF_RMA_COPY_PIECE)
        memcpy((char *)dst + at, (const char *)src + at,
               n - at < MF_RMA_COPY_PIECE ? n - at : MF_RMA_COPY_PIECE);
}

/* Back end "native" (rma_native.c, read its head): put and get by the fabric into a remote
 * target's registered memory, chosen per target; everything else falls back to the emulation,
 * counted. open is collective over the window (before mf_rma_window_open); free releases. */
int mf_rma_native_open(mf_win *w);
void mf_rma_native_free(mf_win *w);
/* Whether operations to `rank` may go native. */
static inline bool mf_rma_native_to(const mf_win *w, int rank)
{
    return w->w_nat_f && w->w_nat_f[rank];
}
/* Carries the operation (MPI_SUCCESS or an error) or returns MF_RMA_NATIVE_NO (counted): the
 * caller emulates it. bytes: the target data's size. */
#define MF_RMA_NATIVE_NO (-1)
int mf_rma_native_op(mf_win *w, const mf_rma_args *a, size_t bytes, mf_request **req);
/* The accumulating kinds when the window has native atomics (w_nat_amask), for every target,
 * the own rank and same-host ones included (rma_native.c says why): carries the operation or
 * returns MF_RMA_NATIVE_NO (counted) when its type is not one of the window's native ones. */
int mf_rma_native_atomic(mf_win *w, const mf_rma_args *a, size_t bytes, mf_request **req);

/* This rank's own slot (its locks). */
static inline struct mf_rma_slot *mf_rma_own_slot(mf_win *w)
{
    return w->w_slots ? &w->w_slots[w->w_slot_of[w->w_comm->c_rank]] : &w->w_own;
}
/* Whether operations to `rank` go direct (it shares this host's mapping). */
static inline bool mf_rma_direct_to(const mf_win *w, int rank)
{
    return w->w_slots && w->w_slot_of[rank] >= 0;
}
/* Passive-target lock and unlock of a same-host rank's part (type MPI_LOCK_*); the unlock wakes
 * the rank when it has remote lock requests queued. */
int mf_rma_direct_lock(mf_win *w, int rank, int type);
void mf_rma_direct_unlock(mf_win *w, int rank);

#endif
