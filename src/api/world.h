/*
 * world.h — learning the job's layout at MPI_Init: every rank publishes its host name, and after
 * the fence each rank derives which ranks share its host (mf_g.node_of, local ranks, nodes).
 * Part of bringing the library up (init.c): it talks to the process manager and names the shm
 * segment, so it sits at the top, above runtime and fabric; mf_g itself is core's (state.h).
 */
#ifndef MF_API_WORLD_H
#define MF_API_WORLD_H

/* Before the fence: publish what others need to know about this process. */
int mf_world_publish(void);
/* After the fence: fill the host layout and oversubscription fields of mf_g. */
int mf_world_discover(void);
void mf_world_free(void);

#endif
