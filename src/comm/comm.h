/*
 * comm.h — groups and communicators as the other layers see them.
 *
 * A group is an ordered list of world ranks. A communicator is a group (two for an
 * intercommunicator), this process's rank in it, and a context id that separates its traffic:
 * point-to-point frames carry context_id, collective frames context_id + MF_CTX_COLL, so user
 * messages never match collective ones. Context ids are agreed collectively when a communicator
 * is created (see context.c) and are never reused while any process still uses them.
 *
 * Objects are reference counted: nonblocking operations hold their communicator until they
 * complete, so MPI_Comm_free on a busy communicator is safe.
 */
#ifndef MF_COMM_COMM_H
#define MF_COMM_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/errhandler.h"

#define MF_CTX_P2P 0u
#define MF_CTX_COLL 1u
#define MF_CONTEXT_STRIDE 2u /* context ids step by 2: one for p2p, one for collectives */

typedef struct mf_group {
    MPI_Group g_handle;
    int g_refs;
    int g_size;
    int g_rank;         /* this process's rank in the group, or MPI_UNDEFINED */
    int *g_world_ranks; /* g_world_ranks[i]: world rank of group member i */
    /* The session it derives from (MPI_Group_from_session_pset, and groups made from such a
     * group), which a communicator made from it derives from too; 0: none. */
    MPI_Session g_session;
} mf_group;

struct mf_attr_list;
struct mf_topology;
struct mf_fabric;

typedef struct mf_comm {
    MPI_Comm c_handle;
    int c_refs;
    uint32_t c_context; /* even; + MF_CTX_COLL for collectives */
    int c_rank;         /* rank in the local group */
    int c_size;         /* size of the local group */
    mf_group *c_group;  /* local group */
    mf_group *c_remote; /* remote group of an intercommunicator, else NULL */
    bool c_is_inter;
    /* By world rank: the fabric instance the communicator's messages to that peer take, chosen
     * when it is created (fabric.h: mf_fabric_picks): point-to-point's route, unless it carries
     * another function (a window's private duplicate: one-sided traffic). Set before any
     * message, never changed after: MPI's order holds per instance. */
    struct mf_fabric *const *c_fabrics;
    mf_errhandler *c_errhandler;
    char c_name[MPI_MAX_OBJECT_NAME];
    struct mf_attr_list *c_attrs;
    struct mf_topology *c_topo;
    struct mf_comm
        *c_local_comm;      /* intercomm: an intracomm over the local group, for collectives */
    struct mf_info *c_info; /* hints from MPI_Comm_set_info / *_with_info, or NULL */
    /* The collective layer's per-communicator state (src/coll/coll_shm.c: the host's shared
     * segment), NULL until its first collective, and the function (set with it: the layer is
     * above this one) that releasing the communicator calls to free it. */
    struct mf_coll_shm *c_coll;
    void (*c_coll_free)(struct mf_comm *c);
    /* MPI-4.1 buffered sends: the buffer attached to this communicator (MPI_Comm_attach_buffer;
     * api/bsend.c), NULL if none; and the session it derives from (made from a session's group,
     * or from a communicator that does), whose buffer comes next; 0: none. */
    struct mf_bsend_pool *c_bsend;
    MPI_Session c_session;
} mf_comm;

/* c_refs is written under the library lock (or by the one thread in MPI), and read without it
 * where MPI_Comm_rank and MPI_Comm_size answer for the predefined communicators (api/
 * comm_query.c): relaxed atomic loads and stores, plain moves on x86-64, as core/counter.h. */
static inline int mf_comm_refs(const mf_comm *c)
{
    return __atomic_load_n(&c->c_refs, __ATOMIC_RELAXED);
}
static inline void mf_comm_set_refs(mf_comm *c, int refs)
{
    __atomic_store_n(&c->c_refs, refs, __ATOMIC_RELAXED);
}

/* The object behind a communicator handle (builtin or user), or NULL if the handle is invalid.
 * MPI_COMM_WORLD, the handle of most calls, is answered inline; the others by
 * mf_comm_get_other. */
extern mf_comm mf_comm_world_obj;
mf_comm *mf_comm_get_other(MPI_Comm handle);
static inline mf_comm *mf_comm_get(MPI_Comm handle)
{
    if (handle == MPI_COMM_WORLD)
        return mf_comm_refs(&mf_comm_world_obj) ? &mf_comm_world_obj : NULL;
    return mf_comm_get_other(handle);
}
mf_comm *mf_comm_world(void);
mf_comm *mf_comm_self(void);

