/*
 * win.c — MPI windows (MPI-4.0 chapter 12.2 and 12.7): creation in the four flavors, shared
 * queries, dynamic attach/detach, free, attributes, names, hints, error handlers. The window
 * object and its back end are src/rma's (rma.h).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/memkind.h"
#include "comm/attr.h"
#include "comm/info.h"
#include "core/handle.h"
#include "api/rma_api.h"

/* Calls handler eh about `code` for window h (named `name` if the handler is fatal). */
static int win_dispatch(mf_errhandler *eh, MPI_Win h, const char *name, int code, const char *fn)
{
    switch (eh->eh_kind) {
    case MF_ERRH_RETURN:
        return code;
    case MF_ERRH_WIN:
        ((MPI_Win_errhandler_function *)eh->eh_fn)(&h, &code);
        return code;
    default:
        mf_err_die(code, fn, name);
    }
}

/* Dispatches a non-success code to the window's handler (NULL: no object, mf_err_no_object). */
int mf_err_win(mf_win *w, int code, const char *fn)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!w)
        return mf_err_no_object(code, fn);
    return win_dispatch(w->w_errhandler, w->w_handle, w->w_name[0] ? w->w_name : "a window", code,
                        fn);
}

/* Resolves a window handle; MPI_ERR_WIN naming the handle if invalid. */
int mf_check_win_slow(MPI_Win h, mf_win **out, const char *fn)
{
    int rc = mf_check_initialized(fn);
    if (rc)
        return rc;
    if (!(*out = mf_win_get(h)))
        return mf_error(MPI_ERR_WIN, "%s: win=0x%x is not a valid window", fn, (unsigned)h);
    return MPI_SUCCESS;
}

static int win_new(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                   MPI_Comm comm, void *baseptr, MPI_Win *win, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_info *in = NULL;
    mf_win *w = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(win, MPI_WIN_NULL, fn, "win");
    if (!rc && flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr)
        rc = mf_error(MPI_ERR_ARG, "%s: baseptr is NULL", fn);
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    void *got = NULL;
    if (!rc)
        rc = mf_win_create(flavor, base, size, disp_unit, in, c, &got, &w, fn);
    if (!rc) {
        *win = w->w_handle;
        if (baseptr)
            memcpy(baseptr, &got, sizeof got);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win,
                   "MPI_Win_create");
}
MF_API_ALIAS(Win_create);

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win,
                   "MPI_Win_create_c");
}
MF_API_ALIAS(Win_create_c);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win,
                   "MPI_Win_allocate");
}
MF_API_ALIAS(Win_allocate);

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win,
                   "MPI_Win_allocate_c");
}
MF_API_ALIAS(Win_allocate_c);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win,
                   "MPI_Win_allocate_shared");
}
MF_API_ALIAS(Win_allocate_shared);

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win,
                   "MPI_Win_allocate_shared_c");
}
MF_API_ALIAS(Win_allocate_shared_c);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_new(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win,
                   "MPI_Win_create_dynamic");
}
MF_API_ALIAS(Win_create_dynamic);

static int win_shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *unit, void *baseptr,
                            mf_win **w, const char *fn)
{
    int rc = mf_check_win(win, w, fn);
    if (!rc && (!size || !unit || !baseptr))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn,
                      !size   ? "size"
                      : !unit ? "disp_unit"
                              : "baseptr");
    void *base = NULL;
    if (!rc)
        rc = mf_win_shared_query(*w, rank, size, unit, &base, fn);
    if (!rc)
        memcpy(baseptr, &base, sizeof base);
    return rc;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    const char *fn = "MPI_Win_shared_query";
    MF_API_ENTER();
    mf_win *w = NULL;
    MPI_Aint unit = 0;
    int rc = win_shared_query(win, rank, size, &unit, baseptr, &w, fn);
    if (!rc && !disp_unit)
        rc = mf_error(MPI_ERR_ARG, "%s: disp_unit is NULL", fn);
    if (!rc)
        *disp_unit = (int)unit;
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_shared_query);

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    const char *fn = "MPI_Win_shared_query_c";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = win_shared_query(win, rank, size, disp_unit, baseptr, &w, fn);
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_shared_query_c);

