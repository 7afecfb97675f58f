/*
 * op.c — MPI_Op_create(_c), MPI_Op_free, MPI_Op_commutative, MPI_Reduce_local(_c) (MPI-4.0
 * sections 6.9.5-6.9.7). The op objects and their kernels live in src/coll/op.c.
 */
#include "api/api.h"
#include "coll/op.h"

static int api_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op,
                         const char *name)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    mf_op *o = NULL;
    if (!fn && !fn_c)
        rc = mf_error(MPI_ERR_ARG, "%s: user_fn is NULL", name);
    else if (!op)
        rc = mf_error(MPI_ERR_ARG, "%s: op is NULL", name);
    else if (!(rc = mf_op_create(fn, fn_c, commute != 0, &o)))
        *op = o->op_handle;
    MF_API_EXIT();
    return mf_err_no_object(rc, name);
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return api_op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}
MF_API_ALIAS(Op_create);

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return api_op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}
MF_API_ALIAS(Op_create_c);

int PMPI_Op_free(MPI_Op *op)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    mf_op *o = op ? mf_op_get(*op) : NULL;
    if (!op)
        rc = mf_error(MPI_ERR_ARG, "MPI_Op_free: op is NULL");
    else if (!o)
        rc = mf_error(MPI_ERR_OP, "MPI_Op_free: op=0x%x is not a valid operation", (unsigned)*op);
    else if (o->op_builtin)
        rc = mf_error(MPI_ERR_OP, "MPI_Op_free: op=0x%x is predefined and cannot be freed",
                      (unsigned)*op);
    else {
        mf_op_release(o);
        *op = MPI_OP_NULL;
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Op_free");
}
MF_API_ALIAS(Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    MF_API_ENTER();
    int rc = MPI_SUCCESS;
    mf_op *o = mf_op_get(op);
    if (!o)
        rc = mf_error(MPI_ERR_OP, "MPI_Op_commutative: op=0x%x is not a valid operation",
                      (unsigned)op);
    else if (!commute)
        rc = mf_error(MPI_ERR_ARG, "MPI_Op_commutative: commute is NULL");
    else
        *commute = o->op_commute;
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Op_commutative");
}
MF_API_ALIAS(Op_commutative);

static int api_reduce_local(const void *in, void *inout, MPI_Count count, MPI_Datatype type,
                            MPI_Op oph, const char *fn)
{
    MF_API_ENTER();
    mf_datatype *dt = NULL;
    mf_op *op = mf_op_get(oph);
    int rc = mf_check_count(count, fn);
    if (!rc)
        rc = mf_check_datatype(type, &dt, fn);
    if (!rc && oph == MPI_OP_NULL)
        rc = mf_error(MPI_ERR_OP, "%s: op is MPI_OP_NULL", fn);
    else if (!rc && !op)
        rc = mf_error(MPI_ERR_OP, "%s: op=0x%x is not a valid operation", fn, (unsigned)oph);
    if (!rc && count > 0 && (!in || !inout || in == MPI_IN_PLACE || inout == MPI_IN_PLACE))
        rc = mf_error(MPI_ERR_BUFFER, "%s: %s is %s", fn,
                      (!in || in == MPI_IN_PLACE) ? "inbuf" : "inoutbuf",
                      (!in || !inout) ? "NULL" : "MPI_IN_PLACE");
    if (!rc && count > 0 && in == inout && mf_datatype_info(dt)->dt_size)
        rc = mf_error(MPI_ERR_BUFFER,
                      "%s: inbuf and inoutbuf are the same buffer (the standard forbids aliased "
                      "arguments)",
                      fn);
    if (!rc)
        rc = mf_op_check(op, dt, fn);
    if (!rc)
        rc = mf_op_apply(op, in, inout, count, dt);
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type, MPI_Op op)
{
    return api_reduce_local(inbuf, inoutbuf, count, type, op, "MPI_Reduce_local");
}
MF_API_ALIAS(Reduce_local);

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op)
{
    return api_reduce_local(inbuf, inoutbuf, count, type, op, "MPI_Reduce_local_c");
}
MF_API_ALIAS(Reduce_local_c);
