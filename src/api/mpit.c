/*
 * The MPI tool information interface (MPI_T_*): control variables, performance variables with
 * sessions and handles, categories, enumerations. Events (MPI-4) are mpit_event.c's.
 *
 * Usable at any time, before MPI_Init and after MPI_Finalize, from any thread: every call takes
 * the MPI_T mutex (mpit_internal.h), none takes the library lock. Errors are returned, never
 * raised through an error handler, as the standard requires of MPI_T. Every call but
 * MPI_T_init_thread answers MPI_T_ERR_NOT_INITIALIZED outside an MPI_T_init_thread /
 * MPI_T_finalize pair; the last MPI_T_finalize frees the tool's sessions and handles.
 *
 * Handles, sessions and enumerations are pointers the tool got from us; each is checked by
 * membership in our lists (never dereferenced before that), so a stale or forged one is
 * MPI_T_ERR_INVALID_HANDLE / MPI_T_ERR_INVALID_SESSION instead of a crash.
 *
 * OUT arguments of the *_get_info calls may be NULL (that value is then not returned). Strings
 * follow the standard's convention: with *len == 0 or a NULL buffer, *len returns the length the
 * whole string needs (with its terminating NUL); otherwise at most *len - 1 characters and a NUL
 * are stored and *len returns how many were stored, NUL included.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api/mpit_api.h"

/* Sessions and handles live in singly linked lists threaded through their first member. */
typedef struct mf_t_link {
    struct mf_t_link *next;
} mf_t_link;

struct mf_t_pvar { /* MPI_T_pvar_handle */
    mf_t_link link;
    int index;
    bool started;
    mf_t_val acc, base; /* accumulating classes: value = acc + (started ? now - base : 0) */
};

struct mf_t_pvar_session { /* MPI_T_pvar_session */
    mf_t_link link;
    mf_t_link *handles;
};

struct mf_t_cvar { /* MPI_T_cvar_handle */
    mf_t_link link;
    int index, count;
};

int mf_t_refcount; /* MPI_T_init_thread calls not yet finalized */
static mf_t_link *mf_t_sessions;
static mf_t_link *mf_t_cvar_handles;

/* The link that points at `item` in the list at *head, or NULL when item is not in the list: how
 * every handle from a tool is checked before it is used. */
static mf_t_link **mf_t_find(mf_t_link **head, const void *item)
{
    for (mf_t_link **p = head; *p; p = &(*p)->next)
        if (*p == item)
            return p;
    return NULL;
}

static void mf_t_push(mf_t_link **head, mf_t_link *item)
{
    item->next = *head;
    *head = item;
}

/* Unlinks and frees the item *p points at (a session with its handles). */
static void mf_t_drop(mf_t_link **p, bool session)
{
    mf_t_link *item = *p;
    *p = item->next;
    while (session && ((struct mf_t_pvar_session *)item)->handles)
        mf_t_drop(&((struct mf_t_pvar_session *)item)->handles, false);
    free(item);
}

/* Copies up to len indices of a category member list. */
int mf_t_indices(const mf_t_ilist *l, int len, int indices[])
{
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < len && i < l->n; i++)
        indices[i] = l->v[i];
    return MPI_SUCCESS;
}

/* ---- Initialization ---- */

int PMPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    mf_t_lock();
    mf_t_setup_locked();
    mf_t_refcount++;
    mf_t_unlock();
    /* Every call is serialized by the MPI_T mutex: any level can be granted. */
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    return MPI_SUCCESS;
}
MF_API_ALIAS(T_init_thread);

