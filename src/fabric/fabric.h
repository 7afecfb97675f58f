/*
 * fabric.h — the one contract every Manifold transport ("fabric") implements.
 *
 * A fabric moves frames (a wire header, see wire.h, plus a payload) between this process and
 * peers, identified by their MPI_COMM_WORLD rank. It knows nothing of MPI matching, requests or
 * datatypes: that is the point-to-point layer (src/p2p), which calls the ops below and receives
 * frames through the two upcalls at the end of this file.
 *
 * Three notions (as libfabric and nng separate them):
 *   class     one per transport (self, shm, tcp): an mf_fabric_class with its ops table (with
 *             its size and the class version), its capabilities (MF_FABRIC_CAP_*, max message,
 *             default eager limit) and the size of its instance struct. Listed in fabrics.def.
 *             Optional ops point at the mf_fabric_no_* stubs, never NULL.
 *   instance  an mf_fabric: one opened use of a class with its own state, settings (the
 *             interfaces it runs over), name ("tcp0", "tcp1"), upcall context and counters. A
 *             class's instance struct embeds mf_fabric first (container_of, see
 *             MF_FABRIC_CONTAINER); a process may hold several instances of one class (tcp over
 *             lo and over eth0). No fabric keeps file-scope mutable state: everything hangs off
 *             the instance, which the registry allocates and frees.
 *   route     per peer and per function (MF_ROUTE_P2P, MF_ROUTE_RMA, MF_ROUTE_CTRL): the
 *             instance(s) ("rails") that carry it, built at start from MANIFOLD_FABRIC,
 *             MANIFOLD_RMA_FABRIC, MANIFOLD_IF and reachability (grammar: fabric_spec.h).
 *             The layers above ask mf_route_of(peer, function) (or mf_fabric_of(peer), the
 *             p2p rail), never for a fabric by name.
 *   wrapper   a class whose instance sits over another instance, in its place in the routes
 *             (fault/: the fault injection of MANIFOLD_FAULT; rail/: the multirail striper, which
 *             sits in a peer's routes in place of its several rails and takes their upcalls,
 *             see "Rails" below). The wrapped instance keeps its state; the registry owns both.
 *
 * Lifecycle (driven by src/fabric/fabric.c, the registry, from MPI_Init):
 *   1. create    the registry allocates one zeroed instance per (class, interfaces) that a
 *                setting names (self and shm always, unless MANIFOLD_SHM=0), calls the class's
 *                `init` (defaults; cannot fail) and checks the ops table.
 *   2. open      op `open`: create endpoints, publish this rank's address with
 *                mf_fabric_addr_publish() under a key naming the instance ("mf.tcp1.<rank>").
 *                Returns MF_FABRIC_UNAVAILABLE (not an error) when the instance cannot run here;
 *                it is then never used.
 *   3. fence     MPI_Init calls mf_pm_fence() once for all fabrics and learns every rank's host.
 *   4. start     op `start`: anything that needs the peers' published data (e.g. shm maps the
 *                host's segment). Connections are still opened lazily, on first send.
 *   5. route     for each peer and function the registry asks `reachable` of the candidate
 *                instances (self; shm for the host; the instances the setting names) and builds
 *                the peer's routes. Every rank builds the same routes (same settings, same host
 *                layout), so a peer reaches us on the instance we reach it on.
 *   6. run       send / rget / progress / sleep support, below.
 *   7. close     op `close`: flush what is queued (bounded wait), close endpoints, release every
 *                OS resource (nothing may remain in /dev/shm or as a socket). The registry then
 *                frees the instance.
 *
 * Threading: all ops are called with the library lock held (see core/state.h), from one thread
 * at a time — the application's threads or the progress thread (MANIFOLD_ASYNC_PROGRESS=1),
 * which takes the same lock. A fabric that runs its own threads (usrsctp, some libfabric
 * providers) must hand their events to `progress` through its own queue and wake sleepers
 * through its wait fd (an eventfd is fine); upcalls happen only inside `progress`.
 *
 * Ordering: frames to one peer over one instance arrive in the order they were sent unless the
 * instance declares MF_FABRIC_UNORDERED (the p2p layer then restores order by sequence; not
 * needed by self, shm, tcp). The p2p layer sends all its frames to one peer over one instance.
 *
 * Buffers (ownership): `send` always copies the header before it returns. It may keep the iovec
 * array and the memory it describes until it reports completion (the caller keeps both alive
 * until then). Control frames (hdr->len == 0) pass a `done` that does nothing; fabrics may call
 * it or not. Arriving payloads go where the upcall's sink says; the fabric owns nothing of it.
 *
 * Errors: ops return MPI_SUCCESS or an MPI error code built with mf_error() naming the fabric, the
 * peer and the cause. A peer that becomes unreachable (connection reset, process gone) is
 * reported once through mf_fabric_peer_failed(); later sends to it fail at once. An instance
 * that is a rail of a wrapper reports to the wrapper instead (see "Rails"), which may revive it.
 *
 * Counters: every instance counts what it carried (mf_fabric_counters: frames and bytes in and
 * out, eager and rendezvous starts, connections) for `--report-fabrics` and MPI_T; fabrics
 * count with mf_fabric_count_tx/rx where a frame is committed or delivered.
 */
