/*
 * pmi2.c — PMI-2 wire-protocol client, as served by Slurm (`srun --mpi=pmi2`, the mpi/pmi2
 * plugin inside slurmstepd) and by MPICH's Hydra to clients that ask for version 2.
 *
 * Connection: PMI_FD=n is an inherited connected socket. PMI_RANK is the rank; PMI_JOBID (Slurm
 * sets "<jobid>.<stepid>") is sent back in fullinit, which Slurm requires to be present.
 * Handshake:
 *   PMI-1 line   cmd=init pmi_version=2 pmi_subversion=0      -> cmd=response_to_init rc=0 ...
 *   PMI-2        fullinit (pmijobid, pmirank, threaded)        -> rank, size, appnum
 *                job-getid                                      -> jobid (the KVS name)
 *                info-getjobattr key=universeSize               -> found, value (optional)
 * Then kvs-put / kvs-fence / kvs-get (with jobid and srcid=-1), abort (isworld=TRUE, no reply:
 * Slurm cancels the step), finalize.
 *
 * Every exchange is one request and one response, blocking, through the client core
 * (pmi_client.h: connection, errors, key checks, abort, finalize); this file holds PMI-2's codec
 * and the order of its conversation.
 */
#include "runtime/pm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runtime/pmi2_wire.h"
#include "runtime/pmi_client.h"
#include "runtime/pmi_wire.h"

/* A length header, then the body it announces. */
static int pmi2_read(mf_pmi_client *c)
{
    char hdr[MF_PMI2_HDR_LEN];
    static char body[MF_PMI2_BODY_MAX + 1];
    const char *why;
    size_t n;
    int rc = mf_pmi_client_read_exact(c, hdr, sizeof hdr);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_pmi2_parse_header(hdr, &n, &why) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: bad message header '%.6s' (%s)", hdr, why);
    if ((rc = mf_pmi_client_read_exact(c, body, n)) != MPI_SUCCESS)
        return rc;
    body[n] = '\0';
    if (mf_pmi2_parse(&c->reply, body, n, &why) != 0)
        return mf_pmi_malformed(c, why, body);
    return MPI_SUCCESS;
}

/* Every reply carries rc, which must be 0; found=TRUE then means found. */
static int pmi2_found(mf_pmi_client *c, const char *cmd, int *found)
{
    int rc = mf_pmi_check_rc(c, cmd);
    *found = mf_pmi_get_bool(&c->reply, "found") == 1;
    return rc;
}

static const mf_pmi_codec pmi2_codec = {
    .tag = "PMI-2",
    .format = mf_pmi2_format,
    .read = pmi2_read,
    .key_ok = mf_pmi2_key_ok,
    .value_ok = mf_pmi2_value_ok,
    .found = pmi2_found,
    .unsafe = "';', control bytes",
    .errmsg_key = "errmsg",
};

static mf_pmi_client pmi2 = {.fd = -1};
static char pmi2_jobid[MF_PM_VAL_MAX];

/* The PMI-1 `init` line that selects version 2 (one write: Slurm reads it with a single read()),
 * and its PMI-1 answer. */
static int pmi2_handshake(void)
{
    const char *kv[] = {"pmi_version", "2", "pmi_subversion", "0"};
    pmi2.codec = &mf_pmi1_codec;
    int rc = mf_pmi_call(&pmi2, "init", kv, 2, "response_to_init", 0);
    pmi2.codec = &pmi2_codec;
    if (rc != MPI_SUCCESS)
        return rc;
    int v = -1, prc = -1;
    if (mf_pmi_get_int(&pmi2.reply, "rc", -1000000, 1000000, &prc) != 0 || prc != 0 ||
        mf_pmi_get_int(&pmi2.reply, "pmi_version", 0, 100, &v) != 0 || v != 2)
        return mf_error(MPI_ERR_OTHER,
                        "PMI-2: the process manager refused PMI version 2 (rc=%d, version=%d)", prc,
                        v);
    return MPI_SUCCESS;
}

