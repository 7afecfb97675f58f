/*
 * bufcache_test.c — unit test of the buffer cache (bufcache.c): buffers hold what was
 * asked and keep malloc's alignment; a buffer given back is handed out again for a size of its
 * class and not for a larger one; what is kept stays within the budget, never counts buffers
 * above the largest class, and trim frees it all; under AddressSanitizer a kept buffer is
 * poisoned. Exits 0 on success.
 */
#include <stdint.h>
#include <string.h>

#include "core/bufcache.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifdef ASAN
#include <sanitizer/asan_interface.h>
#endif
#define UNIT_CHECK_FATAL /* later steps use what earlier ones allocated */
#include "unit_check.h"

int main(void)
{
    static const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 16448, 65536, 1u << 20, (1u << 20) + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = mf_bufcache_get(sizes[i]);
        CHECK(p != NULL);
        CHECK((uintptr_t)p % 16 == 0);
        memset(p, 0xa5, sizes[i]);
        mf_bufcache_put(p);
    }
    mf_bufcache_trim();
    CHECK(mf_bufcache_kept() == 0);

    /* reuse within a class, not across to a larger size */
    void *a = mf_bufcache_get(16448);
    mf_bufcache_put(a);
#ifdef ASAN
    CHECK(__asan_address_is_poisoned(a));
#endif
    CHECK(mf_bufcache_kept() >= 16448);
    void *b = mf_bufcache_get(16000);
    CHECK(b == a);
    CHECK(mf_bufcache_kept() == 0);
    mf_bufcache_put(b);
    void *c = mf_bufcache_get(40000);
    CHECK(c != a);
    mf_bufcache_put(c);

    /* a burst larger than the budget: what is kept stays within 4 MiB */
    enum { N = 64 };
    void *burst[N];
    for (int i = 0; i < N; i++)
        CHECK((burst[i] = mf_bufcache_get(100000)) != NULL);
    for (int i = 0; i < N; i++)
        mf_bufcache_put(burst[i]);
    CHECK(mf_bufcache_kept() > 0 && mf_bufcache_kept() <= (4u << 20));

    /* above the largest class: freed, never kept */
    mf_bufcache_trim();
    mf_bufcache_put(mf_bufcache_get((2u << 20)));
    CHECK(mf_bufcache_kept() == 0);
    mf_bufcache_put(NULL);
    return unit_check_result();
}
