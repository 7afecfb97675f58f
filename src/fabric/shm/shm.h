/*
 * shm.h — internals of the shared-memory fabric (src/fabric/shm/), shared by its files.
 *
 * One segment per host per job. Local rank 0 creates it anonymous (memfd) and hands its
 * descriptor to the other local ranks over their doorbells (doorbell.c), so it never appears in
 * /dev/shm and no crash or kill at any moment can leave it behind. Only where that is impossible
 * (no memfd_create, or a local rank's doorbell out of reach) is it a /dev/shm file, mode 0600,
 * unlinked as soon as the last local rank has mapped it. Its layout:
 *
 *   [0, 4 KiB)         mf_shm_seg_hdr: magic (written last), job secret, geometry, status,
 *                      arrival counter, creator's error text
 *   [4 KiB, ...)       one mf_shm_rank_info per local rank: pid, CMA probe address, "sleeping"
 *   bitmaps_off + k*bitmap_stride  local rank k's senders: bit j set once local rank j sent to
 *                      it (set before j's first frame is published); k polls only those rings,
 *                      so a ring nobody uses is never touched and its pages never allocated
 *   rings_off + k*stride  one ring per ordered pair (sender, receiver) of distinct local ranks:
 *                      a 4 KiB control page (head / tail / blocked on separate cache lines)
 *                      followed by ring_cap data bytes
 *
 * A ring is single-producer single-consumer. Frames are written contiguously modulo ring_cap (a
 * power of two, multiple of 64): a first 64-byte line (layout in frame.c; an eager payload of up
 * to 32 bytes fits in it), the rest of the payload, padding to the next 64-byte boundary. A frame
 * is published by the 32-bit marker at the start of its first line, stored last (release): the
 * consumer polls the line it will read anyway, so a small message moves one cache line between
 * the two cores, not a line plus a shared counter. The marker of a frame at byte position p is
 * mf_shm_marker(p), never 0; before publishing, the producer makes sure the marker slot where
 * the next frame will start is zero (it zeroes slots a stretch ahead), so the consumer can never
 * mistake old bytes (of an earlier lap, or payload) for a published frame. Zeroing stays outside
 * the unconsumed bytes: a frame is written only if it leaves at least 64 bytes of the ring free.
 * A new ring is all zeroes.
 *
 * Space: the producer counts bytes written (`head`, private), the consumer bytes consumed
 * (`tail`). The consumer publishes `tail` lazily — after a quarter of the ring, whenever the
 * producer has raised the ring's `blocked` flag (it checks on every pass), and before it sleeps
 * — so the common case writes no shared counter at all.
 *
 * Wake-ups. A receiver about to sleep sets its `sleeping` flag, executes a full barrier and then
 * re-checks its inbound rings; a producer publishes a frame and then reads the receiver's flag,
 * ringing its doorbell if set. The store->load order this needs on the producer's side (x86
 * reorders a store with a later load) is either a seq_cst fence per frame or, where every local
 * rank could register for it, asymmetric: the rare sleeper calls membarrier(GLOBAL_EXPEDITED),
 * which makes every running rank execute a barrier, and producers pay nothing. Symmetrically a
 * producer blocked on a full ring sets the ring's `blocked` flag (seq_cst) and re-reads `tail`;
 * the consumer publishes `tail` and wakes it. The consumer clears the flag when it publishes,
 * even if the room is still too small for the producer's frame, so a producer about to sleep
 * raises it again before its last look at `tail`. A receiver looks only at the rings of peers
 * in its sender bitmap; a sender sets its bit before its first frame, so the sleeper's re-check
 * (flag, barrier, bitmap, rings) sees the frame or the sender sees the flag.
 */
#ifndef MF_FABRIC_SHM_SHM_H
#define MF_FABRIC_SHM_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fabric/shm/copy.h"
#include "fabric/wire.h"

#define MF_SHM_CACHELINE 64
#define MF_SHM_PAGE 4096
#define MF_SHM_MAGIC 0x31304d454d53464dull /* "MFSMEM01" little-endian */
#define MF_SHM_LAYOUT_VERSION 3
/* Up to this many local ranks the segment is reserved and mapped whole at start (segment.c). */
#define MF_SHM_POPULATE_RANKS 4
#define MF_SHM_ERRLEN 256

