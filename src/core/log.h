/*
 * log.h — messages to stderr, prefixed with the library name and this process's rank.
 *
 * mf_warn() always prints; mf_debug() prints when MANIFOLD_VERBOSE >= 2; mf_verbose() when
 * MANIFOLD_VERBOSE >= 1. mf_fatal() prints and ends the whole job through the process manager
 * (exit code 1, mf_job_abort); use it only where no MPI error handler can be reached (e.g. inside a fabric
 * progress callback after the job state is lost). Lines are written with one write(2) each so
 * that output from several ranks never interleaves within a line.
 */
#ifndef MF_CORE_LOG_H
#define MF_CORE_LOG_H

extern int mf_verbose_level;

void mf_log_set_rank(int rank);
void mf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mf_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mf_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Ending the job. Only the process manager can end every process of the job and show the
 * message once; it is above core, so the library hands its abort (mf_pm_abort) to core when it
 * is loaded (api/init.c), and mf_fatal and the fatal error handlers call mf_job_abort. Without
 * one (a unit test linking no runtime) the message goes to stderr and the process exits with
 * `code`, which is also what the process manager does before it is initialized. */
typedef void (*mf_job_abort_fn)(int code, const char *msg);
void mf_job_abort_set(mf_job_abort_fn fn);
void mf_job_abort(int code, const char *msg) __attribute__((noreturn));

#define mf_verbose(...)                                                                            \
    do {                                                                                           \
        if (mf_verbose_level >= 1)                                                                 \
            mf_info(__VA_ARGS__);                                                                  \
    } while (0)
#define mf_debug(...)                                                                              \
    do {                                                                                           \
        if (mf_verbose_level >= 2)                                                                 \
            mf_info(__VA_ARGS__);                                                                  \
    } while (0)

#endif
