/*
 * Keyvals and attribute lists: see attr.h.
 *
 * A keyval is reference counted: the user's handle holds one reference and every attribute set
 * with it another, because MPI lets a program free a keyval while attributes still use it (their
 * delete callbacks must still run later, and MPI_*_delete_attr may still name it to delete
 * them, MPI-4.0 7.7.2). So a freed keyval keeps its handle, which is not reused, until its last
 * attribute is gone; only setting new attributes with it is refused.
 */
#include "comm/attr.h"

#include <stdbool.h>
#include <stdlib.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"
#include "datatype/datatype.h"

typedef int(mf_attr_copy_fn)(int oldobj, int keyval, void *extra_state, void *value_in,
                             void *value_out, int *flag);
typedef int(mf_attr_delete_fn)(int obj, int keyval, void *value, void *extra_state);

typedef struct mf_keyval {
    int k_handle;
    int k_refs;
    mf_attr_kind k_kind;
    mf_attr_copy_fn *k_copy;     /* NULL: not copied */
    mf_attr_delete_fn *k_delete; /* NULL: nothing to call */
    void *k_extra;
    bool k_freed; /* the user freed it: no new attributes, handle lives while k_refs > 0 */
} mf_keyval;

struct mf_attr_list {
    struct mf_attr_list *a_next;
    mf_keyval *a_key;
    void *a_value;
};

static mf_handle_table mf_keyval_table = MF_HANDLE_TABLE_INIT(MF_CLASS_KEYVAL);

static const char *mf_attr_kind_name(mf_attr_kind kind)
{
    return kind == MF_ATTR_COMM ? "communicator" : kind == MF_ATTR_TYPE ? "datatype" : "window";
}

static void mf_keyval_release(mf_keyval *k)
{
    if (--k->k_refs > 0)
        return;
    mf_handle_free(&mf_keyval_table, k->k_handle); /* the user's reference was the last but one */
    free(k);
}

int mf_keyval_create(mf_attr_kind kind, void (*copy_fn)(void), void (*delete_fn)(void),
                     void *extra_state, int *keyval, const char *function)
{
    if (!keyval)
        return mf_error(MPI_ERR_ARG, "%s: keyval is NULL", function);
    mf_keyval *k = calloc(1, sizeof *k);
    if (!k)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", function);
    k->k_kind = kind;
    k->k_copy = (mf_attr_copy_fn *)copy_fn;
    k->k_delete = (mf_attr_delete_fn *)delete_fn;
    k->k_extra = extra_state;
    k->k_refs = 1;
    k->k_handle = mf_handle_alloc(&mf_keyval_table, k);
    if (!k->k_handle) {
        free(k);
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", function);
    }
    *keyval = k->k_handle;
    return MPI_SUCCESS;
}

/* Predefined keyvals (MPI_TAG_UB...) are builtin handles of the keyval class. */
static bool mf_keyval_is_builtin(int keyval)
{
    return MF_HANDLE_KIND(keyval) == MF_HANDLE_BUILTIN &&
           MF_HANDLE_CLASS(keyval) == MF_CLASS_KEYVAL;
}

static int mf_keyval_lookup(mf_attr_kind kind, int keyval, mf_keyval **out, const char *function)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return mf_error(MPI_ERR_KEYVAL, "%s: keyval is MPI_KEYVAL_INVALID", function);
    if (mf_keyval_is_builtin(keyval))
        return mf_error(MPI_ERR_KEYVAL, "%s: keyval=0x%x is predefined (read-only)", function,
                        (unsigned)keyval);
    mf_keyval *k = mf_handle_lookup(&mf_keyval_table, keyval);
    if (!k)
        return mf_error(MPI_ERR_KEYVAL, "%s: keyval=0x%x is not a valid keyval", function,
                        (unsigned)keyval);
    if (k->k_kind != kind)
        return mf_error(MPI_ERR_KEYVAL, "%s: keyval=0x%x was created for %s attributes", function,
                        (unsigned)keyval, mf_attr_kind_name(k->k_kind));
    *out = k;
    return MPI_SUCCESS;
}

