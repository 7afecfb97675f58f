/*
 * dt_internal.h — the datatype object and the layout builder (private to src/datatype and the
 * datatype entry points in src/api).
 *
 * Representation. One element's type map is a list of runs in stream (packed) order. A run is
 * r_n pieces of r_len bytes, the first at r_off from the element's start and each next one r_stride
 * further: a whole MPI_Type_vector of a contiguous block is one run, so types compress by one
 * level of regularity and `count` elements are never materialized (element e starts at
 * e * extent). Two lists are kept:
 *   - typed runs (dt_runs): every run holds one basic type (r_tag = builtin index); used by
 *     external32 conversion and MPI_Get_elements;
 *   - fast runs (dt_fast): the same bytes with runs merged across basic types where adjacent;
 *     used by pack/unpack/iov. Shares the typed list when merging gains nothing.
 * dt_prefix[i] is the stream offset at which fast run i starts within an element, so a stream
 * offset is located by element = offset / size and a binary search within the element.
 *
 * Derived types are built by appending copies of existing types at byte displacements
 * (mf_dt_append); the builder merges runs as they arrive and tracks lb/ub, alignment and basic
 * element counts, then mf_dt_finish computes the derived facts. Construction never needs the
 * type to be committed; commit only sets the flag.
 *
 * Lifetime: user types live in a handle table, are reference counted, and hold a reference on
 * each type named in their contents (for MPI_Type_get_contents). The handle stays valid while
 * any reference exists (MPI_Type_free drops the user's one).
 */
#ifndef MF_DATATYPE_DT_INTERNAL_H
#define MF_DATATYPE_DT_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype/datatype.h"

#define MF_DT_TAG_MIXED 0xff /* fast runs merged across basic types */

struct mf_dt_run {
    MPI_Aint r_off;
    MPI_Aint r_stride; /* meaningless when r_n == 1 */
    size_t r_len;
    size_t r_n;
    int r_tag; /* builtin index of the basic type, or MF_DT_TAG_MIXED */
};

/* Constructor arguments, as MPI_Type_get_envelope/get_contents report them. */
struct mf_dt_contents {
    int ct_combiner;
    MPI_Count ct_ni, ct_na, ct_nc, ct_nd;
    int *ct_ints;
    MPI_Aint *ct_aints;
    MPI_Count *ct_counts;
    MPI_Datatype *ct_types; /* each derived one is retained */
};

struct mf_datatype {
    struct mf_datatype_public pub;
    int dt_refs;
    int dt_index; /* builtin: index in the builtin table; derived: -1 */

    struct mf_dt_run *dt_runs; /* typed runs */
    size_t dt_nruns, dt_cap;
    struct mf_dt_run *dt_fast; /* == dt_runs when shared */
    size_t dt_nfast;
    size_t *dt_prefix; /* dt_nfast + 1 entries */

    MPI_Aint dt_ub;      /* upper bound (builder; extent = ub - lb) */
    bool dt_have_bounds; /* builder: lb/ub seen */
    /* Explicit bounds, as the MPI_LB/MPI_UB markers of MPI-1 (resized types, subarrays, the
     * markers themselves): a sticky lb is the type's lb wherever other data lies, and it stays
     * sticky through every constructor that uses the type, so the new lb is the least sticky
     * one when any copy has one, else the least of the data (MPI-4.0 §5.1.7; the same for ub).
     * A struct with either is not padded to alignment. */
    bool dt_lb_sticky, dt_ub_sticky;
    MPI_Aint dt_nat_lb, dt_nat_ub; /* builder: the bounds of the data, without markers */
    bool dt_have_nat_lb, dt_have_nat_ub;
    size_t dt_align;       /* alignment of the most aligned basic type (struct padding) */
    MPI_Count dt_nbasic;   /* basic elements per element */
    MPI_Datatype dt_basic; /* see mf_datatype_basic_type; 0 while building and empty */
    size_t dt_ext32_size;  /* bytes of one element in external32 */

    struct mf_dt_contents *dt_contents; /* NULL for predefined types */
    char dt_name[MPI_MAX_OBJECT_NAME];
};

/* ---- Predefined types (builtin.c) ---- */
#define MF_DT_BUILTIN_MAX 0x50
/* Facts about a builtin index: name, native and external32 sizes, conversion unit. */
struct mf_dt_builtin_info {
    MPI_Datatype bi_handle;
    const char *bi_name;
    size_t bi_size;  /* native bytes of the basic element */
    size_t bi_ext32; /* external32 bytes */
    size_t bi_unit;  /* component size for conversion (complex: half the size) */
    int bi_conv;     /* enum mf_dt_conv */
    mf_dt_kind bi_kind;
    mf_dt_ctype bi_ctype;
};
enum mf_dt_conv {
    MF_DT_CONV_RAW,
    MF_DT_CONV_INT,
    MF_DT_CONV_UINT,
    MF_DT_CONV_FLOAT,
    MF_DT_CONV_X87
};
const struct mf_dt_builtin_info *mf_dt_builtin_info(int index);
mf_datatype *mf_dt_builtin_get(MPI_Datatype handle);