#ifndef MF_FABRIC_FABRIC_H
#define MF_FABRIC_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/counter.h"
#include "fabric/wire.h"

typedef struct mf_fabric mf_fabric;

/* Completion of a send or rget whose buffers the fabric kept (MF_FABRIC_PENDING). */
typedef struct mf_fabric_done {
    void (*fd_fn)(struct mf_fabric_done *done, int status); /* status: MPI_SUCCESS or error code */
} mf_fabric_done;

/* A payload moved where the fabric keeps it (send_in_place, rx_take_in_place): `fn` moves
 * bytes [offset, offset + len) of the payload between the caller's data and the fabric's
 * memory at `at` (into it for a send, out of it for a receive), called once per contiguous
 * piece, in order of offset (a frame that wraps around a ring is two pieces). What it moves
 * is the caller's business: the p2p layer packs and unpacks a datatype there. */
typedef struct mf_fabric_mover {
    void (*fn)(void *arg, size_t offset, void *at, size_t len);
    void *arg;
} mf_fabric_mover;

/* Where an arriving payload goes: filled by the p2p layer in mf_fabric_rx_header(). */
typedef struct mf_fabric_sink {
    struct iovec *fs_iov; /* destination pieces, in order; may hold fewer bytes than the frame's
                             len: the fabric then discards the rest */
    int fs_niov;
    /* Called once the whole payload (hdr.len bytes) was consumed. May be NULL. */
    void (*fs_done)(struct mf_fabric_sink *sink, int status);
    void *fs_ctx; /* for the p2p layer */
    /* Set (fn not NULL) only for an instance with rx_take_in_place, which then hands the first
     * fs_move_len bytes of the payload to the mover where they lie (from a copy of its own
     * where they do not, as an indirect frame of shm) and leaves fs_iov unused: a receive of a
     * non-contiguous type unpacks without staging the message first. */
    mf_fabric_mover fs_mover;
    size_t fs_move_len;
} mf_fabric_sink;

/* Return values of send/rget besides MPI error codes (which are positive). */
enum {
    MF_FABRIC_DONE = 0,         /* finished: buffers may be reused; `done` will not be called */
    MF_FABRIC_PENDING = -1,     /* queued: `done` is called from a later progress pass */
    MF_FABRIC_UNAVAILABLE = -2, /* from open: this fabric cannot run here (not an error) */
    MF_FABRIC_BUSY = -3,        /* send without `done` (MF_FABRIC_INJECT): not copied now, nothing
                                   taken; send again with a `done` */
};

enum mf_fabric_flags {
    MF_FABRIC_RGET = 1u << 0,      /* can pull a peer's memory described by an rkey (CMA, RDMA) */
    MF_FABRIC_UNORDERED = 1u << 1, /* frames to one peer may overtake each other */
    MF_FABRIC_NETWORK = 1u << 2, /* crosses hosts (tcp, sctp, ofi); selectable by MANIFOLD_FABRIC */
    /* send accepts done == NULL for a payload frame: the fabric copies it before returning
     * (MF_FABRIC_DONE) or takes nothing (MF_FABRIC_BUSY), as for an immediate MPI_Isend */
    MF_FABRIC_INJECT = 1u << 3,
};

/* Native atomics (the optional ops atomic_max and ratomic below). Operations and element types
 * in libfabric's order (enum fi_op, enum fi_datatype), which the ofi fabric relies on. */
enum mf_fabric_aop {
    MF_AOP_MIN,
    MF_AOP_MAX,
    MF_AOP_SUM,
    MF_AOP_PROD,
    MF_AOP_LOR,
    MF_AOP_LAND,
    MF_AOP_BOR,
    MF_AOP_BAND,
    MF_AOP_LXOR,
    MF_AOP_BXOR,
    MF_AOP_READ,  /* fetch only: the result is the old value */
    MF_AOP_WRITE, /* replace (fetching: swap) */
    MF_AOP_CSWAP, /* compare-and-swap, always fetching */
    MF_AOP_COUNT
};
enum mf_fabric_atype {
    MF_AT_I8,
    MF_AT_U8,
    MF_AT_I16,
    MF_AT_U16,
    MF_AT_I32,
    MF_AT_U32,
    MF_AT_I64,
    MF_AT_U64,
    MF_AT_FLOAT,
    MF_AT_DOUBLE,
    MF_AT_COUNT
};
/* One atomic operation on `count` contiguous elements of `type` in a peer's region: target[i] =
 * op(target[i], src[i]) (CSWAP: src[i] where target[i] == cmp[i]); with `result`, the old
 * values land there. Buffers stay the caller's until `done`. */
typedef struct mf_fabric_atomic {
    int fa_op;   /* enum mf_fabric_aop */
    int fa_type; /* enum mf_fabric_atype */
    size_t fa_count;
    const void *fa_src; /* NULL for MF_AOP_READ */
    const void *fa_cmp; /* MF_AOP_CSWAP only */
    void *fa_result;    /* NULL: not fetching */
} mf_fabric_atomic;

/* One tagged operation (the optional tagged ops of mf_fabric_ops). The caller fills the
 * request part; the fabric owns tm_scratch while the operation is with it and fills the
 * completion part before tm_done. */
