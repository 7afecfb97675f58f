/*
 * fabric_mpit.h — what every fabric instance carried, published as MPI_T performance variables
 * (src/tool/mpit.h), one category per instance under its class's category:
 *
 *   <inst>_bytes_sent / _bytes_received           payload bytes (frame headers excluded)
 *   <inst>_frames_sent / _frames_received         frames of every kind (data and control)
 *   <inst>_eager_sent / _eager_received           messages sent eagerly (EAGER frames)
 *   <inst>_rendezvous_sent / _rendezvous_received rendezvous started (RTS frames)
 *   <inst>_rendezvous_pulled                      of those received, the ones this rank read
 *                                                 from the sender's memory (FIN frames sent);
 *                                                 the others were pushed to it (CTS sent)
 *   <inst>_connections                            connections set up (network classes only)
 *
 * All are counters (MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG), read from the instance's
 * mf_fabric_counters; nothing is added to the data path. Instances are published when they open
 * and frozen at their last values when they close (MPI_Finalize), so a tool can still read them
 * afterwards; a second MPI_Init (after a session) rebinds the same names.
 *
 * Both sides count a frame once: the sender when send takes it, the receiver when it is handed
 * up, so over a job one rank's sent counts by type equal its peers' received ones. Between two
 * readings they differ by what is in flight, and a receive may return after its progress pass
 * took later frames too (a rendezvous send completes at the sender first, which may send again
 * before the receiver's call returns): compare deltas only across a fence that keeps the peers
 * quiet (tests/mpit/mpit_fabric.c).
 */
#ifndef MF_FABRIC_FABRIC_MPIT_H
#define MF_FABRIC_FABRIC_MPIT_H

#include "fabric/fabric.h"

/* Publishes instance f's counters, and then its class's own (ops->mpit_publish). Failures (no
 * memory) are reported by the MPI_T registry and leave the instance unpublished; they never
 * fail MPI_Init. */
void mf_fabric_mpit_publish(mf_fabric *f);
/* Publishes one more counter of instance f, "<inst>_<what>", read from *src (written under the
 * library lock): what a class counts beyond mf_fabric_counters (the multirail wrapper's
 * failovers). From the class's ops->mpit_publish; frozen with the others. */
void mf_fabric_mpit_counter(mf_fabric *f, const char *what, const char *desc, uint64_t *src);
/* Freezes every published counter at its current value (before the instances are freed). */
void mf_fabric_mpit_detach_all(void);

#endif
