/*
 * MPI_T events and their source (MPI-4.0 section 15.3.8): the table of events Manifold raises
 * (src/tool/mpit_event.c), registrations with a callback per safety level, a dropped-events
 * handler and a free callback; event instances read from inside a callback.
 *
 * Every event is bound to no object (MPI_T_BIND_NO_OBJECT: obj_handle is ignored) and every one
 * of its elements is an MPI_INT, laid out as an array (element i at i * sizeof(int)). No info
 * key is used: the info arguments are checked and ignored, and the *_get_info calls return a new
 * empty info (MPI_T_event_get_info returns MPI_INFO_NULL).
 *
 * Registrations are pointers the tool got from us, checked by membership in the registry under
 * the MPI_T mutex before use. An instance is valid only on the thread that delivers it, while
 * its callbacks run.
 */
#include <stdlib.h>

#include "api/mpit_api.h"
#include "comm/info.h"

/* The one source: index 0. */
static const char mf_t_source_name[] = "clock_monotonic";
static const char mf_t_source_desc[] =
    "this process's CLOCK_MONOTONIC in nanoseconds, the time of every Manifold event";

static bool mf_t_reg_ok(mf_t_event_reg *r)
{
    for (mf_t_event_reg *x = mf_t_event_regs; x; x = x->next)
        if (x == r)
            return true;
    return false;
}

static int mf_t_info_ok(MPI_Info info)
{
    return info == MPI_INFO_NULL || mf_info_get(info) ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}

static int mf_t_safety_ok(MPI_T_cb_safety s)
{
    return s >= MPI_T_CB_REQUIRE_NONE && s < MF_T_CB_LEVELS ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}

