/*
 * Info objects (MPI-4.0 section 10). Errors go where errors of no object go (mf_err_no_object): an
 * info object has no handler of its own. See src/comm/info.h for the object. MPI-4 lets every
 * MPI_Info_* call be made at any time, before MPI_Init or MPI_Session_init and after MPI_Finalize
 * (sessions take their hints in an info object), so none of them checks the state of the library.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "comm/info.h"

static int mf_api_info(MPI_Info h, mf_info **out, const char *fn)
{
    if (h == MPI_INFO_NULL)
        return mf_error(MPI_ERR_INFO, "%s: info is MPI_INFO_NULL", fn);
    if (!(*out = mf_info_get(h)))
        return mf_error(MPI_ERR_INFO, "%s: info=0x%x is not a valid info object", fn, (unsigned)h);
    return MPI_SUCCESS;
}

static int mf_api_info_key(const char *key, const char *fn)
{
    if (!key)
        return mf_error(MPI_ERR_INFO_KEY, "%s: key is NULL", fn);
    size_t n = strlen(key);
    if (n == 0)
        return mf_error(MPI_ERR_INFO_KEY, "%s: key is empty", fn);
    if (n > MPI_MAX_INFO_KEY)
        return mf_error(MPI_ERR_INFO_KEY, "%s: key is %zu characters (MPI_MAX_INFO_KEY is %d)", fn,
                        n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

int PMPI_Info_create(MPI_Info *info)
{
    MF_API_ENTER();
    mf_info *i = NULL;
    int rc = MPI_SUCCESS;
    if (!info)
        rc = mf_error(MPI_ERR_ARG, "MPI_Info_create: info is NULL");
    if (!rc && !(rc = mf_info_new(&i))) {
        rc = mf_info_to_handle(i, info);
        mf_info_release(i);
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Info_create"));
}
MF_API_ALIAS(Info_create);

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    MF_API_ENTER();
    (void)argc;
    (void)argv; /* MPI_INFO_ENV already describes this process's start */
    mf_info *i = NULL;
    int rc = MPI_SUCCESS;
    if (!info)
        rc = mf_error(MPI_ERR_ARG, "MPI_Info_create_env: info is NULL");
    if (!rc && !(rc = mf_info_dup(mf_info_get(MPI_INFO_ENV), &i))) {
        rc = mf_info_to_handle(i, info);
        mf_info_release(i);
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Info_create_env"));
}
MF_API_ALIAS(Info_create_env);

/* The CPUs this process may run on, as Linux writes CPU lists ("0,2-3"); "" if unknown. */
static void info_cpu_list(char *out, size_t len)
{
    cpu_set_t set;
    size_t n = 0;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE && n < len; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        int w = last > c ? snprintf(out + n, len - n, "%s%d-%d", n ? "," : "", c, last)
                         : snprintf(out + n, len - n, "%s%d", n ? "," : "", c);
        n += w > 0 ? (size_t)w : 0;
        c = last;
    }
    if (n >= len)
        out[0] = '\0'; /* too long to say: better nothing than a cut list */
}

