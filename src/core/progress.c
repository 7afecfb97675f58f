/* The progress engine: see progress.h. */
#include "core/progress.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/counter.h"
#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric.h"

/* While spinning, the clock (and the lock, for other threads) is looked at every this many idle
 * polls; a poll costs tens of nanoseconds, so the spin budget overshoots by about a microsecond. */
#define MF_PROGRESS_CLOCK_EVERY 32
/* Events taken from epoll per sleep: the engine only needs to know that something is ready. */
#define MF_PROGRESS_EVENTS 16
/* A capped sleep's evidence of a lost wake-up counts only if seen within this long after the
 * cap ran out: a thread that ran later (preempted on a loaded host, or waiting for the lock)
 * cannot tell work that waited through the sleep from work that came in the gap. */
#define MF_PROGRESS_LATE_SLACK_NS 1000000ll
/* The adaptive spin never falls below spin_ns / this (so a hit can still grow it back). */
#define MF_PROGRESS_SPIN_SHRINK 16

/* A descriptor in the epoll set: which instance or source it belongs to, so that a changed
 * wait fd replaces the old one. */
typedef struct mf_progress_watch {
    const void *owner;
    int fd;
} mf_progress_watch;

/* The engine's state: the process's one engine, not a fabric's (fabrics keep none). */
static struct {
    int epfd;
    int spin_ns; /* -1: not decided yet (first wait, once the host layout is known) */
    /* Adaptive spin (default spin only; an explicit MANIFOLD_SPIN_US is kept as set): the budget
     * of the next wait, between spin_ns / MF_PROGRESS_SPIN_SHRINK and spin_ns. A spin that runs
     * out halves it if the waiting thread was preempted since the last one that ran out; work
     * found while spinning doubles it. Why: when the peer shares our core with other load (not
     * a host layout we can see), spinning burns the time slice the peer needs to answer
     * (mpi4py's one-sided tests ran 2-3x slower under load), and that load shows as involuntary
     * context switches of the spinner. Without them the cores are the job's own and spinning
     * costs nobody: the budget stays, so a peer that is busy for tens of microseconds (packing
     * a strided message, copying a large one) is not answered by a sleep and a wake-up. */
    int spin_cur_ns;
    bool spin_adapt;
    /* Oversubscribed hosts: after the spin, poll and yield the core (sched_yield) this long
     * before sleeping. A yield hands the core to a rank that has work at once, where a
     * sleep/wake-up pair through the doorbell costs tens of microseconds per message. */
    long long yield_ns;
    /* mf_progress_helper_threads was called: wait as on an oversubscribed host. */
    bool helper_threads;
    mf_progress_source **sources;
    int nsources, sources_cap;
    mf_progress_watch *watch; /* instances' wait fds in the epoll set */
    int nwatch, watch_cap;
    int sleepers;       /* threads inside a sleep: the first arms the instances, the last disarms */
    bool thread_asleep; /* the progress thread is one of them (mf_progress_app_asleep) */
    bool waking;        /* calling sleep_end after a real sleep (mf_progress_missed_wakeup) */
    bool have_pwait2;   /* epoll_pwait2 works here (nanosecond timeouts) */
    mf_progress_stats stats; /* for the life of the process: see mf_progress_stats_live */
    /* The progress thread. */
    pthread_t thread;
    bool thread_running;
    atomic_bool thread_stop;
    atomic_bool thread_left_asleep; /* it stopped inside a sleep, without the lock */
    /* An eventfd that wakes the threads asleep in the engine: rung by mf_progress_kick (work
     * done outside any pass) and to stop the progress thread; drained by the last sleeper to
     * wake (mf_progress_kick_drain says why not by a pass). */
    mf_progress_source kick;
} mf_pe = {.epfd = -1, .spin_ns = -1, .kick = {.fd = -1}};

