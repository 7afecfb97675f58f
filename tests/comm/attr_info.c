/*
 * Attribute caching and info objects: copy callbacks run on MPI_Comm_dup (and decide whether
 * the copy exists), delete callbacks on MPI_Comm_free, MPI_Comm_delete_attr and replacement,
 * a freed keyval keeps working for attributes still attached, the predefined attributes of
 * MPI_COMM_WORLD, datatype attributes, the MPI-1 names, and every MPI_Info function.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int copies, deletes;
static intptr_t last_deleted;

static int copy_plus_one(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    MF_CHECK(extra == (void *)&copies, "extra_state not passed to the copy callback");
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    deletes++;
    last_deleted = (intptr_t)value;
    return MPI_SUCCESS;
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t;
    (void)keyval;
    (void)value;
    (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, flag;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    void *v;

    /* Predefined attributes. */
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MF_CHECK(flag && *(int *)v >= 32767, "MPI_TAG_UB %d (flag %d)", flag ? *(int *)v : -1, flag);
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    MF_CHECK(flag && (*(int *)v == 0 || *(int *)v == 1), "MPI_WTIME_IS_GLOBAL");
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    MF_CHECK(flag && *(int *)v == MPI_PROC_NULL, "MPI_HOST");
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    MF_CHECK(flag && *(int *)v == MPI_ANY_SOURCE, "MPI_IO");
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    MF_CHECK(!flag || *(int *)v >= size, "MPI_UNIVERSE_SIZE %d < size", *(int *)v);
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    MF_CHECK(!flag || *(int *)v == 0, "MPI_APPNUM %d", *(int *)v);
    MF_CHECK_MPI(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MF_CHECK(flag, "MPI_Attr_get(MPI_TAG_UB) flag 0");

    /* Copy on dup, delete on free. */
    int key, nocopy;
    MF_CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &copies));
    MF_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &nocopy, NULL));
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MF_CHECK_MPI(MPI_Comm_set_attr(a, key, (void *)(intptr_t)10));
    MF_CHECK_MPI(MPI_Comm_set_attr(a, nocopy, (void *)(intptr_t)99));
    MF_CHECK_MPI(MPI_Comm_get_attr(a, key, &v, &flag));
    MF_CHECK(flag && (intptr_t)v == 10, "get after set: flag %d value %ld", flag,
             (long)(intptr_t)v);
    MF_CHECK_MPI(MPI_Comm_dup(a, &b));
    MF_CHECK(copies == 1, "copy callback ran %d times", copies);
    MF_CHECK_MPI(MPI_Comm_get_attr(b, key, &v, &flag));
    MF_CHECK(flag && (intptr_t)v == 11, "copied value %ld", (long)(intptr_t)v);
    MF_CHECK_MPI(MPI_Comm_get_attr(b, nocopy, &v, &flag));
    MF_CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");
    /* Replacement deletes the old value. */
    MF_CHECK_MPI(MPI_Comm_set_attr(b, key, (void *)(intptr_t)20));
    MF_CHECK(deletes == 1 && last_deleted == 11, "replace: deletes %d last %ld", deletes,
             (long)last_deleted);
    MF_CHECK_MPI(MPI_Comm_delete_attr(b, key));
    MF_CHECK(deletes == 2 && last_deleted == 20, "delete_attr: deletes %d", deletes);
    MF_CHECK_MPI(MPI_Comm_get_attr(b, key, &v, &flag));
    MF_CHECK(!flag, "attribute still there after delete_attr");
    /* A freed keyval still deletes the attributes it left behind. */
    MF_CHECK_MPI(MPI_Comm_free_keyval(&key));
    MF_CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
    MF_CHECK_MPI(MPI_Comm_free(&a));
    MF_CHECK(deletes == 4, "free of a ran %d delete callbacks in all, expected 4", deletes);
    MF_CHECK_MPI(MPI_Comm_free(&b));
    MF_CHECK_MPI(MPI_Comm_free_keyval(&nocopy));

    /* MPI_COMM_DUP_FN and the MPI-1 names. */
    int k1;
    MF_CHECK_MPI(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k1, NULL));
    MF_CHECK_MPI(MPI_Attr_put(MPI_COMM_WORLD, k1, (void *)(intptr_t)7));
    MF_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MF_CHECK_MPI(MPI_Attr_get(a, k1, &v, &flag));
    MF_CHECK(flag && (intptr_t)v == 7, "MPI_DUP_FN copy: flag %d", flag);
    MF_CHECK_MPI(MPI_Attr_delete(MPI_COMM_WORLD, k1));
    MPI_Comm_free(&a);
    MF_CHECK_MPI(MPI_Keyval_free(&k1));

    /* Datatype attributes. */
    int tk;
    MPI_Datatype t;
    MF_CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    MF_CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &tk, NULL));
    MF_CHECK_MPI(MPI_Type_set_attr(t, tk, (void *)(intptr_t)5));
    MF_CHECK_MPI(MPI_Type_get_attr(t, tk, &v, &flag));
    MF_CHECK(flag && (intptr_t)v == 5, "type attribute: flag %d", flag);
    MF_CHECK_MPI(MPI_Type_delete_attr(t, tk));
    MF_CHECK(type_deletes == 1, "type delete callback ran %d times", type_deletes);
    MF_CHECK_MPI(MPI_Type_free_keyval(&tk));
    MPI_Type_free(&t);

    /* Info. */
    MPI_Info info, dup;
    char value[MPI_MAX_INFO_VAL + 1], key_name[MPI_MAX_INFO_KEY + 1];
    int nkeys, len;
    MF_CHECK_MPI(MPI_Info_create(&info));
    MF_CHECK_MPI(MPI_Info_set(info, "alpha", "1"));
    MF_CHECK_MPI(MPI_Info_set(info, "beta", "two"));
    MF_CHECK_MPI(MPI_Info_set(info, "alpha", "three")); /* replaces, keeps position */
    MF_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    MF_CHECK(nkeys == 2, "nkeys %d", nkeys);
    MF_CHECK_MPI(MPI_Info_get_nthkey(info, 1, key_name));
    MF_CHECK(strcmp(key_name, "beta") == 0, "second key '%s'", key_name);
    MF_CHECK_MPI(MPI_Info_get_valuelen(info, "alpha", &len, &flag));
    MF_CHECK(flag && len == 5, "valuelen %d", len);
    MF_CHECK_MPI(MPI_Info_get(info, "alpha", 3, value, &flag));
    MF_CHECK(flag && strcmp(value, "thr") == 0, "truncated get '%s'", value);
    int buflen = 0;
    MF_CHECK_MPI(MPI_Info_get_string(info, "beta", &buflen, NULL, &flag));
    MF_CHECK(flag && buflen == 4, "get_string size query %d", buflen);
    buflen = sizeof value;
    MF_CHECK_MPI(MPI_Info_get_string(info, "beta", &buflen, value, &flag));
    MF_CHECK(flag && strcmp(value, "two") == 0, "get_string '%s'", value);
    MF_CHECK_MPI(MPI_Info_dup(info, &dup));
    MF_CHECK_MPI(MPI_Info_delete(info, "alpha"));
    MF_CHECK_MPI(MPI_Info_get(info, "alpha", 10, value, &flag));
    MF_CHECK(!flag, "deleted key still found");
    MF_CHECK_MPI(MPI_Info_get(dup, "alpha", 10, value, &flag));
    MF_CHECK(flag && strcmp(value, "three") == 0, "dup lost a key deleted from the original");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Info_delete(info, "alpha");
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_INFO_NOKEY, "deleting a missing key gave class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MF_CHECK_MPI(MPI_Info_free(&info));
    MF_CHECK_MPI(MPI_Info_free(&dup));
    MF_CHECK(info == MPI_INFO_NULL, "Info_free did not null the handle");
    MF_CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "maxprocs", sizeof value - 1, value, &flag));
    MF_CHECK(flag && atoi(value) == size, "MPI_INFO_ENV maxprocs '%s'", flag ? value : "");
    MF_CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", sizeof value - 1, value, &flag));
    MF_CHECK(flag && strstr(value, "attr_info"), "MPI_INFO_ENV command '%s'", flag ? value : "");
    return mftest_finish();
}
