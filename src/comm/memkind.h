/*
 * memkind.h — memory allocation kinds (MPI-4.1 section 12.4.3, "Memory Allocation Info", and
 * the MPI Forum's side document "Memory Allocation Kinds"): which kinds of memory a program may
 * hand to MPI.
 *
 * A kind is a name with an optional restrictor, "kind[:restrictor]"; a value is a
 * comma-separated list of them. Manifold moves data with the CPU only, so it supports
 *   system                          memory from any system allocator (malloc, the stack, mmap)
 *   mpi                             memory MPI allocated, with the restrictors
 *   mpi:alloc_mem, mpi:win_allocate, mpi:win_allocate_shared   (one allocating call each)
 * and no device memory (cuda, rocm, level_zero).
 *
 * The keys:
 *   mpi_memory_alloc_kinds   asked for at start-up (mpiexec --memory-alloc-kinds, i.e.
 *                            MANIFOLD_MEMORY_ALLOC_KINDS) or by MPI_Session_init's info; the
 *                            library answers with the same key on every session, communicator,
 *                            window and file: the kinds asked for that it supports, in the order
 *                            asked, each once ("mpi,system" when nothing was asked);
 *   mpi_assert_memory_alloc_kinds   the program's promise, in an object's info, to use only
 *                            these kinds with it: the object then reports the kinds it inherited
 *                            narrowed to the promised ones (as Open MPI does; MPICH 5.0 keeps
 *                            reporting the inherited kinds).
 *
 * Pure string logic: the layers that own the objects decide what each inherits.
 */
#ifndef MF_COMM_MEMKIND_H
#define MF_COMM_MEMKIND_H

#define MF_MEMKIND_KEY "mpi_memory_alloc_kinds"
#define MF_MEMKIND_ASSERT_KEY "mpi_assert_memory_alloc_kinds"
#define MF_MEMKIND_DEFAULT "mpi,system"

/* The kinds of `requested` that Manifold supports, in the order given, each once (spaces around
 * entries ignored, empty entries skipped); NULL asks for the default. A new string (free()), or
 * NULL when out of memory. */
char *mf_memkind_supported(const char *requested);

/* The kinds an object keeps of those it inherited (`kinds`, a supported list) when the program
 * promised to use only `asserted` with it (NULL: no promise, a copy of `kinds`): each promised
 * kind that `kinds` covers, in the promised order, each once. A restricted kind is covered by
 * itself or by its whole kind ("mpi:alloc_mem" by "mpi"); a whole kind promised keeps the
 * restricted ones inherited ("mpi" keeps "mpi:alloc_mem"). A new string, or NULL when out of
 * memory. */
char *mf_memkind_narrow(const char *kinds, const char *asserted);

#endif