/* Grows *arr (of *cap elements of size sz) to hold n + 1. */
static int mf_progress_grow(void **arr, int *cap, int n, size_t sz)
{
    if (n < *cap)
        return MPI_SUCCESS;
    int ncap = *cap ? 2 * *cap : 8;
    void *p = realloc(*arr, (size_t)ncap * sz);
    if (!p)
        return mf_error(MPI_ERR_NO_MEM, "progress: no memory for %d entries", ncap);
    *arr = p;
    *cap = ncap;
    return MPI_SUCCESS;
}

/* epoll_pwait2 through the system call (glibc's wrapper is recent): nanosecond timeouts. */
static int mf_progress_epoll_ns(struct epoll_event *evs, int max, long long ns)
{
#ifdef SYS_epoll_pwait2
    if (mf_pe.have_pwait2) {
        struct timespec ts = {.tv_sec = ns / 1000000000ll, .tv_nsec = ns % 1000000000ll};
        return (int)syscall(SYS_epoll_pwait2, mf_pe.epfd, evs, max, &ts, NULL, (size_t)0);
    }
#endif
    /* Whole milliseconds, rounded up: never down to 0, which would make the sleep a spin. */
    return epoll_wait(mf_pe.epfd, evs, max, (int)((ns + 999999) / 1000000));
}

/* Empties the kick's eventfd. Only the last sleeper to wake does it (mf_progress_sleep): a pass
 * that drained it could take the wake-up from a sleeper the kernel has woken but that has not
 * yet collected its events, which would then sleep on. */
static void mf_progress_kick_drain(void)
{
    uint64_t v;
    while (read(mf_pe.kick.fd, &v, sizeof v) > 0)
        ;
}

static void mf_progress_kick_ring(void)
{
    uint64_t one = 1;
    if (write(mf_pe.kick.fd, &one, sizeof one) < 0 && errno != EAGAIN)
        mf_warn("progress: cannot wake the sleeping threads: %s", strerror(errno));
}

/* Whether an application thread sleeps in the engine: the ones a kick wakes. Not the progress
 * thread: it waits for nothing a kick announces (what it drives arrives through descriptors,
 * or sources keep it awake), and waking it for every pass the application makes would cost a
 * system call each. */
static inline bool mf_progress_app_asleep(void)
{
    return mf_pe.sleepers > (int)mf_pe.thread_asleep;
}

void mf_progress_kick(void)
{
    if (mf_progress_app_asleep() && mf_pe.kick.fd >= 0)
        mf_progress_kick_ring();
}

int mf_progress_init(void)
{
    mf_pe.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (mf_pe.epfd < 0)
        return mf_error(MPI_ERR_OTHER, "MPI_Init: epoll_create1 failed: %s", strerror(errno));
    mf_pe.kick = (mf_progress_source){.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
    int rc = mf_pe.kick.fd < 0
                 ? mf_error(MPI_ERR_OTHER, "MPI_Init: eventfd failed: %s", strerror(errno))
                 : mf_progress_source_add(&mf_pe.kick);
    if (rc) {
        if (mf_pe.kick.fd >= 0)
            close(mf_pe.kick.fd);
        mf_pe.kick.fd = -1;
        close(mf_pe.epfd);
        mf_pe.epfd = -1;
        return rc;
    }
    mf_pe.spin_ns = -1;
    mf_pe.have_pwait2 = false;
#ifdef SYS_epoll_pwait2
    struct epoll_event ev;
    mf_pe.have_pwait2 = true;
    mf_pe.have_pwait2 = mf_progress_epoll_ns(&ev, 1, 0) >= 0; /* ENOSYS on kernels before 5.11 */
#endif
    return MPI_SUCCESS;
}

void mf_progress_finalize(void)
{
    mf_progress_thread_stop();
    if (mf_pe.epfd >= 0)
        close(mf_pe.epfd);
    mf_pe.epfd = -1;
    if (mf_pe.kick.fd >= 0)
        close(mf_pe.kick.fd);
    mf_pe.kick.fd = -1;
    for (int i = 0; i < mf_pe.nsources; i++)
        mf_pe.sources[i]->watched = mf_pe.sources[i]->added = false;
    free(mf_pe.sources);
    free(mf_pe.watch);
    mf_pe.sources = NULL;
    mf_pe.watch = NULL;
    mf_pe.nsources = mf_pe.sources_cap = 0;
    mf_pe.nwatch = mf_pe.watch_cap = 0;
    mf_pe.sleepers = 0;
}

int mf_progress_source_add(mf_progress_source *src)
{
    int rc = mf_progress_grow((void **)&mf_pe.sources, &mf_pe.sources_cap, mf_pe.nsources,
                              sizeof *mf_pe.sources);
    if (rc)
        return rc;
    src->watched = false;
    if (src->fd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};
        if (epoll_ctl(mf_pe.epfd, EPOLL_CTL_ADD, src->fd, &ev) != 0)
            return mf_error(MPI_ERR_OTHER, "progress: cannot watch descriptor %d: %s", src->fd,
                            strerror(errno));
        src->watched = true;
    }
    mf_pe.sources[mf_pe.nsources++] = src;
    src->added = true;
    return MPI_SUCCESS;
}

