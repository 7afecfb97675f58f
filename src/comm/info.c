/*
 * Info objects: see info.h. A small array of owned strings in insertion order (MPI_Info_get_nthkey
 * numbers keys in that order); lookups are linear, info objects hold a handful of keys.
 *
 * MPI_INFO_ENV is built on first use from what the process knows about its start: the command
 * and arguments (/proc/self/cmdline), maxprocs (the world size), host, wdir and thread_level.
 */
#include "comm/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"

struct mf_info {
    MPI_Info i_handle; /* MPI_INFO_NULL until handed to the user */
    int i_refs;
    int i_n, i_cap;
    char **i_keys, **i_values;
};

static mf_handle_table mf_info_table = MF_HANDLE_TABLE_INIT(MF_CLASS_INFO);
static mf_info mf_info_env_obj = {.i_handle = MPI_INFO_ENV, .i_refs = 1};
static int mf_info_env_built;

static void mf_info_build_env(void)
{
    char buf[4096];
    /* Before the library is up (MPI-4 allows info calls then) the job is not known yet: fill
     * what is known and build again on the next use. */
    mf_info_env_built = mf_g.initialized;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (n > 0) {
            mf_info_set(&mf_info_env_obj, "command", buf);
            /* The arguments after the command, space-separated as MPI_Comm_spawn takes them. */
            size_t first = strlen(buf) + 1;
            for (size_t i = first; i + 1 < n; i++)
                if (buf[i] == '\0')
                    buf[i] = ' ';
            if (first < n)
                mf_info_set(&mf_info_env_obj, "argv", buf + first);
        }
    }
    snprintf(buf, sizeof buf, "%d", mf_g.size);
    if (mf_g.initialized)
        mf_info_set(&mf_info_env_obj, "maxprocs", buf);
    if (mf_g.hostname[0])
        mf_info_set(&mf_info_env_obj, "host", mf_g.hostname);
    if (getcwd(buf, sizeof buf))
        mf_info_set(&mf_info_env_obj, "wdir", buf);
    const char *level = mf_info_thread_level_name(mf_g.thread_level);
    if (level)
        mf_info_set(&mf_info_env_obj, "thread_level", level);
    /* Start-up requests of MPI-4.0 and 4.1, as given (mpiexec or the environment). */
    mf_info_set(&mf_info_env_obj, "mpi_initial_errhandler",
                mf_config_str("MANIFOLD_INITIAL_ERRHANDLER"));
    const char *kinds = mf_config_str("MANIFOLD_MEMORY_ALLOC_KINDS");
    if (*kinds)
        mf_info_set(&mf_info_env_obj, "mpi_memory_alloc_kinds", kinds);
}

static const char *const mf_info_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                             "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

const char *mf_info_thread_level_name(int level)
{
    return level >= MPI_THREAD_SINGLE && level <= MPI_THREAD_MULTIPLE ? mf_info_levels[level]
                                                                      : NULL;
}

int mf_info_thread_level_parse(const char *name)
{
    for (int l = MPI_THREAD_SINGLE; name && l <= MPI_THREAD_MULTIPLE; l++)
        if (strcasecmp(name, mf_info_levels[l]) == 0)
            return l;
    return -1;
}

mf_info *mf_info_get(MPI_Info handle)
{
    if (handle == MPI_INFO_ENV) {
        if (!mf_info_env_built)
            mf_info_build_env();
        return &mf_info_env_obj;
    }
    return mf_handle_lookup(&mf_info_table, handle);
}

static int mf_info_find(const mf_info *info, const char *key)
{
    for (int i = 0; i < info->i_n; i++)
        if (strcmp(info->i_keys[i], key) == 0)
            return i;
    return -1;
}

const char *mf_info_lookup(const mf_info *info, const char *key)
{
    int i = info ? mf_info_find(info, key) : -1;
    return i < 0 ? NULL : info->i_values[i];
}

int mf_info_nkeys(const mf_info *info)
{
    return info->i_n;
}

const char *mf_info_nthkey(const mf_info *info, int n)
{
    return n >= 0 && n < info->i_n ? info->i_keys[n] : NULL;
}

int mf_info_new(mf_info **out)
{
    mf_info *info = calloc(1, sizeof *info);
    if (!info)
        return mf_error(MPI_ERR_NO_MEM, "no memory for an info object");
    info->i_handle = MPI_INFO_NULL;
    info->i_refs = 1;
    *out = info;
    return MPI_SUCCESS;
}

int mf_info_set(mf_info *info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return mf_error(MPI_ERR_NO_MEM, "no memory for an info value");
    int i = mf_info_find(info, key);
    if (i >= 0) {
        free(info->i_values[i]);
        info->i_values[i] = v;
        return MPI_SUCCESS;
    }
    if (info->i_n == info->i_cap) {
        int cap = info->i_cap ? info->i_cap * 2 : 8;
        char **k = realloc(info->i_keys, (size_t)cap * sizeof *k);
        if (k)
            info->i_keys = k;
        char **vs = k ? realloc(info->i_values, (size_t)cap * sizeof *vs) : NULL;
        if (!vs) {
            free(v);
            return mf_error(MPI_ERR_NO_MEM, "no memory for an info key");
        }
        info->i_values = vs;
        info->i_cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return mf_error(MPI_ERR_NO_MEM, "no memory for an info key");
    }
    info->i_keys[info->i_n] = k;
    info->i_values[info->i_n] = v;
    info->i_n++;
    return MPI_SUCCESS;
}

int mf_info_remove(mf_info *info, const char *key)
{
    int i = mf_info_find(info, key);
    if (i < 0)
        return 0;
    free(info->i_keys[i]);
    free(info->i_values[i]);
    memmove(info->i_keys + i, info->i_keys + i + 1, (size_t)(info->i_n - i - 1) * sizeof(char *));
    memmove(info->i_values + i, info->i_values + i + 1,
            (size_t)(info->i_n - i - 1) * sizeof(char *));
    info->i_n--;
    return 1;
}

int mf_info_dup(const mf_info *src, mf_info **out)
{
    mf_info *info = NULL;
    int rc = mf_info_new(&info);
    for (int i = 0; !rc && src && i < src->i_n; i++)
        rc = mf_info_set(info, src->i_keys[i], src->i_values[i]);
    if (rc) {
        if (info)
            mf_info_release(info);
        return rc;
    }
    *out = info;
    return MPI_SUCCESS;
}

int mf_info_to_handle(mf_info *info, MPI_Info *out)
{
    if (info->i_handle == MPI_INFO_NULL) {
        int h = mf_handle_alloc(&mf_info_table, info);
        if (!h)
            return mf_error(MPI_ERR_NO_MEM, "no memory for an info handle");
        info->i_handle = h;
    }
    mf_info_retain(info);
    *out = info->i_handle;
    return MPI_SUCCESS;
}

void mf_info_retain(mf_info *info)
{
    info->i_refs++;
}

void mf_info_release(mf_info *info)
{
    if (!info || info == &mf_info_env_obj || --info->i_refs > 0)
        return;
    if (info->i_handle != MPI_INFO_NULL)
        mf_handle_free(&mf_info_table, info->i_handle);
    for (int i = 0; i < info->i_n; i++) {
        free(info->i_keys[i]);
        free(info->i_values[i]);
    }
    free(info->i_keys);
    free(info->i_values);
    free(info);
}
