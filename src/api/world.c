/* Host layout of the job: see world.h. */
#include "api/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/config.h"
#include "core/error.h"
#include "core/state.h"
#include "fabric/shm/shm_name.h"
#include "runtime/pm.h"

/* Fills what is derived from mf_g.job_secret. The shm tag is a MAC of a fixed label: 64 bits that
 * differ between jobs without telling anything about the key. */
static void mf_world_secret_derived(void)
{
    static const unsigned char zero[MF_AUTH_NONCE_BYTES];
    unsigned char mac[MF_AUTH_MAC_BYTES];
    mf_auth_transcript t = {
        .at_channel = "manifold-shm-tag-1", .at_nonce_i = zero, .at_nonce_r = zero};
    mf_auth_prove(&mf_g.job_secret, MF_AUTH_RESPONDER, &t, mac);
    memcpy(&mf_g.job_tag, mac, sizeof mf_g.job_tag);
}

/* Takes the secret from its printed form; `source` names where it came from, for the error. */
static int mf_world_secret_adopt(const char *hex, const char *source)
{
    const char *why = NULL;
    if (mf_auth_secret_parse(hex, &mf_g.job_secret, &why) != 0)
        return mf_error(MPI_ERR_OTHER, "MPI_Init: %s is not a valid job secret (%s)", source, why);
    mf_world_secret_derived();
    return MPI_SUCCESS;
}

int mf_world_publish(void)
{
    char key[MF_PM_KEY_MAX];
    /* mpiexec's proxies name the host they were started for: network namespaces of one machine
     * share a kernel hostname but must count as different hosts (shm only within one). */
    const char *given = mf_config_str("MANIFOLD_HOSTNAME");
    if (*given)
        snprintf(mf_g.hostname, sizeof mf_g.hostname, "%s", given);
    else if (gethostname(mf_g.hostname, sizeof mf_g.hostname - 1) != 0)
        snprintf(mf_g.hostname, sizeof mf_g.hostname, "localhost");
    mf_g.job_hash = mf_job_hash(mf_g.pm.jobid); /* also names shm segments */
    snprintf(key, sizeof key, "mf.host.%d", mf_g.rank);
    int rc = mf_pm_put(key, mf_g.hostname);
    if (rc)
        return rc;
    if (mf_auth_init() != 0)
        return mf_error(MPI_ERR_OTHER,
                        "MPI_Init: libsodium failed to start (no system entropy source?): the "
                        "job's connections cannot be authenticated");
    const char *secret = mf_config_str("MANIFOLD_JOB_SECRET");
    if (*secret)
        return mf_world_secret_adopt(secret, "MANIFOLD_JOB_SECRET");
    if (mf_g.rank == 0) {
        /* Launched by a PMI server that is not ours (Hydra, Slurm, PMIx, singleton): rank 0
         * draws the secret for everyone and hands it over through the process manager. */
        char hex[MF_AUTH_SECRET_HEX + 1];
        mf_auth_secret_generate(&mf_g.job_secret);
        mf_world_secret_derived();
        mf_auth_secret_format(&mf_g.job_secret, hex);
        rc = mf_pm_put("mf.secret", hex);
        mf_auth_wipe(hex, sizeof hex);
    }
    return rc;
}

int mf_world_discover(void)
{
    int n = mf_g.size;
    char key[MF_PM_KEY_MAX], val[MF_PM_VAL_MAX];
    char **hosts = calloc((size_t)n, sizeof *hosts);
    mf_g.node_of = calloc((size_t)n, sizeof *mf_g.node_of);
    mf_g.local_ranks = calloc((size_t)n, sizeof *mf_g.local_ranks);
    if (!hosts || !mf_g.node_of || !mf_g.local_ranks) {
        free(hosts);
        return mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for the host table of %d ranks", n);
    }
    int rc = MPI_SUCCESS;
    if (!*mf_config_str("MANIFOLD_JOB_SECRET") && mf_g.rank != 0) {
        rc = mf_pm_get("mf.secret", val, sizeof val);
        if (!rc)
            rc = mf_world_secret_adopt(val, "the job secret rank 0 published (mf.secret)");
        mf_auth_wipe(val, sizeof val);
        if (rc)
            goto out;
    }
    mf_g.num_nodes = 0;
    for (int r = 0; r < n; r++) {
        if (r == mf_g.rank) {
            hosts[r] = strdup(mf_g.hostname);
        } else {
            snprintf(key, sizeof key, "mf.host.%d", r);
            rc = mf_pm_get(key, val, sizeof val);
            if (rc)
                goto out;
            hosts[r] = strdup(val);
        }
        if (!hosts[r]) {
            rc = mf_error(MPI_ERR_NO_MEM, "MPI_Init: no memory for host names");
            goto out;
        }
        int node = -1;
        for (int q = 0; q < r && node < 0; q++)
            if (strcmp(hosts[q], hosts[r]) == 0)
                node = mf_g.node_of[q];
        mf_g.node_of[r] = node >= 0 ? node : mf_g.num_nodes++;
    }
    mf_g.node = mf_g.node_of[mf_g.rank];
    mf_g.local_size = 0;
    for (int r = 0; r < n; r++) {
        if (mf_g.node_of[r] != mf_g.node)
            continue;
        if (r == mf_g.rank)
            mf_g.local_rank = mf_g.local_size;
        mf_g.local_ranks[mf_g.local_size++] = r;
    }
    mf_g.oversubscribed = mf_host_oversubscribed(mf_g.local_size);
out:
    for (int r = 0; r < n; r++)
        free(hosts[r]);
    free(hosts);
    return rc;
}

void mf_world_free(void)
{
    free(mf_g.node_of);
    free(mf_g.local_ranks);
    mf_g.node_of = mf_g.local_ranks = NULL;
    mf_auth_wipe(&mf_g.job_secret, sizeof mf_g.job_secret);
}