void mf_progress_source_remove(mf_progress_source *src)
{
    for (int i = 0; i < mf_pe.nsources; i++) {
        if (mf_pe.sources[i] != src)
            continue;
        if (src->watched && mf_pe.epfd >= 0)
            epoll_ctl(mf_pe.epfd, EPOLL_CTL_DEL, src->fd, NULL);
        src->watched = src->added = false;
        /* Order kept: sources are polled in the order they were added. */
        memmove(&mf_pe.sources[i], &mf_pe.sources[i + 1],
                (size_t)(mf_pe.nsources - i - 1) * sizeof *mf_pe.sources);
        mf_pe.nsources--;
        return;
    }
}

void mf_progress_get_stats(mf_progress_stats *out)
{
    *out = mf_pe.stats;
}

const mf_progress_stats *mf_progress_stats_live(void)
{
    return &mf_pe.stats;
}

void mf_progress_missed_wakeup(void)
{
    if (mf_pe.waking)
        mf_counter_add(&mf_pe.stats.missed_wakeups, 1);
}

int mf_progress_poll(void)
{
    mf_fabric **fabrics;
    int nf = mf_fabrics_active(&fabrics), n = 0;
    for (int i = 0; i < nf; i++)
        n += fabrics[i]->ops->progress(fabrics[i]);
    for (int i = 0; i < mf_pe.nsources; i++)
        if (mf_pe.sources[i]->poll)
            n += mf_pe.sources[i]->poll(mf_pe.sources[i]->arg);
    /* What this pass did may be what another thread sleeps waiting for (a request it
     * completed, a message it queued, a window operation it served), and the pass may have
     * taken the descriptor's readiness that would have woken that thread: wake it. Two loads
     * when no other application thread sleeps (always, with one thread). */
    if (n > 0 && mf_progress_app_asleep())
        mf_progress_kick_ring();
    return n;
}

/* Puts instance f's wait fd into the epoll set (replacing an older one of f's). */
static void mf_progress_watch_fd(mf_fabric *f, int fd)
{
    int i = 0;
    while (i < mf_pe.nwatch && mf_pe.watch[i].owner != f)
        i++;
    if (i < mf_pe.nwatch && mf_pe.watch[i].fd == fd)
        return;
    if (i < mf_pe.nwatch)
        epoll_ctl(mf_pe.epfd, EPOLL_CTL_DEL, mf_pe.watch[i].fd, NULL);
    else if (mf_progress_grow((void **)&mf_pe.watch, &mf_pe.watch_cap, mf_pe.nwatch,
                              sizeof *mf_pe.watch) != MPI_SUCCESS)
        return; /* not watched: the sleep is bounded by the cap */
    else
        mf_pe.nwatch++;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = f};
    if (epoll_ctl(mf_pe.epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST)
        fd = -1;
    mf_pe.watch[i] = (mf_progress_watch){f, fd};
}

/* Lowers *ns to bound (when bound >= 0). */
static void mf_progress_bound(long long *ns, long long bound)
{
    if (bound >= 0 && bound < *ns)
        *ns = bound;
}

