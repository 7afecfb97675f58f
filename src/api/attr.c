/*
 * Attribute caching (MPI-4.0 section 7.7) on communicators and datatypes, with the MPI-1 names
 * (MPI_Keyval_create, MPI_Attr_put...) that MPICH still exports. The store is src/comm/attr.c;
 * window attributes belong with the RMA layer, which knows the predefined window keyvals.
 */
#include "api/api.h"
#include "comm/attr.h"

/* ---- Communicators ---------------------------------------------------------------------- */

static int mf_comm_keyval_create(void (*copy)(void), void (*del)(void), int *keyval, void *extra,
                                 const char *fn)
{
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_keyval_create(MF_ATTR_COMM, copy, del, extra, keyval, fn);
    return mf_err_no_object(rc, fn);
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    MF_API_LOCKED(mf_comm_keyval_create((void (*)(void))comm_copy_attr_fn,
                                        (void (*)(void))comm_delete_attr_fn, comm_keyval,
                                        extra_state, "MPI_Comm_create_keyval"));
}
MF_API_ALIAS(Comm_create_keyval);

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    MF_API_LOCKED(mf_comm_keyval_create((void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                                        extra_state, "MPI_Keyval_create"));
}
MF_API_ALIAS(Keyval_create);

static int mf_comm_keyval_free(int *keyval, const char *fn)
{
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_keyval_free(MF_ATTR_COMM, keyval, fn);
    return mf_err_no_object(rc, fn);
}

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    MF_API_LOCKED(mf_comm_keyval_free(comm_keyval, "MPI_Comm_free_keyval"));
}
MF_API_ALIAS(Comm_free_keyval);

int PMPI_Keyval_free(int *keyval)
{
    MF_API_LOCKED(mf_comm_keyval_free(keyval, "MPI_Keyval_free"));
}
MF_API_ALIAS(Keyval_free);

static int mf_comm_set_attr(MPI_Comm comm, int keyval, void *value, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_attr_set(MF_ATTR_COMM, comm, &c->c_attrs, keyval, value, fn);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return mf_comm_set_attr(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}
MF_API_ALIAS(Comm_set_attr);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return mf_comm_set_attr(comm, keyval, attribute_val, "MPI_Attr_put");
}
MF_API_ALIAS(Attr_put);

static int mf_comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag, const char *fn)
{
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_attr_get(MF_ATTR_COMM, comm, &c->c_attrs, keyval, value, flag, fn);
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    MF_API_LOCKED(mf_comm_get_attr(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr"));
}
MF_API_ALIAS(Comm_get_attr);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    MF_API_LOCKED(mf_comm_get_attr(comm, keyval, attribute_val, flag, "MPI_Attr_get"));
}
MF_API_ALIAS(Attr_get);

static int mf_comm_delete_attr(MPI_Comm comm, int keyval, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_attr_delete(MF_ATTR_COMM, comm, &c->c_attrs, keyval, fn);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return mf_comm_delete_attr(comm, comm_keyval, "MPI_Comm_delete_attr");
}
MF_API_ALIAS(Comm_delete_attr);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return mf_comm_delete_attr(comm, keyval, "MPI_Attr_delete");
}
MF_API_ALIAS(Attr_delete);

/* ---- Datatypes -------------------------------------------------------------------------- */

static int mf_api_type(MPI_Datatype type, const char *fn)
{
    int rc = mf_check_initialized(fn);
    if (!rc && (type == MPI_DATATYPE_NULL || !mf_datatype_get(type)))
        rc =
            mf_error(MPI_ERR_TYPE, "%s: datatype=0x%x is not a valid datatype", fn, (unsigned)type);
    return rc;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    MF_API_ENTER();
    const char *fn = "MPI_Type_create_keyval";
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_keyval_create(MF_ATTR_TYPE, (void (*)(void))type_copy_attr_fn,
                              (void (*)(void))type_delete_attr_fn, extra_state, type_keyval, fn);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Type_create_keyval);

int PMPI_Type_free_keyval(int *type_keyval)
{
    MF_API_ENTER();
    int rc = mf_check_initialized("MPI_Type_free_keyval");
    if (!rc)
        rc = mf_keyval_free(MF_ATTR_TYPE, type_keyval, "MPI_Type_free_keyval");
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Type_free_keyval"));
}
MF_API_ALIAS(Type_free_keyval);

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    const char *fn = "MPI_Type_set_attr";
    MF_API_ENTER();
    int rc = mf_api_type(datatype, fn);
    if (!rc) {
        struct mf_attr_list **list = mf_attr_side_list(MF_ATTR_TYPE, datatype, 1);
        rc = list ? mf_attr_set(MF_ATTR_TYPE, datatype, list, type_keyval, attribute_val, fn)
                  : mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    MF_API_ENTER();
    const char *fn = "MPI_Type_get_attr";
    int rc = mf_api_type(datatype, fn);
    if (!rc)
        rc = mf_attr_get(MF_ATTR_TYPE, datatype, mf_attr_side_list(MF_ATTR_TYPE, datatype, 0),
                         type_keyval, attribute_val, flag, fn);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    const char *fn = "MPI_Type_delete_attr";
    MF_API_ENTER();
    int rc = mf_api_type(datatype, fn);
    if (!rc) {
        struct mf_attr_list *none = NULL, **list = mf_attr_side_list(MF_ATTR_TYPE, datatype, 0);
        rc = mf_attr_delete(MF_ATTR_TYPE, datatype, list ? list : &none, type_keyval, fn);
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Type_delete_attr);
