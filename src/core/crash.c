/*
 * crash.c — see crash.h.
 *
 * The handler runs in a process that may be broken in any way (glibc aborts on a double free
 * with its heap corrupt), so it allocates nothing and calls no stdio: the line is formatted by
 * hand into a buffer on the stack, backtrace() was called once at install (its first call loads
 * libgcc, which allocates) and backtrace_symbols_fd() writes the frames straight to fd 2. Frames
 * in libmpi print as an offset into the library (its internal functions are not exported):
 * `addr2line -f -e libmpi.so.12 0xOFFSET` names them.
 *
 * The handler runs on an alternate stack in the thread that installed it (a stack overflow's
 * SIGSEGV has no stack left to run on); other threads run it on their own stacks.
 */
#include "core/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"

static const struct {
    int sig;
    const char *name;
} mf_crash_signals[] = {{SIGSEGV, "SIGSEGV"},
                        {SIGBUS, "SIGBUS"},
                        {SIGILL, "SIGILL"},
                        {SIGFPE, "SIGFPE"},
                        {SIGABRT, "SIGABRT"}};
#define MF_CRASH_NSIG ((int)(sizeof mf_crash_signals / sizeof mf_crash_signals[0]))

static int mf_crash_rank;

/* Appends s to the line (up to its end). */
static size_t mf_crash_put(char *line, size_t n, size_t cap, const char *s)
{
    while (*s && n < cap)
        line[n++] = *s++;
    return n;
}

/* Appends v in base 10 or 16. */
static size_t mf_crash_num(char *line, size_t n, size_t cap, uintmax_t v, unsigned base)
{
    char digits[32];
    int k = 0;
    do {
        digits[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && k < (int)sizeof digits);
    while (k > 0 && n < cap)
        line[n++] = digits[--k];
    return n;
}

static void mf_crash_handler(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    const char *name = "signal";
    for (int i = 0; i < MF_CRASH_NSIG; i++)
        if (mf_crash_signals[i].sig == sig)
            name = mf_crash_signals[i].name;
    char line[256];
    size_t n = 0, cap = sizeof line - 1;
    n = mf_crash_put(line, n, cap, "manifold[");
    n = mf_crash_num(line, n, cap, (uintmax_t)mf_crash_rank, 10);
    n = mf_crash_put(line, n, cap, "]: pid ");
    n = mf_crash_num(line, n, cap, (uintmax_t)getpid(), 10);
    n = mf_crash_put(line, n, cap, " got ");
    n = mf_crash_put(line, n, cap, name);
    n = mf_crash_put(line, n, cap, " (signal ");
    n = mf_crash_num(line, n, cap, (uintmax_t)sig, 10);
    n = mf_crash_put(line, n, cap, ")");
    if ((sig == SIGSEGV || sig == SIGBUS) && si && si->si_code > 0) { /* a fault, not a kill */
        n = mf_crash_put(line, n, cap, " at address 0x");
        n = mf_crash_num(line, n, cap, (uintmax_t)(uintptr_t)si->si_addr, 16);
    }
    n = mf_crash_put(line, n, cap, "; stack of the thread that got it:\n");
    (void)!write(STDERR_FILENO, line, n);
    void *frames[64];
    int depth = backtrace(frames, 64);
    backtrace_symbols_fd(frames, depth, STDERR_FILENO);
    /* SA_RESETHAND restored the default action. Raised again, the signal is pending until the
     * handler returns and then ends the process, also when it was sent (raise, kill) rather
     * than caused by the instruction the handler returns to. */
    raise(sig);
}

void mf_crash_report_install(int rank)
{
    static bool installed;
    mf_crash_rank = rank;
    if (installed || !mf_config_bool("MANIFOLD_BACKTRACE"))
        return;
    installed = true;
    void *warm[2];
    (void)backtrace(warm, 2); /* loads libgcc now, not in the handler */
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack}, had;
    if (sigaltstack(NULL, &had) == 0 && (had.ss_flags & SS_DISABLE)) /* the program's stays */
        (void)sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = mf_crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < MF_CRASH_NSIG; i++) {
        struct sigaction old;
        if (sigaction(mf_crash_signals[i].sig, NULL, &old) != 0)
            continue;
        bool dfl = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
        if (dfl) /* the program's or a sanitizer's handler stays */
            (void)sigaction(mf_crash_signals[i].sig, &sa, NULL);
    }
}
