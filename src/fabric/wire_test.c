/*
 * wire_test.c — unit test of the frame header codec (wire.h): round trips of every frame type
 * with extreme field values, the exact byte layout, and every rejection path of mf_wire_decode.
 * Exits 0 on success.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fabric/wire.h"
#include "unit_check.h"

static bool same(const mf_wire_hdr *a, const mf_wire_hdr *b)
{
    return a->type == b->type && a->flags == b->flags && a->context == b->context &&
           a->src == b->src && a->tag == b->tag && a->len == b->len && a->total == b->total &&
           a->sreq == b->sreq && a->rreq == b->rreq && a->rkey == b->rkey;
}

static void roundtrip(const mf_wire_hdr *h)
{
    unsigned char b[MF_WIRE_HDR_SIZE];
    mf_wire_hdr d;
    const char *why = NULL;
    memset(&d, 0xAB, sizeof d);
    mf_wire_encode(h, b);
    CHECK(mf_wire_decode(b, &d, &why) == 0);
    CHECK(same(h, &d));
    if (why)
        fprintf(stderr, "unexpected rejection: %s\n", why);
}

/* Encodes h, applies a byte patch, and expects a rejection whose reason contains `word`. */
static void reject(const mf_wire_hdr *h, int at, int byte, const char *word)
{
    unsigned char b[MF_WIRE_HDR_SIZE];
    mf_wire_hdr d;
    const char *why = NULL;
    mf_wire_encode(h, b);
    if (at >= 0)
        b[at] = (unsigned char)byte;
    CHECK(mf_wire_decode(b, &d, &why) == -1);
    CHECK(why && strstr(why, word));
    if (why && !strstr(why, word))
        fprintf(stderr, "  reason was '%s', expected it to mention '%s'\n", why, word);
}

static void test_roundtrips(void)
{
    mf_wire_hdr eager = {.type = MF_MSG_EAGER,
                         .flags = MF_WIRE_SYNC,
                         .context = 0xFFFFFFFFu,
                         .src = 0x7FFFFFFF,
                         .tag = 0x7FFFFFFF,
                         .len = 12345,
                         .total = 12345,
                         .sreq = UINT64_MAX,
                         .rreq = 0,
                         .rkey = 0x0102030405060708ull};
    roundtrip(&eager);
    mf_wire_hdr empty = {.type = MF_MSG_EAGER};
    roundtrip(&empty);
    mf_wire_hdr rts = {.type = MF_MSG_RTS,
                       .context = 4,
                       .src = 3,
                       .tag = 0,
                       .total = UINT64_MAX,
                       .sreq = 99,
                       .rkey = UINT64_MAX};
    roundtrip(&rts);
    mf_wire_hdr cts = {.type = MF_MSG_CTS, .flags = MF_WIRE_TRUNC, .tag = -5, .sreq = 1, .rreq = 2};
    roundtrip(&cts);
    mf_wire_hdr data = {.type = MF_MSG_DATA,
                        .tag = -1,
                        .len = MF_WIRE_MAX_FRAME,
                        .total = UINT64_MAX - MF_WIRE_MAX_FRAME,
                        .rreq = 7};
    roundtrip(&data);
    mf_wire_hdr fin = {.type = MF_MSG_FIN, .flags = MF_WIRE_FLAGS_ALL, .sreq = 5};
    roundtrip(&fin);
    mf_wire_hdr ack = {.type = MF_MSG_SYNC_ACK, .src = 0, .sreq = 6};
    roundtrip(&ack);
}

static void test_layout(void)
{
    /* The layout is a wire format: pin it, so that a change is a conscious version bump. */
    mf_wire_hdr h = {.type = MF_MSG_DATA,
                     .flags = 1,
                     .context = 0x11223344,
                     .src = 0x01020304,
                     .tag = -2,
                     .len = 0x10,
                     .total = 0x0807060504030201ull,
                     .sreq = 0xA1,
                     .rreq = 0xB2,
                     .rkey = 0xC3};
    unsigned char b[MF_WIRE_HDR_SIZE];
    mf_wire_encode(&h, b);
    CHECK(b[0] == 'M' && b[1] == 'F' && b[2] == MF_WIRE_VERSION && b[3] == MF_MSG_DATA);
    CHECK(b[4] == 1 && b[5] == 0 && b[6] == 0 && b[7] == 0);
    CHECK(b[8] == 0x44 && b[11] == 0x11);  /* context, little-endian */
    CHECK(b[12] == 0x04 && b[15] == 0x01); /* src */
    CHECK(b[16] == 0xFE && b[19] == 0xFF); /* tag -2 */
    CHECK(b[20] == 0 && b[21] == 0 && b[22] == 0 && b[23] == 0);
    CHECK(b[24] == 0x10 && b[31] == 0);                     /* len */
    CHECK(b[32] == 0x01 && b[39] == 0x08);                  /* total */
    CHECK(b[40] == 0xA1 && b[48] == 0xB2 && b[56] == 0xC3); /* sreq, rreq, rkey */
}

static void test_rejections(void)
{
    mf_wire_hdr ok = {.type = MF_MSG_EAGER, .src = 1, .tag = 2, .len = 8, .total = 8};
    reject(&ok, 0, 'X', "magic");
    reject(&ok, 1, 'X', "magic");
    reject(&ok, 2, MF_WIRE_VERSION + 1, "version");
    reject(&ok, 2, 0, "version");
    reject(&ok, 3, 0, "type");
    reject(&ok, 3, MF_MSG_TYPE_MAX + 1, "type");
    reject(&ok, 3, 255, "type");
    reject(&ok, 4, MF_WIRE_FLAGS_ALL + 1, "flags");
    reject(&ok, 4, 0x80, "flags");

    mf_wire_hdr h = ok;
    h.len = h.total = MF_WIRE_MAX_FRAME + 1;
    reject(&h, -1, 0, "maximum");
    h.len = h.total = UINT64_MAX;
    reject(&h, -1, 0, "maximum");

    h = ok;
    h.src = -1;
    reject(&h, -1, 0, "source");

    h = ok;
    h.total = 9;
    reject(&h, -1, 0, "eager");
    h = ok;
    h.tag = -1;
    reject(&h, -1, 0, "tag");

    mf_wire_hdr rts = {.type = MF_MSG_RTS, .len = 1, .total = 100};
    reject(&rts, -1, 0, "rendezvous");
    rts.len = 0;
    rts.tag = -3;
    reject(&rts, -1, 0, "rendezvous");

    mf_wire_hdr data = {.type = MF_MSG_DATA, .len = 2, .total = UINT64_MAX - 1};
    reject(&data, -1, 0, "overflow");

    int control[] = {MF_MSG_CTS, MF_MSG_FIN, MF_MSG_SYNC_ACK, MF_MSG_CANCEL, MF_MSG_CANCEL_ACK};
    for (int i = 0; i < 5; i++) {
        mf_wire_hdr c = {.type = (uint8_t)control[i], .len = 1};
        reject(&c, -1, 0, "control");
    }
}

int main(void)
{
    test_roundtrips();
    test_layout();
    test_rejections();
    if (unit_check_failures) {
        fprintf(stderr, "wire_test: %d failure(s)\n", unit_check_failures);
        return 1;
    }
    printf("wire_test: ok\n");
    return 0;
}
