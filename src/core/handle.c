/* Handle tables: see handle.h. */
#include "core/handle.h"

#include <stdlib.h>
#include <string.h>

int mf_handle_alloc(mf_handle_table *t, void *obj)
{
    int i = t->ht_free_hint;
    while (i < t->ht_size && t->ht_slots[i])
        i++;
    if (i == t->ht_size) {
        int n = t->ht_size ? t->ht_size * 2 : 64;
        if (n > 0x03ffffff)
            return 0;
        void **s = realloc(t->ht_slots, (size_t)n * sizeof *s);
        if (!s)
            return 0;
        memset(s + t->ht_size, 0, (size_t)(n - t->ht_size) * sizeof *s);
        t->ht_slots = s;
        t->ht_size = n;
    }
    t->ht_slots[i] = obj;
    t->ht_used++;
    t->ht_free_hint = i + 1;
    return MF_HANDLE_MAKE(MF_HANDLE_USER, t->ht_class, i);
}

void *mf_handle_lookup(const mf_handle_table *t, int handle)
{
    if (MF_HANDLE_KIND(handle) != MF_HANDLE_USER || MF_HANDLE_CLASS(handle) != t->ht_class)
        return NULL;
    int i = MF_HANDLE_INDEX(handle);
    return i < t->ht_size ? t->ht_slots[i] : NULL;
}

void mf_handle_free(mf_handle_table *t, int handle)
{
    int i = MF_HANDLE_INDEX(handle);
    if (!mf_handle_lookup(t, handle))
        return;
    t->ht_slots[i] = NULL;
    t->ht_used--;
    if (i < t->ht_free_hint)
        t->ht_free_hint = i;
}

void mf_handle_foreach(const mf_handle_table *t, void (*fn)(void *obj, void *arg), void *arg)
{
    for (int i = 0; i < t->ht_size; i++)
        if (t->ht_slots[i])
            fn(t->ht_slots[i], arg);
}
