/*
 * ratelimit.h — at most one line per interval for a warning that an attacker or a broken peer
 * can make repeat (refused handshakes, accept failures, ...), with a count of what was held back.
 *
 *   static mf_ratelimit rl = MF_RATELIMIT_INIT(5.0);
 *   unsigned held;
 *   if (mf_ratelimit_pass(&rl, mf_now(), &held))
 *       mf_warn("refused a connection from %s (%u more since the last report)", who, held);
 *
 * Pure logic on a caller-supplied clock, so the library and mpiexec share it and tests can
 * drive time. Not thread-safe: one ratelimit per lock domain.
 */
#ifndef MF_CORE_RATELIMIT_H
#define MF_CORE_RATELIMIT_H

#include <stdbool.h>

typedef struct mf_ratelimit {
    double rl_interval; /* seconds between two reports */
    double rl_last;     /* time of the last report; < 0 before the first */
    unsigned rl_held;   /* events since the last report */
} mf_ratelimit;

#define MF_RATELIMIT_INIT(seconds)                                                                 \
    {                                                                                              \
        .rl_interval = (seconds), .rl_last = -1.0, .rl_held = 0                                    \
    }

/* Counts one event at time `now` (seconds, any monotonic origin). True when it should be
 * reported; *held is then the number of events suppressed since the previous report. */
bool mf_ratelimit_pass(mf_ratelimit *rl, double now, unsigned *held);

#endif
