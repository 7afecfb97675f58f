/*
 * handle.h — integer handles (MPICH ABI encoding) and the tables that map them to objects.
 *
 * A handle is an int: bits 30-31 the kind, bits 26-29 the object class, the rest an index.
 *   kind 1 (MF_HANDLE_BUILTIN): predefined objects (MPI_COMM_WORLD, MPI_INT, MPI_SUM...), values
 *          fixed by the ABI; each module maps them to static objects itself.
 *   kind 3 (MF_HANDLE_USER):    objects created at run time; the index is a slot in that class's
 *          mf_handle_table. (Kind 2 is used by a few ABI constants, e.g. MPI_FLOAT_INT, so user
 *          objects never use it.)
 *   kind 0: the null handles (MPI_COMM_NULL = class bits only).
 *
 * Tables grow on demand and reuse freed slots; a lookup checks kind, class and slot occupancy, so
 * a stale or forged handle is reported (the caller turns NULL into MPI_ERR_COMM etc.), never
 * dereferenced. Tables are not locked: callers hold the library lock when threads are in use.
 */
#ifndef MF_CORE_HANDLE_H
#define MF_CORE_HANDLE_H

#include <stddef.h>
#include <stdint.h>

enum mf_handle_kind {
    MF_HANDLE_NULL = 0,
    MF_HANDLE_BUILTIN = 1,
    MF_HANDLE_DIRECT = 2,
    MF_HANDLE_USER = 3
};

/* Object classes, as the ABI encodes them in bits 26-29. */
enum mf_handle_class {
    MF_CLASS_COMM = 0x1,
    MF_CLASS_GROUP = 0x2,
    MF_CLASS_DATATYPE = 0x3,
    MF_CLASS_FILE = 0x4,
    MF_CLASS_ERRHANDLER = 0x5,
    MF_CLASS_OP = 0x6,
    MF_CLASS_INFO = 0x7,
    MF_CLASS_WIN = 0x8,
    MF_CLASS_KEYVAL = 0x9,
    MF_CLASS_REQUEST = 0xb,
    MF_CLASS_SESSION = 0xe,
};

#define MF_HANDLE_KIND(h) ((int)(((uint32_t)(h) >> 30) & 0x3))
#define MF_HANDLE_CLASS(h) ((int)(((uint32_t)(h) >> 26) & 0xf))
#define MF_HANDLE_INDEX(h) ((int)((uint32_t)(h)&0x03ffffff))
#define MF_HANDLE_MAKE(kind, cls, index)                                                           \
    ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(cls) << 26) | (uint32_t)(index)))

typedef struct mf_handle_table {
    int ht_class;     /* enum mf_handle_class of every handle in this table */
    void **ht_slots;  /* object pointers; NULL marks a free slot */
    int ht_size;      /* slots allocated */
    int ht_used;      /* live objects, for leak reports at finalize */
    int ht_free_hint; /* lowest slot that may be free */
} mf_handle_table;

#define MF_HANDLE_TABLE_INIT(cls)                                                                  \
    {                                                                                              \
        .ht_class = (cls)                                                                          \
    }

/* mf_handle_alloc's search for a free slot past a taken hint, growing the table when it is
 * full: the slot's index, or -1 when out of memory (handle.c). */
int mf_handle_find_slot(mf_handle_table *t);

/* Stores obj and returns its new user handle, or 0 (never a valid user handle) when out of
 * memory. Inline, as lookup and free are: every request of a nonblocking call takes a handle,
 * and the hinted slot is nearly always the free one. */
static inline int mf_handle_alloc(mf_handle_table *t, void *obj)
{
    int i = t->ht_free_hint;
    if ((i >= t->ht_size || t->ht_slots[i]) && (i = mf_handle_find_slot(t)) < 0)
        return 0;
    t->ht_slots[i] = obj;
    t->ht_used++;
    t->ht_free_hint = i + 1;
    return MF_HANDLE_MAKE(MF_HANDLE_USER, t->ht_class, i);
}

/* The object behind a user handle of this table's class, or NULL. */
static inline void *mf_handle_lookup(const mf_handle_table *t, int handle)
{
    if (MF_HANDLE_KIND(handle) != MF_HANDLE_USER || MF_HANDLE_CLASS(handle) != t->ht_class)
        return NULL;
    int i = MF_HANDLE_INDEX(handle);
    return i < t->ht_size ? t->ht_slots[i] : NULL;
}

/* Releases the slot of a live user handle (anything else is ignored). */
static inline void mf_handle_free(mf_handle_table *t, int handle)
{
    int i = MF_HANDLE_INDEX(handle);
    if (!mf_handle_lookup(t, handle))
        return;
    t->ht_slots[i] = NULL;
    t->ht_used--;
    if (i < t->ht_free_hint)
        t->ht_free_hint = i;
}
/* Calls fn on every live object (e.g. to report leaks); fn must not alloc or free. */
void mf_handle_foreach(const mf_handle_table *t, void (*fn)(void *obj, void *arg), void *arg);

#endif