typedef struct mf_fabric_tmsg {
    uint64_t tm_scratch[16]; /* the fabric's (ofi: its libfabric context and bookkeeping) */
    /* request */
    uint32_t tm_context;
    int tm_src, tm_tag; /* send: own rank in the communicator; receive: or MPI_ANY_* */
    const struct iovec *tm_iov;
    int tm_niov;
    bool tm_sync;   /* send: synchronous mode */
    uint64_t tm_id; /* send: the sender's request id (0: none); receive/probe: as matched */
    void (*tm_done)(struct mf_fabric_tmsg *m, int status);
    void *tm_ctx; /* the caller's */
    /* completion */
    int tm_msrc, tm_mtag;
    bool tm_msync, tm_found, tm_cancelled;
    /* send (filled by tsend) and probe: the message's sequence number as the fabric numbers a
     * sender's messages to one receiver, for telling messages of one envelope apart where
     * tm_id is not reported (0: the fabric has none) */
    uint32_t tm_seq;
    size_t tm_len, tm_size;
} mf_fabric_tmsg;

typedef struct mf_fabric_ops {
    /* sizeof(mf_fabric_ops) the fabric was built with. Registration (mf_fabric_instance_new)
     * refuses a table shorter than this header's, so every member below may be read from any
     * registered fabric; an optional one that a fabric lacks is NULL. */
    size_t size;

    /* See the lifecycle above. `open` must not block on other processes. */
    int (*open)(mf_fabric *f);
    int (*start)(mf_fabric *f);
    int (*close)(mf_fabric *f);

    /* Whether this fabric can reach `peer` (world rank). Called after start, once per peer. */
    bool (*reachable)(mf_fabric *f, int peer);

    /* Sends one frame: header, then the payload gathered from iov (total hdr->len bytes, at most
     * f->max_frame). Opens the connection on first use. Never blocks on the peer: what cannot be
     * written now is queued. Returns MF_FABRIC_DONE, MF_FABRIC_PENDING (then `done` is called
     * exactly once, from progress) or an error code. With MF_FABRIC_INJECT, `done` may be NULL:
     * then MF_FABRIC_DONE or MF_FABRIC_BUSY, never PENDING. */
    int (*send)(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov, int niov,
                mf_fabric_done *done);

    /* Optional (MF_FABRIC_RGET): describes len bytes at addr in this process for a peer to pull;
     * the key travels in an RTS. `rkey_release` is called when the transfer is over. */
    int (*rkey_make)(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
    void (*rkey_release)(mf_fabric *f, uint64_t rkey);
    /* Optional (MF_FABRIC_RGET): pulls `len` bytes starting `offset` bytes into the peer's region
     * `rkey` into the local iovecs. Same return convention as send; the iovecs stay valid until
     * `done` is called. */
    int (*rget)(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done);

    /* Makes progress without blocking: moves queued sends, reads arrivals and delivers them
     * through the upcalls. Returns the number of events handled (0 when idle); failures of a
     * peer are reported through mf_fabric_peer_failed(), not returned. */
    int (*progress)(mf_fabric *f);

    /* Sleeping. The engine sleeps only when every active instance agrees:
     *   wait_fd:       an fd that becomes readable when this instance has work (-1: none);
     *                  how long the engine may sleep is poll_interval_us: > 0 bounds every
     *                  sleep (to the nanosecond where the kernel allows, see core/progress.h),
     *                  0 leaves it to the wait fd, or, without one, says nothing can arrive
     *                  while the engine sleeps (self: only its own sends queue work);
     *   sleep_prepare: arm wake-ups (e.g. set "I sleep" in shared memory, fi_trywait) and return
     *                  true if it is safe to sleep, false if work arrived meanwhile (then it
     *                  disarms only if `sleepers` is 0: other threads asleep rely on what it
     *                  armed); may be called again while armed (each sleeping thread arms); may set
     *                  poll_interval_us for the sleep it prepares (a timer of the instance's
     *                  own: tcp's handshake deadlines);
     *   sleep_end:     called once the last sleeping thread woke (disarm). Between the two,
     *                  `sleepers` > 0 and progress may run in another thread: it must leave
     *                  the wake-ups armed. */
    int (*wait_fd)(mf_fabric *f);
    bool (*sleep_prepare)(mf_fabric *f);
    void (*sleep_end)(mf_fabric *f);

    /* True when every frame handed to send has left this process (written to the kernel or
     * into the peer's queue), including frames send reported as MF_FABRIC_DONE after copying
     * them. MPI_Finalize progresses until this holds before its final fence, which moves no
     * frames. Frames to failed peers count as gone. */
    bool (*tx_idle)(mf_fabric *f);

    /* Optional direct receive, the one pair of ops that may be NULL (fabrics built before it
     * leave it unset): lets a blocking receive that waits on one peer take that peer's next
     * frame without going through progress and the upcalls, the way tag-matching hardware
     * delivers. rx_peek decodes the oldest frame from `peer` not yet handed up and returns 1 if
     * it is an EAGER frame whose whole payload is here, 0 if there is none, -1 if there is
     * another kind (which progress must deliver); nothing is consumed.
     * rx_take, called right after a successful rx_peek with its header, copies the payload into
     * iov (what does not fit is dropped) and consumes the frame exactly as progress would have. */
    int (*rx_peek)(mf_fabric *f, int peer, mf_wire_hdr *hdr);
    void (*rx_take)(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const struct iovec *iov,
                    int niov);

    /* Optional (may be NULL, like rx_peek): a fabric whose frames lie in memory this process
     * can address (shm's rings) lets an eager non-contiguous message be packed straight into
     * its frame and unpacked straight out of it, without the staging copy a program packing
     * by hand makes. Such a fabric also honours a sink's mover (mf_fabric_sink fs_mover).
     * send_in_place sends an EAGER frame (hdr->len <= eager_limit) whose payload `m` writes,
     * only if it can go now: MF_FABRIC_DONE; MF_FABRIC_BUSY with nothing sent (frames queued
     * ahead, no room: the caller stages the payload and uses send, which keeps the order); or
     * an error code.
     * rx_take_in_place, called right after a successful rx_peek with its header, hands the
     * first `len` bytes of the payload (len <= hdr->len) to `m` where they lie and consumes
     * the frame as rx_take does, or returns false with nothing consumed when the payload is
     * not in such memory (then use rx_take). */
    int (*send_in_place)(mf_fabric *f, int peer, const mf_wire_hdr *hdr, const mf_fabric_mover *m);
    bool (*rx_take_in_place)(mf_fabric *f, int peer, const mf_wire_hdr *hdr, size_t len,
                             const mf_fabric_mover *m);

    /* Fault injection (the fault wrapper, fault/) and the multirail wrapper (a rail it gave
     * up on): breaks the connection to `peer` the way a network failure would, both ends
     * noticing; the peer then fails through the usual path (mf_fabric_up_peer_failed,
     * reported from progress). Not called from upcalls. Classes without connections point it
     * at mf_fabric_no_break_peer. */
    int (*break_peer)(mf_fabric *f, int peer);

    /* Optional (may be NULL, like rx_peek): for an instance used as a rail (see "Rails"), lets
     * the connection to `peer` be made again after its failure was reported: the next send
     * dials, and an incoming connection from the peer is accepted. MPI_SUCCESS, or
     * MF_FABRIC_BUSY while the failure is still being reported (try again later). */
    int (*revive_peer)(mf_fabric *f, int peer);
    /* Optional (may be NULL): one line saying what this instance runs on and how (ofi: the
     * provider and domain it got, its data path, how it sleeps), for --report-fabrics. */
    void (*describe)(mf_fabric *f, char *buf, size_t len);
    /* Optional (may be NULL): publishes what the class counts beyond mf_fabric_counters as
     * MPI_T counters, with mf_fabric_mpit_counter (fabric_mpit.h); the registry calls it right
     * after the common ones (rail's failovers, shm's streamed copies). */
    void (*mpit_publish)(mf_fabric *f);

    /* Optional (may be NULL; both or neither): native one-sided operations (src/rma/rma.h,
     * back end "native"), for fabrics that write a peer's memory (MF_FABRIC_CAP_RMA_WRITE).
     * rma_key registers len bytes at addr for the peers to read and write, for as long as the
     * window lives (rkey_release ends it), and returns the descriptor to hand to them: an rkey
     * that holds the key and how remote addresses are formed (offsets from 0, or the virtual
     * address where the provider wants it: ofi packs both, see ofi.h), so a peer only ever adds
     * a byte offset into the registered region. The window exchanges the descriptors with an
     * allgather over its communicator at creation.
     * rput writes `len` bytes gathered from the local iovecs at `offset` into a peer's region
     * `rkey` (the peer's CPU takes no part beyond its fabric's progress); `done` is called once
     * the bytes are in the peer's memory (remote completion, ofi: FI_DELIVERY_COMPLETE), which
     * is what MPI_Win_flush needs. The read side is rget above, complete when the bytes are
     * here. Same return convention as send. */
    int (*rma_key)(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
    int (*rput)(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done);

    /* Optional (may be NULL; both or neither; needs rma_key): native atomics on a peer's region
     * (MF_FABRIC_CAP_RMA_ATOMIC). atomic_max says whether the fabric does (op, type), fetching
     * or not, here: 0 when it does not, else the most elements one operation may carry (ratomic
     * splits longer ones itself). ratomic applies one mf_fabric_atomic at `offset` into the
     * region `rkey` of `peer` — the own rank included, so that every update of a window's
     * memory can go through the fabric — element by element atomically with respect to the
     * fabric's other atomics on that memory (not to the CPU's), and in issue order per peer
     * (an operation starts after the previous ones to that peer, as MPI's default
     * accumulate_ordering needs). `done` is called once the update is in the peer's memory and
     * the result (if any) here. Same return convention as send. */
    size_t (*atomic_max)(mf_fabric *f, int op, int type, bool fetch);
    int (*ratomic)(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const mf_fabric_atomic *a,
                   mf_fabric_done *done);

    /* Optional (may be NULL; all six or none): tag matching offloaded to the fabric
     * (MF_FABRIC_CAP_TAGGED; ofi: FI_TAGGED). The fabric matches MPI envelopes (context id,
     * source rank in the communicator, tag) itself, with MPI's rules: receives in posting order,
     * messages of one sender in sending order (also across eager and large sizes), wildcards.
     * Only usable when this one instance carries every point-to-point message of the
     * communicators that use it, to and from every peer and the own rank (the p2p layer decides,
     * src/p2p/offload.c); frames of the message path (send) keep working beside it (the
     * SYNC_ACK of a synchronous send goes that way).
     *
     * tagged_enable: called once by the p2p layer after the routes were built. `why_not` NULL
     * asks to switch the offload on: *on says whether it is (the fabric may refuse: no FI_TAGGED,
     * tag bits too narrow for the world size, a setting), *max_context is the largest context
     * id it can carry (communicators beyond use the message path). `why_not` non-NULL says why
     * the p2p layer cannot use it (describe shows it). MPI_SUCCESS, or an error code when the
     * offload was demanded (ofi: MANIFOLD_OFI_TAGGED=on) but is impossible, naming what.
     * The operations (each takes an mf_fabric_tmsg that stays the caller's, untouched by it,
     * until its tm_done; MPI_SUCCESS/MF_FABRIC_* or an error code as send):
     *   tsend    the message of tm_iov to world rank `peer` under (tm_context, tm_src, tm_tag),
     *            carrying tm_id (0: none) to the receiver; tm_sync: the receiver learns it
     *            (tm_msync) and answers with a SYNC_ACK frame naming tm_id once matched. MF_FABRIC_DONE when the fabric copied
     *            it (tm_done is not called), else MF_FABRIC_PENDING and tm_done once the buffer
     *            may be reused. tm_done NULL: copy now or take nothing (MF_FABRIC_BUSY).
     *   trecv    posts a receive for (tm_context, tm_src or MPI_ANY_SOURCE, tm_tag or
     *            MPI_ANY_TAG) into tm_iov; `claimed`: receives the message an earlier tprobe with
     *            claim took, with the same tmsg. tm_done(MPI_SUCCESS) once landed with the
     *            matched envelope (tm_msrc, tm_mtag, tm_msync, tm_id), tm_len bytes landed of the
     *            tm_size sent (more: truncated), or tm_cancelled after tcancel.
     *   tprobe   looks for the first matching message without receiving it (tm_found and the
     *            envelope, tm_id and tm_size when found); with `claim` the message is taken for a
     *            trecv. Its tm_done comes from a later progress pass.
     *   tcancel  asks to cancel a posted trecv: its tm_done comes with tm_cancelled, or
     *            normally if it matched first. */
    int (*tagged_enable)(mf_fabric *f, const char *why_not, bool *on, uint32_t *max_context);
    int (*tsend)(mf_fabric *f, int peer, struct mf_fabric_tmsg *m);
    int (*trecv)(mf_fabric *f, struct mf_fabric_tmsg *m, bool claimed);
    int (*tprobe)(mf_fabric *f, struct mf_fabric_tmsg *m, bool claim);
    void (*tcancel)(mf_fabric *f, struct mf_fabric_tmsg *m);
    /* Whether tsend/trecv take `niov` pieces without a copy (else they bounce through one
     * buffer of their own); also optional with the above. */
    int (*tiov_max)(mf_fabric *f);
} mf_fabric_ops;

/* Capabilities of a class (mf_fabric_class.caps): what the transport can do at all. An
 * instance's run-time `flags` say what it does here (e.g. shm pulls with CMA only when the
 * probe worked). */
enum mf_fabric_caps {
    MF_FABRIC_CAP_RELIABLE = 1u << 0,   /* frames are never lost while the peer lives */
    MF_FABRIC_CAP_ORDERED = 1u << 1,    /* frames to one peer arrive in order */
    MF_FABRIC_CAP_TAGGED = 1u << 2,     /* matches MPI envelopes itself (ofi: tagged ops) */
    MF_FABRIC_CAP_RMA_READ = 1u << 3,   /* reads a peer's memory (rget) */
    MF_FABRIC_CAP_RMA_WRITE = 1u << 4,  /* writes a peer's memory (none yet) */
    MF_FABRIC_CAP_RMA_ATOMIC = 1u << 5, /* atomics on a peer's memory (atomic_max, ratomic) */
    MF_FABRIC_CAP_RAIL = 1u << 6,       /* several instances may carry one route (rails) */
    MF_FABRIC_CAP_NETWORK = 1u << 7,    /* crosses hosts; named by MANIFOLD_FABRIC */
    MF_FABRIC_CAP_IFACES = 1u << 8,     /* runs over IP interfaces: "class:iface" is accepted */
    /* one instance uses all its interfaces at once (sctp multihoming): MANIFOLD_IF naming several
     * is not split into rails of their own (fabric.c) */
    MF_FABRIC_CAP_MULTIHOME = 1u << 9,
};

#define MF_FABRIC_CLASS_VERSION 1

/* What an instance carried. Plain counters, written under the library lock; a reader on another
 * thread (MPI_T) takes the lock or accepts a torn 64-bit read on 32-bit hosts. Frames are
 * counted by wire type (one increment per frame on the hot path): the totals and the eager and
 * rendezvous counts are read with the functions below. */
#define MF_FABRIC_COUNT_TYPES 16 /* > MF_MSG_TYPE_MAX, a power of two: the type is masked */
typedef struct mf_fabric_counters {
    uint64_t tx_bytes, rx_bytes;               /* payload bytes sent, delivered upward */
    uint64_t tx_frames[MF_FABRIC_COUNT_TYPES]; /* frames taken by send, by wire type */
    uint64_t rx_frames[MF_FABRIC_COUNT_TYPES]; /* frames delivered upward, by wire type */
    uint64_t connections; /* connections established (connection-based classes) */
} mf_fabric_counters;

/* All frames of one direction (frames[] is tx_frames or rx_frames). */
static inline uint64_t mf_fabric_frames(const uint64_t *frames)
{
    uint64_t n = 0;
    for (int i = 0; i < MF_FABRIC_COUNT_TYPES; i++)
        n += frames[i];
    return n;
}

typedef struct mf_fabric_class {
    unsigned version; /* MF_FABRIC_CLASS_VERSION */
    const char *name; /* "self", "shm", "tcp": also the folder and the symbol prefix */
    const mf_fabric_ops *ops;
    unsigned caps;        /* enum mf_fabric_caps */
    size_t max_message;   /* largest payload of one send (<= MF_WIRE_MAX_FRAME) */
    size_t instance_size; /* sizeof the class's instance struct (mf_fabric first) */
    /* Fills the defaults of a zeroed instance (base fields included); cannot fail. */
    void (*init)(mf_fabric *f);
} mf_fabric_class;

struct mf_fabric {
    /* Hot fields first: the p2p layer reads them on every message. */
    const mf_fabric_ops *ops; /* == cls->ops, copied so a send costs one load */
    const char *name;         /* the instance name, iname ("tcp0"), for messages */
    unsigned flags;           /* enum mf_fabric_flags */
    size_t eager_limit;       /* largest message the p2p layer sends eagerly on this instance */
    size_t max_frame;         /* largest payload of one send (<= cls->max_message) */
    int poll_interval_us;     /* > 0: longest sleep the engine may take (see wait_fd) */
    /* Set while the instance needs to be polled without pause by a thread that waits in MPI
     * (ofi with a window exposed: peers' native operations move only while it polls): such a
     * thread keeps polling; the progress thread still sleeps, bounded by poll_interval_us. */
    bool busy_poll;
    bool opened; /* set by the registry */
    /* Threads asleep in the engine on this instance's wait fd (the progress thread, mostly),
     * kept by the engine: progress may run while another thread sleeps, and must then keep the
     * wait fd complete (tcp stays out of its quiet regime). */
    int sleepers;
    /* With MF_FABRIC_RGET: a receiver pulls a rendezvous message only while its own rank has at
     * least this many bytes of rendezvous sends in flight, and asks for a push otherwise. 0 (RDMA:
     * a pull costs no CPU) always pulls; shm's copy costs the puller's core, which a push through
     * the rings shares with the sender's, so it pulls only when both cores copy anyway. */
    size_t rget_min_busy;
    /* The same threshold while the receiving thread shares its core with other load
     * (core/core_share.h). There the rings, which move a pushed frame only while both ranks hold
     * a core at once, can collapse, and a pull needs only the receiver; so shm pulls from a lower
     * threshold (any own send in flight, by default; SIZE_MAX, off, when the job itself has more
     * ranks than cores). Only lower than rget_min_busy matters. */
    size_t rget_min_busy_shared;
    mf_fabric_counters counters;
    /* Identity and settings, set by the registry before open. */
    const mf_fabric_class *cls;
    int index;          /* among the instances of its class: tcp<index> */
    char iname[16];     /* "tcp0" */
    const char *ifaces; /* IP classes: interfaces, MANIFOLD_IF syntax ("": all); kept after the
                           instance struct, so the hot fields of a class stay close together */
    void *upcall_ctx;   /* the layer above's, for its upcalls; NULL by default */
    /* Wrappers: the instance this one sits over (fault/), NULL for a real one. */
    mf_fabric *inner;
    /* Where this instance's upcalls go (see "Rails" below): NULL for the p2p layer. */
    const struct mf_fabric_upcalls *upcalls;
};

/* The instance struct that embeds base `f` as its member `member`. */
#define MF_FABRIC_CONTAINER(f, type, member) ((type *)(void *)((char *)(f)-offsetof(type, member)))

/* Counting, for fabrics: a frame committed to the wire (not on MF_FABRIC_BUSY or an error), and
 * a frame delivered upward. Eager messages are tx_frames[MF_MSG_EAGER], rendezvous started
 * tx_frames[MF_MSG_RTS]. The _as forms count a message that has no frame header (ofi's tagged
 * messages, counted as eager frames of their length). */
static inline void mf_fabric_count_tx_as(mf_fabric *f, unsigned type, uint64_t len)
{
    mf_counter_add(&f->counters.tx_frames[type & (MF_FABRIC_COUNT_TYPES - 1)], 1);
    mf_counter_add(&f->counters.tx_bytes, len);
}
static inline void mf_fabric_count_rx_as(mf_fabric *f, unsigned type, uint64_t len)
{
    mf_counter_add(&f->counters.rx_frames[type & (MF_FABRIC_COUNT_TYPES - 1)], 1);
    mf_counter_add(&f->counters.rx_bytes, len);
}
static inline void mf_fabric_count_tx(mf_fabric *f, const mf_wire_hdr *hdr)
{
    mf_fabric_count_tx_as(f, hdr->type, hdr->len);
}
static inline void mf_fabric_count_rx(mf_fabric *f, const mf_wire_hdr *hdr)
{
    mf_fabric_count_rx_as(f, hdr->type, hdr->len);
}

/* ---- Stubs for unsupported optional ops ---- */
int mf_fabric_no_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
void mf_fabric_no_rkey_release(mf_fabric *f, uint64_t rkey);
int mf_fabric_no_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                      int niov, size_t len, mf_fabric_done *done);
int mf_fabric_no_wait_fd(mf_fabric *f);
int mf_fabric_no_break_peer(mf_fabric *f, int peer);
bool mf_fabric_always_sleep(mf_fabric *f);
void mf_fabric_no_sleep_end(mf_fabric *f);

/* ---- Address exchange through the process manager ---- */
/* Publishes this rank's address of instance `f` (its op `open`, before the fence) under the
 * instance's key "mf.<instance name>.<rank>". `value` is the fabric's own text encoding (at most
 * MF_PM_VAL_MAX - 1 characters). Returns MPI_SUCCESS or the process manager's error. */
int mf_fabric_addr_publish(const mf_fabric *f, const char *value);
/* Fetches the address `rank` published for instance `f` (after the fence) into buf[len]. When
 * it is missing, reports an MPI_ERR_OTHER error naming the instance, the rank and the key and
 * returns its code. */
int mf_fabric_addr_lookup(const mf_fabric *f, int rank, char *buf, size_t len);

/* ---- Deferred peer failures ----
 * A fabric that finds a peer failed where it may not report it (inside send, say) marks it in
 * its set and reports it from its next progress, once; the first failure wins. Marking,
 * counting and reporting once are here; what a report does (drop the peer's queues, call
 * mf_fabric_up_peer_failed or not) is the fabric's `report` callback. Not thread-safe: the
 * instance's own serialization covers it. */
typedef struct mf_fabric_failures {
    int *code;      /* by world rank: error code once failed, else 0 */
    bool *reported; /* by world rank: the failure was taken for its report (or needs none) */
    int npeers;
    int npending; /* failed, not yet taken */
} mf_fabric_failures;
typedef void mf_fabric_fail_report_fn(mf_fabric *f, int peer, int code);

/* Sets up an empty set for `npeers` ranks; MPI_ERR_NO_MEM (reported) when out of memory. */
int mf_fabric_failures_init(mf_fabric_failures *s, int npeers, const char *who);
/* Releases the set (also one never set up, if zeroed). */
void mf_fabric_failures_free(mf_fabric_failures *s);
/* Marks `peer` failed with `code` (nonzero) and pending. False, changing nothing, when it has
 * failed already or is out of range. */
bool mf_fabric_failures_mark(mf_fabric_failures *s, int peer, int code);
/* Takes `peer`'s pending failure for its report (marks it reported): true when there was one. */
bool mf_fabric_failures_take(mf_fabric_failures *s, int peer);
/* Takes every pending failure, in rank order, and calls report(f, peer, code) for each; returns
 * how many. A failure marked by `report` itself below the rank reached waits for the next call. */
int mf_fabric_failures_report(mf_fabric_failures *s, mf_fabric *f,
                              mf_fabric_fail_report_fn *report);
/* Forgets `peer`'s failure (it may be connected to again). */
void mf_fabric_failures_forget(mf_fabric_failures *s, int peer);

/* ---- Upcalls: what a fabric calls (implemented by src/p2p) ---- */

/* A frame header arrived from `peer` (already decoded and validated). The p2p layer fills
 * `sink` with where the hdr->len payload bytes go; the fabric then copies them there (in one go
 * or over several progress passes) and calls sink->fs_done. Called only from progress. */
void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink);

