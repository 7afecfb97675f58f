/*
 * core_share.h — whether the calling thread shares its core with other load: the kernel kept it
 * waiting for a core (runnable, not running) for a noticeable share of its runnable time lately.
 *
 * Why: some protocols need both ranks on a core at once (shm's rings: every frame is copied in by
 * the sender and out by the receiver), others only the one that moves the data (a pull: the
 * receiver reads the sender's buffer itself). When other load takes turns with our ranks on
 * their cores, the two ranks run at the same moment only part of the time, and the first kind
 * collapses (shm bibw at 256 KiB: 1.0-1.2 GB/s by the rings against 6-8 pulled, with one busy
 * loop pinned to each core; docs/PERFORMANCE.md). The sign that tells this load apart from a
 * quiet host is the time a thread waited for its core: the scheduler's run delay, from
 * /proc/thread-self/schedstat (a thread that sleeps by its own choice does not add to it; a
 * kernel thread that runs for microseconds adds that much). Involuntary context switches
 * (getrusage) do not tell it apart: a quiet 2-rank ping-pong counted 30-50 over 0.4 s, a
 * loaded one 55.
 *
 * The judgement is pure logic on caller-supplied readings (mf_core_share_judge), so tests drive
 * it; mf_core_shared reads the real counters for the calling thread.
 */
#ifndef MF_CORE_CORE_SHARE_H
#define MF_CORE_CORE_SHARE_H

#include <stdbool.h>
#include <stdint.h>

/* Readings are taken at most this often; between two, the last verdict stands. A reading opens,
 * reads and closes a /proc file: 6-12 us on the development VM. */
#define MF_CORE_SHARE_LOOK_NS 4000000ll
/* A verdict judges a window of the thread's runnable time (running plus waiting for a core): the
 * first reading at which that time since the window began reaches MF_CORE_SHARE_WINDOW_NS closes
 * it, and the core counts as shared if the thread waited at least 1/MF_CORE_SHARE_DIV of it. A
 * loaded core hands a thread back and forth in slices of a few milliseconds (measured here:
 * 50-65% of the runnable time waiting, with one busy loop on each core); a quiet one lets a
 * kernel thread or the launcher in now and then (measured: 4 of 624 one-millisecond stretches of
 * a pinned 2-rank bibw waited 1.2-4 ms, the rest under 0.2 ms), which one window of 20 ms does
 * not make a quarter. */
#define MF_CORE_SHARE_WINDOW_NS 20000000ll
#define MF_CORE_SHARE_DIV 4
/* A verdict older than this is forgotten (a thread that sleeps by its own choice closes windows
 * slowly, and the load may have gone meanwhile). */
#define MF_CORE_SHARE_STALE_NS 1000000000ll

typedef struct mf_core_share {
    bool cs_seen;           /* a window began (the three fields below hold its start) */
    long long cs_look_ns;   /* the last reading (the caller's clock) */
    uint64_t cs_run_ns;     /* the thread's time on a core when the window began */
    uint64_t cs_delay_ns;   /* its time waiting for a core then */
    bool cs_shared;         /* the last closed window's verdict */
    long long cs_judged_ns; /* when that window closed */
} mf_core_share;

/* Whether a reading is due at `now` (the caller may skip reading the counters otherwise). */
bool mf_core_share_due(const mf_core_share *cs, long long now);
/* Takes a reading (run and delay: the thread's totals since it started) at `now` and returns the
 * verdict: that of the last closed window, unless stale. The first reading only begins a window
 * (the thread's life so far includes the job's start-up, where ranks and the launcher crowd the
 * cores), and counters that went back (not the same thread's) begin a new one. */
bool mf_core_share_judge(mf_core_share *cs, long long now, uint64_t run_ns, uint64_t delay_ns);
/* The verdict at `now` without a reading. */
bool mf_core_share_verdict(const mf_core_share *cs, long long now);
/* The first two numbers of a schedstat line ("RUN DELAY SLICES\n", NUL-terminated): the
 * thread's time on a core and waiting for one, ns. False if either is missing. */
bool mf_core_share_parse(const char *text, uint64_t *run_ns, uint64_t *delay_ns);

/* The calling thread's verdict now, from its own scheduler counters (read at most every
 * MF_CORE_SHARE_LOOK_NS; a clock read otherwise, tens of nanoseconds). False
 * where the kernel does not give the counters. Counted for MPI_T (progress_core_shared) when a
 * window closes with the core found shared; call with the library lock held. */
bool mf_core_shared(void);

/* Windows that found their thread's core shared, for MPI_T: stored with relaxed atomic
 * stores under the library lock, read with a relaxed atomic load from anywhere. */
extern uint64_t mf_core_shared_windows;

#endif
