/*
 * progress.h — the progress engine: one loop that drives every fabric in use.
 *
 * mf_progress_poll() makes one non-blocking pass over the active fabrics (and the registered
 * hooks, e.g. nonblocking-collective schedules). mf_progress_wait() blocks until a condition
 * holds: it polls for a short spin budget (MANIFOLD_SPIN_US; none when the host is
 * oversubscribed, so ranks yield the core at once), then asks each fabric whether it may sleep
 * (sleep_prepare) and sleeps in epoll on their wait fds — shm peers ring a per-process doorbell,
 * sockets wake it directly, poll-only fabrics bound the sleep with their poll interval.
 *
 * Both are called with the library lock held; mf_progress_wait releases it while sleeping.
 */
#ifndef MF_CORE_PROGRESS_H
#define MF_CORE_PROGRESS_H

#include <stdbool.h>

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

/* Extra work done on every pass (schedules of nonblocking collectives, generalized requests).
 * fn returns the number of events it handled. */
typedef int (*mf_progress_hook)(void *arg);
int mf_progress_hook_add(mf_progress_hook fn, void *arg);
void mf_progress_hook_remove(mf_progress_hook fn, void *arg);

#endif