enum mf_shm_seg_status { MF_SHM_SEG_INIT = 0, MF_SHM_SEG_READY = 1, MF_SHM_SEG_FAILED = 2 };

typedef struct mf_shm_seg_hdr {
    _Atomic uint64_t magic; /* MF_SHM_MAGIC once the fields below are valid (release) */
    uint64_t secret;        /* the job's secret: tells our segment from a stale namesake */
    uint32_t version;
    uint32_t nlocal;
    uint64_t ring_cap;
    uint64_t total_size;
    _Atomic uint32_t status;   /* enum mf_shm_seg_status */
    _Atomic uint32_t arrived;  /* local ranks that mapped the segment */
    _Atomic uint32_t unlinked; /* the name was removed from /dev/shm */
    char error[MF_SHM_ERRLEN]; /* why the creator failed (status FAILED) */
} mf_shm_seg_hdr;

typedef struct mf_shm_rank_info {
    /* Written by the owner before it counts itself in `arrived`; read-only afterwards. */
    _Alignas(MF_SHM_CACHELINE) int32_t pid;
    uint64_t probe_addr;   /* address of a word with a known value, to probe CMA */
    int32_t membarrier_ok; /* registered for MEMBARRIER_CMD_GLOBAL_EXPEDITED */
    /* Set by the owner when about to sleep; cleared by whoever wakes it. */
    _Alignas(MF_SHM_CACHELINE) _Atomic uint32_t sleeping;
} mf_shm_rank_info;

typedef struct mf_shm_ring_ctl {
    _Alignas(MF_SHM_CACHELINE) _Atomic uint64_t tail;    /* bytes consumed, published lazily */
    _Alignas(MF_SHM_CACHELINE) _Atomic uint32_t blocked; /* producer waits for space */
} mf_shm_ring_ctl;

/* ---- segment.c ---- */

typedef struct mf_shm_segment {
    void *base;
    size_t size;
    char name[96]; /* shm_open name, "/manifold-..." */
    int nlocal;
    size_t ring_cap;
    size_t bitmaps_off, bitmap_stride;
    size_t rings_off, ring_stride;
    int fd;     /* creator: the segment's descriptor until every local rank has it; else -1 */
    bool named; /* a /dev/shm file (the fallback), not a memfd */
    bool unlinked_by_us;
} mf_shm_segment;

/* How a local rank reaches local rank 0 for the segment: its own doorbell and rank 0's. */
typedef struct mf_shm_channel {
    int fd; /* this rank's doorbell */
    uint64_t job_hash;
    int creator; /* world rank of local rank 0 */
} mf_shm_channel;

/* Ring capacity for nlocal ranks whose frames carry at most max_frame payload bytes. */
size_t mf_shm_ring_cap_for(int nlocal, size_t max_frame);
/* Total segment bytes for nlocal ranks and ring_cap. */
size_t mf_shm_segment_size(int nlocal, size_t ring_cap);
/* Formats the segment name for this uid, job and host index. */
void mf_shm_segment_name(char *buf, size_t len, uint64_t job_hash, int node);
/* Checks that `dir` (a tmpfs, normally /dev/shm) has `need` bytes free: MPI_SUCCESS or an
 * MPI_ERR_NO_MEM code whose message names both sizes and the remedy. */
int mf_shm_space_check(const char *dir, size_t need);
/* Creator (local rank 0): creates, sizes and initialises the segment — anonymous if asked and
 * possible, else the named file `name` — or returns the error, leaving a named file with a FAILED
 * header behind (so that waiting peers can report why). */
int mf_shm_segment_create(mf_shm_segment *s, const char *name, int nlocal, size_t ring_cap,
                          uint64_t secret, bool anonymous);
/* Other local ranks: waits (at most timeout_ms) for the creator's segment and maps it: asks
 * for the descriptor through ch (if not NULL) and looks for the named file. */
int mf_shm_segment_attach(mf_shm_segment *s, const char *name, uint64_t secret, int timeout_ms,
                          const mf_shm_channel *ch);
/* Counts this rank in, unlinks the name if it was the last, then waits (at most timeout_ms)
 * until every local rank has mapped it; the creator meanwhile answers requests on ch. */
int mf_shm_segment_arrive(mf_shm_segment *s, int timeout_ms, const mf_shm_channel *ch);
/* Removes this uid's segments in `dir` (/dev/shm) left by killed jobs: older than min_age_s
 * (longer than any attach wait) and whose creator is dead or failed. Those are host segments
 * (shm_name.h) of jobs killed during MPI_Init, and communicators' host segments of jobs killed
 * while a communicator mapped one. Returns the number removed. */
