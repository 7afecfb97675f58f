/*
 * runtime.h — one runtime for the world model and for sessions (MPI-4.0 section 11.2, 11.3).
 *
 * The runtime is the process manager connection, the fabrics and progress engine, and the
 * objects behind MPI_COMM_WORLD and MPI_COMM_SELF that sessions build on. Its users are the world
 * model (MPI_Init .. MPI_Finalize) and each open session: the first user to arrive brings it up,
 * whichever that is, and the last one to leave tears it down (with a fence over the job, so
 * every process must end its last user too). Once torn down it cannot be brought up again in
 * this process: the launcher's connection is gone.
 */
#ifndef MF_API_RUNTIME_H
#define MF_API_RUNTIME_H

/* Registers a user needing thread level `required` (the level only ever rises; *provided gets
 * the level in force, if provided is not NULL); brings the runtime up for the first one. */
int mf_runtime_acquire(int required, int *provided, const char *function);
/* Drops a user; the last one tears the runtime down. */
int mf_runtime_release(const char *function);

#endif
