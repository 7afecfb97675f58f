/*
 * datatype.h — datatypes as the communication layers see them.
 *
 * Every datatype, predefined or derived, is an mf_datatype. Its type map is flattened at commit
 * into (offset, length) segments relative to the buffer, merged where adjacent, so that packing,
 * unpacking and iovec generation walk a flat list. Data of `count` elements forms a byte stream
 * of count * dt_size bytes (the "packed" order); every function below addresses that stream by
 * byte offset, which is what pipelined protocols, truncation and partial copies need.
 *
 * Predefined types are static objects found from their ABI handle; derived types live in a
 * handle table and are reference counted (a pending operation holds its type).
 */
#ifndef MF_DATATYPE_DATATYPE_H
#define MF_DATATYPE_DATATYPE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

typedef struct mf_datatype mf_datatype;

struct mf_datatype_public {
    MPI_Datatype dt_handle;
    size_t dt_size;         /* bytes of data in one element */
    MPI_Aint dt_lb, dt_extent;
    MPI_Aint dt_true_lb, dt_true_extent;
    bool dt_contig;         /* one element's data is one block at buf + dt_true_lb, and
                               dt_extent == dt_size, so count elements are one block too */
    bool dt_committed;      /* predefined types are always committed */
    bool dt_builtin;
};

/* The object behind a handle, or NULL if invalid (incl. MPI_DATATYPE_NULL). */
mf_datatype *mf_datatype_get(MPI_Datatype handle);
const struct mf_datatype_public *mf_datatype_info(const mf_datatype *dt);

/* Packs `len` bytes of the stream of `count` elements at `buf`, starting at stream byte `offset`,
 * into `out`. Caller guarantees offset + len <= count * size. */
void mf_datatype_pack(const mf_datatype *dt, const void *buf, size_t count, size_t offset,
                      void *out, size_t len);
/* The inverse: scatters `len` stream bytes from `in` into the elements at `buf`. */
void mf_datatype_unpack(const mf_datatype *dt, void *buf, size_t count, size_t offset,
                        const void *in, size_t len);
/* Describes up to `max_iov` pieces of the stream starting at `offset` as iovecs into `buf`;
 * returns the number used and sets *bytes to the stream bytes they cover. */
int mf_datatype_iov(const mf_datatype *dt, const void *buf, size_t count, size_t offset,
                    struct iovec *iov, int max_iov, size_t *bytes);

void mf_datatype_retain(mf_datatype *dt);
void mf_datatype_release(mf_datatype *dt);

/* Number of whole elements and of basic elements in `bytes` stream bytes (MPI_Get_count and
 * MPI_Get_elements). *whole is MPI_UNDEFINED if bytes is not a multiple of the size. */
void mf_datatype_count(const mf_datatype *dt, size_t bytes, MPI_Count *whole, MPI_Count *basic);

#endif
