/*
 * rma_wire_test.c — unit test of the RMA header decoder: the messages an origin of this library
 * sends are accepted (inline and not), and each way a header or payload can lie is refused
 * with a reason — kinds, reply tags, negative and oversized counts, a message length that
 * differs from the header's, segments outside the window or whose offsets overflow, lengths
 * that disagree with the data. Exits 0 on success.
 */
#include <stdint.h>
#include <string.h>

#include "rma/rma_wire.h"
#include "unit_check.h"

static const mf_rma_wire_win win = {.size = 4096, .dynamic = false};

/* A put of `n` bytes at byte `at` of the window as the origin builds it: header, one segment,
 * data; inline when asked. Returns the message length. */
static size_t put_msg(unsigned char *msg, int64_t at, int64_t n, bool inl)
{
    mf_rma_hdr h = {.h_kind = MF_RMA_PUT,
                    .h_reply_tag = MF_RMA_TAG_REPLY + 5,
                    .h_nseg = 1,
                    .h_inline = inl,
                    .h_disp = at,
                    .h_data = n};
    int64_t seg[2] = {0, n};
    memcpy(msg, &h, sizeof h);
    memcpy(msg + sizeof h, seg, sizeof seg);
    memset(msg + sizeof h + sizeof seg, 0x5a, (size_t)n);
    return sizeof h + (inl ? sizeof seg + (size_t)n : 0);
}

static int decode(const unsigned char *msg, size_t len, mf_rma_hdr *h, size_t *plen)
{
    const char *why = NULL;
    int rc = mf_rma_wire_decode(msg, len, &win, h, plen, &why);
    CHECK(rc == 0 || (why && *why));
    return rc;
}

static int check(const mf_rma_hdr *h, const unsigned char *payload)
{
    const char *why = NULL;
    int rc = mf_rma_wire_check_payload(h, payload, &win, &why);
    CHECK(rc == 0 || (why && *why));
    return rc;
}

int main(void)
{
    unsigned char msg[MF_RMA_MSG_MAX];
    mf_rma_hdr h;
    size_t plen = 0;

    /* what origins send */
    size_t len = put_msg(msg, 100, 8, true);
    CHECK(decode(msg, len, &h, &plen) == 0 && plen == 16 + 8 && h.h_inline == 1);
    CHECK(check(&h, msg + sizeof h) == 0);
    len = put_msg(msg, 4096 - 8, 8, false);
    CHECK(decode(msg, len, &h, &plen) == 0 && plen == 24 && h.h_inline == 0);
    CHECK(check(&h, msg + sizeof h) == 0);

    /* the message length must be the header's */
    len = put_msg(msg, 0, 8, true);
    CHECK(decode(msg, len - 1, &h, &plen) != 0);
    CHECK(decode(msg, len + 1, &h, &plen) != 0);
    CHECK(decode(msg, sizeof h - 1, &h, &plen) != 0);
    len = put_msg(msg, 0, 8, false);
    CHECK(decode(msg, len + 8, &h, &plen) != 0);

    /* fields out of range */
    mf_rma_hdr bad;
    const struct {
        size_t field;
        int64_t value;
        int width;
    } lies[] = {
        {offsetof(mf_rma_hdr, h_kind), 0, 4},
        {offsetof(mf_rma_hdr, h_kind), MF_RMA_CLOSE + 1, 4},
        {offsetof(mf_rma_hdr, h_reply_tag), MF_RMA_TAG_DONE, 4},
        {offsetof(mf_rma_hdr, h_nseg), -1, 4},
        {offsetof(mf_rma_hdr, h_nseg), 5000, 4},
        {offsetof(mf_rma_hdr, h_inline), 2, 4},
        {offsetof(mf_rma_hdr, h_data), -8, 8},
        {offsetof(mf_rma_hdr, h_data), 3 * 4096, 8},
        {offsetof(mf_rma_hdr, h_data), INT64_MAX, 8},
        {offsetof(mf_rma_hdr, h_result), 4097, 8},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        len = put_msg(msg, 0, 8, false);
        if (lies[i].width == 4) {
            int32_t v = (int32_t)lies[i].value;
            memcpy(msg + lies[i].field, &v, 4);
        } else {
            memcpy(msg + lies[i].field, &lies[i].value, 8);
        }
        CHECKF(decode(msg, len, &bad, &plen) != 0, "lie %zu accepted", i);
    }

    /* payloads that lie: outside the window, overflowing offsets, lengths that disagree */
    len = put_msg(msg, 4096 - 4, 8, false);
    CHECK(decode(msg, len, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    len = put_msg(msg, INT64_MAX - 2, 8, false);
    CHECK(decode(msg, len, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    len = put_msg(msg, 0, 8, false);
    int64_t seg[2] = {INT64_MAX, 8};
    memcpy(msg + sizeof h, seg, sizeof seg);
    CHECK(decode(msg, len, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    seg[0] = 0, seg[1] = 4;
    memcpy(msg + sizeof h, seg, sizeof seg);
    CHECK(decode(msg, len, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    seg[1] = -8;
    memcpy(msg + sizeof h, seg, sizeof seg);
    CHECK(decode(msg, len, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);

    /* a get carries no data and fetches what its segments cover; a lock no segments */
    mf_rma_hdr g = {.h_kind = MF_RMA_GET,
                    .h_reply_tag = MF_RMA_TAG_REPLY,
                    .h_nseg = 1,
                    .h_inline = 1,
                    .h_result = 16};
    int64_t gs[2] = {32, 16};
    memcpy(msg, &g, sizeof g);
    memcpy(msg + sizeof g, gs, sizeof gs);
    CHECK(decode(msg, sizeof g + sizeof gs, &h, &plen) == 0 && check(&h, msg + sizeof h) == 0);
    g.h_result = 8;
    memcpy(msg, &g, sizeof g);
    CHECK(decode(msg, sizeof g + sizeof gs, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    mf_rma_hdr l = {.h_kind = MF_RMA_LOCK_EXCL, .h_reply_tag = MF_RMA_TAG_REPLY, .h_nseg = 1};
    memcpy(msg, &l, sizeof l);
    CHECK(decode(msg, sizeof l, &h, &plen) == 0 && check(&h, msg + sizeof h) != 0);
    return unit_check_result();
}
