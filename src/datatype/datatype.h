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
    size_t dt_size; /* bytes of data in one element */
    MPI_Aint dt_lb, dt_extent;
    MPI_Aint dt_true_lb, dt_true_extent;
    bool dt_contig;    /* one element's data is one block at buf + dt_true_lb, and
                               dt_extent == dt_size, so count elements are one block too */
    bool dt_committed; /* predefined types are always committed */
    bool dt_builtin;
    /* Bytes per contiguous piece of one element, on average (dt_size / pieces; 0 without
     * data): lets a sender choose between gathering iovecs and packing without walking the
     * type (a matrix column: 8). Pieces may touch across elements, so a count may be fewer. */
    size_t dt_piece_avg;
};

/* The object behind a handle, or NULL if invalid (incl. MPI_DATATYPE_NULL). */
mf_datatype *mf_datatype_get_slow(MPI_Datatype handle);
/* Predefined types of the form 0x4c00ssii (ii < MF_DT_FAST_MAX), once initialised: the handle
 * and object per index ii, so that every send and receive resolves MPI_INT & co. inline. */
#define MF_DT_FAST_MAX 0x50
struct mf_dt_fast_entry {
    MPI_Datatype handle;
    mf_datatype *dt;
};
extern struct mf_dt_fast_entry mf_dt_fast[MF_DT_FAST_MAX];
static inline mf_datatype *mf_datatype_get(MPI_Datatype handle)
{
    unsigned idx = (unsigned)handle & 0xffu;
    if (idx < MF_DT_FAST_MAX && mf_dt_fast[idx].handle == handle)
        return mf_dt_fast[idx].dt;
    return mf_datatype_get_slow(handle);
}
/* The public part, which every mf_datatype starts with (checked in object.c): inline, because
 * the point-to-point path asks for it several times per message. */
static inline const struct mf_datatype_public *mf_datatype_info(const mf_datatype *dt)
{
    return (const struct mf_datatype_public *)(const void *)dt;
}

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

/* Predefined types are static: the inline test spares every message two calls. */
void mf_datatype_retain_derived(mf_datatype *dt);
void mf_datatype_release_derived(mf_datatype *dt);
static inline void mf_datatype_retain(mf_datatype *dt)
{
    if (dt && !mf_datatype_info(dt)->dt_builtin)
        mf_datatype_retain_derived(dt);
}
static inline void mf_datatype_release(mf_datatype *dt)
{
    if (dt && !mf_datatype_info(dt)->dt_builtin)
        mf_datatype_release_derived(dt);
}
/* Called with a derived type's handle when its last reference goes, before the handle is freed:
 * how a layer above that keeps data per type (the attributes of comm/attr.c) runs its delete
 * callbacks without the datatype layer knowing it. One hook; set before it can matter (comm/attr.c
 * sets it when a type first gets attributes); NULL (the start) means nothing to do. */
void mf_datatype_set_free_hook(int (*hook)(MPI_Datatype type));

/* Number of whole elements and of basic elements in `bytes` stream bytes (MPI_Get_count and
 * MPI_Get_elements). *whole is MPI_UNDEFINED if bytes is not a multiple of the size. */
void mf_datatype_count(const mf_datatype *dt, size_t bytes, MPI_Count *whole, MPI_Count *basic);

/* external32 (external32.c): packs `count` elements into it (out has room for count times the
 * type's external32 size, mf_datatype_rep_size with mf_datatype_external32_size), and back;
 * MPI_ERR_CONVERSION for an integer its external size cannot hold. */
int mf_datatype_pack_external(const mf_datatype *dt, const void *buf, size_t count, void *out);
int mf_datatype_unpack_external(const mf_datatype *dt, const void *in, void *buf, size_t count);
/* A basic type's external32 size, as a representation for the functions below (ctx unused). */
int mf_datatype_external32_size(MPI_Datatype basic, MPI_Aint *size, void *ctx);

/* Data representations other than memory's (relayout.c). A representation gives each basic
 * type its size in bytes (`rep`: MPI_SUCCESS or an error code). mf_datatype_rep_size: the bytes
 * one element of dt takes in it. mf_datatype_rep_prefix: of the first rep_bytes of a stream of
 * elements in it, the basic elements it holds whole (*items) and their bytes in memory.
 * mf_datatype_relayout: dt rebuilt as MPI-4.0 §14.5.1 says a file view's types are in that
 * representation (constructors that count elements scale, byte displacements stay), as an
 * unregistered type of bytes for layout only, freed with mf_datatype_relayout_free. */