int mf_keyval_free(mf_attr_kind kind, int *keyval, const char *function)
{
    if (!keyval)
        return mf_error(MPI_ERR_ARG, "%s: keyval is NULL", function);
    mf_keyval *k;
    int rc = mf_keyval_lookup(kind, *keyval, &k, function);
    if (rc)
        return rc;
    /* Another copy of a handle freed already, whose key lives on for the attributes still using
     * it (a library freeing its key in the delete callback while the program frees it too):
     * nothing more to release. MPICH accepts this too; once the key is gone, the handle is no
     * keyval and the lookup above fails. */
    if (!k->k_freed) {
        k->k_freed = true;
        mf_keyval_release(k);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Runs the delete callback of one attribute; the node stays the caller's to unlink. */
static int mf_attr_call_delete(mf_attr_kind kind, int obj, struct mf_attr_list *a)
{
    if (!a->a_key->k_delete)
        return MPI_SUCCESS;
    int rc = a->a_key->k_delete(obj, a->a_key->k_handle, a->a_value, a->a_key->k_extra);
    (void)kind;
    return rc;
}

int mf_attr_set(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval, void *value,
                const char *function)
{
    mf_keyval *k;
    int rc = mf_keyval_lookup(kind, keyval, &k, function);
    if (!rc && k->k_freed)
        rc = mf_error(MPI_ERR_KEYVAL, "%s: keyval=0x%x was freed", function, (unsigned)keyval);
    if (rc)
        return rc;
    for (struct mf_attr_list *a = *list; a; a = a->a_next)
        if (a->a_key == k) {
            /* Replacing a value deletes the old one first (MPI-4.0 7.7.4). */
            if ((rc = mf_attr_call_delete(kind, obj, a)))
                return rc;
            a->a_value = value;
            return MPI_SUCCESS;
        }
    struct mf_attr_list *a = malloc(sizeof *a);
    if (!a)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", function);
    a->a_key = k;
    a->a_value = value;
    k->k_refs++;
    /* Appended, so that copies (and deletes) follow the order attributes were set in. */
    a->a_next = NULL;
    struct mf_attr_list **tail = list;
    while (*tail)
        tail = &(*tail)->a_next;
    *tail = a;
    return MPI_SUCCESS;
}

/* Values of the predefined communicator attributes; pointers to them are what MPI returns. */
static int mf_attr_tag_ub = MF_TAG_UB;
static int mf_attr_host = MPI_PROC_NULL; /* no process is distinguished as "the host" */
static int mf_attr_io = MPI_ANY_SOURCE;  /* every process can do I/O */
static int mf_attr_wtime_global = 0;     /* MPI_Wtime is per-host CLOCK_MONOTONIC */
static int mf_attr_universe, mf_attr_appnum, mf_attr_lastused;

static int mf_attr_get_builtin(int keyval, void *value_out, int *flag, const char *function)
{
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB:
        v = &mf_attr_tag_ub;
        break;
    case MPI_HOST:
        v = &mf_attr_host;
        break;
    case MPI_IO:
        v = &mf_attr_io;
        break;
    case MPI_WTIME_IS_GLOBAL:
        v = &mf_attr_wtime_global;
        break;
    case MPI_UNIVERSE_SIZE:
        mf_attr_universe = mf_g.pm.universe_size > 0 ? mf_g.pm.universe_size : mf_g.size;
        v = &mf_attr_universe;
        break;
    case MPI_APPNUM:
        mf_attr_appnum = mf_g.pm.appnum;
        v = &mf_attr_appnum;
        break;
    case MPI_LASTUSEDCODE:
        mf_attr_lastused = mf_error_last_used();
        v = &mf_attr_lastused;
        break;
    default:
        return mf_error(MPI_ERR_KEYVAL, "%s: keyval=0x%x is not a communicator attribute", function,
                        (unsigned)keyval);
    }
    *(void **)value_out = v;
    *flag = 1;
    return MPI_SUCCESS;
}

int mf_attr_get(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval, void *value_out,
                int *flag, const char *function)
{
    (void)obj;
    if (!value_out || !flag)
        return mf_error(MPI_ERR_ARG, "%s: %s is NULL", function,
                        !value_out ? "attribute_val" : "flag");
    if (kind == MF_ATTR_COMM && mf_keyval_is_builtin(keyval))
        return mf_attr_get_builtin(keyval, value_out, flag, function);
    mf_keyval *k;
    int rc = mf_keyval_lookup(kind, keyval, &k, function);
    if (rc)
        return rc;
    *flag = 0;
    for (struct mf_attr_list *a = list ? *list : NULL; a; a = a->a_next)
        if (a->a_key == k) {
            *(void **)value_out = a->a_value;
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}

int mf_attr_delete(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval,
                   const char *function)
{
    mf_keyval *k;
    int rc = mf_keyval_lookup(kind, keyval, &k, function);
    if (rc)
        return rc;
    for (struct mf_attr_list **pa = list; *pa; pa = &(*pa)->a_next)
        if ((*pa)->a_key == k) {
            struct mf_attr_list *a = *pa;
            /* A failing delete callback leaves the attribute in place (the call failed). */
            if ((rc = mf_attr_call_delete(kind, obj, a)))
                return rc;
            *pa = a->a_next;
            mf_keyval_release(a->a_key);
            free(a);
            return MPI_SUCCESS;
        }
    return mf_error(MPI_ERR_KEYVAL, "%s: no attribute is set for keyval=0x%x", function,
                    (unsigned)keyval);
}

int mf_attr_copy_all(mf_attr_kind kind, int oldobj, struct mf_attr_list *src, int newobj,
                     struct mf_attr_list **dst)
{
    (void)newobj;
    struct mf_attr_list **tail = dst;
    for (struct mf_attr_list *a = src; a; a = a->a_next) {
        if (!a->a_key->k_copy)
            continue;
        void *value = NULL;
        int flag = 0;
        int rc = a->a_key->k_copy(oldobj, a->a_key->k_handle, a->a_key->k_extra, a->a_value, &value,
                                  &flag);
        if (rc)
            return rc;
        if (!flag)
            continue;
        struct mf_attr_list *n = malloc(sizeof *n);
        if (!n)
            return mf_error(MPI_ERR_NO_MEM, "out of memory copying attributes (%s)",
                            mf_attr_kind_name(kind));
        n->a_key = a->a_key;
        n->a_value = value;
        n->a_next = NULL;
        a->a_key->k_refs++;
        *tail = n;
        tail = &n->a_next;
    }
    return MPI_SUCCESS;
}

int mf_attr_delete_all(mf_attr_kind kind, int obj, struct mf_attr_list **list)
{
    /* Last set, first deleted: MPI_Finalize must delete MPI_COMM_SELF's attributes in the
     * reverse order of setting (MPI-4.0 11.2.5), and that order serves every object. */
    struct mf_attr_list *rev = NULL;
    while (*list) {
        struct mf_attr_list *a = *list;
        *list = a->a_next;
        a->a_next = rev;
        rev = a;
    }
    *list = rev;
    int first_rc = MPI_SUCCESS;
    while (*list) {
        struct mf_attr_list *a = *list;
        int rc = mf_attr_call_delete(kind, obj, a);
        if (rc && !first_rc)
            first_rc = rc;
        *list = a->a_next;
        mf_keyval_release(a->a_key);
        free(a);
    }
    return first_rc;
}

/* Side table for datatypes and windows: a short list, since few objects carry attributes. */
typedef struct mf_attr_side {
    struct mf_attr_side *s_next;
    mf_attr_kind s_kind;
    int s_obj;
    struct mf_attr_list *s_list;
} mf_attr_side;

static mf_attr_side *mf_attr_sides;

struct mf_attr_list **mf_attr_side_list(mf_attr_kind kind, int obj, int create)
{
    for (mf_attr_side *s = mf_attr_sides; s; s = s->s_next)
        if (s->s_kind == kind && s->s_obj == obj)
            return &s->s_list;
    if (!create)
        return NULL;
    mf_attr_side *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (kind == MF_ATTR_TYPE) /* from now on, a freed type may have attributes to delete */
        mf_datatype_set_free_hook(mf_attr_type_free);
    s->s_kind = kind;
    s->s_obj = obj;
    s->s_next = mf_attr_sides;
    mf_attr_sides = s;
    return &s->s_list;
}

static int mf_attr_side_free(mf_attr_kind kind, int obj)
{
    for (mf_attr_side **ps = &mf_attr_sides; *ps; ps = &(*ps)->s_next)
        if ((*ps)->s_kind == kind && (*ps)->s_obj == obj) {
            mf_attr_side *s = *ps;
            int rc = mf_attr_delete_all(kind, obj, &s->s_list);
            *ps = s->s_next;
            free(s);
            return rc;
        }
    return MPI_SUCCESS;
}

int mf_attr_type_copy(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    struct mf_attr_list **src = mf_attr_side_list(MF_ATTR_TYPE, oldtype, 0);
    if (!src || !*src)
        return MPI_SUCCESS;
    struct mf_attr_list **dst = mf_attr_side_list(MF_ATTR_TYPE, newtype, 1);
    if (!dst)
        return mf_error(MPI_ERR_NO_MEM, "out of memory copying datatype attributes");
    int rc = mf_attr_copy_all(MF_ATTR_TYPE, oldtype, *src, newtype, dst);
    if (rc)
        mf_attr_side_free(MF_ATTR_TYPE, newtype);
    return rc;
}

int mf_attr_type_free(MPI_Datatype type)
{
    return mf_attr_side_free(MF_ATTR_TYPE, type);
}

int mf_attr_win_free(MPI_Win win)
{
    return mf_attr_side_free(MF_ATTR_WIN, win);
}
