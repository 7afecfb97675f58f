/*
 * Unit test of the shm frame ring (queue.c): wraparound, full ring, frames spanning many
 * 64-byte slots in both layouts, truncating sinks, the blocked flag and the lazy tail, payloads
 * forging markers, and two-thread producer/consumer stresses whose payloads carry checksums:
 * small frames, and large ones from sources at any alignment, copied in with ordinary stores,
 * streaming ones, or the measured choice (copy.h). The ring lives in ordinary memory here: the code does not care
 * whether the other side is a thread or a process.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/shm/shm.h"
#define UNIT_CHECK_FATAL
#include "unit_check.h"

typedef struct test_ring {
    mf_shm_ring_ctl *ctl;
    unsigned char *data;
    mf_shm_ring prod, cons; /* the two sides' private views */
} test_ring;

static void test_ring_init(test_ring *t, size_t cap)
{
    t->ctl = aligned_alloc(MF_SHM_CACHELINE, sizeof *t->ctl);
    t->data = aligned_alloc(MF_SHM_PAGE, cap);
    CHECK(t->ctl && t->data);
    memset(t->ctl, 0, sizeof *t->ctl);
    /* A new ring is zero-filled, as the segment is (test_forged_markers fills it with words
     * that look like markers later). */
    memset(t->data, 0, cap);
    mf_shm_ring_attach(&t->prod, t->ctl, t->data, cap, cap);
    mf_shm_ring_attach(&t->cons, t->ctl, t->data, cap, cap);
}

static void test_ring_free(test_ring *t)
{
    free(t->ctl);
    free(t->data);
}

/* Deterministic payload byte i of frame seq. */
static unsigned char pat(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 131 + i * 7 + (i >> 8));
}

/* Frames alternate between the two layouts: even seqs are EAGER (payload from byte 32 of the
 * first line, seq in the tag), odd ones DATA (payload from the next line, seq in total). */
static mf_wire_hdr frame_hdr(uint64_t seq, size_t len)
{
    if (seq % 2 == 0)
        return (mf_wire_hdr){.type = MF_MSG_EAGER,
                             .context = 7,
                             .src = 1,
                             .tag = (int32_t)(seq & 0x7fffffff),
                             .len = len,
                             .total = len};
    return (mf_wire_hdr){.type = MF_MSG_DATA, .context = 7, .src = 1, .len = len, .total = seq};
}

static uint64_t frame_seq(const mf_wire_hdr *h)
{
    return h->type == MF_MSG_EAGER ? (uint64_t)h->tag : h->total;
}

static bool push_frame(mf_shm_ring *r, uint64_t seq, size_t len)
{
    unsigned char *buf = malloc(len + 1);
    CHECK(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = pat(seq, i);
    mf_wire_hdr h = frame_hdr(seq, len);
    /* Split the payload over three iovecs to exercise gathering. */
    size_t a = len / 3, b = len / 2 - a;
    struct iovec iov[3] = {{buf, a}, {buf + a, b}, {buf + a + b, len - a - b}};
    bool ok = mf_shm_ring_push(r, &h, iov, 3);
    free(buf);
    return ok;
}

/* Pops one frame and checks it; returns false when the ring is empty. `room` limits the sink. */
static bool pop_frame(mf_shm_ring *r, uint64_t expect_seq, size_t room)
{
    mf_wire_hdr h;
    const char *why = NULL;
    int got = mf_shm_ring_peek(r, &h, &why);
    if (got == 0)
        return false;
    if (got < 0)
        fprintf(stderr, "bad frame: %s\n", why);
    CHECK(got == 1);
    CHECK(frame_seq(&h) == (expect_seq & 0x7fffffff));
    CHECK(h.type == (expect_seq % 2 == 0 ? MF_MSG_EAGER : MF_MSG_DATA));
    size_t len = (size_t)h.len, take = len < room ? len : room;
    unsigned char *buf = malloc(take + 1);
    CHECK(buf);
    struct iovec iov[2] = {{buf, take / 2}, {buf + take / 2, take - take / 2}};
    CHECK(mf_shm_ring_copy_out(r, &h, iov, 2) == take);
    for (size_t i = 0; i < take; i++)
        CHECK(buf[i] == pat(expect_seq, i));
    free(buf);
    mf_shm_ring_pop(r, &h);
    return true;
}

static void test_wraparound(void)
{
    test_ring t;
    test_ring_init(&t, 4096);
    uint64_t sent = 0, got = 0;
    /* Many rounds of varied sizes move the counters far past cap several times over. */
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t)(round * 37) % 900;
        CHECK(push_frame(&t.prod, sent++, len));
        if (round % 3 == 0)
            CHECK(push_frame(&t.prod, sent++, 5));
        while (got < sent)
            CHECK(pop_frame(&t.cons, got++, SIZE_MAX));
        CHECK(!pop_frame(&t.cons, got, SIZE_MAX));
    }
    CHECK(t.prod.head > 100 * 4096);
    test_ring_free(&t);
}