/* Set in the progress thread only: it is that thread; it gave the lock up for good (stopped). */
static _Thread_local bool mf_pt_self, mf_pt_unlocked;

static bool mf_progress_in_thread(void)
{
    return mf_pt_self;
}

/* Asks every instance and source how long the engine may sleep and arms the instances; returns
 * the timeout in ns, or 0 when one of them has work. Every sleeper arms (a pass made meanwhile
 * may have disarmed something, e.g. tcp's quiet regime), only the last to wake disarms; so a
 * sleeper that finds work disarms only when nobody else sleeps. See progress.h. */
static long long mf_progress_prepare_sleep(mf_fabric **fabrics, int nf)
{
    /* An instance to be polled without pause (fabric.h busy_poll): no sleep for an application
     * thread, and nothing armed (shm would tell its peers we sleep, ofi set the timer slack). */
    if (!mf_progress_in_thread())
        for (int i = 0; i < nf; i++)
            if (fabrics[i]->busy_poll)
                return 0;
    long long ns = MF_PROGRESS_MAX_SLEEP_MS * 1000000ll;
    int armed = 0;
    for (int i = 0; i < nf && ns > 0; i++) {
        mf_fabric *f = fabrics[i];
        int fd = f->ops->wait_fd(f);
        if (fd >= 0)
            mf_progress_watch_fd(f, fd);
        armed++;
        if (!f->ops->sleep_prepare(f))
            ns = 0;
        else if (f->poll_interval_us > 0) /* read after sleep_prepare, which may set it */
            mf_progress_bound(&ns, (long long)f->poll_interval_us * 1000);
    }
    for (int i = 0; i < mf_pe.nsources && ns > 0; i++)
        if (mf_pe.sources[i]->sleep_ns)
            mf_progress_bound(&ns, mf_pe.sources[i]->sleep_ns(mf_pe.sources[i]->arg));
    if (ns <= 0 && mf_pe.sleepers == 0)
        for (int j = 0; j < armed; j++)
            fabrics[j]->ops->sleep_end(fabrics[j]);
    return ns < 0 ? 0 : ns;
}

/* Returned by a wait of the progress thread told to stop while it slept: the lock is not held. */
#define MF_PROGRESS_STOPPED (-1)

/* The progress thread takes the lock back without blocking on it, so that the thread stopping
 * it can hold the lock while it waits: false (lock not taken) once it is told to stop. */
static bool mf_progress_thread_relock(void)
{
    while (!mf_trylock()) {
        if (atomic_load(&mf_pe.thread_stop))
            return false;
        struct timespec pause = {0, 20000}; /* the lock holder is in MPI: it progresses */
        nanosleep(&pause, NULL);
    }
    return true;
}

/* Sleeps at most ns in epoll, the lock released. *capped: the sleep ran out at
 * MF_PROGRESS_MAX_SLEEP_MS, no descriptor woke it. */
static int mf_progress_sleep(mf_fabric **fabrics, int nf, long long ns, bool *capped)
{
    struct epoll_event evs[MF_PROGRESS_EVENTS];
    mf_pe.sleepers++;
    if (mf_progress_in_thread())
        mf_pe.thread_asleep = true;
    for (int i = 0; i < nf; i++)
        fabrics[i]->sleepers++;
    mf_counter_add(&mf_pe.stats.sleeps, 1);
    mf_counter_add(&mf_pe.stats.sleep_ns, (uint64_t)ns);
    mf_unlock();
    int r = mf_progress_epoll_ns(evs, MF_PROGRESS_EVENTS, ns);
    int err = errno;
    /* A sleep that ran to the cap while a descriptor is ready was not a lost wake-up: epoll
     * wakes one of the threads waiting on a shared set per event, and one that times out
     * meanwhile returns 0 without looking (measured: the progress thread timed out with shm's
     * doorbell readable, its wake-up taken by an application thread the host had not yet
     * run). A second look with no timeout, before a waker drains anything, tells the two
     * apart; it costs a system call only after a capped sleep. */
    bool at_cap = r == 0 && ns >= MF_PROGRESS_MAX_SLEEP_MS * 1000000ll;
    bool ready_at_cap = at_cap && epoll_wait(mf_pe.epfd, evs, MF_PROGRESS_EVENTS, 0) > 0;
    if (!mf_progress_in_thread())
        mf_lock();
    else if (!mf_progress_thread_relock()) {
        mf_pt_unlocked = true;
        atomic_store(&mf_pe.thread_left_asleep, true); /* the stopper ends the sleep for us */
        return MF_PROGRESS_STOPPED;
    }
    if (mf_progress_in_thread())
        mf_pe.thread_asleep = false;
    for (int i = 0; i < nf; i++)
        fabrics[i]->sleepers--;
    if (--mf_pe.sleepers == 0) {
        mf_pe.waking = true;
        for (int i = 0; i < nf; i++)
            fabrics[i]->ops->sleep_end(fabrics[i]);
        mf_pe.waking = false;
        mf_progress_kick_drain();
    }
    *capped = at_cap && !ready_at_cap;
    if (r < 0 && err != EINTR)
        return mf_error(MPI_ERR_INTERN, "progress: epoll_wait failed: %s", strerror(err));
    return MPI_SUCCESS;
}

