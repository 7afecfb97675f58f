/*
 * pmix.c — the process-manager client for PMIx servers (Open MPI's mpirun/prterun, Slurm's
 * `srun --mpi=pmix`, Flux), through libpmix. Compiled in when CMake found libpmix
 * (MANIFOLD_HAVE_PMIX); otherwise init explains that this build cannot talk PMIx.
 *
 * Identity: PMIx_Init gives our namespace (the job id) and rank; the job size, universe size and
 * application number are job-level keys read from the wildcard rank.
 *
 * Key-value store: pm.h's store is one flat namespace, PMIx's keys belong to the process that put
 * them. mf_pm_put is PMIx_Put(PMIX_GLOBAL); mf_pm_fence is PMIx_Commit + PMIx_Fence with
 * PMIX_COLLECT_DATA, so every key is in the local store afterwards; mf_pm_get asks the rank named
 * by a key's numeric suffix ("mf.tcp.3" -> rank 3) and otherwise every rank in turn, always with
 * PMIX_OPTIONAL so that a missing key is an immediate "not found" rather than a wait for a put
 * that will never come.
 */
#include "runtime/pm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

#ifdef MANIFOLD_HAVE_PMIX
#include <pmix.h>

static pmix_proc_t pmix_me;
static int pmix_size;
static int pmix_initialized;

/* A job-level uint32 key (PMIX_JOB_SIZE...) or a per-process one; 0 if found. */
static int pmix_get_u32(pmix_rank_t rank, const char *key, int *out)
{
    pmix_proc_t proc;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&proc, pmix_me.nspace, rank);
    if (PMIx_Get(&proc, key, NULL, 0, &val) != PMIX_SUCCESS || !val)
        return -1;
    int rc = -1;
    switch (val->type) {
    case PMIX_UINT32:
        *out = (int)val->data.uint32;
        rc = 0;
        break;
    case PMIX_UINT16:
        *out = val->data.uint16;
        rc = 0;
        break;
    case PMIX_INT:
        *out = val->data.integer;
        rc = 0;
        break;
    default:
        break;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static int pmix_init(mf_pm_identity *id)
{
    pmix_status_t st = PMIx_Init(&pmix_me, NULL, 0);
    if (st != PMIX_SUCCESS)
        return mf_error(MPI_ERR_OTHER,
                        "PMIx: PMIx_Init failed: %s (launched by a PMIx server whose version "
                        "libpmix %s cannot talk to?)",
                        PMIx_Error_string(st), PMIx_Get_version());
    pmix_initialized = 1;
    if (pmix_get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &pmix_size) != 0 || pmix_size < 1 ||
        pmix_me.rank >= (pmix_rank_t)pmix_size) {
        PMIx_Finalize(NULL, 0);
        pmix_initialized = 0;
        return mf_error(MPI_ERR_OTHER, "PMIx: no valid job size (PMIX_JOB_SIZE) for rank %u",
                        pmix_me.rank);
    }
    int appnum = 0, usize = pmix_size;
    (void)pmix_get_u32(pmix_me.rank, PMIX_APPNUM, &appnum);
    (void)pmix_get_u32(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &usize);
    id->rank = (int)pmix_me.rank;
    id->size = pmix_size;
    id->appnum = appnum;
    id->universe_size = usize < pmix_size ? pmix_size : usize;
    /* Namespaces are short in practice; a longer one is cut (it names the job in messages). */
    size_t jl = strnlen(pmix_me.nspace, sizeof pmix_me.nspace);
    if (jl >= sizeof id->jobid)
        jl = sizeof id->jobid - 1;
    memcpy(id->jobid, pmix_me.nspace, jl);
    id->jobid[jl] = '\0';
    return MPI_SUCCESS;
}

static int pmix_put(const char *key, const char *value)
{
    if (strlen(key) >= MF_PM_KEY_MAX || strlen(key) >= PMIX_MAX_KEYLEN || !*key)
        return mf_error(MPI_ERR_OTHER, "PMIx: key '%.40s' is too long or empty", key);
    if (strlen(value) >= MF_PM_VAL_MAX)
        return mf_error(MPI_ERR_OTHER, "PMIx: value for key '%.40s' too long", key);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (st != PMIX_SUCCESS)
        return mf_error(MPI_ERR_OTHER, "PMIx: PMIx_Put(%.40s) failed: %s", key,
                        PMIx_Error_string(st));
    return MPI_SUCCESS;
}

static int pmix_fence(void)
{
    pmix_status_t st = PMIx_Commit();
    if (st != PMIX_SUCCESS)
        return mf_error(MPI_ERR_OTHER, "PMIx: PMIx_Commit failed: %s", PMIx_Error_string(st));
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS)
        return mf_error(MPI_ERR_OTHER, "PMIx: PMIx_Fence failed: %s", PMIx_Error_string(st));
    return MPI_SUCCESS;
}

