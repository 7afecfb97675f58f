/*
 * core_share_test.c — unit test of core_share.c: the schedstat line's parser (two numbers, or
 * refused with the outputs untouched); the judgement on given readings (windows of
 * 20 ms of runnable time, shared if a quarter of it was waiting; the first reading and counters
 * that go back only begin a window; an open window keeps the last verdict until it is a second
 * old; readings are due once in 4 ms), and
 * the real thing: a thread that shares its core with a spinning thread pinned beside it is found
 * sharing within 500 ms. (The opposite, a thread alone on its core found alone, is not asserted
 * on the real counters: the test may run beside other load, which is what they measure.)
 * Exits 0 on success.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "core/core_share.h"
#include "unit_check.h"

#define MS 1000000ll

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static atomic_bool stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        ;
    return NULL;
}

static void judge_cases(void)
{
    mf_core_share cs = {0};
    long long t = 1000 * MS;
    CHECK(mf_core_share_due(&cs, t));
    /* the first reading begins a window, whatever the thread's life so far (8 ms of 10 waiting) */
    CHECK(!mf_core_share_judge(&cs, t, 2 * MS, 8 * MS));
    CHECK(!mf_core_share_due(&cs, t + MF_CORE_SHARE_LOOK_NS - 1));
    CHECK(mf_core_share_due(&cs, t + MF_CORE_SHARE_LOOK_NS));
    /* 4 ms of runnable time: the window stays open */
    CHECK(!mf_core_share_judge(&cs, t + 5 * MS, 5 * MS, 9 * MS));
    /* 22 ms, 4 of them waiting (a blip: under a quarter): closed, not shared */
    CHECK(!mf_core_share_judge(&cs, t + 25 * MS, 20 * MS, 12 * MS));
    /* 25 ms, 10 waiting: shared */
    t += 60 * MS;
    CHECK(mf_core_share_judge(&cs, t, 35 * MS, 22 * MS));
    CHECK(mf_core_share_verdict(&cs, t + 500 * MS));
    /* an open window keeps the verdict until it is stale */
    CHECK(mf_core_share_judge(&cs, t + 2 * MS, 36 * MS, 22 * MS));
    CHECK(mf_core_share_judge(&cs, t + 999 * MS, 37 * MS, 22 * MS));
    CHECK(!mf_core_share_judge(&cs, t + 1000 * MS, 38 * MS, 22 * MS));
    CHECK(!mf_core_share_verdict(&cs, t + 1000 * MS));
    /* shared again (20 ms, 10 waiting); counters that go back begin a new window, the verdict
     * stands; a quiet window (20 ms, none waiting) ends it */
    t += 1100 * MS;
    CHECK(mf_core_share_judge(&cs, t, 48 * MS, 32 * MS));
    CHECK(mf_core_share_judge(&cs, t + 2 * MS, 1 * MS, 0));
    CHECK(mf_core_share_judge(&cs, t + 10 * MS, 10 * MS, 0)); /* 9 ms: open */
    CHECK(!mf_core_share_judge(&cs, t + 22 * MS, 21 * MS, 0));
}

static void parse_cases(void)
{
    uint64_t run = 7, delay = 7;
    CHECK(mf_core_share_parse("286095322 288261128 74\n", &run, &delay));
    CHECK(run == 286095322u && delay == 288261128u);
    CHECK(mf_core_share_parse("5 6", &run, &delay) && run == 5 && delay == 6);
    run = delay = 7;
    CHECK(!mf_core_share_parse("", &run, &delay));
    CHECK(!mf_core_share_parse("123", &run, &delay));
    CHECK(!mf_core_share_parse("123 x", &run, &delay));
    CHECK(!mf_core_share_parse("x 1 2", &run, &delay));
    CHECK(run == 7 && delay == 7); /* a refused line leaves the outputs alone */
}

int main(void)
{
    judge_cases();
    parse_cases();

    /* The real counters: share this thread's core with a spinner. */
    int cpu = sched_getcpu();
    CHECK(cpu >= 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setaffinity_np(&attr, sizeof one, &one) == 0);
    pthread_t spinner;
    CHECK(pthread_create(&spinner, &attr, spin, NULL) == 0);
    pthread_attr_destroy(&attr);
    bool shared = false;
    long long t0 = now_ns();
    while (!shared && now_ns() - t0 < 500 * MS)
        shared = mf_core_shared();
    atomic_store(&stop, true);
    pthread_join(spinner, NULL);
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f) {
        fclose(f);
        CHECKF(shared, "a thread sharing cpu %d with a spinner was not found sharing in 500 ms",
               cpu);
        CHECK(__atomic_load_n(&mf_core_shared_windows, __ATOMIC_RELAXED) >= 1);
    } else {
        fprintf(stderr, "no /proc/thread-self/schedstat here: the real reading is not checked\n");
        CHECK(!shared);
    }
    return unit_check_result();
}