int PMPI_T_finalize(void)
{
    MF_T_BEGIN()
    {
        if (--mf_t_refcount == 0) {
            while (mf_t_sessions)
                mf_t_drop(&mf_t_sessions, true);
            while (mf_t_cvar_handles)
                mf_t_drop(&mf_t_cvar_handles, false);
            mf_t_event_regs_drop_locked();
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_finalize);

/* ---- Enumerations ---- */

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MF_T_BEGIN()
    {
        if (!mf_t_enum_ok(enumtype)) {
            rc = MPI_T_ERR_INVALID_HANDLE;
        } else if (name_len && *name_len < 0) {
            rc = MPI_T_ERR_INVALID;
        } else {
            MF_T_SET(num, enumtype->n);
            mf_t_string(enumtype->name, name, name_len);
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    MF_T_BEGIN()
    {
        if (!mf_t_enum_ok(enumtype)) {
            rc = MPI_T_ERR_INVALID_HANDLE;
        } else if (indx < 0 || indx >= enumtype->n) {
            rc = MPI_T_ERR_INVALID_ITEM;
        } else if (name_len && *name_len < 0) {
            rc = MPI_T_ERR_INVALID;
        } else {
            MF_T_SET(value, indx);
            mf_t_string(enumtype->items[indx], name, name_len);
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_enum_get_item);

/* ---- Control variables ---- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    MF_T_BEGIN()
    {
        if (!num_cvar)
            rc = MPI_T_ERR_INVALID;
        else
            *num_cvar = mf_t_ncvars;
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_get_num);

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cvar_index, mf_t_ncvars);
        if (!rc) {
            const mf_t_cvar_var *v = &mf_t_cvars[cvar_index];
            rc = mf_t_strings(v->name, name, name_len, v->desc, desc, desc_len);
            if (!rc) {
                MF_T_SET(verbosity, v->verbosity);
                MF_T_SET(datatype, v->datatype);
                MF_T_SET(enumtype, v->enumtype ? v->enumtype : MPI_T_ENUM_NULL);
                MF_T_SET(bind, MPI_T_BIND_NO_OBJECT);
                MF_T_SET(scope, MPI_T_SCOPE_READONLY);
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MF_T_BEGIN()
    {
        rc = name && cvar_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID;
        for (int i = 0; name && cvar_index && i < mf_t_ncvars; i++) {
            if (strcmp(mf_t_cvars[i].name, name) == 0) {
                *cvar_index = i;
                rc = MPI_SUCCESS;
                break;
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* every control variable is bound to no object */
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cvar_index, mf_t_ncvars);
        if (!rc && (!handle || !count))
            rc = MPI_T_ERR_INVALID;
        struct mf_t_cvar *h = rc ? NULL : malloc(sizeof *h);
        if (!rc && !h)
            rc = MPI_T_ERR_MEMORY;
        if (h) {
            const mf_t_cvar_var *v = &mf_t_cvars[cvar_index];
            h->index = cvar_index;
            /* A string's count is the bytes its value needs, NUL included. */
            h->count = v->datatype == MPI_CHAR ? (int)strlen(mf_t_cvar_string(v)) + 1 : 1;
            mf_t_push(&mf_t_cvar_handles, &h->link);
            *handle = h;
            *count = h->count;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_handle_alloc);

static struct mf_t_cvar *mf_t_cvar_find(MPI_T_cvar_handle handle)
{
    mf_t_link **p = mf_t_find(&mf_t_cvar_handles, handle);
    return p ? (struct mf_t_cvar *)*p : NULL;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MF_T_BEGIN()
    {
        mf_t_link **p = handle ? mf_t_find(&mf_t_cvar_handles, *handle) : NULL;
        if (!p) {
            rc = handle ? MPI_T_ERR_INVALID_HANDLE : MPI_T_ERR_INVALID;
        } else {
            mf_t_drop(p, false);
            *handle = MPI_T_CVAR_HANDLE_NULL;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_handle_free);

/* Stores x as datatype dt in buf. */
static void mf_t_put(MPI_Datatype dt, mf_t_val x, void *buf)
{
    if (dt == MPI_INT)
        *(int *)buf = x.i;
    else if (dt == MPI_UNSIGNED_LONG)
        *(unsigned long *)buf = (unsigned long)x.u;
    else if (dt == MPI_UNSIGNED_LONG_LONG)
        *(unsigned long long *)buf = (unsigned long long)x.u;
    else if (dt == MPI_DOUBLE)
        *(double *)buf = x.d;
}

static mf_t_val mf_t_get(MPI_Datatype dt, const void *buf)
{
    mf_t_val x = {0};
    if (dt == MPI_UNSIGNED_LONG)
        x.u = *(const unsigned long *)buf;
    else if (dt == MPI_UNSIGNED_LONG_LONG)
        x.u = *(const unsigned long long *)buf;
    else if (dt == MPI_DOUBLE)
        x.d = *(const double *)buf;
    return x;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MF_T_BEGIN()
    {
        struct mf_t_cvar *h = mf_t_cvar_find(handle);
        if (!h) {
            rc = MPI_T_ERR_INVALID_HANDLE;
        } else if (!buf) {
            rc = MPI_T_ERR_INVALID;
        } else {
            const mf_t_cvar_var *v = &mf_t_cvars[h->index];
            int len = h->count;
            if (v->datatype == MPI_CHAR)
                mf_t_string(mf_t_cvar_string(v), buf, &len);
            else
                mf_t_put(v->datatype, mf_t_cvar_value(v), buf);
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MF_T_BEGIN()
    {
        if (!mf_t_cvar_find(handle))
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (!buf)
            rc = MPI_T_ERR_INVALID;
        else /* every setting is read-only (see mpit_cvar.c) */
            rc = MPI_T_ERR_CVAR_SET_NEVER;
    }
    MF_T_END();
}
MF_API_ALIAS(T_cvar_write);

/* ---- Performance variables ---- */

int PMPI_T_pvar_get_num(int *num_pvar)
{
    MF_T_BEGIN()
    {
        if (!num_pvar)
            rc = MPI_T_ERR_INVALID;
        else
            *num_pvar = mf_t_npvars;
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(pvar_index, mf_t_npvars);
        if (!rc) {
            const mf_t_pvar_var *v = mf_t_pvars[pvar_index];
            rc = mf_t_strings(v->d.name, name, name_len, v->d.desc, desc, desc_len);
            if (!rc) {
                MF_T_SET(verbosity, v->d.verbosity);
                MF_T_SET(var_class, v->d.var_class);
                MF_T_SET(datatype, v->d.datatype);
                MF_T_SET(enumtype, MPI_T_ENUM_NULL);
                MF_T_SET(bind, MPI_T_BIND_NO_OBJECT);
                MF_T_SET(readonly, !v->accumulating);
                MF_T_SET(continuous, v->d.continuous);
                /* readreset samples the source once, so nothing is lost between read and reset */
                MF_T_SET(atomic, v->accumulating);
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MF_T_BEGIN()
    {
        rc = name && pvar_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID;
        for (int i = 0; name && pvar_index && i < mf_t_npvars; i++) {
            if (mf_t_pvars[i]->d.var_class == var_class &&
                strcmp(mf_t_pvars[i]->d.name, name) == 0) {
                *pvar_index = i;
                rc = MPI_SUCCESS;
                break;
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_get_index);

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MF_T_BEGIN()
    {
        struct mf_t_pvar_session *s = session ? calloc(1, sizeof *s) : NULL;
        if (!session) {
            rc = MPI_T_ERR_INVALID;
        } else if (!s) {
            rc = MPI_T_ERR_OUT_OF_SESSIONS;
        } else {
            mf_t_push(&mf_t_sessions, &s->link);
            *session = s;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_session_create);

static struct mf_t_pvar_session *mf_t_session_find(MPI_T_pvar_session session)
{
    mf_t_link **p = mf_t_find(&mf_t_sessions, session);
    return p ? (struct mf_t_pvar_session *)*p : NULL;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MF_T_BEGIN()
    {
        mf_t_link **p = session ? mf_t_find(&mf_t_sessions, *session) : NULL;
        if (!p) {
            rc = session ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_INVALID;
        } else {
            mf_t_drop(p, true);
            *session = MPI_T_PVAR_SESSION_NULL;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_session_free);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* every performance variable is bound to no object */
    MF_T_BEGIN()
    {
        struct mf_t_pvar_session *s = mf_t_session_find(session);
        rc = !s ? MPI_T_ERR_INVALID_SESSION : mf_t_index_ok(pvar_index, mf_t_npvars);
        if (!rc && (!handle || !count))
            rc = MPI_T_ERR_INVALID;
        struct mf_t_pvar *h = rc ? NULL : calloc(1, sizeof *h);
        if (!rc && !h)
            rc = MPI_T_ERR_OUT_OF_HANDLES;
        if (h) {
            const mf_t_pvar_var *v = mf_t_pvars[pvar_index];
            h->index = pvar_index;
            h->started = v->d.continuous; /* the others count from MPI_T_pvar_start on */
            h->base = mf_t_pvar_source(v);
            mf_t_push(&s->handles, &h->link);
            *handle = h;
            *count = 1;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_handle_alloc);

/* The session and the handle's place in its list: MPI_SUCCESS, or the error for a bad session
 * or a handle that is not one of this session's. MPI_T_PVAR_ALL_HANDLES (*out NULL) is accepted
 * only where all_ok. */
static int mf_t_handle_find(MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all_ok,
                            struct mf_t_pvar_session **s_out, mf_t_link ***out)
{
    struct mf_t_pvar_session *s = mf_t_session_find(session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    *s_out = s;
    *out = NULL;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    *out = mf_t_find(&s->handles, handle);
    return *out ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MF_T_BEGIN()
    {
        struct mf_t_pvar_session *s;
        mf_t_link **p;
        rc = handle ? mf_t_handle_find(session, *handle, false, &s, &p) : MPI_T_ERR_INVALID;
        if (!rc) {
            mf_t_drop(p, false);
            *handle = MPI_T_PVAR_HANDLE_NULL;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_pvar_handle_free);

static void mf_t_add(bool dbl, mf_t_val *x, mf_t_val a, mf_t_val b)
{
    if (dbl)
        x->d += a.d - b.d;
    else
        x->u += a.u - b.u;
}

/* The handle's value given the source's current value `now`. */
static mf_t_val mf_t_value(const struct mf_t_pvar *h, const mf_t_pvar_var *v, mf_t_val now)
{
    if (!v->accumulating)
        return now;
    mf_t_val x = h->acc;
    if (h->started)
        mf_t_add(v->d.datatype == MPI_DOUBLE, &x, now, h->base);
    return x;
}

/* The operations on one handle, with its variable and the source's value sampled once. */
enum mf_t_op { MF_T_START, MF_T_STOP, MF_T_RESET, MF_T_READ, MF_T_WRITE, MF_T_READRESET };

static int mf_t_apply(struct mf_t_pvar *h, enum mf_t_op op, void *rbuf, const void *wbuf)
{
    const mf_t_pvar_var *v = mf_t_pvars[h->index];
    mf_t_val now = mf_t_pvar_source(v);
    switch (op) {
    case MF_T_START:
    case MF_T_STOP:
        if (v->d.continuous)
            return MPI_T_ERR_PVAR_NO_STARTSTOP;
        if (op == MF_T_STOP && h->started)
            h->acc = mf_t_value(h, v, now);
        else if (op == MF_T_START && !h->started)
            h->base = now;
        h->started = op == MF_T_START;
        return MPI_SUCCESS;
    case MF_T_READ:
        mf_t_put(v->d.datatype, mf_t_value(h, v, now), rbuf);
        return MPI_SUCCESS;
    case MF_T_RESET:
    case MF_T_WRITE:
    case MF_T_READRESET:
        if (!v->accumulating)
            return MPI_T_ERR_PVAR_NO_WRITE;
        if (op == MF_T_READRESET)
            mf_t_put(v->d.datatype, mf_t_value(h, v, now), rbuf);
        h->acc = op == MF_T_WRITE ? mf_t_get(v->d.datatype, wbuf) : (mf_t_val){0};
        h->base = now;
        return MPI_SUCCESS;
    }
    return MPI_T_ERR_INVALID;
}

/* One entry point for all six pvar operations: checks, then one handle or, for start, stop and
 * reset, every handle of the session (where continuous or read-only variables are skipped). */
static int mf_t_pvar_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum mf_t_op op,
                        void *rbuf, const void *wbuf)
{
    MF_T_BEGIN()
    {
        struct mf_t_pvar_session *s;
        mf_t_link **p;
        bool all_ok = op == MF_T_START || op == MF_T_STOP || op == MF_T_RESET;
        rc = mf_t_handle_find(session, handle, all_ok, &s, &p);
        if (!rc && ((op == MF_T_READ || op == MF_T_READRESET) && !rbuf))
            rc = MPI_T_ERR_INVALID;
        if (!rc && op == MF_T_WRITE && !wbuf)
            rc = MPI_T_ERR_INVALID;
        if (!rc && p) {
            rc = mf_t_apply((struct mf_t_pvar *)*p, op, rbuf, wbuf);
        } else if (!rc) {
            for (mf_t_link *l = s->handles; l; l = l->next) {
                struct mf_t_pvar *h = (struct mf_t_pvar *)l;
                const mf_t_pvar_var *v = mf_t_pvars[h->index];
                if (op == MF_T_RESET ? v->accumulating : !v->d.continuous)
                    mf_t_apply(h, op, NULL, NULL);
            }
        }
    }
    MF_T_END();
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return mf_t_pvar_op(session, handle, MF_T_START, NULL, NULL);
}
MF_API_ALIAS(T_pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return mf_t_pvar_op(session, handle, MF_T_STOP, NULL, NULL);
}
MF_API_ALIAS(T_pvar_stop);

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return mf_t_pvar_op(session, handle, MF_T_READ, buf, NULL);
}
MF_API_ALIAS(T_pvar_read);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return mf_t_pvar_op(session, handle, MF_T_WRITE, NULL, buf);
}
MF_API_ALIAS(T_pvar_write);

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return mf_t_pvar_op(session, handle, MF_T_RESET, NULL, NULL);
}
MF_API_ALIAS(T_pvar_reset);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return mf_t_pvar_op(session, handle, MF_T_READRESET, buf, NULL);
}
MF_API_ALIAS(T_pvar_readreset);

/* ---- Categories ---- */

int PMPI_T_category_get_num(int *num_cat)
{
    MF_T_BEGIN()
    {
        if (!num_cat)
            rc = MPI_T_ERR_INVALID;
        else
            *num_cat = mf_t_ncats;
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cat_index, mf_t_ncats);
        if (!rc) {
            const mf_t_category_var *c = mf_t_cats[cat_index];
            rc = mf_t_strings(c->name, name, name_len, c->desc, desc, desc_len);
            if (!rc) {
                MF_T_SET(num_cvars, c->cvars.n);
                MF_T_SET(num_pvars, c->pvars.n);
                MF_T_SET(num_categories, c->cats.n);
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_get_info);

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MF_T_BEGIN()
    {
        rc = name && cat_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID;
        for (int i = 0; name && cat_index && i < mf_t_ncats; i++) {
            if (strcmp(mf_t_cats[i]->name, name) == 0) {
                *cat_index = i;
                rc = MPI_SUCCESS;
                break;
            }
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_get_index);

/* The three member lists, chosen by offset in the category. */
static int mf_t_category_members(int cat_index, size_t list, int len, int indices[])
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cat_index, mf_t_ncats);
        if (!rc)
            rc = mf_t_indices((const mf_t_ilist *)((const char *)mf_t_cats[cat_index] + list), len,
                              indices);
    }
    MF_T_END();
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return mf_t_category_members(cat_index, offsetof(mf_t_category_var, cvars), len, indices);
}
MF_API_ALIAS(T_category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return mf_t_category_members(cat_index, offsetof(mf_t_category_var, pvars), len, indices);
}
MF_API_ALIAS(T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return mf_t_category_members(cat_index, offsetof(mf_t_category_var, cats), len, indices);
}
MF_API_ALIAS(T_category_get_categories);

int PMPI_T_category_changed(int *update_number)
{
    MF_T_BEGIN()
    {
        if (!update_number)
            rc = MPI_T_ERR_INVALID;
        else
            *update_number = mf_t_stamp;
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_changed);

/* ---- Events (MPI-4): none exist yet ---- */

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cat_index, mf_t_ncats);
        if (!rc && !num_events)
            rc = MPI_T_ERR_INVALID;
        else if (!rc)
            *num_events = mf_t_cats[cat_index]->events.n;
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_get_num_events);

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(cat_index, mf_t_ncats);
        if (!rc)
            rc = mf_t_indices(&mf_t_cats[cat_index]->events, len, indices);
    }
    MF_T_END();
}
MF_API_ALIAS(T_category_get_events);