/* `peer` is unreachable through fabric f: `code` is an MPI error code whose message names the
 * peer and the cause. Pending and future operations with that peer fail with it. */
void mf_fabric_peer_failed(mf_fabric *f, int peer, int code);

/* ---- Rails: upcalls to a wrapper instead of the p2p layer ----
 *
 * An instance that is one rail of a multirail wrapper (rail/) does not talk to the p2p layer:
 * the wrapper installs its own upcalls on it (mf_fabric_set_upcalls, with upcall_ctx naming the
 * rail), so that frames arriving on the rail reach the wrapper, and a broken connection is a
 * *rail* event (the wrapper resends what the rail lost on another one) rather than the peer's
 * failure. Fabrics that can be rails (MF_FABRIC_CAP_RAIL) therefore call the two dispatchers
 * below, never mf_fabric_rx_header/mf_fabric_peer_failed directly; for an instance without
 * installed upcalls they are exactly those. Same calling rules as the upcalls themselves. */
typedef struct mf_fabric_upcalls {
    void (*rx_header)(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink);
    /* The connection to `peer` over f is gone (code names it); the instance may be revived. */
    void (*peer_failed)(mf_fabric *f, int peer, int code);
} mf_fabric_upcalls;

static inline void mf_fabric_up_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr,
                                          mf_fabric_sink *sink)
{
    if (f->upcalls)
        f->upcalls->rx_header(f, peer, hdr, sink);
    else
        mf_fabric_rx_header(f, peer, hdr, sink);
}
static inline void mf_fabric_up_peer_failed(mf_fabric *f, int peer, int code)
{
    if (f->upcalls)
        f->upcalls->peer_failed(f, peer, code);
    else
        mf_fabric_peer_failed(f, peer, code);
}
/* Installs `up` and `ctx` on f and on every instance under it (a fault wrapper passes its
 * rail's traffic through, and the instance at the bottom is the one that calls upcalls). */
