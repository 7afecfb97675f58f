/*
 * coll.h — blocking collective operations inside the library.
 *
 * The MPI collective API (src/api/coll*.c) checks arguments and calls these; other modules
 * (communicator creation, RMA, I/O) call them directly, without the API's checks. Every process
 * of `comm` must make the matching call, in the same order on each communicator, with type
 * signatures that match as the standard requires.
 *
 * Conventions:
 *   - sbuf may be MPI_IN_PLACE where the standard allows it (then the data is taken from rbuf as
 *     the standard describes for that operation); the caller has checked that.
 *   - counts are element counts of the datatype next to them; displacements are in elements of
 *     that datatype's extent, except alltoallw's, which are in bytes.
 *   - intercommunicators are handled here too (root = MPI_ROOT / MPI_PROC_NULL / remote rank for
 *     the rooted operations; the result of a reduction on one group is the reduction of the other
 *     group's data).
 *   - all traffic uses comm's collective context (MF_CTX_COLL), so it never matches user
 *     messages; returns MPI_SUCCESS or the error code of the first failed step.
 *
 * Algorithms are chosen by message size, communicator size and placement (a shared segment when
 * all ranks share a host: coll_shm.c; host-leader phases when they span hosts: coll_hier.c);
 * MANIFOLD_COLL_<NAME> forces one (config_vars.def; docs/PERFORMANCE.md lists them).
 */
#ifndef MF_COLL_COLL_H
#define MF_COLL_COLL_H

#include <mpi.h>

#include "coll/op.h"
#include "comm/comm.h"
#include "datatype/datatype.h"

int mf_coll_barrier(mf_comm *comm);
int mf_coll_bcast(void *buf, MPI_Count count, mf_datatype *dt, int root, mf_comm *comm);

int mf_coll_gather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                   MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm);
int mf_coll_gatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                    const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt, int root,
                    mf_comm *comm);
int mf_coll_scatter(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                    MPI_Count rcount, mf_datatype *rdt, int root, mf_comm *comm);
int mf_coll_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                     mf_datatype *sdt, void *rbuf, MPI_Count rcount, mf_datatype *rdt, int root,
                     mf_comm *comm);

int mf_coll_allgather(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                      MPI_Count rcount, mf_datatype *rdt, mf_comm *comm);
int mf_coll_allgatherv(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                       const MPI_Count *rcounts, const MPI_Aint *displs, mf_datatype *rdt,
                       mf_comm *comm);

int mf_coll_alltoall(const void *sbuf, MPI_Count scount, mf_datatype *sdt, void *rbuf,
                     MPI_Count rcount, mf_datatype *rdt, mf_comm *comm);
int mf_coll_alltoallv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      mf_datatype *sdt, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, mf_datatype *rdt, mf_comm *comm);
/* sdispls / rdispls in bytes; one datatype per peer. */
int mf_coll_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      mf_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, mf_datatype *const *rdts, mf_comm *comm);

int mf_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                   int root, mf_comm *comm);
int mf_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                      mf_comm *comm);
int mf_coll_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, mf_datatype *dt,
                           mf_op *op, mf_comm *comm);
int mf_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, mf_datatype *dt,
                                 mf_op *op, mf_comm *comm);
int mf_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                 mf_comm *comm);
/* Releases what the collective layer keeps for comm (comm.h: c_coll; the layer installs it as
 * c_coll_free, which releasing the communicator calls). Local, never communicates. */
void mf_coll_comm_free(mf_comm *comm);

/* Maps one zero-filled shared segment of `len` bytes at the same contents for every rank of
 * `node`, whose ranks must all live on this host (collective over node; `kind` goes into the
 * transient /dev/shm name). *out is the local address; munmap(*out, len) releases it. The
 * outcome is agreed: on any rank's failure all get an error and no mapping. */
int mf_host_segment_map(mf_comm *node, size_t len, const char *kind, void **out);

int mf_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count, mf_datatype *dt, mf_op *op,
                   mf_comm *comm);

#endif
