/*
 * memkind.h (api) — which memory allocation kinds each MPI object reports (MPI-4.1 12.4.3; the
 * kinds and the rules of narrowing are comm/memkind.h's).
 *
 * Inheritance: the World Model's objects start from the kinds asked for at start-up
 * (MANIFOLD_MEMORY_ALLOC_KINDS, set by mpiexec --memory-alloc-kinds), a session's from those
 * asked for by MPI_Session_init (else start-up's). A communicator reports its origin's kinds
 * narrowed by the mpi_assert_memory_alloc_kinds of its own hints (set at creation with info, by
 * MPI_Comm_set_info, or copied by MPI_Comm_dup); a window or file those of its communicator,
 * narrowed by the assertion in the info it was created (opened) with.
 */
#ifndef MF_API_MEMKIND_H
#define MF_API_MEMKIND_H

#include "comm/comm.h"
#include "comm/info.h"

/* The supported kinds asked for at start-up: a new string, or NULL when out of memory. */
char *mf_memkind_started(void);
/* Sets mpi_memory_alloc_kinds in `out` (replacing any value there) to the kinds communicator c
 * reports, narrowed by the assertion in `hints` (NULL: none), those of a window or file over c.
 * MPI_SUCCESS or MPI_ERR_NO_MEM. */
int mf_memkind_report(mf_info *out, const mf_comm *c, const mf_info *hints);

#endif
