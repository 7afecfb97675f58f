/*
 * op.h — reduction operations (MPI_Op) as collectives, RMA accumulate and MPI_Reduce_local use
 * them.
 *
 * An mf_op is a predefined operation (MPI_MAX ... MPI_NO_OP, static objects found from their ABI
 * handle) or a user function from MPI_Op_create[_c] (reference counted, in a handle table).
 *
 * Contract of mf_op_apply(op, in, inout, count, dt): inout[i] = in[i] op inout[i] for the `count`
 * elements of `dt` laid out as a user buffer (extent stride, type map offsets) — the argument
 * order of MPI_User_function, so for a non-commutative op `in` is the LEFT operand. Predefined
 * ops work on predefined types directly and on derived types built from one predefined type
 * (the elements are packed, reduced as a flat array of that type, and unpacked). Call
 * mf_op_check() first: mf_op_apply() assumes the pair is valid.
 */
#ifndef MF_COLL_OP_H
#define MF_COLL_OP_H

#include <mpi.h>
#include <stdbool.h>

#include "datatype/datatype.h"

typedef struct mf_op {
    MPI_Op op_handle;
    int op_refs; /* user ops: MPI_Op_free drops one, operations hold one */
    bool op_builtin;
    bool op_commute;
    int op_index;                 /* builtin: 1 (MPI_MAX) .. 14 (MPI_NO_OP); user: 0 */
    MPI_User_function *op_fn;     /* user op from MPI_Op_create */
    MPI_User_function_c *op_fn_c; /* user op from MPI_Op_create_c */
} mf_op;

/* The object behind a handle (builtin or user), or NULL for MPI_OP_NULL / invalid handles. */
mf_op *mf_op_get(MPI_Op handle);
/* Creates a user op; *out gets the object (handle in op_handle). MPI_ERR_NO_MEM on failure. */
int mf_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, bool commute, mf_op **out);
void mf_op_retain(mf_op *op);
void mf_op_release(mf_op *op);

/* MPI_SUCCESS if `op` is defined on `dt`, else MPI_ERR_OP with a message naming the function,
 * the op and the type ("MPI_Allreduce: op=MPI_BAND is not defined for datatype=MPI_DOUBLE"). User
 * ops accept every type. Predefined ops on derived types require one basic type throughout. */
int mf_op_check(const mf_op *op, const mf_datatype *dt, const char *function);

/* The datatype of MPI_Fetch_and_op (compare false) or MPI_Compare_and_swap (true): a predefined
 * type, and for compare-and-swap one of the integer, logical, multi-language (MPI_AINT ...) or
 * byte types (MPI_CHAR too, as MPICH allows). MPI_ERR_TYPE naming the type otherwise. */
int mf_op_check_atomic_type(const mf_datatype *dt, bool compare, const char *function);

/* The kernel kind (op_kernels.h: MF_OK_*) of dt, a predefined type or a derived one of one
 * predefined type; MF_OK_NONE (0) when the ops know none. */
int mf_op_kind_of(const mf_datatype *dt);

/* inout = in op inout, elementwise (see the contract above). Returns MPI_SUCCESS, or
 * MPI_ERR_NO_MEM when a derived type needs pack buffers that cannot be allocated. */
int mf_op_apply(const mf_op *op, const void *in, void *inout, MPI_Count count,
                const mf_datatype *dt);

/* "MPI_SUM", "user op 0x..." — for messages. */
const char *mf_op_name(const mf_op *op, char *buf, size_t len);
/* "MPI_DOUBLE", or "0x4c00080b" for types without a name of ours. */
const char *mf_op_type_name(MPI_Datatype dt, char *buf, size_t len);

#endif