static void test_full(void)
{
    test_ring t;
    test_ring_init(&t, 4096);
    /* DATA frames of 1000 bytes take 64 + 1024 bytes, and one line must stay free: three fit in
     * 4096, the fourth does not. */
    CHECK(push_frame(&t.prod, 1, 1000));
    CHECK(push_frame(&t.prod, 3, 1000));
    CHECK(push_frame(&t.prod, 5, 1000));
    CHECK(!push_frame(&t.prod, 7, 1000));
    CHECK(!mf_shm_ring_fits(&t.prod, MF_MSG_DATA, 1000));
    CHECK(mf_shm_ring_fits(&t.prod, MF_MSG_DATA, 700));  /* 3264 + 768 + 64 = 4096 */
    CHECK(!mf_shm_ring_fits(&t.prod, MF_MSG_DATA, 800)); /* 64 + 832 do not */
    CHECK(mf_shm_ring_fits(&t.prod, MF_MSG_EAGER, 736)); /* 32 + 736 = 768 */
    CHECK(!mf_shm_ring_fits(&t.prod, MF_MSG_EAGER, 737));
    /* A frame larger than the whole ring never fits. */
    CHECK(!mf_shm_ring_fits(&t.prod, MF_MSG_DATA, 4096));
    mf_shm_ring_set_blocked(&t.prod);
    CHECK(pop_frame(&t.cons, 1, SIZE_MAX));
    /* 1088 bytes consumed, over a quarter ring: tail was published and the flag cleared. */
    CHECK(atomic_load(&t.ctl->blocked) == 0);
    CHECK(atomic_load(&t.ctl->tail) == 1088);
    CHECK(push_frame(&t.prod, 7, 1000));
    CHECK(pop_frame(&t.cons, 3, SIZE_MAX));
    CHECK(pop_frame(&t.cons, 5, SIZE_MAX));
    CHECK(pop_frame(&t.cons, 7, SIZE_MAX));
    CHECK(!pop_frame(&t.cons, 9, SIZE_MAX));
    CHECK(mf_shm_ring_publish(&t.cons) == false);
    /* The largest frame: 64 + 3968 plus the free line fill the ring exactly. */
    CHECK(push_frame(&t.prod, 9, 3968));
    CHECK(!push_frame(&t.prod, 11, 0));
    CHECK(pop_frame(&t.cons, 9, SIZE_MAX));
    test_ring_free(&t);
}

/* The consumer publishes its tail lazily, but never leaves a blocked producer waiting. */
static void test_lazy_tail(void)
{
    test_ring t;
    test_ring_init(&t, 4096);
    CHECK(push_frame(&t.prod, 0, 8));
    CHECK(push_frame(&t.prod, 2, 8));
    CHECK(pop_frame(&t.cons, 0, SIZE_MAX));
    CHECK(pop_frame(&t.cons, 2, SIZE_MAX));
    CHECK(atomic_load(&t.ctl->tail) == 0); /* 128 bytes: not published yet */
    CHECK(!mf_shm_ring_serve_blocked(&t.cons));
    mf_shm_ring_set_blocked(&t.prod);
    CHECK(mf_shm_ring_serve_blocked(&t.cons)); /* an empty pass serves the waiting producer */
    CHECK(atomic_load(&t.ctl->tail) == 128 && atomic_load(&t.ctl->blocked) == 0);
    test_ring_free(&t);
}

/* Payloads full of words that look like the markers of later frames must never be taken for
 * frames: the producer zeroes each next marker slot before publishing. */
static void test_forged_markers(void)
{
    test_ring t;
    size_t cap = 4096;
    test_ring_init(&t, cap);
    uint32_t words[900];
    uint64_t seq = 1;
    for (int lap = 0; lap < 20; lap++) {
        /* Word k of the payload lands at ring position p + 64 + 4k: make every word that falls
         * on a line start carry the marker a frame there would have one or two laps later. */
        uint64_t p = t.prod.head;
        for (size_t k = 0; k < 900; k++) {
            uint64_t at = p + 64 + 4 * k;
            words[k] = mf_shm_marker(at + cap * (1 + (k & 1)));
        }
        mf_wire_hdr h = {.type = MF_MSG_DATA, .len = sizeof words, .total = seq};
        struct iovec iov = {words, sizeof words};
        CHECK(mf_shm_ring_push(&t.prod, &h, &iov, 1));
        mf_wire_hdr got;
        const char *why;
        CHECK(mf_shm_ring_peek(&t.cons, &got, &why) == 1 && got.total == seq);
        mf_shm_ring_pop(&t.cons, &got);
        CHECK(mf_shm_ring_peek(&t.cons, &got, &why) == 0);
        mf_shm_ring_serve_blocked(&t.cons);
        mf_shm_ring_publish(&t.cons);
        /* Small frames over the forged region, then nothing. */
        for (int i = 0; i < 7; i++) {
            seq += 2;
            CHECK(push_frame(&t.prod, seq, 20));
            CHECK(pop_frame(&t.cons, seq, SIZE_MAX));
            CHECK(mf_shm_ring_peek(&t.cons, &got, &why) == 0);
        }
        mf_shm_ring_publish(&t.cons);
        seq += 2;
    }
    test_ring_free(&t);
}

