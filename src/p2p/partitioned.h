/*
 * partitioned.h — partitioned point-to-point communication (MPI-4.0 chapter 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready and its range and list forms, MPI_Parrived.
 *
 * A partitioned request is a persistent request (r_kind MF_REQ_PART) whose owner data is a
 * channel to one peer. MPI_Psend_init and MPI_Precv_init are local; the channel is matched to
 * its peer's in the background, in the order the two sides initialise (per source, tag and
 * communicator, like messages). Each MPI_Start begins a round; a round's request (the persistent
 * request's rq_inner) completes when every partition has gone (send) or landed (receive).
 *
 * Wire (all on the communicator's collective context, tags from MF_TAG_PART_BASE, comm.h):
 *   hello   sender -> receiver at Psend_init, tag MF_TAG_PART_HELLO: the user's tag, the
 *           sender's partition count and bytes per partition, and a reply tag the sender took
 *           from its own tag space;
 *   reply   receiver -> sender, on that reply tag, once a Precv_init matched the hello: OK and
 *           the first of the partition tags the receiver took (one per send partition), or the
 *           error that ends both sides (sizes that differ);
 *   data    one message per send partition and round, as soon as the partition is ready and the
 *           reply is in, on its partition tag: ordinary messages (eager or rendezvous, any fabric,
 *           any datatype). Rounds follow each other on the same tags: messages between two
 *           processes on one tag do not overtake each other.
 * The receiver lands each send partition in place when both sides have as many partitions
 * (any datatype); otherwise in a packed staging buffer, from which a receive partition is
 * unpacked once every send partition overlapping it has landed (MPI_Parrived, or the round's end).
 *
 * All functions are called with the library lock held.
 */
#ifndef MF_P2P_PARTITIONED_H
#define MF_P2P_PARTITIONED_H

#include <stdbool.h>

#include "p2p/p2p.h"

/* A new inactive partitioned request: `partitions` partitions of `count` elements of dt at buf,
 * sent to or received from comm rank `peer` (or MPI_PROC_NULL) with `tag`. Arguments already
 * checked by the caller, except what only this layer knows (the total size). */
int mf_part_init(bool is_send, void *buf, int partitions, MPI_Count count, mf_datatype *dt,
                 int peer, int tag, mf_comm *comm, const char *fn, mf_request **out);
/* MPI_Start of a partitioned request (inactive, checked by the caller). */
int mf_part_start(mf_request *r);
/* MPI_Pready, _range and _list: marks partitions ready on an active send request. `list` NULL:
 * the partitions low..high; else list[0..n). Errors name the offending argument. */
int mf_part_ready(mf_request *r, int low, int high, const int *list, int n, const char *fn);
/* MPI_Parrived: whether receive partition `partition` of r has landed in the user's buffer. */
int mf_part_arrived(mf_request *r, int partition, bool *flag, const char *fn);

#endif
