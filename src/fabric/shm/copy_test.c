/*
 * copy_test.c — unit test of copy.c: a streamed copy equals memcpy at every alignment of source
 * and destination and every length class, and writes nothing outside; the choice (policies
 * never and always; auto: ordinary stores first, a burst the other way once in 32 copies and
 * 2 MiB while learning and in 512 copies and 32 MiB after, its first copy and the copy after it
 * untimed, other copies timed once per 256 KiB, streaming taken only past 5x and left under
 * 3x, a single slow timing outvoted by the median). Exits 0 on success.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/shm/copy.h"
#include "unit_check.h"

static void test_streamed_copy(void)
{
    static const size_t lens[] = {0, 1, 15, 16, 63, 64, 65, 127, 200, 4096 + 17, 65536 + 3};
    enum { PAD = 128, MAXLEN = 65536 + 3 };
    unsigned char *src = malloc(MAXLEN + PAD), *dst = malloc(MAXLEN + 2 * PAD);
    CHECK(src && dst);
    for (size_t i = 0; i < MAXLEN + PAD; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t so = 0; so < 70; so += 3)
            for (size_t d_o = 0; d_o < 70; d_o += 5) {
                size_t n = lens[li];
                memset(dst, 0xee, MAXLEN + 2 * PAD);
                mf_shm_copy_streamed(dst + PAD + d_o, src + so, n);
                mf_shm_copy_fence();
                CHECKF(memcmp(dst + PAD + d_o, src + so, n) == 0, "len %zu, offsets %zu/%zu", n, so,
                       d_o);
                for (size_t i = 0; i < PAD + d_o; i++)
                    CHECK(dst[i] == 0xee);
                for (size_t i = PAD + d_o + n; i < MAXLEN + 2 * PAD; i++)
                    if (dst[i] != 0xee) {
                        CHECKF(0, "byte %zu after a copy of %zu written", i, n);
                        break;
                    }
            }
    free(src);
    free(dst);
}

/* Feeds `n` timed copies of 64 KiB at `gbps` the given way. */
static void feed(mf_shm_copy_pick *p, int way, int n, double gbps)
{
    for (int i = 0; i < n; i++)
        mf_shm_copy_pick_note(p, way, 65536, (long long)(65536 / gbps));
}

static void test_policies(void)
{
    bool timed;
    mf_shm_copy_pick p = {.policy = MF_SHM_COPY_NEVER};
    for (int i = 0; i < 100; i++) {
        CHECK(mf_shm_copy_pick_next(&p, 65536, &timed) == MF_SHM_COPY_CACHED);
        CHECK(!timed);
    }
    p = (mf_shm_copy_pick){.policy = MF_SHM_COPY_ALWAYS};
    int want = mf_shm_copy_can_stream() ? MF_SHM_COPY_STREAMED : MF_SHM_COPY_CACHED;
    for (int i = 0; i < 100; i++) {
        CHECK(mf_shm_copy_pick_next(&p, 65536, &timed) == want);
        CHECK(!timed);
    }
    /* a fixed policy keeps its way whatever the timings */
    p = (mf_shm_copy_pick){.policy = MF_SHM_COPY_NEVER};
    feed(&p, MF_SHM_COPY_CACHED, 8, 1.0);
    feed(&p, MF_SHM_COPY_STREAMED, 8, 30.0);
    CHECK(mf_shm_copy_pick_next(&p, 65536, &timed) == MF_SHM_COPY_CACHED);
}

/* Runs n copies of `bytes` through p's schedule: way[c] and timed[c] of each. A timed copy
 * is noted at 10 GB/s cached, 12 streamed (the way stays). */
static void run(mf_shm_copy_pick *p, size_t bytes, int n, int *way, bool *timed)
{
    for (int c = 0; c < n; c++) {
        way[c] = mf_shm_copy_pick_next(p, bytes, &timed[c]);
        if (timed[c])
            mf_shm_copy_pick_note(p, way[c], bytes,
                                  (long long)((double)bytes / (way[c] ? 12.0 : 10.0)));
    }
}

