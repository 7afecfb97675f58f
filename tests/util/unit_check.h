/*
 * unit_check.h — the checks of the unit tests that live beside the code (the <name>_test.c
 * files under src/ and tools/mpiexec/), so that each does not define its own.
 *
 *   CHECK(cond)               reports file, line and the condition; counts a failure, goes on
 *   CHECKF(cond, fmt, ...)    the same with a printf-style explanation
 *   return unit_check_result();   at the end of main: 0, or 1 if any check failed
 *
 * A test whose later steps cannot run after a failed check (they would dereference what the
 * check found missing) defines UNIT_CHECK_FATAL before including this header: every failed
 * check then ends the process at once with status 1.
 */
#ifndef MF_TESTS_UNIT_CHECK_H
#define MF_TESTS_UNIT_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int unit_check_failures;

#ifdef UNIT_CHECK_FATAL
#define UNIT_CHECK_FAILED_() exit(1)
#else
#define UNIT_CHECK_FAILED_() unit_check_failures++
#endif

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            UNIT_CHECK_FAILED_();                                                                  \
        }                                                                                          \
    } while (0)

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            UNIT_CHECK_FAILED_();                                                                  \
        }                                                                                          \
    } while (0)

static inline int unit_check_result(void)
{
    return unit_check_failures ? 1 : 0;
}

#endif
