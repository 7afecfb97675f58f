/* Large frame copies into a ring: ordinary stores, or streaming ones where the producer measures
 * the two cores far apart. See copy.h. */
#include "fabric/shm/copy.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

bool mf_shm_copy_can_stream(void)
{
#if defined(__SSE2__)
    return true;
#else
    return false;
#endif
}

int mf_shm_copy_pick_next(mf_shm_copy_pick *p, size_t bytes, bool *timed)
{
    *timed = false;
    if (p->policy == MF_SHM_COPY_NEVER || !mf_shm_copy_can_stream())
        return MF_SHM_COPY_CACHED;
    if (p->policy == MF_SHM_COPY_ALWAYS)
        return MF_SHM_COPY_STREAMED;
    int other = !p->way;
    if (p->burst > 0) { /* inside a burst the other way: time all but its first copy */
        p->burst--;
        *timed = true;
        p->settle = p->burst == 0;
        return other;
    }
    bool learning = p->timed[other] < MF_SHM_COPY_PICK_HISTORY;
    p->probe_copies++;
    p->probe_bytes += bytes;
    if (p->probe_copies >=
            (learning ? MF_SHM_COPY_PICK_LEARN_EVERY : MF_SHM_COPY_PICK_PROBE_EVERY) &&
        p->probe_bytes >=
            (learning ? MF_SHM_COPY_PICK_LEARN_BYTES : MF_SHM_COPY_PICK_PROBE_BYTES)) {
        p->probe_copies = 0;
        p->probe_bytes = 0;
        p->burst = MF_SHM_COPY_PICK_BURST - 1;
        return other;
    }
    p->untimed_bytes += bytes;
    *timed = !p->settle && p->untimed_bytes >= MF_SHM_COPY_PICK_TIME_BYTES;
    if (*timed)
        p->untimed_bytes = 0;
    p->settle = false;
    return p->way;
}

float mf_shm_copy_pick_speed(const mf_shm_copy_pick *p, int way)
{
    uint32_t n =
        p->timed[way] < MF_SHM_COPY_PICK_HISTORY ? p->timed[way] : MF_SHM_COPY_PICK_HISTORY;
    if (n == 0)
        return 0.0f;
    float v[MF_SHM_COPY_PICK_HISTORY];
    for (uint32_t i = 0; i < n; i++) { /* insertion sort of at most 8 */
        float x = p->speed[way][i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return v[n / 2]; /* of an even count, the upper middle: a slow timing may be a preemption */
}

void mf_shm_copy_pick_note(mf_shm_copy_pick *p, int way, size_t bytes, long long ns)
{
    p->speed[way][p->timed[way] % MF_SHM_COPY_PICK_HISTORY] =
        (float)bytes / (float)(ns > 0 ? ns : 1);
    p->timed[way]++;
    if (p->policy != MF_SHM_COPY_AUTO || p->timed[MF_SHM_COPY_CACHED] < MF_SHM_COPY_PICK_HISTORY ||
        p->timed[MF_SHM_COPY_STREAMED] < MF_SHM_COPY_PICK_HISTORY)
        return;
    float cached = mf_shm_copy_pick_speed(p, MF_SHM_COPY_CACHED);
    float streamed = mf_shm_copy_pick_speed(p, MF_SHM_COPY_STREAMED);
    if (p->way == MF_SHM_COPY_CACHED && streamed > cached * MF_SHM_COPY_PICK_STREAM_AT)
        p->way = MF_SHM_COPY_STREAMED;
    else if (p->way == MF_SHM_COPY_STREAMED && streamed < cached * MF_SHM_COPY_PICK_CACHE_AT)
        p->way = MF_SHM_COPY_CACHED;
}

#if defined(__SSE2__)
void mf_shm_copy_streamed(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* Whole lines only: a line written partly by ordinary stores would be fetched first. */
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    memcpy(d + body, s + body, n - body);
}

void mf_shm_copy_fence(void)
{
    _mm_sfence();
}
#else
void mf_shm_copy_streamed(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void mf_shm_copy_fence(void)
{
    atomic_thread_fence(memory_order_release);
}
#endif