static void test_auto_schedule(void)
{
    if (!mf_shm_copy_can_stream())
        return;
    enum { N = 4096 };
    static int way[N];
    static bool timed[N];

    /* 64 KiB: a burst of 8 streamed copies after 32 copies (2 MiB) while learning; its first
     * copy and the copy after it untimed; of the others, one in 4 timed (256 KiB) */
    mf_shm_copy_pick p = {.policy = MF_SHM_COPY_AUTO};
    run(&p, 64u << 10, 78, way, timed);
    for (int c = 0; c < 78; c++) {
        bool burst = (c >= 31 && c < 39) || c >= 70;
        CHECKF(way[c] == (burst ? MF_SHM_COPY_STREAMED : MF_SHM_COPY_CACHED), "64K copy %d", c);
        if (burst)
            CHECKF(timed[c] == (c != 31 && c != 70), "64K copy %d: a burst's first is untimed", c);
        else
            CHECKF(timed[c] == (c < 31 ? c % 4 == 3 : c != 39 && c % 4 == 0), "64K copy %d", c);
    }

    /* 8 KiB: the burst waits for 2 MiB (256 copies), and one copy in 32 is timed */
    p = (mf_shm_copy_pick){.policy = MF_SHM_COPY_AUTO};
    run(&p, 8u << 10, 264, way, timed);
    int ntimed = 0;
    for (int c = 0; c < 264; c++) {
        bool burst = c >= 255 && c < 263;
        CHECKF(way[c] == (burst ? MF_SHM_COPY_STREAMED : MF_SHM_COPY_CACHED), "8K copy %d", c);
        if (c < 255) {
            CHECKF(timed[c] == (c % 32 == 31), "8K copy %d", c);
            ntimed += timed[c];
        }
    }
    CHECK(ntimed == 7);

    /* 1 MiB: every copy timed but a burst's first and the one after it; once the other way is
     * learned, bursts come once in 512 copies, not once per 32 MiB */
    p = (mf_shm_copy_pick){.policy = MF_SHM_COPY_AUTO};
    run(&p, 1u << 20, N, way, timed);
    int streamed = 0, untimed = 0;
    for (int c = 0; c < N; c++) {
        streamed += way[c] == MF_SHM_COPY_STREAMED;
        untimed += !timed[c];
    }
    /* learning: bursts at 31 and 70 (7 timed each: 14 >= 8); then 8 per 512 + 8 copies */
    int learned_bursts = (N - 78) / (MF_SHM_COPY_PICK_PROBE_EVERY - 1 + MF_SHM_COPY_PICK_BURST);
    CHECKF(streamed == (2 + learned_bursts) * MF_SHM_COPY_PICK_BURST, "%d streamed", streamed);
    CHECKF(untimed == 2 * (2 + learned_bursts), "%d untimed", untimed);
    CHECK(way[78 + 510] == MF_SHM_COPY_CACHED && way[78 + 511] == MF_SHM_COPY_STREAMED);
}

static void test_auto_choice(void)
{
    if (!mf_shm_copy_can_stream())
        return;
    bool timed;
    mf_shm_copy_pick p = {.policy = MF_SHM_COPY_AUTO};
    /* no choice before both ways have a full history */
    feed(&p, MF_SHM_COPY_CACHED, 8, 2.0);
    feed(&p, MF_SHM_COPY_STREAMED, 7, 30.0);
    CHECK(p.way == MF_SHM_COPY_CACHED);
    /* far cores: ordinary copies at 2 GB/s, streamed 30: 15x */
    feed(&p, MF_SHM_COPY_STREAMED, 1, 30.0);
    CHECK(p.way == MF_SHM_COPY_STREAMED);
    /* then learning is over: bursts the other way once in 512 copies (and 32 MiB) */
    int other = 0;
    for (int c = 0; c < 2 * (MF_SHM_COPY_PICK_PROBE_EVERY + MF_SHM_COPY_PICK_BURST); c++)
        other += mf_shm_copy_pick_next(&p, 65536, &timed) == MF_SHM_COPY_CACHED;
    CHECK(other == 2 * MF_SHM_COPY_PICK_BURST);
    /* 4x: between the two thresholds, the way stays */
    feed(&p, MF_SHM_COPY_CACHED, 8, 7.5);
    CHECK(p.way == MF_SHM_COPY_STREAMED);
    /* close cores again: 2.5x, under 3x: ordinary stores */
    feed(&p, MF_SHM_COPY_CACHED, 8, 12.0);
    CHECK(p.way == MF_SHM_COPY_CACHED);
    /* 4x again: stays ordinary (it needs 5x to stream) */
    feed(&p, MF_SHM_COPY_CACHED, 8, 7.5);
    CHECK(p.way == MF_SHM_COPY_CACHED);
    /* one slow timing among fast ones does not decide */
    feed(&p, MF_SHM_COPY_CACHED, 7, 20.0);
    feed(&p, MF_SHM_COPY_CACHED, 1, 0.5);
    CHECK(p.way == MF_SHM_COPY_CACHED);
    CHECK(mf_shm_copy_pick_speed(&p, MF_SHM_COPY_CACHED) > 19.0f);
}

int main(void)
{
    test_streamed_copy();
    test_policies();
    test_auto_schedule();
    test_auto_choice();
    return unit_check_result();
}