/* Dynamic windows address memory by absolute address (MPI_Get_address): attaching only has to
 * check the arguments; operations on memory not attached are the program's error. */
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_attach";
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = mf_error(MPI_ERR_RMA_FLAVOR, "%s: win was not created by MPI_Win_create_dynamic", fn);
    if (!rc && size < 0)
        rc = mf_error(MPI_ERR_SIZE, "%s: size=%ld is negative", fn, (long)size);
    if (!rc && size > 0 && !base)
        rc = mf_error(MPI_ERR_RMA_ATTACH, "%s: base is NULL", fn);
    MF_API_RETURN(mf_err_win(w, rc, fn));
}
MF_API_ALIAS(Win_attach);

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_detach";
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && w->w_flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = mf_error(MPI_ERR_RMA_FLAVOR, "%s: win was not created by MPI_Win_create_dynamic", fn);
    (void)base;
    MF_API_RETURN(mf_err_win(w, rc, fn));
}
MF_API_ALIAS(Win_detach);

int PMPI_Win_free(MPI_Win *win)
{
    const char *fn = "MPI_Win_free";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = win ? mf_check_win(*win, &w, fn) : mf_error(MPI_ERR_ARG, "%s: win is NULL", fn);
    if (!rc && (w->w_epoch & ~MF_RMA_EPOCH_FENCE))
        rc = mf_error(MPI_ERR_RMA_SYNC, "%s: an access epoch (lock or start) is still open", fn);
    if (!rc && w->w_done_reqs)
        rc = mf_error(MPI_ERR_RMA_SYNC, "%s: an exposure epoch (post) is still open", fn);
    if (!rc)
        rc = mf_attr_win_free(*win);
    mf_errhandler *eh = NULL;
    if (!rc) {
        /* The window is gone even when freeing it failed (a peer lost during the final
         * synchronisation): the error goes to its handler, given MPI_WIN_NULL, as a failed
         * MPI_File_close goes to the closed file's. */
        eh = w->w_errhandler;
        mf_errhandler_retain(eh);
        rc = mf_win_free(w, fn);
        w = NULL;
        *win = MPI_WIN_NULL;
    }
    if (eh && !rc) {
        mf_errhandler_release(eh);
        eh = NULL;
    }
    MF_API_EXIT();
    if (!eh)
        return mf_err_win(w, rc, fn);
    rc = win_dispatch(eh, MPI_WIN_NULL, "a freed window", rc, fn);
    MF_API_ENTER(); /* handlers are counted under the lock */
    mf_errhandler_release(eh);
    MF_API_EXIT();
    return rc;
}
MF_API_ALIAS(Win_free);

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    const char *fn = "MPI_Win_get_group";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && !group)
        rc = mf_error(MPI_ERR_ARG, "%s: group is NULL", fn);
    if (!rc)
        rc = mf_group_to_handle(w->w_comm->c_group, group);
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_get_group);

/* ---- attributes ------------------------------------------------------------------------ */

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_create_keyval";
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_keyval_create(MF_ATTR_WIN, (void (*)(void))copy_fn, (void (*)(void))delete_fn,
                              extra, keyval, fn);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Win_create_keyval);

int PMPI_Win_free_keyval(int *keyval)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_free_keyval";
    int rc = mf_check_initialized(fn);
    if (!rc)
        rc = mf_keyval_free(MF_ATTR_WIN, keyval, fn);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Win_free_keyval);

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *value)
{
    const char *fn = "MPI_Win_set_attr";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc) {
        struct mf_attr_list **list = mf_attr_side_list(MF_ATTR_WIN, win, 1);
        rc = list ? mf_attr_set(MF_ATTR_WIN, win, list, keyval, value, fn)
                  : mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_set_attr);

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
    const char *fn = "MPI_Win_get_attr";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && (!value || !flag))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !value ? "attribute_val" : "flag");
    void *pre = NULL;
    if (!rc) {
        switch (keyval) {
        case MPI_WIN_BASE:
            pre = w->w_base;
            break;
        case MPI_WIN_SIZE:
            pre = &w->w_a_size;
            break;
        case MPI_WIN_DISP_UNIT:
            pre = &w->w_a_unit;
            break;
        case MPI_WIN_CREATE_FLAVOR:
            pre = &w->w_a_flavor;
            break;
        case MPI_WIN_MODEL:
            pre = &w->w_a_model;
            break;
        default:
            rc = mf_attr_get(MF_ATTR_WIN, win, mf_attr_side_list(MF_ATTR_WIN, win, 0), keyval,
                             value, flag, fn);
            MF_API_EXIT();
            return mf_err_win(w, rc, fn);
        }
        memcpy(value, &pre, sizeof pre);
        *flag = 1;
    }
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    const char *fn = "MPI_Win_delete_attr";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc) {
        struct mf_attr_list *none = NULL, **list = mf_attr_side_list(MF_ATTR_WIN, win, 0);
        rc = mf_attr_delete(MF_ATTR_WIN, win, list ? list : &none, keyval, fn);
    }
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_delete_attr);

