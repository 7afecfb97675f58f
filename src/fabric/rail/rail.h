/*
 * rail.h — the multirail wrapper (rail.c describes the protocol and the settings). Used by the
 * registry only: one instance sits in the routes in place of several network instances.
 */
#ifndef MF_FABRIC_RAIL_RAIL_H
#define MF_FABRIC_RAIL_RAIL_H

#include <stddef.h>

#include "fabric/fabric.h"

extern const mf_fabric_class mf_rail_class;

/* Makes f (a new instance of mf_rail_class) stripe over rails[0..n-1] (opened instances of
 * classes with MF_FABRIC_CAP_RAIL, or fault wrappers over them); installs its upcalls on them.
 * MPI_SUCCESS or an error code (no memory, a bad setting). */
int mf_rail_wrap(mf_fabric *f, mf_fabric *const *rails, int n);
/* Its own MPI_T counters (ops->mpit_publish), beside every instance's:
 *   <inst>_rail_failovers  rails given up on to a peer (a connection error or silence)
 *   <inst>_chunks_resent   chunks sent again on another rail after their rail failed
 *   <inst>_rails_revived   failed rails taken back into use */
/* "rail0(tcp0/tcp1)" into buf, for reports. */
void mf_rail_describe(mf_fabric *f, char *buf, size_t len);

#endif