static int mf_progress_poll_all(void *arg)
{
    return mf_progress_poll();
}

int mf_progress_wait(bool (*done)(void *arg), void *arg)
{
    return mf_progress_wait_poll(done, mf_progress_poll_all, arg);
}

/* The spin and yield budgets, from the settings and the host layout (first wait). */
static void mf_progress_budgets(void)
{
    const char *s = mf_config_str("MANIFOLD_SPIN_US");
    bool share = mf_g.oversubscribed || mf_pe.helper_threads;
    long us = *s ? mf_config_long("MANIFOLD_SPIN_US") : (share ? 0 : 50);
    mf_pe.spin_ns = (int)(us < 0 ? 0 : us > 1000000 ? 1000000000 : us * 1000);
    mf_pe.spin_cur_ns = mf_pe.spin_ns;
    mf_pe.spin_adapt = !*s && mf_pe.spin_ns > 0;
    long yus = share ? mf_config_long("MANIFOLD_YIELD_US") : 0;
    mf_pe.yield_ns = yus < 0 ? 0 : (long long)yus * 1000;
}

/* The wait loop; spin_ns and yield_ns are the budgets before a sleep (the progress thread has
 * none: it sleeps as soon as a pass finds nothing; spin_ns < 0: the adaptive budget, below). */
/* Adaptive spin: a wait's spin found work (grow the budget back) or ran out (shrink it). A
 * spin that ran out is counted with the budget it had (MPI_T progress_spins_expired,
 * progress_spin_budget_ns); a growth, as progress_spins_grown. */
static void mf_progress_spin_hit(void)
{
    if (mf_pe.spin_adapt && mf_pe.spin_cur_ns < mf_pe.spin_ns) {
        mf_pe.spin_cur_ns =
            mf_pe.spin_cur_ns > mf_pe.spin_ns / 2 ? mf_pe.spin_ns : mf_pe.spin_cur_ns * 2;
        mf_counter_add(&mf_pe.stats.spins_grown, 1);
    }
}

/* The calling thread's involuntary context switches when it last asked (-1: never). */
static _Thread_local long mf_pt_nivcsw = -1;

/* Whether the calling thread was preempted (an involuntary context switch: something else
 * wanted its core) since it last asked. The first answer is no; a failed count, yes. */
static bool mf_progress_preempted(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return true;
    bool preempted = mf_pt_nivcsw >= 0 && ru.ru_nivcsw != mf_pt_nivcsw;
    mf_pt_nivcsw = ru.ru_nivcsw;
    return preempted;
}