/* ---- names, hints, error handlers ------------------------------------------------------- */

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_set_name";
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && !name)
        rc = mf_error(MPI_ERR_ARG, "%s: win_name is NULL", fn);
    if (!rc)
        snprintf(w->w_name, sizeof w->w_name, "%s", name);
    MF_API_RETURN(mf_err_win(w, rc, fn));
}
MF_API_ALIAS(Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    const char *fn = "MPI_Win_get_name";
    if (win == MPI_WIN_NULL) /* no object: nothing to lock */
        return mf_err_no_object(mf_api_null_name("MPI_WIN_NULL", name, resultlen, fn), fn);
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && (!name || !resultlen))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !name ? "win_name" : "resultlen");
    if (!rc) {
        snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->w_name);
        *resultlen = (int)strlen(name);
    }
    MF_API_RETURN(mf_err_win(w, rc, fn));
}
MF_API_ALIAS(Win_get_name);

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    const char *fn = "MPI_Win_set_info";
    MF_API_ENTER();
    mf_win *w = NULL;
    mf_info *in = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc)
        rc = mf_check_info_opt(info, &in, fn);
    if (!rc)
        rc = mf_win_set_info(w, in);
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    const char *fn = "MPI_Win_get_info";
    MF_API_ENTER();
    mf_win *w = NULL;
    mf_info *copy = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && !info_used)
        rc = mf_error(MPI_ERR_ARG, "%s: info_used is NULL", fn);
    if (!rc)
        rc = mf_info_dup(w->w_info, &copy);
    if (!rc) {
        rc = mf_memkind_report(copy, w->w_comm, w->w_info);
        if (!rc)
            rc = mf_info_to_handle(copy, info_used);
        mf_info_release(copy);
    }
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_get_info);

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *f, MPI_Errhandler *errhandler)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_create_errhandler";
    mf_errhandler *eh;
    int rc = mf_check_initialized(fn);
    if (!rc && (!f || !errhandler))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !f ? "win_errhandler_fn" : "errhandler");
    if (!rc && !(rc = mf_errhandler_new(MF_ERRH_WIN, (void (*)(void))f, &eh)))
        *errhandler = eh->eh_handle;
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Win_create_errhandler);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_Win_set_errhandler";
    MF_API_ENTER();
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    mf_errhandler *eh = rc ? NULL : mf_errhandler_get(errhandler);
    if (!rc && !mf_errhandler_fits(eh, MF_ERRH_WIN))
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler=0x%x is not an error handler for windows", fn,
                      (unsigned)errhandler);
    if (!rc) {
        mf_errhandler_retain(eh);
        mf_errhandler_release(w->w_errhandler);
        w->w_errhandler = eh;
    }
    MF_API_EXIT();
    return mf_err_win(w, rc, fn);
}
MF_API_ALIAS(Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_get_errhandler";
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    if (!rc && !errhandler)
        rc = mf_error(MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    if (!rc) {
        mf_errhandler_retain(w->w_errhandler);
        *errhandler = w->w_errhandler->eh_handle;
    }
    MF_API_RETURN(mf_err_win(w, rc, fn));
}
MF_API_ALIAS(Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    MF_API_ENTER();
    const char *fn = "MPI_Win_call_errhandler";
    mf_win *w = NULL;
    int rc = mf_check_win(win, &w, fn);
    MF_API_EXIT(); /* the user's handler runs unlocked */
    if (rc)
        return mf_err_no_object(rc, fn);
    mf_err_win(w, errorcode, fn);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Win_call_errhandler);
