/*
 * pmi1.c — PMI-1 "simple PMI" client, as served by Manifold's mpiexec and MPICH's Hydra.
 *
 * Connection, from the environment:
 *   PMI_FD=n                 an inherited connected socket; identity from PMI_RANK, PMI_SIZE.
 *   PMI_PORT=host:port, PMI_ID=n   connect over TCP, send `cmd=initack pmiid=n`; the server answers
 *                            `cmd=initack` then `cmd=set size=..`, `cmd=set rank=..`,
 *                            `cmd=set debug=..`.
 * Then: init (version 1.1), get_maxes, get_appnum, get_my_kvsname, get_universe_size.
 *
 * Values: the wire forbids spaces and control bytes in values, so callers hex-encode binary
 * data (mf_pmi_hex_encode); mf_pm_put refuses anything else with a clear error. The abort message
 * travels percent-escaped in `message=` (Hydra ignores unknown fields). If the server said
 * `server=manifold` in its response to init, it prints that message itself; otherwise we print it
 * here so that it is not lost.
 *
 * Every exchange is one request line and one response line, blocking, through the client core
 * (pmi_client.h: connection, errors, key checks, abort, finalize); this file holds PMI-1's codec
 * and the order of its conversation.
 */
#include "runtime/pm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runtime/pmi_client.h"
#include "runtime/pmi_wire.h"

/* One line, parsed. */
static int pmi1_read(mf_pmi_client *c)
{
    const char *line, *why;
    size_t len;
    int rc = mf_pmi_client_read_line(c, &line, &len);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_pmi_parse(&c->reply, line, len, &why) != 0)
        return mf_pmi_malformed(c, why, line);
    return MPI_SUCCESS;
}

/* A get_result's rc=0 means found; any other rc, not found. */
static int pmi1_found(mf_pmi_client *c, const char *cmd, int *found)
{
    int prc;
    if (mf_pmi_get_int(&c->reply, "rc", -1000000, 1000000, &prc) != 0)
        return mf_pmi_check_rc(c, cmd); /* the error that says rc is missing */
    *found = prc == 0;
    return MPI_SUCCESS;
}

const mf_pmi_codec mf_pmi1_codec = {
    .tag = "PMI",
    .format = mf_pmi_format,
    .read = pmi1_read,
    .key_ok = mf_pmi_key_ok,
    .value_ok = mf_pmi_value_ok,
    .found = pmi1_found,
    .unsafe = "spaces, control bytes",
    .errmsg_key = "msg",
};

static mf_pmi_client pmi1 = {.fd = -1};
static char pmi1_kvsname[MF_PMI_LINE_MAX / 4];

/* PMI_PORT mode: connect to host:port and identify with PMI_ID; the server answers initack, then
 * sends rank and size in three `set` lines, in an order we do not rely on. */
static int pmi1_connect_port(const char *port, int *rank, int *size)
{
    int id, rc = mf_pmi_env_int(&pmi1, "PMI_ID", 0, 1 << 30, &id);
    if (rc != MPI_SUCCESS || (rc = mf_pmi_client_connect(&pmi1, port)) != MPI_SUCCESS)
        return rc;
    char idstr[16];
    snprintf(idstr, sizeof idstr, "%d", id);
    const char *kv[] = {"pmiid", idstr};
    if ((rc = mf_pmi_call(&pmi1, "initack", kv, 1, "initack", 0)) != MPI_SUCCESS)
        return rc;
    int have = 0;
    for (int i = 0; i < 3; i++) {
        if ((rc = mf_pmi_expect(&pmi1, "set", "initack")) != MPI_SUCCESS)
            return rc;
        if (mf_pmi_get_int(&pmi1.reply, "size", 1, 1 << 30, size) == 0)
            have |= 1;
        else if (mf_pmi_get_int(&pmi1.reply, "rank", 0, 1 << 30, rank) == 0)
            have |= 2;
    }
    if (have != 3)
        return mf_error(MPI_ERR_OTHER, "PMI: initack handshake gave no rank or size");
    return MPI_SUCCESS;
}