/* MPI-4.1: what hardware this process is restricted to at the call. For each resource type
 * MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) knows, its name with "true": a process always
 * runs within one host's shared memory ("mpi_shared_memory"). And "manifold_cpus", the CPUs
 * its affinity allows (mpiexec --bind-to sets it), when it can be read. */
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    const char *fn = "MPI_Get_hw_resource_info";
    MF_API_ENTER();
    mf_info *i = NULL;
    int rc = mf_check_initialized(fn);
    if (!rc && !hw_info)
        rc = mf_error(MPI_ERR_ARG, "%s: hw_info is NULL", fn);
    char cpus[1024];
    if (!rc && !(rc = mf_info_new(&i))) {
        info_cpu_list(cpus, sizeof cpus);
        rc = mf_info_set(i, "mpi_shared_memory", "true");
        if (!rc && cpus[0])
            rc = mf_info_set(i, "manifold_cpus", cpus);
        if (!rc)
            rc = mf_info_to_handle(i, hw_info);
        mf_info_release(i);
    }
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Get_hw_resource_info);

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_set";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc)
        rc = mf_api_info_key(key, fn);
    if (!rc && !value)
        rc = mf_error(MPI_ERR_INFO_VALUE, "%s: value is NULL", fn);
    if (!rc && strlen(value) > MPI_MAX_INFO_VAL)
        rc = mf_error(MPI_ERR_INFO_VALUE,
                      "%s: value of \"%s\" is %zu characters "
                      "(MPI_MAX_INFO_VAL is %d)",
                      fn, key, strlen(value), MPI_MAX_INFO_VAL);
    if (!rc)
        rc = mf_info_set(i, key, value);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_set);

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_delete";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc)
        rc = mf_api_info_key(key, fn);
    if (!rc && !mf_info_remove(i, key))
        rc = mf_error(MPI_ERR_INFO_NOKEY, "%s: key \"%s\" is not set", fn, key);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_delete);

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_get";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc)
        rc = mf_api_info_key(key, fn);
    if (!rc && valuelen < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: valuelen=%d is negative", fn, valuelen);
    if (!rc && (!value || !flag))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !value ? "value" : "flag");
    if (!rc) {
        const char *v = mf_info_lookup(i, key);
        *flag = v != NULL;
        if (v) {
            /* At most valuelen characters, then the terminator (value has valuelen+1). */
            size_t n = strlen(v);
            if (n > (size_t)valuelen)
                n = (size_t)valuelen;
            memcpy(value, v, n);
            value[n] = '\0';
        }
    }
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_get_valuelen";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc)
        rc = mf_api_info_key(key, fn);
    if (!rc && (!valuelen || !flag))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !valuelen ? "valuelen" : "flag");
    if (!rc) {
        const char *v = mf_info_lookup(i, key);
        *flag = v != NULL;
        if (v)
            *valuelen = (int)strlen(v);
    }
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_get_valuelen);

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_get_string";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc)
        rc = mf_api_info_key(key, fn);
    if (!rc && (!buflen || !flag))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !buflen ? "buflen" : "flag");
    if (!rc && *buflen > 0 && !value)
        rc = mf_error(MPI_ERR_ARG, "%s: value is NULL but buflen=%d", fn, *buflen);
    if (!rc) {
        const char *v = mf_info_lookup(i, key);
        *flag = v != NULL;
        if (v) {
            /* Copies what fits (truncated, always terminated) and reports the full size. */
            size_t n = strlen(v);
            if (*buflen > 0) {
                size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
                memcpy(value, v, k);
                value[k] = '\0';
            }
            *buflen = (int)n + 1;
        }
    }
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_get_string);

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    MF_API_ENTER();
    mf_info *i;
    int rc = mf_api_info(info, &i, "MPI_Info_get_nkeys");
    if (!rc && !nkeys)
        rc = mf_error(MPI_ERR_ARG, "MPI_Info_get_nkeys: nkeys is NULL");
    if (!rc)
        *nkeys = mf_info_nkeys(i);
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Info_get_nkeys"));
}
MF_API_ALIAS(Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    MF_API_ENTER();
    const char *fn = "MPI_Info_get_nthkey";
    mf_info *i;
    int rc = mf_api_info(info, &i, fn);
    if (!rc && !key)
        rc = mf_error(MPI_ERR_ARG, "%s: key is NULL", fn);
    if (!rc && (n < 0 || n >= mf_info_nkeys(i)))
        rc = mf_error(MPI_ERR_ARG, "%s: n=%d is not in 0..%d", fn, n, mf_info_nkeys(i) - 1);
    if (!rc)
        snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", mf_info_nthkey(i, n));
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Info_get_nthkey);

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    MF_API_ENTER();
    mf_info *i, *n = NULL;
    int rc = mf_api_info(info, &i, "MPI_Info_dup");
    if (!rc && !newinfo)
        rc = mf_error(MPI_ERR_ARG, "MPI_Info_dup: newinfo is NULL");
    if (!rc && !(rc = mf_info_dup(i, &n))) {
        rc = mf_info_to_handle(n, newinfo);
        mf_info_release(n);
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Info_dup"));
}
MF_API_ALIAS(Info_dup);

int PMPI_Info_free(MPI_Info *info)
{
    MF_API_ENTER();
    mf_info *i;
    int rc = info ? mf_api_info(*info, &i, "MPI_Info_free")
                  : mf_error(MPI_ERR_ARG, "MPI_Info_free: info is NULL");
    if (!rc && *info == MPI_INFO_ENV)
        rc = mf_error(MPI_ERR_INFO, "MPI_Info_free: MPI_INFO_ENV cannot be freed");
    if (!rc) {
        mf_info_release(i);
        *info = MPI_INFO_NULL;
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Info_free"));
}
MF_API_ALIAS(Info_free);