/* World rank of rank `r` of the group messages go to (remote group for intercommunicators). */
static inline int mf_comm_peer(const mf_comm *c, int r)
{
    const mf_group *g = c->c_is_inter ? c->c_remote : c->c_group;
    return g->g_world_ranks[r];
}
/* The fabric instance that carries c's messages to world rank `peer`. */
static inline struct mf_fabric *mf_comm_fabric(const mf_comm *c, int peer)
{
    return c->c_fabrics[peer];
}
/* Size of the group `dest`/`source` ranks refer to (remote size for intercommunicators). */
static inline int mf_comm_peer_size(const mf_comm *c)
{
    return c->c_is_inter ? c->c_remote->g_size : c->c_size;
}

/* Inline: every request takes a reference on its communicator. */
static inline void mf_comm_retain(mf_comm *c)
{
    mf_comm_set_refs(c, c->c_refs + 1);
}
/* Frees a communicator whose last reference went, unless it is a predefined one (comm.c). */
void mf_comm_destroy(mf_comm *c);
/* Inline, as retain is: every request drops its reference when it is freed. */
static inline void mf_comm_release(mf_comm *c)
{
    int refs = c->c_refs - 1;
    mf_comm_set_refs(c, refs);
    if (refs <= 0)
        mf_comm_destroy(c);
}
void mf_group_retain(mf_group *g);
void mf_group_release(mf_group *g);

/* Builds MPI_COMM_WORLD and MPI_COMM_SELF; called once by MPI_Init after the fabrics. */
int mf_comm_init_builtin(void);
void mf_comm_finalize_builtin(void);
/* Deletes MPI_COMM_SELF's then MPI_COMM_WORLD's attributes (running delete callbacks, which
 * may communicate): MPI_Finalize should call it first, before its closing fence.
 * mf_comm_finalize_builtin calls it too (a second call finds nothing left). */
void mf_comm_finalize_attrs(void);

/* ---- Additions by the communicator module (comm, group, context, attributes) ---------------- */

/* Largest tag (the MPI_TAG_UB attribute of MPI_COMM_WORLD). */
#define MF_TAG_UB 0x7fffffff
/* Tags the communicator module uses on MF_CTX_COLL traffic of a parent communicator while it
 * builds a new one; collectives (src/coll) must use tags below MF_TAG_COMM_BASE. */
#define MF_TAG_COMM_BASE 0x7fff0000
#define MF_TAG_COMM_AGREE (MF_TAG_COMM_BASE + 1)   /* context-id agreement, allgathers */
#define MF_TAG_COMM_INTER (MF_TAG_COMM_BASE + 2)   /* intercommunicator leaders' exchanges */
#define MF_TAG_NEIGHBOR (MF_TAG_COMM_BASE + 0x100) /* + slot: neighborhood collectives */
/* Partitioned communication (p2p/partitioned.h) on MF_CTX_COLL: the hello of a new channel,
 * then MF_TAG_PART_SPAN tags for replies and partitions, each taken by the process that receives
 * on it while a channel lives. Above the collectives' tags and below MF_TAG_COMM_BASE. */
#define MF_TAG_PART_BASE 0x20000000
#define MF_TAG_PART_HELLO MF_TAG_PART_BASE
#define MF_TAG_PART_SPAN 0x3fffffff
/* + (hash of the string tag & MF_TAG_FROM_GROUP_MASK): MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups, on MPI_COMM_WORLD's object (see comm_internal.h) */
#define MF_TAG_FROM_GROUP (MF_TAG_COMM_BASE + 0x8000)
#define MF_TAG_FROM_GROUP_MASK 0x7fff

/* Groups (group.c). A group has a user handle only once handed to the user (g_handle is
 * MPI_GROUP_NULL until then). */
mf_group *mf_group_get(MPI_Group handle); /* NULL if invalid or MPI_GROUP_NULL */
/* A new group of `size` members (world ranks copied), one reference, no handle. */
int mf_group_new(int size, const int *world_ranks, mf_group **out);
/* Gives g a user handle if it has none and takes a reference for the user. */
int mf_group_to_handle(mf_group *g, MPI_Group *out);
/* Rank in g of a world rank, or MPI_UNDEFINED. */
int mf_group_rank_of(const mf_group *g, int world_rank);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL (MPI_Group_compare's answer). */
int mf_group_compare(const mf_group *a, const mf_group *b);

/* The table behind user communicator handles (comm.c). */
/* A new communicator object with one reference and a user handle; takes over `group` (and
 * `remote`) references. The caller sets the context and anything else before exposing it. */
int mf_comm_new(mf_group *group, mf_group *remote, uint32_t context, mf_comm **out);

#endif
