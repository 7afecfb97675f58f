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
 * Every exchange is one request and one response, blocking; a response with another command, a
 * closed socket or a malformed message is an MPI_ERR_OTHER error naming what happened.
 */
#include "runtime/pm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"
#include "runtime/pmi2_wire.h"
#include "runtime/pmi_wire.h"

static int pmi2_fd = -1;
static char pmi2_jobid[MF_PM_VAL_MAX];
static mf_pmi2_msg pmi2_reply;

static int pmi2_env_int(const char *name, long lo, long hi, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return mf_error(MPI_ERR_OTHER, "PMI-2: %s is not set", name);
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return mf_error(MPI_ERR_OTHER, "PMI-2: %s='%.32s' is not an integer in [%ld, %ld]", name, v,
                        lo, hi);
    *out = (int)x;
    return MPI_SUCCESS;
}

static int pmi2_write(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(pmi2_fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(pmi2_fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return mf_error(MPI_ERR_OTHER, "PMI-2: write to the process manager failed: %s",
                            strerror(errno));
        }
        buf += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

static int pmi2_read_full(char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(pmi2_fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return mf_error(MPI_ERR_OTHER, "PMI-2: read from the process manager failed: %s",
                            strerror(errno));
        if (n == 0)
            return mf_error(MPI_ERR_OTHER, "PMI-2: the process manager closed the connection");
        buf += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

/* Reads one message into pmi2_reply. */
static int pmi2_read(void)
{
    char hdr[MF_PMI2_HDR_LEN];
    static char body[MF_PMI2_BODY_MAX];
    const char *why;
    size_t n;
    int rc = pmi2_read_full(hdr, sizeof hdr);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_pmi2_parse_header(hdr, &n, &why) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: bad message header '%.6s' (%s)", hdr, why);
    if ((rc = pmi2_read_full(body, n)) != MPI_SUCCESS)
        return rc;
    if (mf_pmi2_parse(&pmi2_reply, body, n, &why) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: malformed response (%s): '%.60s'", why, body);
    return MPI_SUCCESS;
}

/* Sends `cmd` with npairs key/value pairs; unless expect is NULL, reads the response, whose
 * command must be `expect` and whose rc must be 0. */
static int pmi2_call(const char *cmd, const char *const *kv, int npairs, const char *expect)
{
    char buf[MF_PMI2_HDR_LEN + MF_PMI2_BODY_MAX + 1];
    int len = mf_pmi2_format(buf, sizeof buf, cmd, kv, npairs);
    if (len < 0)
        return mf_error(MPI_ERR_OTHER,
                        "PMI-2: cannot encode command '%s' (value not wire-safe or too long)", cmd);
    int rc = pmi2_write(buf, (size_t)len);
    if (rc != MPI_SUCCESS || !expect)
        return rc;
    if ((rc = pmi2_read()) != MPI_SUCCESS)
        return rc;
    if (strcmp(mf_pmi2_cmd(&pmi2_reply), expect) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: expected '%s' in reply to '%s', got '%.40s'", expect,
                        cmd, mf_pmi2_cmd(&pmi2_reply));
    int prc;
    if (mf_pmi2_get_int(&pmi2_reply, "rc", -1000000, 1000000, &prc) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: reply to '%s' has no valid rc", cmd);
    if (prc != 0) {
        const char *msg = mf_pmi2_get(&pmi2_reply, "errmsg");
        return mf_error(MPI_ERR_OTHER, "PMI-2: '%s' failed with rc=%d (%.80s)", cmd, prc,
                        msg && *msg ? msg : "no message");
    }
    return MPI_SUCCESS;
}

/* The PMI-1 `init` line that selects version 2, and its PMI-1 answer. The answer is read a byte
 * at a time so that nothing after its newline is consumed. */
static int pmi2_handshake(void)
{
    static const char init[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    int rc = pmi2_write(init, sizeof init - 1);
    if (rc != MPI_SUCCESS)
        return rc;
    char line[256];
    size_t len = 0;
    for (;;) {
        if (len == sizeof line)
            return mf_error(MPI_ERR_OTHER, "PMI-2: init response longer than %zu bytes",
                            sizeof line);
        if ((rc = pmi2_read_full(line + len, 1)) != MPI_SUCCESS)
            return rc;
        if (line[len] == '\n')
            break;
        len++;
    }
    static mf_pmi_msg m;
    const char *why;
    if (mf_pmi_parse(&m, line, len, &why) != 0 || strcmp(mf_pmi_cmd(&m), "response_to_init") != 0)
        return mf_error(MPI_ERR_OTHER, "PMI-2: unexpected answer to init: '%.60s'", line);
    int v = -1, prc = -1;
    if (mf_pmi_get_int(&m, "rc", -1000000, 1000000, &prc) != 0 || prc != 0 ||
        mf_pmi_get_int(&m, "pmi_version", 0, 100, &v) != 0 || v != 2)
        return mf_error(MPI_ERR_OTHER,
                        "PMI-2: the process manager refused PMI version 2 (rc=%d, version=%d)", prc,
                        v);
    return MPI_SUCCESS;
}

static int pmi2_init(mf_pm_identity *id)
{
    int rc, rank, size;
    if ((rc = pmi2_env_int("PMI_FD", 0, 1 << 20, &pmi2_fd)) != MPI_SUCCESS)
        return rc;
    if (fcntl(pmi2_fd, F_GETFD) < 0) {
        int fd = pmi2_fd;
        pmi2_fd = -1;
        return mf_error(MPI_ERR_OTHER, "PMI-2: PMI_FD=%d is not an open file descriptor", fd);
    }
    /* Programs this process starts must not inherit (and confuse) our PMI connection. */
    (void)fcntl(pmi2_fd, F_SETFD, FD_CLOEXEC);
    if ((rc = pmi2_env_int("PMI_RANK", 0, 1 << 30, &rank)) != MPI_SUCCESS)
        goto fail;
    if ((rc = pmi2_handshake()) != MPI_SUCCESS)
        goto fail;

    char rankstr[16];
    snprintf(rankstr, sizeof rankstr, "%d", rank);
    const char *envjob = getenv("PMI_JOBID");
    const char *init_kv[] = {"pmijobid", envjob && mf_pmi2_value_ok(envjob) ? envjob : "-1",
                             "pmirank",  rankstr,
                             "threaded", "FALSE"};
    if ((rc = pmi2_call("fullinit", init_kv, 3, "fullinit-response")) != MPI_SUCCESS)
        goto fail;
    int appnum = 0;
    if (mf_pmi2_get_int(&pmi2_reply, "size", 1, 1 << 30, &size) != 0 ||
        mf_pmi2_get_int(&pmi2_reply, "rank", 0, size - 1, &rank) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI-2: fullinit response without a valid rank and size");
        goto fail;
    }
    /* Slurm answers appnum=-1 (not tracked): a single application. */
    (void)mf_pmi2_get_int(&pmi2_reply, "appnum", -1, 1 << 30, &appnum);

    if ((rc = pmi2_call("job-getid", NULL, 0, "job-getid-response")) != MPI_SUCCESS)
        goto fail;
    const char *jobid = mf_pmi2_get(&pmi2_reply, "jobid");
    if (!jobid || !*jobid || strlen(jobid) >= sizeof pmi2_jobid) {
        rc = mf_error(MPI_ERR_OTHER, "PMI-2: job-getid response without a valid jobid");
        goto fail;
    }
    strcpy(pmi2_jobid, jobid);

    /* Optional: a server that does not know the attribute leaves the universe at the job size
     * (the error code of a failed lookup is dropped, its message slot is recycled). */
    int usize = size;
    const char *attr_kv[] = {"key", "universeSize", "wait", "FALSE"};
    if (pmi2_call("info-getjobattr", attr_kv, 2, "info-getjobattr-response") == MPI_SUCCESS &&
        mf_pmi2_get_bool(&pmi2_reply, "found") == 1)
        (void)mf_pmi2_get_int(&pmi2_reply, "value", 1, 1 << 30, &usize);

    id->rank = rank;
    id->size = size;
    id->appnum = appnum < 0 ? 0 : appnum;
    id->universe_size = usize < size ? size : usize;
    size_t jl = strlen(pmi2_jobid);
    if (jl >= sizeof id->jobid)
        jl = sizeof id->jobid - 1;
    memcpy(id->jobid, pmi2_jobid, jl);
    id->jobid[jl] = '\0';
    return MPI_SUCCESS;

fail:
    close(pmi2_fd);
    pmi2_fd = -1;
    return rc;
}

static int pmi2_put(const char *key, const char *value)
{
    if (strlen(key) >= MF_PM_KEY_MAX || !mf_pmi2_key_ok(key))
        return mf_error(MPI_ERR_OTHER, "PMI-2: key '%.40s' is not a valid PMI-2 key", key);
    if (strlen(value) >= MF_PM_VAL_MAX || !mf_pmi2_value_ok(value))
        return mf_error(MPI_ERR_OTHER,
                        "PMI-2: value for key '%.40s' is too long or has characters the PMI-2 "
                        "wire cannot carry (';', control bytes: hex-encode binary values)",
                        key);
    const char *kv[] = {"key", key, "value", value};
    return pmi2_call("kvs-put", kv, 2, "kvs-put-response");
}

static int pmi2_fence(void)
{
    return pmi2_call("kvs-fence", NULL, 0, "kvs-fence-response");
}

static int pmi2_get(const char *key, char *value, size_t len)
{
    if (strlen(key) >= MF_PM_KEY_MAX || !mf_pmi2_key_ok(key))
        return mf_error(MPI_ERR_OTHER, "PMI-2: key '%.40s' is not a valid PMI-2 key", key);
    const char *kv[] = {"jobid", pmi2_jobid, "srcid", "-1", "key", key};
    int rc = pmi2_call("kvs-get", kv, 3, "kvs-get-response");
    if (rc != MPI_SUCCESS)
        return rc;
    const char *v = mf_pmi2_get(&pmi2_reply, "value");
    if (mf_pmi2_get_bool(&pmi2_reply, "found") != 1 || !v)
        return mf_error(MPI_ERR_NAME, "PMI-2: key '%.40s' not found", key);
    if (strlen(v) >= len)
        return mf_error(MPI_ERR_OTHER, "PMI-2: value of '%.40s' does not fit in %zu bytes", key,
                        len);
    strcpy(value, v);
    return MPI_SUCCESS;
}

static void pmi2_abort(int code, const char *msg)
{
    /* Neither Slurm nor Hydra prints the message: print it here. On the wire it must not contain
     * ';' or control bytes. */
    char clean[256];
    size_t n = 0;
    if (!msg)
        msg = "";
    if (*msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    for (; msg[n] && n < sizeof clean - 1; n++)
        clean[n] = (unsigned char)msg[n] >= 0x20 && msg[n] != 0x7f && msg[n] != ';' ? msg[n] : '_';
    clean[n] = '\0';
    const char *kv[] = {"isworld", "TRUE", "msg", clean};
    if (pmi2_fd >= 0 && pmi2_call("abort", kv, 2, NULL) == MPI_SUCCESS) {
        /* The launcher now kills the job; give it a moment to do so before exiting ourselves, so
         * that it sees an abort rather than one process's early exit. */
        struct pollfd p = {.fd = pmi2_fd, .events = POLLIN};
        for (int i = 0; i < 20; i++) {
            char sink[256];
            if (poll(&p, 1, 100) > 0 && read(pmi2_fd, sink, sizeof sink) <= 0)
                break;
        }
    }
    _exit(code);
}

static int pmi2_finalize(void)
{
    int rc = MPI_SUCCESS;
    if (pmi2_fd >= 0) {
        rc = pmi2_call("finalize", NULL, 0, "finalize-response");
        close(pmi2_fd);
        pmi2_fd = -1;
    }
    return rc;
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