/* ---- Builder (layout.c) ---- */
mf_datatype *mf_dt_new(void);
/* Appends `count` blocks, block i at disp + i * block_stride, each `blen` copies of old spaced
 * elem_stride bytes apart. Updates size, bounds, runs and basic-element facts. */
int mf_dt_append(mf_datatype *dt, const mf_datatype *old, MPI_Aint disp, size_t count,
                 MPI_Aint block_stride, size_t blen, MPI_Aint elem_stride);
/* Appends one run (merging with the previous one where possible). */
int mf_dt_emit(mf_datatype *dt, struct mf_dt_run run);
/* Adds a lower (upper) bound candidate at `at`: explicit (sticky) or of data; the builder's
 * lb/ub follow the rule above. */
void mf_dt_bound_lb(mf_datatype *dt, MPI_Aint at, bool sticky);
void mf_dt_bound_ub(mf_datatype *dt, MPI_Aint at, bool sticky);
/* Resized: explicit lb and ub replace whatever bounds the builder had. */
void mf_dt_set_bounds(mf_datatype *dt, MPI_Aint lb, MPI_Aint ub);
/* Computes extents, flags and the fast runs. */
int mf_dt_finish(mf_datatype *dt);
/* Frees a type never registered (or the storage of a registered one). */
void mf_dt_destroy(mf_datatype *dt);

/* ---- Objects (object.c) ---- */
/* Registers a finished type in the handle table with one reference and the given contents
 * (ownership moves to the type). */
int mf_dt_register(mf_datatype *dt, struct mf_dt_contents *ct);
/* Allocates contents with room for the given numbers of arguments. */
struct mf_dt_contents *mf_dt_contents_new(int combiner, MPI_Count ni, MPI_Count na, MPI_Count nc,
                                          MPI_Count nd);
void mf_dt_contents_free(struct mf_dt_contents *ct);
/* Stores type i of the contents, taking a reference on it. */
void mf_dt_contents_type(struct mf_dt_contents *ct, MPI_Count i, mf_datatype *dt);
/* Resolves a handle for functions that accept uncommitted types (constructors, queries):
 * MPI_ERR_TYPE naming `function` and `arg` if null or invalid. */
int mf_dt_check_any(MPI_Datatype handle, mf_datatype **out, const char *function, const char *arg);

/* ---- Constructors (construct.c): build a finished, unregistered type ---- */
int mf_dt_build_contiguous(const mf_datatype *old, size_t count, mf_datatype **out);
int mf_dt_build_hvector(const mf_datatype *old, size_t count, size_t blen, MPI_Aint stride,
                        mf_datatype **out);
/* Blocks at byte displacements (blens may be NULL when all are `blen`). */
int mf_dt_build_hindexed(const mf_datatype *old, size_t count, const MPI_Count *blens, size_t blen,
                         const MPI_Aint *disps, mf_datatype **out);
int mf_dt_build_struct(size_t count, const MPI_Count *blens, const MPI_Aint *disps,
                       mf_datatype *const *types, mf_datatype **out);
int mf_dt_build_resized(const mf_datatype *old, MPI_Aint lb, MPI_Aint extent, mf_datatype **out);
int mf_dt_build_dup(const mf_datatype *old, mf_datatype **out);
/* Subarray and darray: ndims dimensions, each a list of (start, length) blocks of elements of
 * the dimension below; `order` is MPI_ORDER_C or MPI_ORDER_FORTRAN. The result has lb 0 and
 * extent prod(gsizes) * extent(old). */
struct mf_dt_dim {
    MPI_Count d_gsize;
    size_t d_nblocks;
    MPI_Count *d_starts, *d_lens;
};
int mf_dt_build_grid(const mf_datatype *old, int ndims, const struct mf_dt_dim *dims, int order,
                     mf_datatype **out);
/* Darray: the blocks of dimension i (of gsize elements, distributed over psize processes as
 * distrib and darg say) that process coordinate `coord` owns, in d (d_starts and d_lens
 * allocated, the caller frees them); MPI_ERR_ARG naming `fn` for a distribution that does not
 * cover the dimension. */
int mf_dt_darray_dim(MPI_Count gsize, int distrib, int darg, int psize, int coord,
                     struct mf_dt_dim *d, const char *fn, int i);

/* Address arithmetic that stays defined for MPI_BOTTOM (NULL) buffers. */
static inline char *mf_dt_addr(const void *base, MPI_Aint off)
{
    return (char *)(uintptr_t)((uintptr_t)base + (uintptr_t)off);
}

#endif
