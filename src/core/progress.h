/*
 * progress.h — the progress engine: one loop that drives every fabric instance in use and any
 * number of other sources of work.
 *
 * mf_progress_poll() makes one non-blocking pass over the active instances and the registered
 * sources. mf_progress_wait() blocks until a condition holds: it polls for a short spin budget
 * (MANIFOLD_SPIN_US; none when the host is oversubscribed, so ranks yield the core at once), then
 * asks each instance and source whether it may sleep and sleeps in epoll on their descriptors.
 *
 * Sleeping. What wakes an instance is its wait_fd (shm peers ring a per-process doorbell, tcp
 * sockets wake it directly); how long it may sleep is its poll_interval_us (fabric.h): > 0 bounds
 * the sleep (a poll-only instance), 0 with a wait_fd leaves it unbounded, 0 without one means
 * nothing arrives while asleep (self). A source says the same through its fields below. The
 * timeout is kept to the nanosecond where the kernel has epoll_pwait2 (else rounded up to the
 * millisecond, never down to 0, which would be a spin): an instance that asks for 300 µs sleeps
 * 300 µs. No sleep lasts longer than MF_PROGRESS_MAX_SLEEP_MS, so a lost wake-up costs latency,
 * never a hang; such late wake-ups are counted (mf_progress_stats, MPI_T progress_late_wakeups).
 *
 * Busy ranks do not pay for idle ones: a pass only calls each active instance's progress (an
 * idle instance answers at once); descriptors are looked at only before a sleep.
 *
 * The progress thread (MANIFOLD_ASYNC_PROGRESS=1, mf_progress_thread_start): a thread that,
 * under the library lock like any caller, sleeps in the engine and makes passes whenever a
 * source has work, so that rendezvous transfers (and, later, passive-target one-sided
 * operations) complete while the application computes without calling MPI. Several threads may
 * wait at once: the first to sleep arms the instances (sleep_prepare), the last to wake
 * disarms them (sleep_end).
 *
 * All functions are called with the library lock held; waits release it while sleeping.
 */
#ifndef MF_CORE_PROGRESS_H
#define MF_CORE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* No sleep is longer: a lost wake-up costs at most this. */
#define MF_PROGRESS_MAX_SLEEP_MS 100

int mf_progress_init(void);
void mf_progress_finalize(void);

/* One pass; returns the number of events handled. */
int mf_progress_poll(void);
/* Progresses until done(arg) is true. Returns MPI_SUCCESS (or an error if the engine failed). */
int mf_progress_wait(bool (*done)(void *arg), void *arg);
/* The same with the caller's own pass instead of mf_progress_poll (it must call that often
 * enough for everything else to move; returns events handled, 0 when idle): a waiter that knows
 * where its event will come from looks there first, with the engine's spin, yield and sleep
 * policy around it. */
int mf_progress_wait_poll(bool (*done)(void *arg), int (*poll)(void *arg), void *arg);

/* Says that work may arrive through threads of a library the process runs (usrsctp's receive
 * and timer threads, which hand arrivals to a fabric's inbox): from then on a waiting thread does
 * not spin, which would keep such a thread off a core it may share, but polls and yields the
 * core between polls (MANIFOLD_YIELD_US), then sleeps, as on an oversubscribed host. An explicit
 * MANIFOLD_SPIN_US is kept. Measured on the sctp fabric, 8 B across two namespace hosts: 54 us
 * spinning, 15-20 us yielding. Under the library lock (an instance's open); never undone. */
void mf_progress_helper_threads(void);

/* A source of work beside the fabric instances (schedules of nonblocking collectives, the
 * one-sided lock manager, deferred rendezvous starts, a wait on shared flags): a descriptor that
 * becomes readable when it has work (an eventfd a library's own thread rings, a timerfd, a
 * socket), a pass, and how long it lets the engine sleep. The caller owns the struct and keeps
 * it alive until removed (or the engine is finalized, which forgets every source).
 *
 * Contract, so that no sleep adds latency to work that is ready: before every sleep the engine
 * asks each source's sleep_ns, whatever pass the waiter makes for itself (the direct receive
 * looks at one peer's ring and makes a full pass only now and then), and a source answers 0
 * while its poll has work to do now that no watched descriptor will announce: a request that
 * completed outside its pass, a lock word another process released. Work that only a frame can
 * bring needs no answer: the frame wakes the engine, and a full pass polls the sources after
 * the instances, so what the frame completed is taken up in the same pass. */