static inline void mf_fabric_set_upcalls(mf_fabric *f, const mf_fabric_upcalls *up, void *ctx)
{
    for (; f; f = f->inner) {
        f->upcalls = up;
        f->upcall_ctx = ctx;
    }
}

/* ---- Classes (listed in fabrics.def) ---- */
#define MF_FABRIC(name) extern const mf_fabric_class mf_##name##_class;
#include "fabric/fabrics.def"
#undef MF_FABRIC

/* ---- Registry (fabric.c) ---- */

/* A new instance of `cls` (zeroed, then cls->init), named <class><index>, over interfaces
 * `ifaces` (MANIFOLD_IF syntax; "" for all, or the class does not use interfaces); NULL without
 * memory or when the class's table is incomplete (a programming error, logged). Not opened.
 * The registry makes its own; unit tests use this to drive one instance directly. */
mf_fabric *mf_fabric_instance_new(const mf_fabric_class *cls, int index, const char *ifaces);
void mf_fabric_instance_free(mf_fabric *f);

/* Init is split around the process manager's fence, which MPI_Init performs:
 * mf_fabrics_open() opens every instance the settings ask for (publishing addresses); after the
 * fence and once mf_g knows every rank's host, mf_fabrics_start() starts them and builds every
 * peer's routes (below). */
