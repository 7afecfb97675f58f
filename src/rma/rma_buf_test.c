/*
 * rma_buf_test.c — unit test of the operation buffer cache (rma_buf.c): buffers hold what was
 * asked and keep malloc's alignment; a buffer given back is handed out again for a size of its
 * class and not for a larger one; what is kept stays within the budget, never counts buffers
 * above the largest class, and trim frees it all. Exits 0 on success.
 */
#include <stdint.h>
#include <string.h>

#include "rma/rma.h"
#define UNIT_CHECK_FATAL /* later steps use what earlier ones allocated */
#include "unit_check.h"

int main(void)
{
    static const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 16448, 65536, 1u << 20, (1u << 20) + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = mf_rma_buf_get(sizes[i]);
        CHECK(p != NULL);
        CHECK((uintptr_t)p % 16 == 0);
        memset(p, 0xa5, sizes[i]);
        mf_rma_buf_put(p);
    }
    mf_rma_buf_trim();
    CHECK(mf_rma_buf_kept() == 0);

    /* reuse within a class, not across to a larger size */
    void *a = mf_rma_buf_get(16448);
    mf_rma_buf_put(a);
    CHECK(mf_rma_buf_kept() >= 16448);
    void *b = mf_rma_buf_get(16000);
    CHECK(b == a);
    CHECK(mf_rma_buf_kept() == 0);
    mf_rma_buf_put(b);
    void *c = mf_rma_buf_get(40000);
    CHECK(c != a);
    mf_rma_buf_put(c);

    /* a burst larger than the budget: what is kept stays within 4 MiB */
    enum { N = 64 };
    void *burst[N];
    for (int i = 0; i < N; i++)
        CHECK((burst[i] = mf_rma_buf_get(100000)) != NULL);
    for (int i = 0; i < N; i++)
        mf_rma_buf_put(burst[i]);
    CHECK(mf_rma_buf_kept() > 0 && mf_rma_buf_kept() <= (4u << 20));

    /* above the largest class: freed, never kept */
    mf_rma_buf_trim();
    mf_rma_buf_put(mf_rma_buf_get((2u << 20)));
    CHECK(mf_rma_buf_kept() == 0);
    mf_rma_buf_put(NULL);
    return unit_check_result();
}
