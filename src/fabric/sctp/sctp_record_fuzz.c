/*
 * sctp_record_fuzz.c — libFuzzer target for the sctp fabric's frame assembly (sctp_record.c):
 * the input is cut into pieces as usrsctp could hand them up on one stream (each: a flags byte,
 * bit 0 the end of a record, a 16-bit length, that many bytes), fed in order to one assembly.
 * Every piece is taken or rejected with a reason; every message completed holds exactly its
 * header's length in its pieces, within the largest frame; nothing leaks (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/sctp/sctp.h"

#define FUZZ_MAX_FRAME 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(mf_sctp_msg *m)
{
    size_t held = 0;
    for (mf_sctp_piece *pc = m->m_pieces; pc; pc = pc->pc_next) {
        if (pc->pc_off > pc->pc_len)
            abort();
        held += pc->pc_len - pc->pc_off;
    }
    if (held != m->m_bytes)
        abort();
    if (m->m_kind == MF_SCTP_MSG_HS
            ? m->m_bytes != 0
            : m->m_kind != MF_SCTP_MSG_FRAME || m->m_bytes != m->m_hdr.len ||
                  m->m_hdr.len > FUZZ_MAX_FRAME)
        abort();
    mf_sctp_msg_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mf_sctp_asm as = {0};
    size_t off = 0;
    while (off + 3 <= size) {
        int flags = data[off] & 1 ? MSG_EOR : 0;
        size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
        off += 3;
        if (len > size - off)
            len = size - off;
        mf_sctp_piece *pc = calloc(1, sizeof *pc);
        if (!pc)
            break;
        pc->pc_flags = flags;
        pc->pc_len = len;
        pc->pc_data = malloc(len ? len : 1);
        if (!pc->pc_data) {
            free(pc);
            break;
        }
        memcpy(pc->pc_data, data + off, len);
        off += len;
        mf_sctp_msg *m = NULL;
        const char *why = NULL;
        int r = mf_sctp_asm_feed(&as, pc, FUZZ_MAX_FRAME, &m, &why);
        if (r < 0) {
            if (!why || !*why || m || as.as_cur || as.as_head_got)
                abort(); /* a rejection names its reason and leaves the assembly empty */
        } else if (r > 0) {
            if (!m || as.as_cur || as.as_head_got)
                abort();
            check(m);
        } else if (m) {
            abort();
        }
    }
    mf_sctp_asm_reset(&as);
    return 0;
}