static void mf_progress_spin_miss(long long budget)
{
    mf_counter_add(&mf_pe.stats.spins_expired, 1);
    mf_counter_add(&mf_pe.stats.spin_budget_ns, (uint64_t)(budget > 0 ? budget : 0));
    if (!mf_pe.spin_adapt || !mf_progress_preempted())
        return; /* a set spin is kept; an unpreempted spinner took no one's core */
    mf_counter_add(&mf_pe.stats.spins_preempted, 1);
    int floor = mf_pe.spin_ns / MF_PROGRESS_SPIN_SHRINK;
    if (mf_pe.spin_cur_ns > floor)
        mf_pe.spin_cur_ns = mf_pe.spin_cur_ns / 2 < floor ? floor : mf_pe.spin_cur_ns / 2;
}

/* Evidence of a lost wake-up after a sleep that ran out at cap_due: counted if seen promptly
 * (MF_PROGRESS_LATE_SLACK_NS). */
static void mf_progress_late(long long cap_due)
{
    if (mf_clock_ns() - cap_due < MF_PROGRESS_LATE_SLACK_NS)
        mf_counter_add(&mf_pe.stats.late_wakeups, 1);
}

/* spin_ns < 0: the adaptive budget (mf_pe.spin_cur_ns, read at each clock look). */
static int mf_progress_loop(bool (*done)(void *arg), int (*poll)(void *arg), void *arg,
                            long long spin_ns, long long yield_ns)
{
    long long spin_now = spin_ns < 0 ? mf_pe.spin_cur_ns : spin_ns;
    long long idle_since = -1; /* read the clock only once polling finds nothing */
    unsigned idle_polls = 0;
    /* The last sleep ran out at the cap, and no pass found work since. A wake-up was lost (the
     * work was there, nothing rang for it) if the first pass after that sleep finds work, or if
     * the wait ends before any pass finds work: its condition came true unseen (a completion
     * no descriptor announced) or a pass of the caller's own noticed it without counting it
     * as work (the direct receive finding its message queued as unexpected). A cap sleep
     * followed by work that later passes find was an idle wait, whatever wakes the next one. */
    bool capped = false, first_pass = false;
    long long cap_due = 0; /* when the capped sleep was to end */
    /* Still within the spin of this idle stretch (its budget not yet run out). */
    bool spinning = true;
    while (!done(arg)) {
        int n = poll(arg);
        if (capped && n > 0) {
            if (first_pass)
                mf_progress_late(cap_due);
            capped = false;
        }
        first_pass = false;
        if (n > 0) {
            if (idle_polls > 0 && spinning && spin_ns < 0)
                mf_progress_spin_hit();
            idle_since = -1;
            idle_polls = 0;
            spinning = true;
            continue;
        }
        if (done(arg))
            break;
        /* An idle poll of shared memory costs less than reading the clock (vDSO, tens of ns):
         * look at the time only every MF_PROGRESS_CLOCK_EVERY idle polls, so that a message
         * arriving while we spin is seen at once, not after a clock read. */
        if (++idle_polls % MF_PROGRESS_CLOCK_EVERY != 0 && idle_since >= 0 && spin_now > 0)
            continue;
        if (idle_since < 0)
            idle_since = mf_clock_ns();
        long long idle = mf_clock_ns() - idle_since;
        if (spin_ns < 0) /* the adaptive budget, read now: a hit in this wait may have grown it */
            spin_now = mf_pe.spin_cur_ns;
        if (idle < spin_now) {
            /* Let other threads in (MPI_THREAD_MULTIPLE): they may hold what we wait for. */
            mf_unlock();
            mf_lock();
            continue;
        }
        if (spinning && spin_now > 0)
            mf_progress_spin_miss(spin_now); /* counts; shrinks only the adaptive budget */
        spinning = false;
        if (idle < spin_now + yield_ns) {
            mf_unlock();
            sched_yield();
            mf_lock();
            continue;
        }
        mf_fabric **fabrics;
        int nf = mf_fabrics_active(&fabrics);
        long long ns = mf_progress_prepare_sleep(fabrics, nf);
        if (ns == 0) {
            if (mf_g.oversubscribed)
                sched_yield();
            /* Polling on without a sleep (fabric.h busy_poll): let other application threads
             * in. Not the progress thread: it must never block on the lock, which the thread
             * stopping it holds while it waits (a hang at finalize, fabric_async_rndv.np2.shm
             * in CI); it gives the lock up after each busy pass instead. */
            if (!mf_progress_in_thread()) {
                mf_unlock();
                mf_lock();
            }
            continue;
        }
        long long slept_from = mf_clock_ns();
        int rc = mf_progress_sleep(fabrics, nf, ns, &capped);
        first_pass = capped;
        cap_due = slept_from + ns;
        if (rc)
            return rc;
        idle_since = -1;
    }
    if (capped) /* done after a cap sleep, no pass having found work since (above) */
        mf_progress_late(cap_due);
    return MPI_SUCCESS;
}