/* The rank a key names by its numeric suffix ("mf.host.12" -> 12), or PMIX_RANK_UNDEF. */
static pmix_rank_t pmix_key_rank(const char *key)
{
    const char *dot = strrchr(key, '.');
    if (!dot || !dot[1])
        return PMIX_RANK_UNDEF;
    char *end;
    long r = strtol(dot + 1, &end, 10);
    if (*end || r < 0 || r >= pmix_size)
        return PMIX_RANK_UNDEF;
    return (pmix_rank_t)r;
}

static int pmix_get_from(pmix_rank_t rank, const char *key, pmix_value_t **val)
{
    pmix_proc_t proc;
    pmix_info_t info;
    bool optional = true;
    PMIX_LOAD_PROCID(&proc, pmix_me.nspace, rank);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_status_t st = PMIx_Get(&proc, key, &info, 1, val);
    PMIX_INFO_DESTRUCT(&info);
    return st;
}

static int pmix_get(const char *key, char *value, size_t len)
{
    if (strlen(key) >= PMIX_MAX_KEYLEN || !*key)
        return mf_error(MPI_ERR_OTHER, "PMIx: key '%.40s' is too long or empty", key);
    pmix_value_t *val = NULL;
    pmix_rank_t owner = pmix_key_rank(key);
    pmix_status_t st = PMIX_ERR_NOT_FOUND;
    if (owner != PMIX_RANK_UNDEF)
        st = pmix_get_from(owner, key, &val);
    /* A key without an owner in its name ("mf.secret"): ask each rank's data in turn. After the
     * collecting fence these are lookups in the local store. (PMIX_RANK_UNDEF, "any rank", is
     * not honoured together with PMIX_OPTIONAL by libpmix 4.2.) */
    for (int r = 0; r < pmix_size && st == PMIX_ERR_NOT_FOUND; r++)
        if ((pmix_rank_t)r != owner)
            st = pmix_get_from((pmix_rank_t)r, key, &val);
    if (st == PMIX_ERR_NOT_FOUND)
        return mf_error(MPI_ERR_NAME, "PMIx: key '%.40s' not found", key);
    if (st != PMIX_SUCCESS || !val)
        return mf_error(MPI_ERR_OTHER, "PMIx: PMIx_Get(%.40s) failed: %s", key,
                        PMIx_Error_string(st));
    int rc = MPI_SUCCESS;
    if (val->type != PMIX_STRING || !val->data.string)
        rc = mf_error(MPI_ERR_OTHER, "PMIx: value of '%.40s' is not a string", key);
    else if (strlen(val->data.string) >= len)
        rc = mf_error(MPI_ERR_OTHER, "PMIx: value of '%.40s' does not fit in %zu bytes", key, len);
    else
        strcpy(value, val->data.string);
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static void pmix_abort(int code, const char *msg)
{
    /* Open MPI's mpirun does not print the message it is given: print it here. */
    if (msg && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    if (pmix_initialized)
        (void)PMIx_Abort(code, msg ? msg : "", NULL, 0); /* the server kills the job */
    _exit(code);
}

static int pmix_finalize(void)
{
    if (!pmix_initialized)
        return MPI_SUCCESS;
    pmix_initialized = 0;
    pmix_status_t st = PMIx_Finalize(NULL, 0);
    if (st != PMIX_SUCCESS)
        return mf_error(MPI_ERR_OTHER, "PMIx: PMIx_Finalize failed: %s", PMIx_Error_string(st));
    return MPI_SUCCESS;
}

#else /* !MANIFOLD_HAVE_PMIX */

static int pmix_init(mf_pm_identity *id)
{
    (void)id;
    return mf_error(MPI_ERR_OTHER,
                    "PMIx: this process was started by a PMIx launcher (PMIX_* variables are set) "
                    "but Manifold was built without libpmix; rebuild with libpmix-dev installed, "
                    "or launch with Manifold's mpiexec, Hydra, or srun --mpi=pmi2");
}

static int pmix_put(const char *key, const char *value)
{
    (void)key;
    (void)value;
    return mf_error(MPI_ERR_OTHER, "PMIx: not available in this build");
}

static int pmix_fence(void)
{
    return mf_error(MPI_ERR_OTHER, "PMIx: not available in this build");
}

static int pmix_get(const char *key, char *value, size_t len)
{
    (void)key;
    (void)value;
    (void)len;
    return mf_error(MPI_ERR_OTHER, "PMIx: not available in this build");
}

static void pmix_abort(int code, const char *msg)
{
    if (msg && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    _exit(code);
}

static int pmix_finalize(void)
{
    return MPI_SUCCESS;
}

#endif

const mf_pm_ops mf_pm_pmix_ops = {
    .name = "pmix",
    .init = pmix_init,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};
