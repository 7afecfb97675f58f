/*
 * runtime.h — one runtime for the world model and for sessions (MPI-4.0 section 11.2, 11.3).
 *
 * The runtime is the process manager connection, the fabrics and progress engine, and the
 * objects behind MPI_COMM_WORLD and MPI_COMM_SELF that sessions build on. Its users are the world
 * model (MPI_Init .. MPI_Finalize) and each open session: the first user to arrive brings it up,
 * whichever that is, once. When the last user leaves, pending sends are delivered and the job
 * fences (every process must end its last user too, as with MPI_Finalize); then
 *   - if that user is the world model (MPI_Finalize), the runtime closes for good: MPI cannot
 *     start again in this process (the launcher's connection is gone);
 *   - if it is a session, the runtime stays idle, so that a later MPI_Init or session (MPI-4
 *     lets sessions come and go) reuses it without a second start, and closes at process exit.
 */
#ifndef MF_API_RUNTIME_H
#define MF_API_RUNTIME_H

#include <stdbool.h>

/* Registers a user needing thread level `required` (the level only ever rises; *provided gets
 * the level in force, if provided is not NULL); brings the runtime up for the first one. */
int mf_runtime_acquire(int required, int *provided, const char *function);
/* Drops a user (`world`: the world model's, at MPI_Finalize); the last one ends it as above. */
int mf_runtime_release(bool world, const char *function);

#endif