typedef int (*mf_datatype_rep_fn)(MPI_Datatype basic, MPI_Aint *size, void *ctx);
int mf_datatype_rep_size(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx, size_t *size);
int mf_datatype_rep_prefix(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx,
                           size_t rep_bytes, size_t *mem_bytes, MPI_Count *items);
int mf_datatype_relayout(const mf_datatype *dt, mf_datatype_rep_fn rep, void *ctx,
                         mf_datatype **out);
void mf_datatype_relayout_free(mf_datatype *dt);

/* ---- Additions (datatype engineer) ------------------------------------------------------------ */

/* What a predefined type holds, for reductions: the category the standard's op/type table is
 * written in, and the C element type. Derived types give MF_DT_KIND_NONE / MF_DT_C_NONE; use
 * mf_datatype_basic_type() to see whether a derived type is made of one predefined type. */
typedef enum mf_dt_kind {
    MF_DT_KIND_NONE = 0,
    MF_DT_KIND_SIGNED,   /* C and Fortran signed integers, MPI_AINT/OFFSET/COUNT */
    MF_DT_KIND_UNSIGNED, /* C unsigned integers */
    MF_DT_KIND_CHAR,     /* MPI_CHAR, MPI_WCHAR, MPI_CHARACTER: text, not arithmetic */
    MF_DT_KIND_FLOAT,
    MF_DT_KIND_COMPLEX,
    MF_DT_KIND_LOGICAL, /* MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL */
    MF_DT_KIND_BYTE,    /* MPI_BYTE */
    MF_DT_KIND_PAIR, /* MPI_FLOAT_INT ... MPI_2INT, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION */
    MF_DT_KIND_OTHER, /* MPI_PACKED, MPI_LB, MPI_UB */
} mf_dt_kind;

typedef enum mf_dt_ctype {
    MF_DT_C_NONE = 0,
    MF_DT_C_INT8,
    MF_DT_C_INT16,
    MF_DT_C_INT32,
    MF_DT_C_INT64,
    MF_DT_C_UINT8,
    MF_DT_C_UINT16,
    MF_DT_C_UINT32,
    MF_DT_C_UINT64,
    MF_DT_C_FLOAT,
    MF_DT_C_DOUBLE,
    MF_DT_C_LONG_DOUBLE,
    MF_DT_C_FLOAT128, /* MPI_REAL16: IEEE binary128 storage (Fortran REAL*16) */
    MF_DT_C_FLOAT16,  /* MPIX_C_FLOAT16: IEEE binary16 (C _Float16) */
    MF_DT_C_FLOAT_COMPLEX,
    MF_DT_C_DOUBLE_COMPLEX,
    MF_DT_C_LONG_DOUBLE_COMPLEX,
    MF_DT_C_FLOAT128_COMPLEX, /* MPI_COMPLEX32 */
    MF_DT_C_BOOL,             /* 1-byte _Bool / C++ bool */
    MF_DT_C_FLOGICAL,         /* Fortran LOGICAL: an int, nonzero is true */
    MF_DT_C_BYTE,
    /* pairs: struct { value; index; } with C layout (padding included in the extent) */
    MF_DT_C_PAIR_FLOAT_INT,
    MF_DT_C_PAIR_DOUBLE_INT,
    MF_DT_C_PAIR_LONG_INT,
    MF_DT_C_PAIR_SHORT_INT,
    MF_DT_C_PAIR_INT_INT,
    MF_DT_C_PAIR_LONG_DOUBLE_INT,
    MF_DT_C_PAIR_FLOAT_FLOAT,
    MF_DT_C_PAIR_DOUBLE_DOUBLE,
} mf_dt_ctype;

mf_dt_kind mf_datatype_kind(const mf_datatype *dt);
mf_dt_ctype mf_datatype_ctype(const mf_datatype *dt);
/* The predefined type every basic element of dt is (dt itself when predefined; a pair type
 * counts as one basic type here), or MPI_DATATYPE_NULL when dt mixes types or has no data. */
MPI_Datatype mf_datatype_basic_type(const mf_datatype *dt);
/* "MPI_INT", a name set with MPI_Type_set_name, or "" for unnamed derived types. */
const char *mf_datatype_name(const mf_datatype *dt);

/* Datatype attributes live in the attribute code (comm/attr.h): MPI_Type_dup runs their copy
 * callbacks and destroying a derived type runs their delete callbacks. */

#endif
