/*
 * p2p_internal.h — what the MPI point-to-point entry points (src/api/p2p_*.c) need from the
 * engine beyond p2p.h: probing, matched messages (MPI_Mprobe), peer state, request handles.
 */
#ifndef MF_P2P_P2P_INTERNAL_H
#define MF_P2P_P2P_INTERNAL_H

#include "p2p/match.h"
#include "p2p/request.h"

/* First error seen for each world rank once its fabric declared it unreachable; NULL until the
 * first failure (protocol.c). */
extern int *mf_p2p_peer_error;
/* MPI_SUCCESS, or the error recorded when `peer` (world rank) became unreachable. Inline: every
 * send and receive asks. */
static inline int mf_p2p_peer_status(int peer)
{
    return mf_p2p_peer_error ? mf_p2p_peer_error[peer] : MPI_SUCCESS;
}

/* Looks for a message matching (source, tag) on comm's context + ctx after one progress pass.
 * Sets *flag and, when found, the status (source, tag, byte count). With `take`, the message
 * leaves the queue and is returned in *msg for mf_p2p_recv_message (MPI_Mprobe/Improbe). */
int mf_p2p_iprobe(int source, int tag, mf_comm *comm, unsigned ctx, bool take, int *flag,
                  MPI_Status *status, mf_unexpected **msg);
/* Receives a message taken by a matched probe into r (posted with rq_buf/count/dt set). */
int mf_p2p_recv_message(mf_request *r, mf_unexpected *u);

/* User handles for matched messages (MPI_Message); those of requests are in p2p.h. */
int mf_message_handle(mf_unexpected *u, MPI_Message *handle);
mf_unexpected *mf_message_take(MPI_Message handle);

/* MPI_Cancel. A receive not matched yet is cancelled at once (returns true). For a send the
 * receiver is asked to drop the message if it has not matched it; the request completes,
 * cancelled or not, when the answer comes (returns whether it asked). */
bool mf_p2p_cancel(mf_request *r);

#endif
