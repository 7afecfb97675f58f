/*
 * Unit test of the shm frame ring (queue.c): wraparound, full ring, frames spanning many
 * 64-byte slots, truncating sinks, the blocked flag, and a two-thread producer/consumer stress
 * whose payloads carry checksums. The ring lives in ordinary memory here: the code does not care
 * whether the other side is a thread or a process.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/shm/shm.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

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
    memset(t->data, 0xee, cap);
    mf_shm_ring_attach(&t->prod, t->ctl, t->data, cap);
    mf_shm_ring_attach(&t->cons, t->ctl, t->data, cap);
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

static bool push_frame(mf_shm_ring *r, uint64_t seq, size_t len)
{
    unsigned char *buf = malloc(len + 1);
    CHECK(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = pat(seq, i);
    mf_wire_hdr h = {.type = MF_MSG_DATA, .context = 7, .src = 1, .len = len, .total = seq};
    unsigned char wire[MF_WIRE_HDR_SIZE];
    mf_wire_encode(&h, wire);
    /* Split the payload over three iovecs to exercise gathering. */
    size_t a = len / 3, b = len / 2 - a;
    struct iovec iov[3] = {{buf, a}, {buf + a, b}, {buf + a + b, len - a - b}};
    bool ok = mf_shm_ring_push(r, wire, iov, 3, len);
    free(buf);
    return ok;
}

/* Pops one frame and checks it; returns false when the ring is empty. `room` limits the sink. */
static bool pop_frame(mf_shm_ring *r, uint64_t expect_seq, size_t room)
{
    size_t avail;
    const unsigned char *raw = mf_shm_ring_peek(r, &avail);
    if (!raw)
        return false;
    mf_wire_hdr h;
    const char *why;
    CHECK(mf_wire_decode(raw, &h, &why) == 0);
    CHECK(h.total == expect_seq);
    CHECK(mf_shm_frame_bytes(h.len) <= avail);
    size_t len = (size_t)h.len, take = len < room ? len : room;
    unsigned char *buf = malloc(take + 1);
    CHECK(buf);
    struct iovec iov[2] = {{buf, take / 2}, {buf + take / 2, take - take / 2}};
    CHECK(mf_shm_ring_copy_out(r, len, iov, 2) == take);
    for (size_t i = 0; i < take; i++)
        CHECK(buf[i] == pat(expect_seq, i));
    free(buf);
    mf_shm_ring_pop(r, len);
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
    CHECK(atomic_load(&t.ctl->head) > 100 * 4096);
    test_ring_free(&t);
}

static void test_full(void)
{
    test_ring t;
    test_ring_init(&t, 4096);
    /* 1000-byte frames take 64 + 1024 bytes: three fit in 4096, the fourth does not. */
    CHECK(push_frame(&t.prod, 0, 1000));
    CHECK(push_frame(&t.prod, 1, 1000));
    CHECK(push_frame(&t.prod, 2, 1000));
    CHECK(!push_frame(&t.prod, 3, 1000));
    CHECK(!mf_shm_ring_fits(&t.prod, 1000));
    CHECK(mf_shm_ring_fits(&t.prod, 700));  /* 832 bytes left: 64 + 704 fit */
    CHECK(!mf_shm_ring_fits(&t.prod, 800)); /* 64 + 832 do not */
    /* A frame larger than the whole ring never fits. */
    CHECK(!mf_shm_ring_fits(&t.prod, 4096));
    mf_shm_ring_set_blocked(&t.prod);
    CHECK(pop_frame(&t.cons, 0, SIZE_MAX));
    /* The pop saw the producer's blocked flag and cleared it. */
    CHECK(atomic_load(&t.ctl->blocked) == 0);
    CHECK(push_frame(&t.prod, 3, 1000));
    CHECK(pop_frame(&t.cons, 1, SIZE_MAX));
    CHECK(pop_frame(&t.cons, 2, SIZE_MAX));
    CHECK(pop_frame(&t.cons, 3, SIZE_MAX));
    CHECK(!pop_frame(&t.cons, 4, SIZE_MAX));
    /* A frame filling the ring exactly: 64 + 4032. */
    CHECK(push_frame(&t.prod, 4, 4032));
    CHECK(!push_frame(&t.prod, 5, 0));
    CHECK(pop_frame(&t.cons, 4, SIZE_MAX));
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

static uint64_t stress_sum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void *stress_producer(void *arg)
{
    mf_shm_ring *r = arg;
    unsigned char buf[STRESS_MAXLEN];
    unsigned seed = 12345;
    for (uint64_t seq = 0; seq < STRESS_FRAMES; seq++) {
        size_t len = (size_t)rand_r(&seed) % STRESS_MAXLEN;
        if (seq % 7 == 0)
            len %= 64; /* plenty of small frames */
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)rand_r(&seed);
        mf_wire_hdr h = {
            .type = MF_MSG_DATA, .len = len, .total = seq, .rkey = stress_sum(buf, len)};
        unsigned char wire[MF_WIRE_HDR_SIZE];
        mf_wire_encode(&h, wire);
        struct iovec iov = {buf, len};
        /* Yield while full: on a loaded machine the consumer may need this very CPU. */
        while (!mf_shm_ring_push(r, wire, &iov, 1, len))
            sched_yield();
    }
    return NULL;
}

static void test_stress(void)
{
    test_ring t;
    test_ring_init(&t, 16384);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, stress_producer, &t.prod) == 0);
    unsigned char buf[STRESS_MAXLEN];
    for (uint64_t seq = 0; seq < STRESS_FRAMES;) {
        size_t avail;
        const unsigned char *raw = mf_shm_ring_peek(&t.cons, &avail);
        if (!raw) {
            sched_yield();
            continue;
        }
        mf_wire_hdr h;
        const char *why;
        CHECK(mf_wire_decode(raw, &h, &why) == 0);
        CHECK(h.total == seq);
        CHECK(h.len < STRESS_MAXLEN && mf_shm_frame_bytes(h.len) <= avail);
        struct iovec iov = {buf, sizeof buf};
        CHECK(mf_shm_ring_copy_out(&t.cons, h.len, &iov, 1) == h.len);
        CHECK(stress_sum(buf, h.len) == h.rkey);
        mf_shm_ring_pop(&t.cons, h.len);
        seq++;
    }
    pthread_join(th, NULL);
    CHECK(!mf_shm_ring_peek(&t.cons, &(size_t){0}));
    test_ring_free(&t);
}

int main(void)
{
    test_wraparound();
    test_full();
    test_truncating_sink();
    test_stress();
    printf("queue_test: ok\n");
    return 0;
}
