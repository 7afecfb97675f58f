/*
 * MPI_Comm_dup_with_info and MPI_Comm_idup_with_info take MPI_INFO_NULL as "no hints"; a copy
 * callback that fails makes MPI_Comm_dup return its error with *newcomm set to MPI_COMM_NULL.
 */
#include "mftest.h"

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_ERR_OTHER;
}

/* The new communicator works like its parent. */
static void check_usable(MPI_Comm c, const char *what)
{
    int result = MPI_UNEQUAL, sum = 0, one = 1, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MF_CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, c, &result));
    MF_CHECK(result == MPI_CONGRUENT, "%s: not congruent to MPI_COMM_WORLD (%d)", what, result);
    MF_CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    MF_CHECK(sum == size, "%s: allreduce gave %d", what, sum);
    MPI_Info used = MPI_INFO_NULL;
    MF_CHECK_MPI(MPI_Comm_get_info(c, &used));
    MF_CHECK(used != MPI_INFO_NULL, "%s: get_info returned MPI_INFO_NULL", what);
    if (used != MPI_INFO_NULL)
        MPI_Info_free(&used);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm c = MPI_COMM_NULL;
    MF_CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        check_usable(c, "Comm_dup_with_info(MPI_INFO_NULL)");
        MPI_Comm_free(&c);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    c = MPI_COMM_NULL;
    MF_CHECK_MPI(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c, &req));
    MF_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (c != MPI_COMM_NULL) {
        check_usable(c, "Comm_idup_with_info(MPI_INFO_NULL)");
        MPI_Comm_free(&c);
    }
    /* Real hints still work. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MF_CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    check_usable(c, "Comm_dup_with_info(info)");
    MPI_Comm_free(&c);
    MPI_Info_free(&info);

    /* A failing copy callback. */
    MPI_Comm parent;
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int kv;
    MF_CHECK_MPI(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    MF_CHECK_MPI(MPI_Comm_set_attr(parent, kv, NULL));
    c = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(parent, &c), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_OTHER, "Comm_dup with a failing copy callback gave class %d", cls);
    MF_CHECK(c == MPI_COMM_NULL, "Comm_dup with a failing copy callback left newcomm 0x%x",
             (unsigned)c);
    c = MPI_COMM_WORLD;
    rc = MPI_Comm_dup_with_info(parent, MPI_INFO_NULL, &c);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_OTHER && c == MPI_COMM_NULL,
             "Comm_dup_with_info with a failing copy callback: class %d, newcomm 0x%x", cls,
             (unsigned)c);
    MF_CHECK_MPI(MPI_Comm_delete_attr(parent, kv));
    MF_CHECK_MPI(MPI_Comm_free_keyval(&kv));
    MF_CHECK_MPI(MPI_Comm_free(&parent));
    return mftest_finish();
}
