/*
 * Freed keyvals (MPI-4.0 7.7.2): a keyval freed while attributes use it stays valid for them —
 * get and delete may still name it, dup still copies them — and its handle is not handed out
 * again before the last of them is gone. At MPI_Finalize, MPI_COMM_SELF's attributes are
 * deleted first, in the reverse order they were set (MPI-4.0 11.2.5), then the others.
 */
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static int deletes;    /* delete callbacks run */
static char order[16]; /* at finalize: which attribute was deleted, in order */
static int norder;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    deletes++;
    return MPI_SUCCESS;
}

static int count_type_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    deletes++;
    return MPI_SUCCESS;
}

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    if (norder < (int)sizeof order - 1)
        order[norder++] = *(char *)extra;
    return MPI_SUCCESS;
}

static void comm_keyvals(void)
{
    int kv, saved, other, flag = 0;
    void *val = NULL;
    MF_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kv, NULL));
    saved = kv;
    MF_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &deletes));
    MF_CHECK_MPI(MPI_Comm_free_keyval(&kv));
    MF_CHECK(kv == MPI_KEYVAL_INVALID, "Comm_free_keyval did not reset the handle");

    /* Its handle is still taken. */
    MF_CHECK_MPI(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &other, NULL));
    MF_CHECK(other != saved, "a freed keyval's handle 0x%x was reused while in use", saved);

    /* Still copied by dup, still readable. */
    MPI_Comm dup;
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MF_CHECK_MPI(MPI_Comm_get_attr(dup, saved, &val, &flag));
    MF_CHECK(flag && val == &deletes, "dup did not copy the attribute of a freed keyval");
    MF_CHECK_MPI(MPI_Comm_free(&dup));
    MF_CHECK(deletes == 1, "freeing the dup ran %d delete callbacks, expected 1", deletes);

    /* Setting new attributes with it is refused. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_set_attr(MPI_COMM_SELF, saved, &deletes), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_KEYVAL, "set_attr with a freed keyval gave class %d", cls);

    /* Freed again through another copy of the handle (as MPICH's keyval_double_free does, a
     * library freeing its key in a delete callback): accepted, and nothing more is released. */
    int copy = saved;
    MF_CHECK_MPI(MPI_Comm_free_keyval(&copy));
    MF_CHECK(copy == MPI_KEYVAL_INVALID, "a second Comm_free_keyval did not reset the handle");
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, saved, &val, &flag));
    MF_CHECK(flag && val == &deletes, "a second free released the key its attribute uses");

    /* Deleted through the freed keyval's value. */
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, saved, &val, &flag));
    MF_CHECK(flag && val == &deletes, "attribute of a freed keyval not found");
    MF_CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
    MF_CHECK(deletes == 2, "delete_attr ran %d delete callbacks in all, expected 2", deletes);

    /* Now it is gone. */
    rc = MPI_Comm_delete_attr(MPI_COMM_SELF, saved);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_KEYVAL, "a keyval with no attributes left is still valid");
    copy = saved;
    rc = MPI_Comm_free_keyval(&copy);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_KEYVAL, "freeing a keyval that is gone gave class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MF_CHECK_MPI(MPI_Comm_free_keyval(&other));
}

static void type_keyvals(void)
{
    int kv, saved, other;
    MPI_Datatype t;
    MF_CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    MF_CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_type_delete, &kv, NULL));
    saved = kv;
    MF_CHECK_MPI(MPI_Type_set_attr(t, kv, NULL));
    MF_CHECK_MPI(MPI_Type_free_keyval(&kv));
    MF_CHECK_MPI(
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &other, NULL));
    MF_CHECK(other != saved, "a freed type keyval's handle was reused while in use");
    deletes = 0;
    MF_CHECK_MPI(MPI_Type_delete_attr(t, saved));
    MF_CHECK(deletes == 1, "Type_delete_attr with a freed keyval ran %d callbacks", deletes);
    MF_CHECK_MPI(MPI_Type_free_keyval(&other));
    MF_CHECK_MPI(MPI_Type_free(&t));
}

/* Attributes a, b, c on MPI_COMM_SELF and w on MPI_COMM_WORLD, keyvals freed at once. */
static void finalize_order_setup(void)
{
    static char names[] = "wabc";
    int kv;
    for (int i = 0; i < 4; i++) {
        MF_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &kv, &names[i]));
        if (i == 0)
            MF_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, NULL));
        else
            MF_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL));
        MF_CHECK_MPI(MPI_Comm_free_keyval(&kv));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    comm_keyvals();
    type_keyvals();
    finalize_order_setup();
    int errors = mftest_errors;
    MPI_Finalize();
    if (strcmp(order, "cbaw") != 0) {
        fprintf(stderr, "[rank %d] attributes deleted at finalize in order '%s', expected 'cbaw'\n",
                rank, order);
        errors++;
    }
    if (rank == 0 && errors == 0)
        printf(" No Errors\n");
    return errors ? 1 : 0;
}