/* A new empty info for an info_used argument. */
static int mf_t_info_used(MPI_Info *out)
{
    if (!out)
        return MPI_T_ERR_INVALID;
    mf_info *in = NULL;
    if (mf_info_new(&in) != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    if (mf_info_to_handle(in, out) != MPI_SUCCESS) {
        mf_info_release(in);
        return MPI_T_ERR_MEMORY;
    }
    return MPI_SUCCESS;
}

int PMPI_T_event_get_num(int *num_events)
{
    MF_T_BEGIN()
    {
        if (!num_events)
            rc = MPI_T_ERR_INVALID;
        else
            *num_events = MF_T_EVENT_N;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_get_num);

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(event_index, MF_T_EVENT_N);
        const mf_t_event_def *e = rc ? NULL : &mf_t_events[event_index];
        if (e && num_elements && *num_elements < 0)
            rc = MPI_T_ERR_INVALID;
        if (!rc)
            rc = mf_t_strings(e->name, name, name_len, e->desc, desc, desc_len);
        if (!rc) {
            /* On input, how many entries the arrays hold; on return, how many elements. */
            int room = num_elements ? *num_elements : 0;
            for (int i = 0; i < e->nelements && i < room; i++) {
                if (array_of_datatypes)
                    array_of_datatypes[i] = MPI_INT;
                if (array_of_displacements)
                    array_of_displacements[i] = (MPI_Aint)(i * (int)sizeof(int));
            }
            MF_T_SET(num_elements, e->nelements);
            MF_T_SET(verbosity, e->verbosity);
            MF_T_SET(enumtype, MPI_T_ENUM_NULL);
            MF_T_SET(info, MPI_INFO_NULL);
            MF_T_SET(bind, MPI_T_BIND_NO_OBJECT);
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_get_info);

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    MF_T_BEGIN()
    {
        rc = name && event_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID;
        for (int i = 0; name && event_index && i < MF_T_EVENT_N; i++)
            if (strcmp(mf_t_events[i].name, name) == 0) {
                *event_index = i;
                rc = MPI_SUCCESS;
                break;
            }
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_get_index);

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(event_index, MF_T_EVENT_N);
        if (!rc && !event_registration)
            rc = MPI_T_ERR_INVALID;
        if (!rc)
            rc = mf_t_info_ok(info);
        mf_t_event_reg *r = rc ? NULL : calloc(1, sizeof *r);
        if (!rc && !r)
            rc = MPI_T_ERR_MEMORY;
        if (!rc) {
            r->kind = event_index;
            r->next = mf_t_event_regs;
            mf_t_event_regs = r;
            *event_registration = r;
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_handle_alloc);

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    mf_t_event_reg *r = event_registration, *now = NULL;
    MF_T_BEGIN()
    {
        if (r && mf_t_reg_ok(r)) {
            r->free_cb = free_cb_function;
            r->free_user_data = user_data;
            if (mf_t_event_reg_unlink_locked(r) == 1)
                now = r;
        } else {
            rc = MPI_T_ERR_INVALID_HANDLE;
        }
    }
    mf_t_unlock();
    /* Outside the mutex: the callback may call MPI_T. A callback of r still running calls it
     * when it returns instead. */
    if (now) {
        if (now->free_cb)
            now->free_cb(now, MPI_T_CB_REQUIRE_NONE, now->free_user_data);
        free(now);
    }
    return rc;
}
MF_API_ALIAS(T_event_handle_free);

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    MF_T_BEGIN()
    {
        rc = mf_t_reg_ok(event_registration) ? mf_t_info_used(info_used) : MPI_T_ERR_INVALID_HANDLE;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_handle_get_info);

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    MF_T_BEGIN()
    {
        rc = mf_t_reg_ok(event_registration) ? mf_t_info_ok(info) : MPI_T_ERR_INVALID_HANDLE;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_handle_set_info);

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    MF_T_BEGIN()
    {
        rc = mf_t_reg_ok(event_registration) ? mf_t_safety_ok(cb_safety) : MPI_T_ERR_INVALID_HANDLE;
        if (!rc)
            rc = mf_t_info_ok(info);
        if (!rc) /* a NULL function removes the level's callback */
            mf_t_event_reg_set_cb_locked(event_registration, cb_safety, event_cb_function,
                                         user_data);
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_register_callback);

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    MF_T_BEGIN()
    {
        rc = mf_t_reg_ok(event_registration) ? mf_t_safety_ok(cb_safety) : MPI_T_ERR_INVALID_HANDLE;
        if (!rc)
            rc = mf_t_info_used(info_used);
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_callback_get_info);

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    MF_T_BEGIN()
    {
        rc = mf_t_reg_ok(event_registration) ? mf_t_safety_ok(cb_safety) : MPI_T_ERR_INVALID_HANDLE;
        if (!rc)
            rc = mf_t_info_ok(info);
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_callback_set_info);

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    MF_T_BEGIN()
    {
        if (mf_t_reg_ok(event_registration))
            event_registration->dropped = dropped_cb_function;
        else
            rc = MPI_T_ERR_INVALID_HANDLE;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_set_dropped_handler);

/* ---- Inside a callback: the instance ---- */

/* The instance, if it is the one being delivered on this thread. */
static const mf_t_event_instance *mf_t_instance(MPI_T_event_instance h)
{
    const mf_t_event_instance *ev = mf_t_event_current();
    return h && h == ev ? ev : NULL;
}

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    MF_T_BEGIN()
    {
        const mf_t_event_instance *ev = mf_t_instance(event_instance);
        if (!ev)
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (element_index < 0 || element_index >= mf_t_events[ev->kind].nelements)
            rc = MPI_T_ERR_INVALID_INDEX;
        else if (!buffer)
            rc = MPI_T_ERR_INVALID;
        else
            memcpy(buffer, &ev->elements[element_index], sizeof(int));
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_read);

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    MF_T_BEGIN()
    {
        const mf_t_event_instance *ev = mf_t_instance(event_instance);
        if (!ev)
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (!buffer)
            rc = MPI_T_ERR_INVALID;
        else
            memcpy(buffer, ev->elements, (size_t)mf_t_events[ev->kind].nelements * sizeof(int));
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_copy);

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    MF_T_BEGIN()
    {
        const mf_t_event_instance *ev = mf_t_instance(event_instance);
        if (!ev)
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (!event_timestamp)
            rc = MPI_T_ERR_INVALID;
        else
            *event_timestamp = ev->timestamp;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_get_timestamp);

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    MF_T_BEGIN()
    {
        if (!mf_t_instance(event_instance))
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (!source_index)
            rc = MPI_T_ERR_INVALID;
        else
            *source_index = 0;
    }
    MF_T_END();
}
MF_API_ALIAS(T_event_get_source);

/* ---- The source ---- */

int PMPI_T_source_get_num(int *num_sources)
{
    MF_T_BEGIN()
    {
        if (!num_sources)
            rc = MPI_T_ERR_INVALID;
        else
            *num_sources = 1;
    }
    MF_T_END();
}
MF_API_ALIAS(T_source_get_num);

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(source_index, 1);
        if (!rc)
            rc = mf_t_strings(mf_t_source_name, name, name_len, mf_t_source_desc, desc, desc_len);
        if (!rc) {
            MF_T_SET(ordering, MPI_T_SOURCE_UNORDERED);
            MF_T_SET(ticks_per_second, 1000000000);
            MF_T_SET(max_ticks, (MPI_Count)INT64_MAX);
            MF_T_SET(info, MPI_INFO_NULL);
        }
    }
    MF_T_END();
}
MF_API_ALIAS(T_source_get_info);

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    MF_T_BEGIN()
    {
        rc = mf_t_index_ok(source_index, 1);
        if (!rc && !timestamp)
            rc = MPI_T_ERR_INVALID;
        else if (!rc)
            *timestamp = mf_t_event_clock();
    }
    MF_T_END();
}
MF_API_ALIAS(T_source_get_timestamp);
