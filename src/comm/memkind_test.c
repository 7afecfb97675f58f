/* Unit test of memkind.c: which requested kinds are supported, and narrowing by assertions. */
#include <stdlib.h>
#include <string.h>

#include "comm/memkind.h"
#include "unit_check.h"

static void expect_supported(const char *requested, const char *want)
{
    char *got = mf_memkind_supported(requested);
    CHECKF(got && !strcmp(got, want), "supported(\"%s\") = \"%s\", want \"%s\"",
           requested ? requested : "(null)", got ? got : "(null)", want);
    free(got);
}

static void expect_narrow(const char *kinds, const char *asserted, const char *want)
{
    char *got = mf_memkind_narrow(kinds, asserted);
    CHECKF(got && !strcmp(got, want), "narrow(\"%s\", \"%s\") = \"%s\", want \"%s\"", kinds,
           asserted ? asserted : "(null)", got ? got : "(null)", want);
    free(got);
}

int main(void)
{
    /* Nothing asked: the standard's default. */
    expect_supported(NULL, "mpi,system");
    /* Asked for nothing: nothing. */
    expect_supported("", "");
    expect_supported(" , ,", "");
    /* Device memory and unknown restrictors are not supported; the order asked is kept. */
    expect_supported("system,cuda:device,mpi:alloc_mem,foo,mpi:bogus", "system,mpi:alloc_mem");
    expect_supported("rocm,level_zero:shared,cuda", "");
    /* Spaces around entries, duplicates. */
    expect_supported(" mpi , system,mpi,  mpi:win_allocate_shared ",
                     "mpi,system,mpi:win_allocate_shared");
    /* A kind is a whole word: prefixes and case are not the kind. */
    expect_supported("sys,mpix,MPI,system:x,mpi:", "");

    /* No promise: the inherited kinds. */
    expect_narrow("mpi,system", NULL, "mpi,system");
    /* A promise keeps what it names of the inherited, in its order. */
    expect_narrow("mpi,system", "system", "system");
    expect_narrow("mpi,system", "system,mpi", "system,mpi");
    expect_narrow("mpi,system", "", "");
    /* A restricted kind is covered by its whole kind; an unknown restriction is not. */
    expect_narrow("mpi,system", "mpi:alloc_mem,cuda:device,mpi:bogus", "mpi:alloc_mem");
    /* A whole kind promised keeps the restricted forms inherited, not more. */
    expect_narrow("system,mpi:alloc_mem,mpi:win_allocate", "mpi", "mpi:alloc_mem,mpi:win_allocate");
    expect_narrow("system,mpi:alloc_mem", "mpi:win_allocate", "");
    expect_narrow("system", "mpi", "");
    /* Each once, however it is reached. */
    expect_narrow("mpi:alloc_mem,system", "mpi:alloc_mem,mpi,system,system",
                  "mpi:alloc_mem,system");
    return unit_check_result();
}