int mf_shm_segment_reap(const char *dir, int min_age_s);
/* Unmaps; unlinks the name first if nobody did yet. */
void mf_shm_segment_detach(mf_shm_segment *s);

static inline mf_shm_seg_hdr *mf_shm_seg_hdr_of(const mf_shm_segment *s)
{
    return (mf_shm_seg_hdr *)s->base;
}
mf_shm_rank_info *mf_shm_segment_info(const mf_shm_segment *s, int local);
/* Local rank `local`'s sender bitmap (see the layout above): (nlocal + 63) / 64 words. */
_Atomic uint64_t *mf_shm_segment_senders(const mf_shm_segment *s, int local);
/* Whether a segment for nlocal ranks is reserved and mapped whole at start (else page by page
 * as rings are used). */
bool mf_shm_segment_populated(int nlocal);
/* The control block of ring sender -> receiver (local indices, distinct) and its data. */
mf_shm_ring_ctl *mf_shm_segment_ring(const mf_shm_segment *s, int sender, int receiver,
                                     unsigned char **data);
/* In a segment mapped page by page (not populated) of 5 to 32 local ranks, where a rank's own
 * rings, in and out, come to at most 10 MiB (segment.c), maps ring sender -> receiver whole
 * into this process: writable for its sender (announcing itself, before its first frame),
 * readable for its receiver (on finding the announcement). Otherwise each 4 KiB of a ring's
 * first lap costs each side a page fault, the sender's allocating the page, on the path of the
 * message that reaches it: with 8 ranks on 2 cores, back-to-back bcasts of 0.5-2 KiB took
 * 1.8-5.6 us through their first 512 KiB per ring, against 0.6-1.6 us once mapped (30
 * operations per batch, every run). Mapping the ring in stretches as traffic reached them (one
 * madvise per 4-64 KiB) did not help: the page allocations, not the traps, are the cost. Beyond
 * 32 ranks rings stay mapped page by page, memory proportional to traffic. Elsewhere a no-op. */
void mf_shm_segment_prefault(const mf_shm_segment *s, int sender, int receiver, bool writer);

/* ---- frame.c ---- */

/* Bytes of a frame's first line that precede the payload. */
#define MF_SHM_EAGER_HDR 32
#define MF_SHM_FULL_HDR 64

/* Writes h into a frame's first line, all but the marker. h->len must fit 32 bits. */
void mf_shm_frame_encode(const mf_wire_hdr *h, unsigned char *line);
/* The shm flag of an indirect frame (frame.c): the payload stays in the sender's memory. */
#define MF_SHM_FRAME_INDIRECT 1
/* Makes an encoded line indirect: its len payload bytes are at addr in the sender. */
void mf_shm_frame_set_indirect(unsigned char *line, uint64_t addr);
/* A decoded line's payload address in the sender if it is indirect, else 0. */
uint64_t mf_shm_frame_indirect(const unsigned char *line);
/* Decodes a published first line whose marker must be `marker` and whose payload at most
 * max_len bytes: 0, or -1 with *why naming the fault. */
int mf_shm_frame_decode(const unsigned char *line, uint32_t marker, size_t max_len, mf_wire_hdr *h,
                        const char **why);

static inline size_t mf_shm_frame_hdr(uint8_t type)
{
    return type == MF_MSG_EAGER ? MF_SHM_EAGER_HDR : MF_SHM_FULL_HDR;
}

/* Bytes a frame of this type and payload length occupies in a ring. */
static inline size_t mf_shm_frame_size(uint8_t type, size_t len)
{
    return (mf_shm_frame_hdr(type) + len + MF_SHM_CACHELINE - 1) & ~(size_t)(MF_SHM_CACHELINE - 1);
}

/* Bytes a frame occupies in a ring, indirect (one line) or not. */
static inline size_t mf_shm_frame_span(uint8_t type, size_t len, bool indirect)
{
    return indirect ? MF_SHM_CACHELINE : mf_shm_frame_size(type, len);
}

/* The most a frame of `len` payload bytes can occupy, whatever its type. */
static inline size_t mf_shm_frame_bytes(size_t len)
{
    return mf_shm_frame_size(MF_MSG_DATA, len);
}

