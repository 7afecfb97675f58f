/* Line-atomic diagnostics on stderr. */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mf_verbose_level;
static int mf_log_rank = -1;

void mf_log_set_rank(int rank)
{
    mf_log_rank = rank;
}

static void mf_log_line(const char *kind, const char *fmt, va_list ap)
{
    char line[2048];
    int n;
    if (mf_log_rank >= 0)
        n = snprintf(line, sizeof line, "manifold[%d]: %s", mf_log_rank, kind);
    else
        n = snprintf(line, sizeof line, "manifold: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = strnlen(line, sizeof line - 2);
    line[len++] = '\n';
    /* One write per line keeps lines whole when several ranks share the terminal. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void mf_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_log_line("warning: ", fmt, ap);
    va_end(ap);
}

void mf_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_log_line("", fmt, ap);
    va_end(ap);
}

void mf_fatal(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mf_info("fatal: %s", msg);
    mf_job_abort(1, msg);
}

static mf_job_abort_fn mf_job_abort_hook;

void mf_job_abort_set(mf_job_abort_fn fn)
{
    mf_job_abort_hook = fn;
}

void mf_job_abort(int code, const char *msg)
{
    if (mf_job_abort_hook)
        mf_job_abort_hook(code, msg); /* does not return; if it did, exit below */
    else if (msg && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    _exit(code);
}
