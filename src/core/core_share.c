/* Whether the calling thread shares its core with other load: see core_share.h. */
#include "core/core_share.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/clock.h"

uint64_t mf_core_shared_windows;

bool mf_core_share_due(const mf_core_share *cs, long long now)
{
    return !cs->cs_seen || now - cs->cs_look_ns >= MF_CORE_SHARE_LOOK_NS;
}

bool mf_core_share_judge(mf_core_share *cs, long long now, uint64_t run_ns, uint64_t delay_ns)
{
    cs->cs_look_ns = now;
    if (!cs->cs_seen || run_ns < cs->cs_run_ns || delay_ns < cs->cs_delay_ns) {
        cs->cs_seen = true;
        cs->cs_run_ns = run_ns;
        cs->cs_delay_ns = delay_ns;
    } else {
        uint64_t run = run_ns - cs->cs_run_ns, delay = delay_ns - cs->cs_delay_ns;
        if (run + delay >= (uint64_t)MF_CORE_SHARE_WINDOW_NS) {
            cs->cs_shared = delay * MF_CORE_SHARE_DIV >= run + delay;
            cs->cs_judged_ns = now;
            cs->cs_run_ns = run_ns;
            cs->cs_delay_ns = delay_ns;
        }
    }
    return mf_core_share_verdict(cs, now);
}

bool mf_core_share_verdict(const mf_core_share *cs, long long now)
{
    return cs->cs_shared && now - cs->cs_judged_ns < MF_CORE_SHARE_STALE_NS;
}

bool mf_core_share_parse(const char *text, uint64_t *run_ns, uint64_t *delay_ns)
{
    char *end;
    unsigned long long run = strtoull(text, &end, 10);
    if (end == text)
        return false;
    const char *p = end;
    unsigned long long delay = strtoull(p, &end, 10);
    if (end == p)
        return false;
    *run_ns = run;
    *delay_ns = delay;
    return true;
}

/* The calling thread's time on a core and waiting for one (ns, since it started); false if the
 * kernel does not give them (no /proc, or a kernel without scheduler statistics). */
static bool mf_core_share_read(uint64_t *run_ns, uint64_t *delay_ns)
{
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[96];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return mf_core_share_parse(buf, run_ns, delay_ns);
}

/* Per thread: the counters are the thread's own. */
static _Thread_local mf_core_share mf_cs_mine;
static _Thread_local bool mf_cs_unreadable;

bool mf_core_shared(void)
{
    if (mf_cs_unreadable)
        return false;
    long long now = mf_clock_ns();
    if (!mf_core_share_due(&mf_cs_mine, now))
        return mf_core_share_verdict(&mf_cs_mine, now);
    uint64_t run, delay;
    if (!mf_core_share_read(&run, &delay)) {
        mf_cs_unreadable = true;
        return false;
    }
    long long closed = mf_cs_mine.cs_judged_ns;
    bool shared = mf_core_share_judge(&mf_cs_mine, now, run, delay);
    if (mf_cs_mine.cs_judged_ns != closed && mf_cs_mine.cs_shared) /* a window found it shared */
        __atomic_store_n(&mf_core_shared_windows,
                         __atomic_load_n(&mf_core_shared_windows, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
    return shared;
}
