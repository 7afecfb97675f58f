/*
 * status.h — the byte count and cancelled flag inside MPI_Status (MPICH ABI layout).
 *
 * The count of received bytes is 63 bits: count_lo holds the low 32, the low 31 bits of
 * count_hi_and_cancelled the high ones, and its top bit is the cancelled flag. Element counts
 * (MPI_Get_count, MPI_Get_elements) are derived from the bytes and a datatype by
 * mf_datatype_count(). Shared by the datatype queries and point-to-point completion.
 */
#ifndef MF_DATATYPE_STATUS_H
#define MF_DATATYPE_STATUS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* request.h (p2p) carries identical helpers under the same names; one definition must win. */
#ifndef MF_STATUS_HELPERS_DEFINED
#define MF_STATUS_HELPERS_DEFINED

static inline void mf_status_set_bytes(MPI_Status *s, MPI_Count bytes)
{
    s->count_lo = (int)(uint32_t)((uint64_t)bytes & 0xffffffffu);
    s->count_hi_and_cancelled = (int)(((uint32_t)s->count_hi_and_cancelled & 0x80000000u) |
                                      (uint32_t)(((uint64_t)bytes >> 32) & 0x7fffffffu));
}

static inline MPI_Count mf_status_get_bytes(const MPI_Status *s)
{
    return (MPI_Count)((uint64_t)(uint32_t)s->count_lo |
                       (uint64_t)((uint32_t)s->count_hi_and_cancelled & 0x7fffffffu) << 32);
}

static inline void mf_status_set_cancelled(MPI_Status *s, bool cancelled)
{
    s->count_hi_and_cancelled =
        (int)(((uint32_t)s->count_hi_and_cancelled & 0x7fffffffu) | (cancelled ? 0x80000000u : 0u));
}
#endif

static inline bool mf_status_cancelled(const MPI_Status *s)
{
    return ((uint32_t)s->count_hi_and_cancelled & 0x80000000u) != 0;
}

#endif
