/*
 * clock.h — the monotonic clock in nanoseconds, for deadlines and timings: one definition for
 * the layers that read it on hot paths (a vDSO call, tens of nanoseconds).
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

#endif
