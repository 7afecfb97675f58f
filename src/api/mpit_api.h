/*
 * mpit_api.h — what the MPI_T entry points (mpit.c, mpit_event.c) share: the body of every call
 * (the MPI_T mutex, the init check), string and index answers.
 */
#ifndef MF_API_MPIT_API_H
#define MF_API_MPIT_API_H

#include <string.h>

#include "api/api.h"
#include "tool/mpit_internal.h"

extern int mf_t_refcount; /* MPI_T_init_thread calls not yet finalized (under the mutex) */

/* Body of every call but init: runs the block after it with the mutex held and rc set, unless
 * MPI_T is not initialized. MF_T_END unlocks and returns rc. */
#define MF_T_BEGIN()                                                                               \
    mf_t_lock();                                                                                   \
    int rc = mf_t_refcount > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;                          \
    if (rc == MPI_SUCCESS)
#define MF_T_END()                                                                                 \
    mf_t_unlock();                                                                                 \
    return rc

#define MF_T_SET(ptr, value)                                                                       \
    do {                                                                                           \
        if (ptr)                                                                                   \
            *(ptr) = (value);                                                                      \
    } while (0)

static inline int mf_t_string(const char *s, char *buf, int *len)
{
    if (!len)
        return MPI_SUCCESS;
    if (*len < 0)
        return MPI_T_ERR_INVALID;
    size_t n = strlen(s);
    if (!buf || *len == 0) {
        *len = (int)n + 1;
        return MPI_SUCCESS;
    }
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *len = (int)n + 1;
    return MPI_SUCCESS;
}

/* Both strings of a get_info call: the first error, if any. */
static inline int mf_t_strings(const char *name, char *nbuf, int *nlen, const char *desc,
                               char *dbuf, int *dlen)
{
    if ((nlen && *nlen < 0) || (dlen && *dlen < 0))
        return MPI_T_ERR_INVALID;
    mf_t_string(name, nbuf, nlen);
    return mf_t_string(desc, dbuf, dlen);
}

/* Copies up to len indices of a category member list. */
int mf_t_indices(const mf_t_ilist *l, int len, int indices[]);

static inline int mf_t_index_ok(int index, int n)
{
    return index >= 0 && index < n ? MPI_SUCCESS : MPI_T_ERR_INVALID_INDEX;
}

#endif