static void test_truncating_sink(void)
{
    test_ring t;
    test_ring_init(&t, 8192);
    CHECK(push_frame(&t.prod, 0, 3000));
    CHECK(push_frame(&t.prod, 1, 100));
    CHECK(pop_frame(&t.cons, 0, 17)); /* the sink takes 17 bytes, the rest is skipped */
    CHECK(pop_frame(&t.cons, 1, 0));
    CHECK(!pop_frame(&t.cons, 2, SIZE_MAX));
    test_ring_free(&t);
}

/* ---- two-thread stress ---- */

#define STRESS_FRAMES 200000
#define STRESS_MAXLEN 3000
/* The large-frame stress: payloads up to 80 KiB (most above MF_SHM_COPY_PICK_MIN, so copied
 * the chosen way, streamed or not) through a 256 KiB ring, at any alignment. */
#define BIG_FRAMES 2500
#define BIG_MAXLEN (80u << 10)
#define BIG_CAP (256u << 10)

typedef struct stress_arg {
    mf_shm_ring *r;
    uint64_t frames;
    size_t maxlen;
    unsigned char *buf; /* maxlen bytes */
} stress_arg;

static uint64_t stress_sum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void *stress_producer(void *arg)
{
    stress_arg *a = arg;
    mf_shm_ring *r = a->r;
    unsigned char *buf = a->buf;
    unsigned seed = 12345;
    for (uint64_t seq = 0; seq < a->frames; seq++) {
        size_t len = (size_t)rand_r(&seed) % a->maxlen;
        if (seq % 7 == 0)
            len %= 64; /* plenty of small frames */
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)rand_r(&seed);
        /* Both layouts: the checksum travels in sreq, which both carry. The source starts at
         * any offset (seq % 61) into buf, where the frame's bytes are moved first. */
        size_t shift = seq % 61 < a->maxlen - len ? seq % 61 : 0;
        memmove(buf + shift, buf, len);
        mf_wire_hdr h = frame_hdr(seq, len);
        h.sreq = stress_sum(buf + shift, len);
        struct iovec iov = {buf + shift, len};
        /* Yield while full: on a loaded machine the consumer may need this very CPU. */
        while (!mf_shm_ring_push(r, &h, &iov, 1))
            sched_yield();
    }
    return NULL;
}

/* A producer thread and this one as consumer, `frames` frames of up to maxlen bytes through a
 * ring of cap, the producer copying large payloads as `policy` says (copy.h). */
static void test_stress(size_t cap, uint64_t frames, size_t maxlen, int policy)
{
    test_ring t;
    test_ring_init(&t, cap);
    mf_shm_ring_set_copy_policy(&t.prod, policy);
    stress_arg a = {&t.prod, frames, maxlen, malloc(maxlen + 64)};
    unsigned char *buf = malloc(maxlen);
    CHECK(a.buf && buf);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, stress_producer, &a) == 0);
    for (uint64_t seq = 0; seq < frames;) {
        mf_wire_hdr h;
        const char *why;
        int got = mf_shm_ring_peek(&t.cons, &h, &why);
        if (got == 0) {
            mf_shm_ring_serve_blocked(&t.cons);
            sched_yield();
            continue;
        }
        CHECK(got == 1);
        CHECK(frame_seq(&h) == seq);
        CHECK(h.len < maxlen);
        struct iovec iov = {buf, maxlen};
        CHECK(mf_shm_ring_copy_out(&t.cons, &h, &iov, 1) == h.len);
        CHECK(stress_sum(buf, h.len) == h.sreq);
        mf_shm_ring_pop(&t.cons, &h);
        seq++;
    }
    pthread_join(th, NULL);
    mf_wire_hdr h;
    const char *why;
    CHECK(mf_shm_ring_peek(&t.cons, &h, &why) == 0);
    free(a.buf);
    free(buf);
    test_ring_free(&t);
}

int main(void)
{
    test_wraparound();
    test_full();
    test_lazy_tail();
    test_forged_markers();
    test_truncating_sink();
    test_stress(16384, STRESS_FRAMES, STRESS_MAXLEN, MF_SHM_COPY_AUTO);
    test_stress(BIG_CAP, BIG_FRAMES, BIG_MAXLEN, MF_SHM_COPY_AUTO);
    test_stress(BIG_CAP, BIG_FRAMES, BIG_MAXLEN, MF_SHM_COPY_ALWAYS);
    test_stress(BIG_CAP, BIG_FRAMES, BIG_MAXLEN, MF_SHM_COPY_NEVER);
    printf("queue_test: ok\n");
    return 0;
}
