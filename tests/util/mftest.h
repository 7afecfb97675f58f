/*
 * mftest.h — helpers for MPI test programs.
 *
 * A test program calls MPI_Init, checks its results with MF_CHECK (which prints the file, line,
 * rank and message of each failure and counts it), and ends with `return mftest_finish();`,
 * which finalizes and makes the rank exit non-zero if any check failed (mpiexec then fails the
 * job). Rank 0 prints " No Errors" when it saw none. A failing check never hangs the job.
 */
#ifndef MFTEST_H
#define MFTEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

extern int mftest_errors;

void mftest_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define MF_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            mftest_fail(__FILE__, __LINE__, __VA_ARGS__);                                          \
    } while (0)

/* Checks that an MPI call returned MPI_SUCCESS, printing the error string otherwise. */
#define MF_CHECK_MPI(call)                                                                         \
    do {                                                                                           \
        int mftest_rc_ = (call);                                                                   \
        if (mftest_rc_ != MPI_SUCCESS)                                                             \
            mftest_fail(__FILE__, __LINE__, "%s returned %s", #call,                               \
                        mftest_error_text(mftest_rc_));                                            \
    } while (0)

/* Checks that an MPI call failed with error class `want` (`what` names the case). */
#define MF_CHECK_CLASS(call, want, what)                                                           \
    do {                                                                                           \
        int mftest_cls_ = MPI_SUCCESS;                                                             \
        MPI_Error_class((call), &mftest_cls_);                                                     \
        MF_CHECK(mftest_cls_ == (want), "%s: error class %d, not %d", (what), mftest_cls_,         \
                 (int)(want));                                                                     \
    } while (0)

/* A small generator for randomized tests (xorshift64; *state nonzero): a value below n, the
 * same sequence on every rank from the same state. */
static inline unsigned mftest_random(uint64_t *state, unsigned n)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (unsigned)(x % n);
}

/* MPI_Get_count of a status: the elements of t it counts (MPI_UNDEFINED if not whole). */
static inline int mftest_count(const MPI_Status *st, MPI_Datatype t)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    return n;
}

const char *mftest_error_text(int code);
int mftest_finish(void);
/* A file name every rank of MPI_COMM_WORLD agrees on (collective): $TMPDIR (or /tmp), then
 * mf_<stem>.<rank 0's pid>. */
void mftest_shared_path(char *path, size_t len, const char *stem);
/* For tests that read MPI_T variables: MPI_T_init_thread, then MPI_Init (single thread), and the
 * rank and size in MPI_COMM_WORLD; mftest_finish_tools is mftest_finish, then MPI_T_finalize. */
void mftest_init_tools(int *argc, char ***argv, int *rank, int *size);
int mftest_finish_tools(void);

/* An MPI_User_function for tests of non-commutative reductions: `len` 2x2 integer matrices
 * (4 ints each, row-major) mod 9973, inout[k] = in[k] * inout[k]: associative, not commutative.
 * `dt` is not looked at (tests pass MPI_INT x4 types or call it directly with NULL). */
void mftest_matmul(void *in, void *inout, int *len, MPI_Datatype *dt);

/* A message's bytes that tell one message (`seed`) and each position apart: mftest_fill writes
 * them into b[0..n), mftest_filled says whether b holds exactly them. */
void mftest_fill(unsigned char *b, int n, int seed);
int mftest_filled(const unsigned char *b, int n, int seed);

/* One MPI_T counter of the library (a performance variable of class COUNTER, unsigned long
 * long, not bound to an object), read by name: for tests that check what the library did (how
 * often it slept, what it pulled). The caller has called MPI_T_init_thread; a missing variable
 * is a failed check, and reads then give 0. */
typedef struct mftest_counter {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    int ok;
} mftest_counter;
void mftest_counter_open(mftest_counter *c, const char *name);
unsigned long long mftest_counter_read(const mftest_counter *c);
void mftest_counter_close(mftest_counter *c);

/* Load the scheduler must share with the calling thread: pins it to the core it runs on and
 * starts a thread spinning on that core until mftest_share_core_end (one at a time). */
void mftest_share_core(void);
void mftest_share_core_end(void);

/* Whether the library finds a one-host job of `ranks` ranks oversubscribed (core/state.h):
 * mpiexec said so (MANIFOLD_OVERSUBSCRIBED=1) or the ranks outnumber the online cores, whose
 * count goes to *cores when cores is not NULL. */
int mftest_oversubscribed(int ranks, long *cores);

#endif
