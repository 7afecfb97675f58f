/* Handle tables: see handle.h. */
#include "core/handle.h"

#include <stdlib.h>
#include <string.h>

int mf_handle_find_slot(mf_handle_table *t)
{
    int i = t->ht_free_hint;
    while (i < t->ht_size && t->ht_slots[i])
        i++;
    if (i == t->ht_size) {
        int n = t->ht_size ? t->ht_size * 2 : 64;
        if (n > 0x03ffffff)
            return -1;
        void **s = realloc(t->ht_slots, (size_t)n * sizeof *s);
        if (!s)
            return -1;
        memset(s + t->ht_size, 0, (size_t)(n - t->ht_size) * sizeof *s);
        t->ht_slots = s;
        t->ht_size = n;
    }
    return i;
}

void mf_handle_foreach(const mf_handle_table *t, void (*fn)(void *obj, void *arg), void *arg)
{
    for (int i = 0; i < t->ht_size; i++)
        if (t->ht_slots[i])
            fn(t->ht_slots[i], arg);
}
