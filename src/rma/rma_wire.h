/*
 * rma_wire.h — the bytes of the emulated back end's active messages (rma.h has the protocol):
 * the fixed header every operation starts with, and the checks a target makes before it trusts
 * one. Those bytes come from the network, so a peer's bug or a corrupted frame must never make
 * the target allocate, read or write without bound: everything here is decoded and checked
 * before use (rma_wire_fuzz.c feeds it arbitrary bytes).
 *
 * An operation is one message of tag MF_RMA_TAG_HDR: the header, then (h_inline = 1) its whole
 * payload, when header and payload fit MF_RMA_MSG_MAX — the target's posted receive — so that a
 * small put, get or accumulate costs one frame; larger payloads follow in a second message of
 * tag MF_RMA_TAG_DATA (h_inline = 0). The payload is the target layout as h_nseg (byte offset,
 * length) pairs of int64 relative to h_disp, then h_data bytes of origin data (twice the
 * target bytes for compare-and-swap: the new value, then the compare value).
 */
#ifndef MF_RMA_RMA_WIRE_H
#define MF_RMA_RMA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Operation kinds (the values travel in h_kind). */
enum mf_rma_kind {
    MF_RMA_PUT = 1,
    MF_RMA_GET,
    MF_RMA_ACC,
    MF_RMA_GACC, /* get_accumulate and fetch_and_op */
    MF_RMA_CAS,
    MF_RMA_LOCK_SHARED,
    MF_RMA_LOCK_EXCL,
    MF_RMA_UNLOCK,
    MF_RMA_CLOSE /* to self at MPI_Win_free: ends the header receive */
};

#define MF_RMA_TAG_HDR 1
#define MF_RMA_TAG_DATA 2
#define MF_RMA_TAG_POST 3
#define MF_RMA_TAG_DONE 4
#define MF_RMA_TAG_REPLY 16

typedef struct mf_rma_hdr {
    int32_t h_kind;
    int32_t h_reply_tag;
    int32_t h_nseg;   /* target segments in the payload */
    int32_t h_type;   /* basic type of an accumulate (predefined handles are the same everywhere) */
    int32_t h_op;     /* predefined op of an accumulate */
    int32_t h_inline; /* 1: the payload follows the header in the same message */
    int64_t h_disp;   /* byte offset from the target's base (an address for dynamic windows) */
    int64_t h_data;   /* origin bytes in the payload after the segments */
    int64_t h_result; /* bytes the reply carries */
} mf_rma_hdr;

/* The target's posted header receive: header and inline payload together. Large enough that a
 * put or accumulate of 16 KiB (and its few segments) is one message: a second message costs
 * about as much as the first on a network fabric (a tcp put of 1-8 KiB took 11-12 us as two
 * messages, 6 us as one), while copying 16 KiB out of the buffer costs under a microsecond.
 * Every network fabric sends this much eagerly (ofi's default eager limit is 16 KiB: its
 * largest inline operations go by rendezvous, which is no slower than the second message). */
#define MF_RMA_MSG_MAX (16 * 1024 + 512)
#define MF_RMA_INLINE_MAX (MF_RMA_MSG_MAX - sizeof(mf_rma_hdr))

/* What the target knows of its own part: its size in bytes, and whether offsets are addresses
 * (dynamic windows: no bound to check them against). */
typedef struct mf_rma_wire_win {
    int64_t size;
    bool dynamic;
} mf_rma_wire_win;

/* Decodes the `len` bytes of a header message into *h. Returns 0 when every field is within what
 * an origin of this library sends to this window — a known kind, a reply tag of the reply
 * range, counts that are not negative, a payload whose length is representable (and within the
 * window for a window with a size), and exactly `len` = header + payload bytes when h_inline;
 * *payload_len then has the payload's length (segments + data). Else -1 and *why names the
 * first field at fault. */
int mf_rma_wire_decode(const void *msg, size_t len, const mf_rma_wire_win *win, mf_rma_hdr *h,
                       size_t *payload_len, const char **why);

/* Checks an arrived payload (of the *payload_len bytes decode gave) against its header: every
 * segment has a length that is not negative and lies in the window (offsets that do not
 * overflow), and the segments cover h_result bytes for the fetching kinds and h_data (twice for
 * compare-and-swap) for those that carry data; control kinds have none. Returns 0 or -1 with
 * *why. The payload need not be aligned. */
int mf_rma_wire_check_payload(const mf_rma_hdr *h, const void *payload, const mf_rma_wire_win *win,
                              const char **why);

/* Segment i of a payload (native byte order, as the whole header: the ranks of a job share
 * one architecture). */
static inline void mf_rma_wire_segment(const void *payload, int i, int64_t *off, int64_t *len)
{
    int64_t v[2];
    memcpy(v, (const char *)payload + (size_t)i * sizeof v, sizeof v);
    *off = v[0];
    *len = v[1];
}

#endif