typedef struct mf_progress_source {
    int fd;                 /* -1: none */
    int (*poll)(void *arg); /* events handled; may be NULL (the fd is only a wake-up) */
    /* Nanoseconds from now the engine may sleep (< 0: no bound from this source); NULL: none. */
    long long (*sleep_ns)(void *arg);
    void *arg;
    bool watched; /* engine's: in the epoll set */
    bool added;   /* engine's: in the list of sources (until removed or the engine finalized) */
} mf_progress_source;
int mf_progress_source_add(mf_progress_source *src);
void mf_progress_source_remove(mf_progress_source *src);

/* Wakes the application threads asleep in the engine, if any, so that each looks at its
 * condition again: for what a thread makes ready outside any progress pass that another may
 * be waiting for, where no descriptor rings for the sleeper (MPI_Grequest_complete and
 * MPI_Cancel complete a request, the self fabric queues a frame in memory). A pass that
 * handled events does the same itself (mf_progress_poll): it may have completed what another
 * thread waits for, and taken the descriptor's readiness that would have woken it. A write to
 * an eventfd when an application thread sleeps (not only the progress thread), else nothing;
 * the last sleeper to wake empties it. Library lock held. */
void mf_progress_kick(void);

/* What the engine did, for tests and MPI_T: counts since the process started (never reset, so
 * they only grow, across MPI sessions too). */
typedef struct mf_progress_stats {
    uint64_t sleeps;   /* sleeps entered */
    uint64_t sleep_ns; /* nanoseconds asked for, summed (unbounded sleeps count the cap) */
    /* Sleeps that ran into MF_PROGRESS_MAX_SLEEP_MS while work was waiting (a lost wake-up):
     * the waiter's first pass after such a sleep found work, or the wait ended before any
     * pass found work, within a millisecond of the cap (a waiter that ran later cannot tell
     * work that waited from work that came meanwhile, and does not count it). A capped sleep
     * after which passes find nothing, and later work, was an idle wait and is not counted. */
    uint64_t late_wakeups;
    uint64_t thread_passes; /* passes made by the progress thread that handled events */
    /* Sleeps at whose end a fabric found work that had arrived without ringing its wait fd
     * (mf_progress_missed_wakeup): a lost wake-up whatever ended the sleep (the cap, another
     * descriptor, a signal), so also the ones late_wakeups cannot see. */
    uint64_t missed_wakeups;
    /* Waits whose spin ran out before work came (the wait went on to yield or sleep), and the
     * spin budgets they had, summed; of those waits, the ones whose thread had been preempted
     * since the last one (spins_preempted): after those the adaptive spin (MANIFOLD_SPIN_US
     * unset) halves the budget, so on a loaded host a peer that answers slowly costs less
     * spinning. */
    uint64_t spins_expired;
    uint64_t spin_budget_ns;
    uint64_t spins_preempted;
    /* Spins that found work while the adaptive budget was below its full size, and so doubled
     * it back (capped at the full size): with spins_preempted, every change of the budget. */
    uint64_t spins_grown;
} mf_progress_stats;
/* A copy; call with the library lock held. */
void mf_progress_get_stats(mf_progress_stats *out);
/* The counters themselves, for readers without the lock (MPI_T, src/tool/mpit.c): each field is
 * stored with relaxed atomic stores under the lock, so a relaxed atomic load of one field
 * (__atomic_load_n) from any thread sees a whole value. */
const mf_progress_stats *mf_progress_stats_live(void);

/* For fabrics, from sleep_end: work for this instance (a frame, room for a queued frame) is
 * waiting although nothing rang its wait fd. Counted in missed_wakeups only while the engine is
 * ending a real sleep (not when sleep_end disarms after a prepare that found work). */
void mf_progress_missed_wakeup(void);

/* The progress thread, when MANIFOLD_ASYNC_PROGRESS=1 (else a no-op): started once the fabrics
 * are up (the library lock must then be in use), stopped before they close. */
int mf_progress_thread_start(void);
void mf_progress_thread_stop(void);

#endif
