/*
 * session.h — what session.c (MPI-4 sessions) offers the other entry points: a session's
 * buffered-send buffer (api/bsend.c), its error handler, and the process sets (the split type
 * MPI_COMM_TYPE_RESOURCE_GUIDED of api/comm.c).
 */
#ifndef MF_API_SESSION_H
#define MF_API_SESSION_H

#include <mpi.h>

#include "api/p2p_args.h"

/* Where session `h` keeps its buffer (an MPI_ERR_SESSION code naming the handle if it is not
 * a session). */
int mf_session_bsend(MPI_Session h, mf_bsend_pool ***where, const char *fn);
/* Its buffer, or NULL (also for a handle that is no session). */
mf_bsend_pool *mf_session_bsend_of(MPI_Session h);
/* Raises `code` on session `h` (or where errors of no object go); takes the library lock. */
int mf_session_raise(MPI_Session h, int code, const char *fn);

/* The memory allocation kinds session `h` supports (api/memkind.h), or NULL for a handle that
 * is no session. */
const char *mf_session_memkinds(MPI_Session h);

/* The color this process takes in a split by process set `name` (the members of one set share
 * one), or MPI_UNDEFINED when the job has no such set (names match without regard to case). */
int mf_pset_split_color(const char *name);

#endif
