/*
 * wire.h — the frame header every fabric carries between processes.
 *
 * Fixed size (MF_WIRE_HDR_SIZE bytes), explicit widths, little-endian on the wire. Fabrics
 * encode with mf_wire_encode() and decode with mf_wire_decode(), which validates every field
 * (version, type, flags, lengths against MF_WIRE_MAX_FRAME) before anyone uses it: a frame that
 * fails is a broken connection, reported with the reason — never a crash or an out-of-bounds
 * write. Semantics of the fields belong to the point-to-point protocol (src/p2p/protocol.c).
 */
#ifndef MF_FABRIC_WIRE_H
#define MF_FABRIC_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MF_WIRE_VERSION 1
#define MF_WIRE_HDR_SIZE 64
/* Largest payload one frame may carry; bigger messages are split by the protocol. */
#define MF_WIRE_MAX_FRAME ((uint64_t)1 << 30)

enum mf_wire_type {
    MF_MSG_EAGER = 1, /* whole message in this frame: ctx, src, tag, len (== total), sreq if SYNC */
    MF_MSG_RTS = 2,   /* rendezvous request: envelope, total, sreq, rkey (if the fabric can rget) */
    MF_MSG_CTS = 3,   /* receiver matched: sreq, rreq; sender then streams MF_MSG_DATA */
    MF_MSG_DATA = 4,  /* part of a rendezvous payload: rreq, offset, len */
    MF_MSG_FIN = 5,   /* receiver pulled the data itself (rget): sreq may complete */
    MF_MSG_SYNC_ACK = 6,   /* eager synchronous send matched: sreq may complete */
    MF_MSG_CANCEL = 7,     /* MPI_Cancel of send sreq: drop its EAGER/RTS if not matched yet */
    MF_MSG_CANCEL_ACK = 8, /* answer to CANCEL: total 1 if the message was dropped, else 0 */
    MF_MSG_TYPE_MAX = 8,
};

enum mf_wire_flags {
    MF_WIRE_SYNC = 1u << 0,  /* MPI_Ssend: the receiver acknowledges the match */
    MF_WIRE_TRUNC = 1u << 1, /* CTS/FIN: the receiver takes fewer bytes than were offered */
    MF_WIRE_FLAGS_ALL = 0x3u,
};

/* Decoded form. */
typedef struct mf_wire_hdr {
    uint8_t type;
    uint8_t flags;
    uint32_t context; /* communicator context id (+1 for collective traffic) */
    int32_t src;      /* sender's rank in the communicator (local group for intercomms) */
    int32_t tag;
    uint64_t len;   /* payload bytes following this header in this frame */
    uint64_t total; /* EAGER/RTS: message size; DATA: offset of this payload in the message */
    uint64_t sreq;  /* sender's request id */
    uint64_t rreq;  /* receiver's request id */
    uint64_t rkey;  /* RTS with rget: the sender's fabric-specific key (e.g. CMA address) */
} mf_wire_hdr;

/* Little-endian fields at any alignment, for the header codec and for fabrics that lay out
 * their own compact forms of it (ofi's short header): one load or store each. */
static inline void mf_wire_put32(unsigned char *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}

static inline void mf_wire_put64(unsigned char *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}

static inline uint32_t mf_wire_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

static inline uint64_t mf_wire_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

void mf_wire_encode(const mf_wire_hdr *h, unsigned char out[MF_WIRE_HDR_SIZE]);
/* Returns 0 and fills h, or -1 with *why naming the bad field. */
int mf_wire_decode(const unsigned char in[MF_WIRE_HDR_SIZE], mf_wire_hdr *h, const char **why);
/* The checks every decoder applies to a header it decoded (type, flags, lengths and their
 * relations per type): 0, or -1 with *why naming the bad field. Fabrics with their own frame
 * layout (shm) call it too, so that all of them accept exactly the same headers. */
int mf_wire_check(const mf_wire_hdr *h, const char **why);
/* Whether two decoded headers carry the same fields (the struct has padding, so not memcmp). */
int mf_wire_same(const mf_wire_hdr *a, const mf_wire_hdr *b);

#endif
