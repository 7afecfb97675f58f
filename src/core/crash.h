/*
 * crash.h — the stack of a rank that dies of a fatal signal.
 *
 * A rank that dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT (a glibc heap check, an
 * assert) first writes one line to stderr naming its rank, pid and the signal, then the frames
 * of the thread that received it, and then dies of the same signal, so that mpiexec's verdict
 * ("rank N ... killed by signal S") is the same as without it. A crash that comes once in
 * thousands of runs (in CI, say) then leaves a stack in the log, not only a signal number.
 *
 * Installed once per process at start-up (MANIFOLD_BACKTRACE=1, the default), and only for the
 * signals whose action is still the default one: a handler of the program's own, or of a
 * sanitizer, stays in charge. It stays installed until the process ends, because teardown
 * (MPI_Finalize, exit handlers) is where such crashes tend to come.
 */
#ifndef MF_CORE_CRASH_H
#define MF_CORE_CRASH_H

/* Installs the handlers for the signals above that still have their default action (once per
 * process; later calls do nothing), reading MANIFOLD_BACKTRACE. `rank` is named in the report. */
void mf_crash_report_install(int rank);

#endif
