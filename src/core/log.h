/*
 * log.h — messages to stderr, prefixed with the library name and this process's rank.
 *
 * mf_warn() always prints; mf_debug() prints when MANIFOLD_VERBOSE >= 2; mf_verbose() when
 * MANIFOLD_VERBOSE >= 1. mf_fatal() prints and ends the whole job through the process manager
 * (exit code 1); use it only where no MPI error handler can be reached (e.g. inside a fabric
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