static int pmi2_init(mf_pm_identity *id)
{
    int rc, rank, size;
    mf_pmi_client_init(&pmi2, &pmi2_codec);
    if ((rc = mf_pmi_client_adopt_fd(&pmi2)) != MPI_SUCCESS)
        return rc;
    if ((rc = mf_pmi_env_int(&pmi2, "PMI_RANK", 0, 1 << 30, &rank)) != MPI_SUCCESS)
        goto fail;
    if ((rc = pmi2_handshake()) != MPI_SUCCESS)
        goto fail;

    char rankstr[16];
    snprintf(rankstr, sizeof rankstr, "%d", rank);
    const char *envjob = getenv("PMI_JOBID");
    const char *init_kv[] = {"pmijobid", envjob && mf_pmi2_value_ok(envjob) ? envjob : "-1",
                             "pmirank",  rankstr,
                             "threaded", "FALSE"};
    if ((rc = mf_pmi_call(&pmi2, "fullinit", init_kv, 3, "fullinit-response", 1)) != MPI_SUCCESS)
        goto fail;
    int appnum = 0;
    if (mf_pmi_get_int(&pmi2.reply, "size", 1, 1 << 30, &size) != 0 ||
        mf_pmi_get_int(&pmi2.reply, "rank", 0, size - 1, &rank) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI-2: fullinit response without a valid rank and size");
        goto fail;
    }
    /* Slurm answers appnum=-1 (not tracked): a single application. */
    (void)mf_pmi_get_int(&pmi2.reply, "appnum", -1, 1 << 30, &appnum);

    if ((rc = mf_pmi_call(&pmi2, "job-getid", NULL, 0, "job-getid-response", 1)) != MPI_SUCCESS)
        goto fail;
    const char *jobid = mf_pmi_get(&pmi2.reply, "jobid");
    if (!jobid || !*jobid || strlen(jobid) >= sizeof pmi2_jobid) {
        rc = mf_error(MPI_ERR_OTHER, "PMI-2: job-getid response without a valid jobid");
        goto fail;
    }
    strcpy(pmi2_jobid, jobid);

    /* Optional: a server that does not know the attribute leaves the universe at the job size
     * (the error code of a failed lookup is dropped, its message slot is recycled). */
    int usize = size;
    const char *attr_kv[] = {"key", "universeSize", "wait", "FALSE"};
    if (mf_pmi_call(&pmi2, "info-getjobattr", attr_kv, 2, "info-getjobattr-response", 1) ==
            MPI_SUCCESS &&
        mf_pmi_get_bool(&pmi2.reply, "found") == 1)
        (void)mf_pmi_get_int(&pmi2.reply, "value", 1, 1 << 30, &usize);

    mf_pmi_identity(id, rank, size, appnum, usize, pmi2_jobid);
    return MPI_SUCCESS;

fail:
    mf_pmi_client_close(&pmi2);
    return rc;
}

static int pmi2_put(const char *key, const char *value)
{
    const char *kv[] = {"key", key, "value", value};
    return mf_pmi_kvs_put(&pmi2, key, value, "kvs-put", kv, 2, "kvs-put-response");
}

static int pmi2_fence(void)
{
    return mf_pmi_call(&pmi2, "kvs-fence", NULL, 0, "kvs-fence-response", 1);
}

static int pmi2_get(const char *key, char *value, size_t len)
{
    const char *kv[] = {"jobid", pmi2_jobid, "srcid", "-1", "key", key};
    return mf_pmi_kvs_get(&pmi2, key, value, len, "kvs-get", kv, 3, "kvs-get-response");
}

/* Neither Slurm nor Hydra prints the message (the core does); on the wire it must not contain ';'
 * or control bytes. Slurm cancels the step without answering. */
static void pmi2_abort(int code, const char *msg)
{
    char clean[256];
    size_t n = 0;
    for (; msg && msg[n] && n < sizeof clean - 1; n++)
        clean[n] = (unsigned char)msg[n] >= 0x20 && msg[n] != 0x7f && msg[n] != ';' ? msg[n] : '_';
    clean[n] = '\0';
    const char *kv[] = {"isworld", "TRUE", "msg", clean};
    mf_pmi_abort(&pmi2, code, msg, kv, 2, 20);
}

static int pmi2_finalize(void)
{
    return mf_pmi_finalize(&pmi2, "finalize-response");
}

const mf_pm_ops mf_pm_pmi2_ops = {
    .name = "pmi2",
    .init = pmi2_init,
    .put = pmi2_put,
    .fence = pmi2_fence,
    .get = pmi2_get,
    .abort = pmi2_abort,
    .finalize = pmi2_finalize,
};
