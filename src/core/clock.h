/*
 * clock.h — the monotonic clock, for deadlines and timings: one definition for every layer (a
 * vDSO call, tens of nanoseconds). Never jumps; not comparable across hosts. Three units, for
 * the three kinds of users: nanoseconds for short timings, seconds as a double for timeouts and
 * rates (and MPI_Wtime), milliseconds for coarse start-up waits.
 */
#ifndef MF_CORE_CLOCK_H
#define MF_CORE_CLOCK_H

#include <time.h>

static inline long long mf_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static inline double mf_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline long mf_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