int mf_fabrics_open(void);
int mf_fabrics_start(void);
/* True when every instance in use has sent everything it was handed (see tx_idle). */
bool mf_fabrics_tx_idle(void);
int mf_fabrics_finalize(void);
/* ---- Routes ---- */

enum mf_route_fn {
    MF_ROUTE_P2P,  /* point-to-point messages (MANIFOLD_FABRIC) */
    MF_ROUTE_RMA,  /* one-sided traffic (MANIFOLD_RMA_FABRIC, default as p2p) */
    MF_ROUTE_CTRL, /* control frames of layers above (as p2p: its first rail) */
    MF_ROUTE_NFN
};
#define MF_ROUTE_MAX_RAILS 8

/* The instances that carry one function to one peer: self for our own rank, shm for a peer on
 * our host (when shm is on and reaches it), else the instances the setting names that reach
 * it, in the setting's order. Never empty once mf_fabrics_start() succeeded. */
typedef struct mf_route {
    int nrails;
    mf_fabric *rails[MF_ROUTE_MAX_RAILS];
} mf_route;

/* The route of `fn` to `peer` (world rank); valid from mf_fabrics_start() to finalize. */
const mf_route *mf_route_of(int peer, enum mf_route_fn fn);
/* "p2p", "rma", "ctrl". */
const char *mf_route_fn_name(enum mf_route_fn fn);

