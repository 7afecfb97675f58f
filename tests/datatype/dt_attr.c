/* Datatype attributes: MPI_Type_dup runs the copy callback, MPI_Type_free the delete callback. */
#include "mftest.h"

static int copies, deletes;

static int copy_fn(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype type, int keyval, void *value, void *extra)
{
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int key, flag;
    MPI_Datatype t, d;
    static char base[4];
    void *got;
    MF_CHECK_MPI(MPI_Type_create_keyval(copy_fn, delete_fn, &key, NULL));
    MF_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    MF_CHECK_MPI(MPI_Type_set_attr(t, key, base));
    MF_CHECK_MPI(MPI_Type_dup(t, &d));
    MF_CHECK(copies == 1, "copy callback ran %d times", copies);
    MF_CHECK_MPI(MPI_Type_get_attr(d, key, &got, &flag));
    MF_CHECK(flag && got == base + 1, "dup'ed attribute %p flag %d", got, flag);
    MF_CHECK_MPI(MPI_Type_free(&d));
    MF_CHECK(deletes == 1, "delete callback ran %d times after freeing the dup", deletes);
    MF_CHECK_MPI(MPI_Type_free(&t));
    MF_CHECK(deletes == 2, "delete callback ran %d times after freeing the original", deletes);
    MF_CHECK_MPI(MPI_Type_free_keyval(&key));
    return mftest_finish();
}
