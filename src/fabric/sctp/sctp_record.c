/*
 * sctp_record.c — the sctp fabric's frames rebuilt from what usrsctp hands up: pieces of
 * records, per stream. No usrsctp calls here (sctp_record_fuzz.c drives it with any bytes).
 *
 * A frame is an 8-byte prefix, a wire header (or a handshake record) and the header's length
 * of payload, sent as records of at most MF_SCTP_RECORD bytes, the last ending with the frame
 * (sctp.h says why). usrsctp hands a record up whole, or in pieces should it ever deliver it
 * partially; either way the bytes of one stream come in order, so the frame is complete
 * exactly when its header's length is in, whatever the record and piece boundaries.
 */
#include "fabric/sctp/sctp.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

void mf_sctp_piece_free(mf_sctp_piece *pc)
{
    free(pc->pc_data);
    free(pc);
}

void mf_sctp_msg_free(mf_sctp_msg *m)
{
    while (m->m_pieces) {
        mf_sctp_piece *pc = m->m_pieces;
        m->m_pieces = pc->pc_next;
        mf_sctp_piece_free(pc);
    }
    free(m);
}

void mf_sctp_asm_reset(mf_sctp_asm *as)
{
    if (as->as_cur)
        mf_sctp_msg_free(as->as_cur);
    as->as_cur = NULL;
    as->as_head_got = 0;
}

/* Takes the first bytes of a message (prefix and header or record) from piece pc; when they
 * are complete, starts as->as_cur. Returns -1 with *why for a malformed head. */
static int mf_sctp_head_in(mf_sctp_asm *as, mf_sctp_piece *pc, size_t max_frame, const char **why)
{
    size_t k = MF_SCTP_HEAD - as->as_head_got;
    if (k > pc->pc_len - pc->pc_off)
        k = pc->pc_len - pc->pc_off;
    memcpy(as->as_head + as->as_head_got, pc->pc_data + pc->pc_off, k);
    as->as_head_got += k;
    pc->pc_off += k;
    if (as->as_head_got < MF_SCTP_HEAD)
        return 0;
    const unsigned char *h = as->as_head;
    if ((h[0] != MF_SCTP_MSG_HS && h[0] != MF_SCTP_MSG_FRAME) || h[1] || h[2] || h[3]) {
        *why = "a message that is not Manifold's";
        return -1;
    }
    mf_sctp_msg *m = calloc(1, sizeof *m);
    if (!m) {
        *why = "no memory for a message";
        return -1;
    }
    m->m_kind = h[0];
    uint32_t seq;
    memcpy(&seq, h + 4, 4);
    m->m_seq = le32toh(seq);
    if (m->m_kind == MF_SCTP_MSG_HS) {
        memcpy(m->m_rec, h + MF_SCTP_PREFIX, MF_STREAM_HS_SIZE);
    } else if (mf_wire_decode(h + MF_SCTP_PREFIX, &m->m_hdr, why) != 0) {
        free(m);
        return -1;
    } else if (m->m_hdr.len > max_frame) {
        /* bounds what one frame may make us hold before it is complete */
        *why = "a frame longer than the largest this fabric sends";
        free(m);
        return -1;
    }
    as->as_cur = m;
    return 0;
}

int mf_sctp_asm_feed(mf_sctp_asm *as, mf_sctp_piece *pc, size_t max_frame, mf_sctp_msg **out,
                     const char **why)
{
    *out = NULL;
    if (pc->pc_len == 0) { /* an end of record alone says nothing: frames end by length */
        mf_sctp_piece_free(pc);
        return 0;
    }
    if (!as->as_cur && mf_sctp_head_in(as, pc, max_frame, why) != 0) {
        mf_sctp_piece_free(pc);
        mf_sctp_asm_reset(as);
        return -1;
    }
    bool eor = (pc->pc_flags & MSG_EOR) != 0;
    mf_sctp_msg *m = as->as_cur;
    if (m && pc->pc_off < pc->pc_len) {
        m->m_bytes += pc->pc_len - pc->pc_off;
        if (m->m_pieces_tail)
            m->m_pieces_tail->pc_next = pc;
        else
            m->m_pieces = pc;
        m->m_pieces_tail = pc;
    } else {
        mf_sctp_piece_free(pc);
    }
    if (!m) {
        if (!eor)
            return 0;
        *why = "a record shorter than a header";
        mf_sctp_asm_reset(as);
        return -1;
    }
    /* Complete once the header's length is in; until then the frame continues, in this record
     * or (after an end of record) in the next one on this stream. */
    size_t want = m->m_kind == MF_SCTP_MSG_HS ? 0 : (size_t)m->m_hdr.len;
    if (m->m_bytes < want)
        return 0;
    if (m->m_bytes != want) {
        *why = "a record that runs past the end of its frame";
        mf_sctp_asm_reset(as);
        return -1;
    }
    as->as_cur = NULL;
    as->as_head_got = 0;
    *out = m;
    return 1;
}
