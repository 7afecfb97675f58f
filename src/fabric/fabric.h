/*
 * fabric.h — the one contract every Manifold transport ("fabric") implements.
 *
 * A fabric moves frames (a wire header, see wire.h, plus a payload) between this process and
 * peers, identified by their MPI_COMM_WORLD rank. It knows nothing of MPI matching, requests or
 * datatypes: that is the point-to-point layer (src/p2p), which calls the ops below and receives
 * frames through the two upcalls at the end of this file.
 *
 * Lifecycle (driven by src/fabric/fabric.c, the registry, from MPI_Init):
 *   1. register  every compiled-in fabric exports `mf_fabric *mf_<name>_fabric(void)` returning its
 *                static instance; the registry checks that the mandatory ops are set (ops that a
 *                fabric does not support point at the mf_fabric_no_* stubs, never NULL).
 *   2. open      op `open`: create endpoints, publish this rank's address with mf_pm_put().
 *                Returns MF_FABRIC_UNAVAILABLE (not an error) when the fabric cannot run here;
 *                it is then never used.
 *   3. fence     MPI_Init calls mf_pm_fence() once for all fabrics and learns every rank's host.
 *   4. start     op `start`: anything that needs the peers' published data (e.g. shm maps the
 *                host's segment). Connections are still opened lazily, on first send.
 *   5. select    for each peer the registry asks `reachable` of the fabrics in priority order
 *                (self, shm, then the network fabric named by MANIFOLD_FABRIC) and binds the
 *                peer to the first that answers true.
 *   6. run       send / rget / progress / sleep support, below.
 *   7. close     op `close`: flush what is queued (bounded wait), close endpoints, release every
 *                OS resource (nothing may remain in /dev/shm or as a socket).
 *
 * Threading: all ops are called with the library lock held (see core/state.h), from one thread
 * at a time. A fabric that runs its own threads (usrsctp, some libfabric providers) must hand
 * their events to `progress` through its own queue and wake sleepers through its wait fd
 * (an eventfd is fine); upcalls happen only inside `progress` (or inside `send` for nothing).
 *
 * Ordering: frames to one peer arrive in the order they were sent unless the fabric declares
 * MF_FABRIC_UNORDERED (the p2p layer then restores order by sequence; not needed by self, shm,
 * tcp).
 *
 * Buffers: `send` always copies the header before it returns. It may keep the iovec array and
 * the memory it describes until it reports completion (the caller keeps both alive until then).
 * Control frames (hdr->len == 0) pass a `done` that does nothing; fabrics may call it or not.
 *
 * Errors: ops return MPI_SUCCESS or an MPI error code built with mf_error() naming the fabric, the
 * peer and the cause. A peer that becomes unreachable (connection reset, process gone) is
 * reported once through mf_fabric_peer_failed(); later sends to it fail at once.
 */
#ifndef MF_FABRIC_FABRIC_H
#define MF_FABRIC_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fabric/wire.h"

typedef struct mf_fabric mf_fabric;

/* Completion of a send or rget whose buffers the fabric kept (MF_FABRIC_PENDING). */
typedef struct mf_fabric_done {
    void (*fd_fn)(struct mf_fabric_done *done, int status); /* status: MPI_SUCCESS or error code */
} mf_fabric_done;

/* Where an arriving payload goes: filled by the p2p layer in mf_fabric_rx_header(). */
typedef struct mf_fabric_sink {
    struct iovec *fs_iov; /* destination pieces, in order; may hold fewer bytes than the frame's
                             len: the fabric then discards the rest */
    int fs_niov;
    /* Called once the whole payload (hdr.len bytes) was consumed. May be NULL. */
    void (*fs_done)(struct mf_fabric_sink *sink, int status);
    void *fs_ctx; /* for the p2p layer */
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

typedef struct mf_fabric_ops {
    size_t size; /* sizeof(mf_fabric_ops) the fabric was built with, so the table can grow */

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
     * `rkey` into the local iovecs. Same return convention as send. */
    int (*rget)(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                int niov, size_t len, mf_fabric_done *done);

    /* Makes progress without blocking: moves queued sends, reads arrivals and delivers them
     * through the upcalls. Returns the number of events handled (0 when idle); failures of a
     * peer are reported through mf_fabric_peer_failed(), not returned. */
    int (*progress)(mf_fabric *f);

    /* Sleeping. The engine sleeps only when every active fabric agrees:
     *   wait_fd:       an fd that becomes readable when this fabric has work (-1: none, the
     *                  engine then wakes every poll_interval_us to call progress);
     *   sleep_prepare: arm wake-ups (e.g. set "I sleep" in shared memory, fi_trywait) and return
     *                  true if it is safe to sleep, false if work arrived meanwhile;
     *   sleep_end:     called after waking (disarm). */
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
} mf_fabric_ops;

struct mf_fabric {
    const mf_fabric_ops *ops;
    const char *name;     /* "self", "shm", "tcp": also the folder and the symbol prefix */
    unsigned flags;       /* enum mf_fabric_flags */
    size_t eager_limit;   /* largest message the p2p layer sends eagerly on this fabric */
    size_t max_frame;     /* largest payload of one send (<= MF_WIRE_MAX_FRAME) */
    int poll_interval_us; /* with wait_fd -1: how often a sleeping engine must poll */
    bool opened;          /* set by the registry */
};

/* ---- Stubs for unsupported optional ops ---- */
int mf_fabric_no_rkey_make(mf_fabric *f, void *addr, size_t len, uint64_t *rkey);
void mf_fabric_no_rkey_release(mf_fabric *f, uint64_t rkey);
int mf_fabric_no_rget(mf_fabric *f, int peer, uint64_t rkey, size_t offset, const struct iovec *iov,
                      int niov, size_t len, mf_fabric_done *done);
int mf_fabric_no_wait_fd(mf_fabric *f);
bool mf_fabric_always_sleep(mf_fabric *f);
void mf_fabric_no_sleep_end(mf_fabric *f);

/* ---- Upcalls: what a fabric calls (implemented by src/p2p) ---- */

/* A frame header arrived from `peer` (already decoded and validated). The p2p layer fills
 * `sink` with where the hdr->len payload bytes go; the fabric then copies them there (in one go
 * or over several progress passes) and calls sink->fs_done. Called only from progress. */
void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink);

/* `peer` is unreachable through fabric f: `code` is an MPI error code whose message names the
 * peer and the cause. Pending and future operations with that peer fail with it. */
void mf_fabric_peer_failed(mf_fabric *f, int peer, int code);

/* ---- Constructors: each returns its fabric's static instance (listed in fabrics.def) ---- */
mf_fabric *mf_self_fabric(void);
mf_fabric *mf_shm_fabric(void);
mf_fabric *mf_tcp_fabric(void);

/* ---- Registry (fabric.c) ---- */

/* Init is split around the process manager's fence, which MPI_Init performs:
 * mf_fabrics_open() opens every usable fabric (publishing addresses); after the fence and once
 * mf_g knows every rank's host, mf_fabrics_start() starts them and binds each peer. */
int mf_fabrics_open(void);
int mf_fabrics_start(void);
/* True when every fabric in use has sent everything it was handed (see tx_idle). */
bool mf_fabrics_tx_idle(void);
int mf_fabrics_finalize(void);
/* The fabric bound to `peer` (world rank). */
mf_fabric *mf_fabric_of(int peer);
/* The fabrics in use, for the progress engine. */
int mf_fabrics_active(mf_fabric ***list);

#endif
