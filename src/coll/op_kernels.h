/*
 * op_kernels.h — the loops behind the predefined reduction operations (private to src/coll).
 *
 * Every predefined type the standard allows in a reduction maps to an element kind: C and Fortran
 * types of the same representation share one (MPI_LONG and MPI_INT64_T are MF_OK_I64 on LP64).
 * A kernel computes inout[i] = in[i] op inout[i] over n elements of its kind. Loads and stores go
 * through memcpy so that user buffers need no particular alignment (compilers turn them into
 * plain moves).
 *
 * Pair kinds (MINLOC/MAXLOC) are walked with an explicit stride and index offset because the
 * same pair has two layouts: the C struct in a user buffer (padding after the value of
 * MPI_SHORT_INT, after the int of MPI_DOUBLE_INT) and the packed stream (value then index).
 */
#ifndef MF_COLL_OP_KERNELS_H
#define MF_COLL_OP_KERNELS_H

#include <stddef.h>

enum mf_op_kind {
    MF_OK_NONE = 0,
    MF_OK_I8,
    MF_OK_I16,
    MF_OK_I32,
    MF_OK_I64,
    MF_OK_U8,
    MF_OK_U16,
    MF_OK_U32,
    MF_OK_U64,
    MF_OK_FLT,
    MF_OK_DBL,
    MF_OK_LDBL,
    MF_OK_F16, /* IEEE binary16 (MPIX_C_FLOAT16), computed in float */
    MF_OK_CFLT,
    MF_OK_CDBL,
    MF_OK_CLDBL,
    MF_OK_BOOL, /* C _Bool, C++ bool */
    MF_OK_FLOG, /* Fortran LOGICAL: a 4-byte integer, nonzero is true */
    MF_OK_BYTE,
    /* pairs: value type, index type */
    MF_OK_P_FLT_INT,
    MF_OK_P_DBL_INT,
    MF_OK_P_LONG_INT,
    MF_OK_P_SHORT_INT,
    MF_OK_P_INT_INT,
    MF_OK_P_LDBL_INT,
    MF_OK_P_FLT_FLT,
    MF_OK_P_DBL_DBL,
    MF_OK_COUNT
};

/* Categories the standard's op/type table is written in. */
enum mf_op_category {
    MF_OC_NONE,
    MF_OC_INT,
    MF_OC_FLOAT,
    MF_OC_COMPLEX,
    MF_OC_LOGICAL,
    MF_OC_BYTE,
    MF_OC_PAIR
};

/* Builtin op indices: the low byte of the ABI handle (MPI_MAX = 0x58000001 ...). */
enum {
    MF_OP_MAX = 1,
    MF_OP_MIN,
    MF_OP_SUM,
    MF_OP_PROD,
    MF_OP_LAND,
    MF_OP_BAND,
    MF_OP_LOR,
    MF_OP_BOR,
    MF_OP_LXOR,
    MF_OP_BXOR,
    MF_OP_MINLOC,
    MF_OP_MAXLOC,
    MF_OP_REPLACE,
    MF_OP_NO_OP,
    MF_OP_BUILTIN_COUNT
};

typedef void mf_op_kernel(const void *in, void *inout, size_t n);
typedef void mf_op_pair_kernel(const void *in, void *inout, size_t n, size_t stride,
                               size_t idx_off);

struct mf_op_kind_info {
    enum mf_op_category category;
    size_t size;                      /* bytes of one element in the packed stream */
    size_t native_stride, native_idx; /* pairs: struct size and offset of the index */
    size_t packed_idx;                /* pairs: offset of the index in the packed stream */
};

const struct mf_op_kind_info *mf_op_kind_info(enum mf_op_kind kind);
/* Kernel for (op index, kind), or NULL if the standard does not define that pair. MINLOC and
 * MAXLOC on pair kinds use mf_op_pair_kernel_get instead; REPLACE and NO_OP need no kernel. */
mf_op_kernel *mf_op_kernel_get(int op_index, enum mf_op_kind kind);
mf_op_pair_kernel *mf_op_pair_kernel_get(int op_index, enum mf_op_kind kind);

#endif