static int pmi1_init(mf_pm_identity *id)
{
    int rc, rank = 0, size = 0;
    mf_pmi_client_init(&pmi1, &mf_pmi1_codec);
    if (getenv("PMI_FD")) {
        if ((rc = mf_pmi_client_adopt_fd(&pmi1)) != MPI_SUCCESS)
            return rc;
        if ((rc = mf_pmi_env_int(&pmi1, "PMI_RANK", 0, 1 << 30, &rank)) != MPI_SUCCESS ||
            (rc = mf_pmi_env_int(&pmi1, "PMI_SIZE", 1, 1 << 30, &size)) != MPI_SUCCESS)
            goto fail;
    } else if ((rc = pmi1_connect_port(getenv("PMI_PORT"), &rank, &size)) != MPI_SUCCESS) {
        goto fail;
    }
    if (rank >= size) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: rank %d is not below size %d", rank, size);
        goto fail;
    }

    const char *init_kv[] = {"pmi_version", "1", "pmi_subversion", "1"};
    if ((rc = mf_pmi_call(&pmi1, "init", init_kv, 2, "response_to_init", 1)) != MPI_SUCCESS)
        goto fail;
    const char *server = mf_pmi_get(&pmi1.reply, "server");
    pmi1.server_prints = server && strcmp(server, "manifold") == 0;

    if ((rc = mf_pmi_call(&pmi1, "get_maxes", NULL, 0, "maxes", 0)) != MPI_SUCCESS)
        goto fail;
    int kvsmax, keymax, valmax;
    if (mf_pmi_get_int(&pmi1.reply, "kvsname_max", 1, 1 << 20, &kvsmax) != 0 ||
        mf_pmi_get_int(&pmi1.reply, "keylen_max", 1, 1 << 20, &keymax) != 0 ||
        mf_pmi_get_int(&pmi1.reply, "vallen_max", 1, 1 << 20, &valmax) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed maxes reply");
        goto fail;
    }
    if (keymax < pmi1.keymax)
        pmi1.keymax = keymax;
    if (valmax < pmi1.valmax)
        pmi1.valmax = valmax;

    int appnum;
    if ((rc = mf_pmi_call(&pmi1, "get_appnum", NULL, 0, "appnum", 0)) != MPI_SUCCESS)
        goto fail;
    if (mf_pmi_get_int(&pmi1.reply, "appnum", 0, 1 << 30, &appnum) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed appnum reply");
        goto fail;
    }

    if ((rc = mf_pmi_call(&pmi1, "get_my_kvsname", NULL, 0, "my_kvsname", 0)) != MPI_SUCCESS)
        goto fail;
    const char *kvs = mf_pmi_get(&pmi1.reply, "kvsname");
    if (!kvs || !*kvs || strlen(kvs) >= sizeof pmi1_kvsname) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed kvsname reply");
        goto fail;
    }
    strcpy(pmi1_kvsname, kvs);

    /* Hydra answers -1 (unknown); the universe is then the job itself. */
    if ((rc = mf_pmi_call(&pmi1, "get_universe_size", NULL, 0, "universe_size", 0)) != MPI_SUCCESS)
        goto fail;
    int usize = -1;
    (void)mf_pmi_get_int(&pmi1.reply, "size", -1, 1 << 30, &usize);

    mf_pmi_identity(id, rank, size, appnum, usize, pmi1_kvsname);
    return MPI_SUCCESS;

fail:
    mf_pmi_client_close(&pmi1);
    return rc;
}

static int pmi1_put(const char *key, const char *value)
{
    const char *kv[] = {"kvsname", pmi1_kvsname, "key", key, "value", value};
    return mf_pmi_kvs_put(&pmi1, key, value, "put", kv, 3, "put_result");
}

static int pmi1_fence(void)
{
    return mf_pmi_call(&pmi1, "barrier_in", NULL, 0, "barrier_out", 0);
}

static int pmi1_get(const char *key, char *value, size_t len)
{
    const char *kv[] = {"kvsname", pmi1_kvsname, "key", key};
    return mf_pmi_kvs_get(&pmi1, key, value, len, "get", kv, 2, "get_result");
}

static void pmi1_abort(int code, const char *msg)
{
    char esc[MF_PM_VAL_MAX], codestr[16];
    (void)mf_pmi_escape(msg ? msg : "", esc, sizeof esc); /* a truncated message is still worth
                                                             sending */
    snprintf(codestr, sizeof codestr, "%d", code);
    const char *kv[] = {"exitcode", codestr, "message", esc};
    mf_pmi_abort(&pmi1, code, msg, kv, *esc ? 2 : 1, 100);
}

static int pmi1_finalize(void)
{
    return mf_pmi_finalize(&pmi1, "finalize_ack");
}

const mf_pm_ops mf_pm_pmi1_ops = {
    .name = "pmi1",
    .init = pmi1_init,
    .put = pmi1_put,
    .fence = pmi1_fence,
    .get = pmi1_get,
    .abort = pmi1_abort,
    .finalize = pmi1_finalize,
};