/* The marker of a frame starting at byte position pos: never 0. */
static inline uint32_t mf_shm_marker(uint64_t pos)
{
    return (uint32_t)((pos / MF_SHM_CACHELINE) & 0x7fffffffu) + 1;
}

/* ---- queue.c ---- */

/* One side's view of a ring: shared control + data, plus private counters. */
typedef struct mf_shm_ring {
    mf_shm_ring_ctl *ctl;
    unsigned char *data;
    size_t cap;            /* power of two, multiple of 64 */
    size_t max_len;        /* largest payload a frame may carry (consumer's validation) */
    uint64_t head;         /* producer: bytes written */
    uint64_t zeroed_to;    /* producer: marker slots in [head, zeroed_to) are zero */
    uint64_t tail_cache;   /* producer: last tail read; consumer: bytes consumed */
    uint64_t tail_pub;     /* consumer: last tail published */
    uint64_t peek_addr;    /* consumer: the peeked frame's payload address in the sender if it is
                            indirect (frame.c), else 0; set by every peek that returns 1 */
    mf_shm_copy_pick pick; /* producer: how large payloads are copied in (copy.h) */
    uint64_t *streamed;    /* producer: counts the payloads it streamed in (MPI_T), or NULL */
} mf_shm_ring;

/* max_len: the largest payload of a frame; a frame of it plus 64 bytes must fit in cap. */
static inline _Atomic uint32_t *mf_shm_marker_at(const mf_shm_ring *r, uint64_t pos)
{
    return (_Atomic uint32_t *)(void *)(r->data + (size_t)(pos & (r->cap - 1)));
}

/* Consumer, the cheap look of an idle poll: nothing published at the next position and no
 * producer waiting for room (relaxed loads: a frame seen a pass later costs nothing). */
static inline bool mf_shm_ring_idle(const mf_shm_ring *r)
{
    return atomic_load_explicit(mf_shm_marker_at(r, r->tail_cache), memory_order_relaxed) == 0 &&
           atomic_load_explicit(&r->ctl->blocked, memory_order_relaxed) == 0;
}

/* Attaches to a new ring (all zeroes): nothing in the ring is read, so its pages stay
 * untouched until used. */
void mf_shm_ring_attach(mf_shm_ring *r, mf_shm_ring_ctl *ctl, unsigned char *data, size_t cap,
                        size_t max_len);
/* Producer: how it copies large payloads in (enum mf_shm_copy_policy; attach sets AUTO). */
void mf_shm_ring_set_copy_policy(mf_shm_ring *r, int policy);
/* Producer: appends one frame (header h, then h->len bytes gathered from iov) if it fits whole,
 * and publishes it. Returns false when the ring lacks room (nothing written). */
bool mf_shm_ring_push(mf_shm_ring *r, const mf_wire_hdr *h, const struct iovec *iov, int niov);
/* Moves payload bytes [offset, offset + len) between the caller's data and ring memory at `at`
 * (mf_shm_ring_push_with, mf_shm_ring_read_with): called once per contiguous piece. */
typedef void mf_shm_piece_fn(void *arg, size_t offset, void *at, size_t len);
/* Producer: mf_shm_ring_push with the payload (h->len bytes) written in place by fn, in one
 * piece, or two where the frame wraps. */
bool mf_shm_ring_push_with(mf_shm_ring *r, const mf_wire_hdr *h, mf_shm_piece_fn *fn, void *arg);
/* Producer: appends one indirect frame (frame.c) for header h whose h->len payload bytes stay
 * at addr in this process, if it fits, and publishes it. Returns false when the ring lacks
 * room; else *end is the ring position after it (the frame is consumed once tail reaches it). */
bool mf_shm_ring_push_indirect(mf_shm_ring *r, const mf_wire_hdr *h, uint64_t addr, uint64_t *end);
/* Producer: the tail the consumer published last (acquire: its reads of our memory are done). */
uint64_t mf_shm_ring_tail(mf_shm_ring *r);
/* Producer: whether a frame of this type and length would fit now (rereads tail). */
bool mf_shm_ring_fits(mf_shm_ring *r, uint8_t type, size_t len);
/* Consumer: the oldest frame's header, decoded into h: 1, 0 when the ring is empty, or -1 when
 * the published line is invalid (*why says why). */
