/*
 * coll_check.h — argument checks shared by the collective entry points (src/api/coll*.c).
 *
 * Each check returns MPI_SUCCESS or an mf_error() code whose message names the MPI function and
 * the argument ("MPI_Gather: recvcount=-2 is negative"). Which arguments a process must check
 * depends on its role: the standard makes receive arguments significant only at the root of a
 * gather, send arguments only at the root of a scatter, and on intercommunicators nothing at
 * MPI_PROC_NULL processes.
 */
#ifndef MF_API_COLL_CHECK_H
#define MF_API_COLL_CHECK_H

#include <stdbool.h>

#include "api/api.h"
#include "coll/coll.h"

enum mf_coll_role {
    MF_ROLE_ROOT, /* the root (intra: rank == root; inter: root == MPI_ROOT) */
    MF_ROLE_LEAF, /* a non-root process that sends to / receives from the root */
    MF_ROLE_NONE, /* intercommunicator, root == MPI_PROC_NULL: takes no part */
};

/* Valid root: 0..size-1 on an intracommunicator; MPI_ROOT, MPI_PROC_NULL or a remote rank on an
 * intercommunicator. MPI_ERR_ROOT otherwise. */
int mf_coll_check_root(const mf_comm *c, int root, const char *fn);
enum mf_coll_role mf_coll_role(const mf_comm *c, int root);

/* count >= 0 (MPI_ERR_COUNT), datatype valid and committed (MPI_ERR_TYPE), buf not NULL when
 * there is data, nor MPI_IN_PLACE (MPI_ERR_BUFFER). Names come from the caller ("sendbuf",
 * "sendcount", "sendtype"). */
int mf_coll_check_data(const void *buf, MPI_Count count, MPI_Datatype type, mf_datatype **dt,
                       const char *fn, const char *bufname, const char *countname,
                       const char *typename_);
/* Just the datatype (for v-variants, whose counts are checked per entry). */
int mf_coll_check_type(MPI_Datatype type, mf_datatype **dt, const char *fn, const char *typename_);
/* An array of n counts: not NULL, every entry >= 0. */
int mf_coll_check_counts(const MPI_Count *counts, int n, const char *fn, const char *name);
int mf_coll_check_displs(const MPI_Aint *displs, int n, const char *fn, const char *name);
/* MPI_IN_PLACE is not allowed on intercommunicators. */
int mf_coll_check_in_place_intra(const mf_comm *c, const char *fn, const char *bufname);
/* sendbuf == recvbuf with data: MPI_ERR_BUFFER (the standard asks for MPI_IN_PLACE instead).
 * For operations whose two buffers hold the same datatype (the reductions). */
int mf_coll_check_alias(const void *sbuf, const void *rbuf, bool has_data, const char *fn);

/* One side of a data movement in n blocks: block i of buf starts displs[i] elements of dt in (i *
 * count when displs is NULL) and holds counts[i] (or count) elements. With per-block types `dts`
 * (Alltoallw), displs are in bytes. */
typedef struct {
    const void *buf;
    const mf_datatype *dt;
    const mf_datatype *const *dts;
    int n;
    MPI_Count count;
    const MPI_Count *counts;
    const MPI_Aint *displs;
} mf_coll_blocks;

/* The two buffer checks below refuse (MPI_ERR_BUFFER) a send block and a receive block, both with
 * data, whose first bytes are the same byte. Such blocks surely overlap, which the standard
 * forbids; the caller almost always meant MPI_IN_PLACE. Blocks that only interleave, through
 * datatypes with holes, are legal and pass: no false alarm, unlike comparing base addresses.
 *
 * _one: a single buffer (count elements of dt at buf) against the blocks of `blocks`; the
 * rooted and all-gather operations, where one side is a process's own contribution. Uniform
 * blocks are compared at block 0 and at `own` (this process's block, -1 for none), where
 * the mistakes are, so that the check costs two comparisons; the v forms, every block. */
int mf_coll_check_alias_one(const void *buf, MPI_Count count, const mf_datatype *dt,
                            const mf_coll_blocks *blocks, int own, const char *fn);
/* _pairs: block i of s against block i of r, for every i (the all-to-all operations). */
int mf_coll_check_alias_pairs(const mf_coll_blocks *s, const mf_coll_blocks *r, const char *fn);
/* Resolves op (MPI_ERR_OP if null or invalid) and checks it is defined on dt. */
int mf_coll_check_op(MPI_Op handle, const mf_datatype *dt, mf_op **op, const char *fn);

/* Widened copies of int count / displacement arrays for the non-_c entry points (n entries;
 * NULL in gives NULL out; free with free()). *failed is set when memory runs out. */
MPI_Count *mf_coll_widen_counts(const int *a, int n, bool *failed);
MPI_Aint *mf_coll_widen_displs(const int *a, int n, bool *failed);
/* Entries in a v-variant's arrays for this handle: the remote size for intercommunicators, the
 * size otherwise; 0 for an invalid handle (the entry point then reports the handle). */
int mf_coll_vec_len(MPI_Comm handle);
int mf_coll_local_len(MPI_Comm handle);

#endif