void mf_progress_helper_threads(void)
{
    if (!mf_pe.helper_threads) {
        mf_pe.helper_threads = true;
        mf_pe.spin_ns = -1; /* the budgets are decided again at the next wait */
    }
}

int mf_progress_wait_poll(bool (*done)(void *arg), int (*poll)(void *arg), void *arg)
{
    if (mf_pe.spin_ns < 0)
        mf_progress_budgets();
    return mf_progress_loop(done, poll, arg, mf_pe.spin_adapt ? -1 : mf_pe.spin_ns, mf_pe.yield_ns);
}

/* ---- The progress thread ---- */

static bool mf_progress_thread_stopping(void *arg)
{
    return atomic_load(&mf_pe.thread_stop);
}

/* One pass; after a busy one the lock is offered to the application's threads (a mutex is not
 * fair: without the yield the thread would keep it for as long as work flows). */
static int mf_progress_thread_pass(void *arg)
{
    int n = mf_progress_poll();
    if (n > 0) {
        mf_counter_add(&mf_pe.stats.thread_passes, 1);
        mf_unlock();
        sched_yield();
        if (!mf_progress_thread_relock())
            mf_pt_unlocked = true; /* told to stop: the loop ends on its condition */
    }
    return n;
}

static void *mf_progress_thread_main(void *arg)
{
    mf_pt_self = true;
    if (!mf_progress_thread_relock())
        return NULL;
    int rc = mf_progress_loop(mf_progress_thread_stopping, mf_progress_thread_pass, NULL, 0, 0);
    if (!mf_pt_unlocked)
        mf_unlock();
    if (rc && rc != MF_PROGRESS_STOPPED)
        mf_warn("progress thread: stopped on an engine failure");
    return NULL;
}

int mf_progress_thread_start(void)
{
    if (!mf_config_bool("MANIFOLD_ASYNC_PROGRESS") || mf_pe.thread_running)
        return MPI_SUCCESS;
    atomic_store(&mf_pe.thread_stop, false);
    int err = pthread_create(&mf_pe.thread, NULL, mf_progress_thread_main, NULL);
    if (err)
        return mf_error(MPI_ERR_OTHER, "MPI_Init: cannot start the progress thread: %s",
                        strerror(err));
    mf_pe.thread_running = true;
    mf_verbose("progress thread started (MANIFOLD_ASYNC_PROGRESS=1)");
    return MPI_SUCCESS;
}

void mf_progress_thread_stop(void)
{
    if (!mf_pe.thread_running)
        return;
    atomic_store(&mf_pe.thread_stop, true);
    mf_progress_kick_ring(); /* whether or not it sleeps yet: it looks at the flag after */
    /* The caller may hold the lock (recursively): the thread never blocks on it, see
     * mf_progress_thread_relock. */
    pthread_join(mf_pe.thread, NULL);
    mf_pe.thread_running = false;
    if (atomic_exchange(&mf_pe.thread_left_asleep, false)) {
        mf_pe.thread_asleep = false;
        mf_fabric **fabrics;
        int nf = mf_fabrics_active(&fabrics);
        for (int i = 0; i < nf; i++)
            fabrics[i]->sleepers--;
        if (--mf_pe.sleepers == 0)
            for (int i = 0; i < nf; i++)
                fabrics[i]->ops->sleep_end(fabrics[i]);
    }
    if (mf_pe.sleepers == 0)
        mf_progress_kick_drain(); /* the stop's ring, if the thread was not asleep to take it */
}