int mf_shm_ring_peek(mf_shm_ring *r, mf_wire_hdr *h, const char **why);
/* Consumer: copies the oldest frame's payload (h as peeked, not indirect) into iov, at most
 * the iov's room. Returns the bytes copied. */
size_t mf_shm_ring_copy_out(mf_shm_ring *r, const mf_wire_hdr *h, const struct iovec *iov,
                            int niov);
/* Consumer: hands the first len bytes of the oldest frame's payload (h as peeked, not
 * indirect; len <= h->len) to fn where they lie, in one piece or two. */
void mf_shm_ring_read_with(const mf_shm_ring *r, const mf_wire_hdr *h, size_t len,
                           mf_shm_piece_fn *fn, void *arg);
/* Consumer: releases the oldest frame (as peeked; an indirect one publishes tail at once: its
 * producer completes the send when it sees it, and is woken, if blocked, when the ring is found
 * empty). Returns true if the producer had flagged itself blocked on this ring (the flag is
 * cleared and tail published): the caller must wake it. */
bool mf_shm_ring_pop(mf_shm_ring *r, const mf_wire_hdr *h);
/* Consumer, on a pass that found the ring empty and before sleeping: publishes tail if the
 * producer waits for room. Returns true if it did (the caller must wake it). */
bool mf_shm_ring_serve_blocked(mf_shm_ring *r);
/* Consumer: publishes tail unconditionally (seq_cst), then the same as serve_blocked. */
bool mf_shm_ring_publish(mf_shm_ring *r);
/* Consumer: whether a frame is published (seq_cst, for sleep_prepare). */
bool mf_shm_ring_nonempty_sc(mf_shm_ring *r);
/* Producer: flags itself blocked on this ring (seq_cst). */
void mf_shm_ring_set_blocked(mf_shm_ring *r);

/* ---- cma.c ---- */

/* The word peers read to probe cross-memory attach. */
extern const uint64_t mf_shm_cma_probe_word;
#define MF_SHM_CMA_PROBE_VALUE 0x4d414e49464f4c44ull
/* Names this process's parent (the launcher) as its ptracer for the Yama module, so that the
 * job's other ranks on this host may read its memory. Call before publishing the pid. */
void mf_shm_cma_allow_launcher(void);
/* Yama's ptrace_scope (0-3), or -1 where the module is absent: for the message when the probe
 * is refused. */
int mf_shm_cma_ptrace_scope(void);
/* Tries to read the probe word of process pid at addr. Returns 0, or the errno. */
int mf_shm_cma_probe(pid_t pid, uint64_t addr);
/* Reads len bytes at remote address `raddr` of pid into the local iovecs, from byte `at` of
 * them on. Returns 0 or an errno. */
int mf_shm_cma_read(pid_t pid, uint64_t raddr, const struct iovec *iov, int niov, size_t at,
                    size_t len);

/* ---- doorbell.c ---- */

/* Binds this process's doorbell (abstract AF_UNIX datagram socket, nonblocking). Returns the fd
 * or -errno. */
int mf_shm_doorbell_open(uint64_t job_hash, int rank);
/* Rings `rank`'s doorbell if its sleeping flag is set (clearing it). Never blocks. */
void mf_shm_doorbell_ring(int fd, mf_shm_rank_info *info, uint64_t job_hash, int rank);
/* Whether `rank`'s doorbell can be reached from here: 0, or the errno (e.g. ECONNREFUSED when
 * the ranks of one host live in different network namespaces). */
int mf_shm_doorbell_check(uint64_t job_hash, int rank);
/* Empties the socket of pending rings (and of anything else: see doorbell.c). */
void mf_shm_doorbell_drain(int fd);
/* Datagrams dropped so far because they came from another uid. */
unsigned long mf_shm_doorbell_dropped(void);
/* Asks `rank` (local rank 0) for the segment's descriptor: 0 or an errno. */
int mf_shm_doorbell_request(int fd, uint64_t job_hash, int rank);
/* A segment descriptor received from our uid (the caller owns it), or -1 if none is waiting. */
int mf_shm_doorbell_recv_fd(int fd);
/* Creator: answers every waiting request from our uid with seg_fd. */
void mf_shm_doorbell_serve(int fd, int seg_fd);
/* Sends seg_fd as the segment to the socket at `to` (never blocks): 0 or an errno. */
int mf_shm_doorbell_give(int fd, const struct sockaddr *to, socklen_t len, int seg_fd);

#endif
