/*
 * comm_build.h — building communicators: the collective steps behind MPI_Comm_dup, split,
 * create, create_group, Intercomm_create/merge and the MPI-4 constructors, and the exchange
 * behind the blocking neighborhood collectives. They send messages, so they live above p2p in
 * the collective layer; the communicator object, its groups and the context-id bitmask they
 * work on are comm/'s (comm.h, comm_internal.h), below p2p.
 *
 * Mini-collectives: communicator creation needs a few collective steps (agree on a context id,
 * exchange colors and keys) before the collective layer can be used on the new communicator,
 * and sometimes over a subset of the parent (MPI_Comm_create_group) that no communicator
 * describes yet. They run over "participants": `n` ranks of `comm`'s local group listed in
 * `members` (NULL means all ranks 0..n-1 in order), of which this process is number `me`. They
 * travel on comm's collective context with the given tag, so they never match user messages.
 */
#ifndef MF_COLL_COMM_BUILD_H
#define MF_COLL_COMM_BUILD_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/comm.h"
#include "comm/comm_internal.h"
#include "datatype/datatype.h"

/* ---- Mini-collectives over participants (comm_coll.c) -------------------------------------- */
typedef struct mf_participants {
    mf_comm *p_comm;      /* an intracommunicator whose ranks the members are */
    const int *p_members; /* ranks in p_comm, or NULL for 0..p_n-1 */
    int p_n;
    int p_me; /* this process's index among the members */
    int p_tag;
} mf_participants;

/* All participants over p_comm (an intracomm) with tag MF_TAG_COMM_AGREE. */
mf_participants mf_participants_all(mf_comm *comm);

/* Bitwise AND of `words` 64-bit words across the participants; every one gets the result. */
int mf_pcoll_allreduce_band(const mf_participants *p, uint64_t *words, int nwords);
/* Root's `bytes` bytes to every participant (root is an index among the participants). */
int mf_pcoll_bcast(const mf_participants *p, int root, void *buf, size_t bytes);
/* Each participant's `bytes` bytes, gathered in participant order into all[n * bytes]. */
int mf_pcoll_allgather(const mf_participants *p, const void *mine, size_t bytes, void *all);

/* ---- Context-id agreement (context_agree.c) over the bitmask of comm/context.c ------------- */
/* Collective over p: agrees on an id free at every participant and reserves it here; the
 * caller commits it (mf_comm_new) or, where it builds no communicator, releases it
 * (mf_context_release). Nonblocking creations pending meanwhile are respected. */
int mf_context_agree(const mf_participants *p, uint32_t *context);
/* As above for an intercommunicator: the local participants reduce their masks, the local
 * leader (participant 0) exchanges the result with the remote leader (rank `remote_leader` of
 * `bridge`, tag `tag`), and the AND of both sides is broadcast locally. Both groups get the
 * same id, reserved as above. */
int mf_context_agree_inter(const mf_participants *local, mf_comm *bridge, int remote_leader,
                           int tag, uint32_t *context);

/* ---- Building communicators (comm_create.c) ------------------------------------------------ */
/* Collective over p: agrees a context and, where `group` is non-NULL (this process is one of
 * its members), builds an intracommunicator over it that inherits from parent (mf_comm_inherit);
 * *out is NULL otherwise. Takes no reference on `group` (the new communicator takes its own). */
int mf_comm_create_over(const mf_participants *p, mf_comm *parent, mf_group *group, mf_comm **out);
/* What every communicator takes from the one it derives from (`from` NULL: nothing): its error
 * handler and its session. */
void mf_comm_inherit(mf_comm *c, const mf_comm *from);
/* MPI_Comm_split's work on an intracommunicator: every process of c takes part; *out is NULL
 * for MPI_UNDEFINED. Members of a color are ordered by (key, rank in c). */
int mf_comm_split(mf_comm *c, int color, int key, mf_comm **out);
/* The same on an intercommunicator: both sides split, same colors are joined (see
 * comm_create.c); NULL when either side has no member of this process's color. */
int mf_comm_split_inter(mf_comm *c, int color, int key, mf_comm **out);
/* MPI_Comm_create on an intercommunicator: g is this side's subgroup (same on every process of
 * the side); members of g get an intercommunicator to the other side's subgroup, unless either
 * is empty. */
int mf_comm_create_inter_group(mf_comm *c, mf_group *g, mf_comm **out);
/* MPI_Comm_dup's work, intra or inter: new context(s), same groups, copied attributes are the
 * API's business. */
int mf_comm_dup_internal(mf_comm *parent, mf_comm **out);
/* MPI_Comm_idup in two halves around the agreement that src/coll/nbc_idup.c runs as a
 * schedule. prepare: the duplicate (and an intercommunicator's local communicator) with the
 * parent's groups, error handler, topology and hints, a user handle and context
 * MF_CONTEXT_NONE. commit: gives it the agreed ids, reserved here by the agreement (ids[0];
 * ids[1] for the local communicator of an intercommunicator), and copies the parent's
 * attributes (copy callbacks run now); on a callback's failure the copies made are deleted. */
int mf_comm_idup_prepare(mf_comm *parent, mf_comm **out);
int mf_comm_idup_commit(mf_comm *parent, mf_comm *c, const uint32_t *ids);
/* Builds an intercommunicator from agreed local and remote groups: makes the local intracomm
 * (collective over `local`), then agrees the intercomm's id through the leaders. */
int mf_comm_create_inter(const mf_participants *local, mf_group *local_group,
                         mf_group *remote_group, mf_comm *bridge, int remote_leader, int tag,
                         mf_comm *errh_from, mf_comm **out);

/* The MPI-4 constructors without a parent communicator (MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups): collective over the members of the group(s) only. Their
 * mini-collectives travel on MPI_COMM_WORLD's object (its ranks are world ranks, and it exists
 * whenever the runtime is up, with or without MPI_Init) on a tag hashed from the string tag
 * into MF_TAG_FROM_GROUP's 32768 values, so creations with different string tags running at once
 * over overlapping groups do not mix unless their hashes collide. This process must be
 * a member of `group` (of `local`). The new communicator has MPI_ERRORS_ARE_FATAL. */
int mf_comm_from_group(mf_group *group, const char *stringtag, mf_comm **out);
/* local_leader, remote_leader: ranks in local and remote; the groups must be disjoint. */
int mf_intercomm_from_groups(mf_group *local, int local_leader, mf_group *remote, int remote_leader,
                             const char *stringtag, mf_comm **out);

/* ---- Neighborhood exchange (topo_neighbor.c) ----------------------------------------------
 * One block per neighbour: sends[j] goes to destination j, recvs[i] comes from source i, as
 * mf_topo_neighbors orders them; MPI_PROC_NULL neighbours are skipped (their receive blocks
 * stay untouched). Blocking, collective over c. Cartesian blocks are matched by direction
 * (a grid of size 1 or 2 in a periodic dimension has the same neighbour on both sides); graph
 * blocks between the same pair of processes are matched in order. */
typedef struct mf_nb_block {
    const void *buf; /* address of the block's first element */
    MPI_Count count;
    mf_datatype *dt;
} mf_nb_block;

int mf_topo_neighbor_exchange(mf_comm *c, const mf_nb_block *sends, const mf_nb_block *recvs);

#endif
