/*
 * comm_internal.h — what the communicator module's files share with each other and with the
 * communicator API files (src/api/comm*.c, group.c, attr.c, topo.c) and the code that builds
 * communicators (src/coll/comm_build.h); not a contract for other layers. Nothing here sends a
 * message: p2p reads communicators, so comm/ sits below it (docs/HACKING.md).
 */
#ifndef MF_COMM_COMM_INTERNAL_H
#define MF_COMM_COMM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/comm.h"

/* ---- Context ids (context.c) ---------------------------------------------------------------
 * Each process keeps a bitmask of the context ids it does not use. A new communicator's id is
 * the lowest id free at every participant (AND of the masks), reserved at every participant
 * (see context.c; the agreement itself is src/coll/context_agree.c); members then commit it
 * (mf_comm_new), and release it when the communicator object is destroyed. Ids are even
 * (MF_CONTEXT_STRIDE). */
#define MF_CONTEXT_WORDS 64 /* 4096 ids */
/* The context of a communicator built by MPI_Comm_idup whose id is still being agreed. */
#define MF_CONTEXT_NONE UINT32_MAX
void mf_context_init(void);
/* Takes an id (idempotent); ids beyond the mask, such as MF_CONTEXT_NONE, are ignored. */
void mf_context_take(uint32_t context);
/* Frees an id: a destroyed communicator's, or a reservation not committed. */
void mf_context_release(uint32_t context);
/* The building blocks, for agreements run as schedules (MPI_Comm_idup, src/coll/nbc_idup.c):
 * a copy of this process's free mask (reserved ids are not free); takes `context` if it is
 * still free here (true) or reports that it is not; picks an id set in `mask` — the lowest on
 * attempt 0, one of the lowest few on later attempts (a function of seed and attempt, which
 * must be the same at every participant). */
void mf_context_snapshot(uint64_t *mask);
bool mf_context_reserve(uint32_t context);
int mf_context_pick(const uint64_t *mask, unsigned seed, unsigned attempt, uint32_t *context);

/* Deletes every attribute (calling delete callbacks) and drops the user's reference: the work
 * of MPI_Comm_free / MPI_Comm_disconnect (comm.c). */
int mf_comm_free_user(mf_comm *c);

#endif