/* The instance point-to-point traffic uses for `peer` (the p2p layer reads the same choice
 * through each communicator's table, mf_fabric_picks below): one rail of its p2p route. When
 * several network instances that can be rails are named (MANIFOLD_RAILS=1, the default), the
 * route holds one multirail wrapper (rail/) over them, which stripes and fails over; with
 * MANIFOLD_RAILS=0 all p2p frames to a peer take one rail (MPI order is per instance), peer p's
 * being rails[(me + p) % nrails], the same seen from either end, so the rails share the peers. */
mf_fabric *mf_fabric_of(int peer);
/* The per-peer choice of one function as a table by world rank (valid from mf_fabrics_start() to
 * finalize): fn MF_ROUTE_P2P is mf_fabric_of's, MF_ROUTE_RMA one rail of the one-sided route
 * chosen the same way (any other fn: p2p's). A communicator holds one of these (comm.h: c_fabrics,
 * p2p's by default; a window's private one takes the RMA table), so the p2p layer sends each
 * communicator's traffic over the instance its function was routed to, at the cost of one load. */
mf_fabric *const *mf_fabric_picks(enum mf_route_fn fn);
/* A table as above that sends over instance `iname` ("tcp1") to every peer whose p2p or
 * one-sided route has it as a rail, and to the others as one-sided traffic goes. NULL when no
 * instance in use has that name (or without memory). Built once, kept until finalize. */
mf_fabric *const *mf_fabric_picks_via(const char *iname);
/* The instances in use (in some peer's route), for the progress engine. */
int mf_fabrics_active(mf_fabric ***list);
/* Every opened instance, in use or not (for reports). */
int mf_fabrics_all(mf_fabric ***list);

#endif
