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
 * Every exchange is one request line and one response line, blocking; a response with a command
 * other than the expected one, a closed socket or a malformed line is an MPI_ERR_OTHER error
 * naming what happened.
 */
#include "runtime/pm.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"
#include "runtime/pmi_wire.h"

static int pmi1_fd = -1;
static int pmi1_rank, pmi1_size;
static int pmi1_manifold_server; /* the server prints abort messages itself */
static int pmi1_keymax = MF_PM_KEY_MAX, pmi1_valmax = MF_PM_VAL_MAX;
static char pmi1_kvsname[MF_PMI_LINE_MAX / 4];
static mf_pmi_lines pmi1_lines;
static mf_pmi_msg pmi1_reply;

static int pmi1_env_int(const char *name, long lo, long hi, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return mf_error(MPI_ERR_OTHER, "PMI: %s is not set", name);
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return mf_error(MPI_ERR_OTHER, "PMI: %s='%.32s' is not an integer in [%ld, %ld]", name, v,
                        lo, hi);
    *out = (int)x;
    return MPI_SUCCESS;
}

static int pmi1_write(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(pmi1_fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(pmi1_fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return mf_error(MPI_ERR_OTHER, "PMI: write to the process manager failed: %s",
                            strerror(errno));
        }
        buf += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

/* Reads the next line into pmi1_reply. */
static int pmi1_read(void)
{
    for (;;) {
        const char *line, *why;
        size_t len;
        int got = mf_pmi_lines_next(&pmi1_lines, &line, &len);
        if (got < 0)
            return mf_error(MPI_ERR_OTHER, "PMI: response line longer than %d bytes",
                            MF_PMI_LINE_MAX);
        if (got > 0) {
            if (mf_pmi_parse(&pmi1_reply, line, len, &why) != 0)
                return mf_error(MPI_ERR_OTHER, "PMI: malformed response (%s): '%.60s'", why, line);
            return MPI_SUCCESS;
        }
        size_t room;
        char *dst = mf_pmi_lines_space(&pmi1_lines, &room);
        if (room == 0)
            return mf_error(MPI_ERR_OTHER, "PMI: response line longer than %d bytes",
                            MF_PMI_LINE_MAX);
        ssize_t n = read(pmi1_fd, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return mf_error(MPI_ERR_OTHER, "PMI: read from the process manager failed: %s",
                            strerror(errno));
        if (n == 0)
            return mf_error(MPI_ERR_OTHER, "PMI: the process manager closed the connection");
        mf_pmi_lines_commit(&pmi1_lines, (size_t)n);
    }
}

/* Sends `cmd` with npairs key/value pairs and reads a response whose command must be `expect`. */
static int pmi1_call(const char *cmd, const char *const *kv, int npairs, const char *expect)
{
    char line[MF_PMI_LINE_MAX + 2];
    int len = mf_pmi_format(line, sizeof line, cmd, kv, npairs);
    if (len < 0)
        return mf_error(MPI_ERR_OTHER,
                        "PMI: cannot encode command '%s' (value not wire-safe or "
                        "too long)",
                        cmd);
    int rc = pmi1_write(line, (size_t)len);
    if (rc != MPI_SUCCESS || !expect)
        return rc;
    rc = pmi1_read();
    if (rc != MPI_SUCCESS)
        return rc;
    if (strcmp(mf_pmi_cmd(&pmi1_reply), expect) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI: expected '%s' in reply to '%s', got '%.40s'", expect,
                        cmd, mf_pmi_cmd(&pmi1_reply));
    return MPI_SUCCESS;
}

/* `rc=` of the current reply must be 0. */
static int pmi1_check_rc(const char *cmd)
{
    int rc;
    if (mf_pmi_get_int(&pmi1_reply, "rc", -1000000, 1000000, &rc) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI: reply to '%s' has no valid rc", cmd);
    if (rc != 0) {
        const char *msg = mf_pmi_get(&pmi1_reply, "msg");
        return mf_error(MPI_ERR_OTHER, "PMI: '%s' failed with rc=%d (%.80s)", cmd, rc,
                        msg ? msg : "no message");
    }
    return MPI_SUCCESS;
}

/* PMI_PORT mode: connect to host:port and identify with PMI_ID. */
static int pmi1_connect_port(const char *port)
{
    char host[256];
    const char *colon = strrchr(port, ':');
    if (!colon || colon == port || (size_t)(colon - port) >= sizeof host || !colon[1])
        return mf_error(MPI_ERR_OTHER, "PMI: PMI_PORT='%.64s' is not host:port", port);
    memcpy(host, port, (size_t)(colon - port));
    host[colon - port] = '\0';

    int id, rc = pmi1_env_int("PMI_ID", 0, 1 << 30, &id);
    if (rc != MPI_SUCCESS)
        return rc;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0)
        return mf_error(MPI_ERR_OTHER, "PMI: cannot resolve PMI_PORT host '%s': %s", host,
                        gai_strerror(gai));
    int err = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            pmi1_fd = fd;
            break;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (pmi1_fd < 0)
        return mf_error(MPI_ERR_OTHER, "PMI: cannot connect to PMI_PORT %.64s: %s", port,
                        strerror(err));

    char idstr[16];
    snprintf(idstr, sizeof idstr, "%d", id);
    const char *kv[] = {"pmiid", idstr};
    if ((rc = pmi1_call("initack", kv, 1, "initack")) != MPI_SUCCESS)
        return rc;
    /* Three `cmd=set` lines follow, in an order we do not rely on. */
    int have = 0;
    for (int i = 0; i < 3; i++) {
        if ((rc = pmi1_read()) != MPI_SUCCESS)
            return rc;
        if (strcmp(mf_pmi_cmd(&pmi1_reply), "set") != 0)
            return mf_error(MPI_ERR_OTHER, "PMI: expected 'set' after initack, got '%.40s'",
                            mf_pmi_cmd(&pmi1_reply));
        if (mf_pmi_get_int(&pmi1_reply, "size", 1, 1 << 30, &pmi1_size) == 0)
            have |= 1;
        else if (mf_pmi_get_int(&pmi1_reply, "rank", 0, 1 << 30, &pmi1_rank) == 0)
            have |= 2;
    }
    if (have != 3)
        return mf_error(MPI_ERR_OTHER, "PMI: initack handshake gave no rank or size");
    return MPI_SUCCESS;
}

static int pmi1_init(mf_pm_identity *id)
{
    int rc;
    mf_pmi_lines_init(&pmi1_lines);
    const char *port = getenv("PMI_PORT");
    if (getenv("PMI_FD")) {
        if ((rc = pmi1_env_int("PMI_FD", 0, 1 << 20, &pmi1_fd)) != MPI_SUCCESS)
            return rc;
        if (fcntl(pmi1_fd, F_GETFD) < 0) {
            int fd = pmi1_fd;
            pmi1_fd = -1;
            return mf_error(MPI_ERR_OTHER, "PMI: PMI_FD=%d is not an open file descriptor", fd);
        }
        if ((rc = pmi1_env_int("PMI_RANK", 0, 1 << 30, &pmi1_rank)) != MPI_SUCCESS ||
            (rc = pmi1_env_int("PMI_SIZE", 1, 1 << 30, &pmi1_size)) != MPI_SUCCESS)
            goto fail;
        /* Programs this process starts must not inherit (and confuse) our PMI connection. */
        (void)fcntl(pmi1_fd, F_SETFD, FD_CLOEXEC);
    } else if ((rc = pmi1_connect_port(port)) != MPI_SUCCESS) {
        goto fail;
    }
    if (pmi1_rank >= pmi1_size) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: rank %d is not below size %d", pmi1_rank, pmi1_size);
        goto fail;
    }

    const char *init_kv[] = {"pmi_version", "1", "pmi_subversion", "1"};
    if ((rc = pmi1_call("init", init_kv, 2, "response_to_init")) != MPI_SUCCESS ||
        (rc = pmi1_check_rc("init")) != MPI_SUCCESS)
        goto fail;
    const char *server = mf_pmi_get(&pmi1_reply, "server");
    pmi1_manifold_server = server && strcmp(server, "manifold") == 0;

    if ((rc = pmi1_call("get_maxes", NULL, 0, "maxes")) != MPI_SUCCESS)
        goto fail;
    int kvsmax;
    if (mf_pmi_get_int(&pmi1_reply, "kvsname_max", 1, 1 << 20, &kvsmax) != 0 ||
        mf_pmi_get_int(&pmi1_reply, "keylen_max", 1, 1 << 20, &pmi1_keymax) != 0 ||
        mf_pmi_get_int(&pmi1_reply, "vallen_max", 1, 1 << 20, &pmi1_valmax) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed maxes reply");
        goto fail;
    }

    if ((rc = pmi1_call("get_appnum", NULL, 0, "appnum")) != MPI_SUCCESS)
        goto fail;
    if (mf_pmi_get_int(&pmi1_reply, "appnum", 0, 1 << 30, &id->appnum) != 0) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed appnum reply");
        goto fail;
    }

    if ((rc = pmi1_call("get_my_kvsname", NULL, 0, "my_kvsname")) != MPI_SUCCESS)
        goto fail;
    const char *kvs = mf_pmi_get(&pmi1_reply, "kvsname");
    if (!kvs || !*kvs || strlen(kvs) >= sizeof pmi1_kvsname) {
        rc = mf_error(MPI_ERR_OTHER, "PMI: malformed kvsname reply");
        goto fail;
    }
    strcpy(pmi1_kvsname, kvs);

    /* Hydra answers -1 (unknown); the universe is then the job itself. */
    if ((rc = pmi1_call("get_universe_size", NULL, 0, "universe_size")) != MPI_SUCCESS)
        goto fail;
    int usize = -1;
    (void)mf_pmi_get_int(&pmi1_reply, "size", -1, 1 << 30, &usize);

    id->rank = pmi1_rank;
    id->size = pmi1_size;
    id->universe_size = usize < pmi1_size ? pmi1_size : usize;
    /* Hydra's kvsnames fit; a longer one is cut (it only names the job in messages and keys). */
    size_t jl = strlen(pmi1_kvsname);
    if (jl >= sizeof id->jobid)
        jl = sizeof id->jobid - 1;
    memcpy(id->jobid, pmi1_kvsname, jl);
    id->jobid[jl] = '\0';
    return MPI_SUCCESS;

fail:
    if (pmi1_fd >= 0)
        close(pmi1_fd);
    pmi1_fd = -1;
    return rc;
}

static int pmi1_put(const char *key, const char *value)
{
    if (strlen(key) >= MF_PM_KEY_MAX || (int)strlen(key) >= pmi1_keymax)
        return mf_error(MPI_ERR_OTHER, "PMI: key '%.40s...' too long", key);
    if (strlen(value) >= MF_PM_VAL_MAX || (int)strlen(value) >= pmi1_valmax)
        return mf_error(MPI_ERR_OTHER, "PMI: value for key '%.40s' too long (%zu bytes)", key,
                        strlen(value));
    if (!mf_pmi_key_ok(key) || !mf_pmi_value_ok(value))
        return mf_error(MPI_ERR_OTHER,
                        "PMI: key '%.40s' or its value has characters the PMI wire "
                        "cannot carry (hex-encode binary values)",
                        key);
    const char *kv[] = {"kvsname", pmi1_kvsname, "key", key, "value", value};
    int rc = pmi1_call("put", kv, 3, "put_result");
    return rc != MPI_SUCCESS ? rc : pmi1_check_rc("put");
}

static int pmi1_fence(void)
{
    return pmi1_call("barrier_in", NULL, 0, "barrier_out");
}

static int pmi1_get(const char *key, char *value, size_t len)
{
    if (!mf_pmi_key_ok(key) || strlen(key) >= MF_PM_KEY_MAX)
        return mf_error(MPI_ERR_OTHER, "PMI: key '%.40s' is not a valid PMI key", key);
    const char *kv[] = {"kvsname", pmi1_kvsname, "key", key};
    int rc = pmi1_call("get", kv, 2, "get_result");
    if (rc != MPI_SUCCESS)
        return rc;
    int prc;
    if (mf_pmi_get_int(&pmi1_reply, "rc", -1000000, 1000000, &prc) != 0)
        return mf_error(MPI_ERR_OTHER, "PMI: reply to 'get' has no valid rc");
    if (prc != 0)
        return mf_error(MPI_ERR_NAME, "PMI: key '%.40s' not found", key);
    const char *v = mf_pmi_get(&pmi1_reply, "value");
    if (!v)
        return mf_error(MPI_ERR_OTHER, "PMI: reply to 'get' has no value");
    if (strlen(v) >= len)
        return mf_error(MPI_ERR_OTHER, "PMI: value of '%.40s' does not fit in %zu bytes", key, len);
    strcpy(value, v);
    return MPI_SUCCESS;
}

static void pmi1_abort(int code, const char *msg)
{
    char esc[MF_PM_VAL_MAX], codestr[16];
    if (!msg)
        msg = "";
    (void)mf_pmi_escape(msg, esc, sizeof esc); /* a truncated message is still worth sending */
    snprintf(codestr, sizeof codestr, "%d", code);
    if (!pmi1_manifold_server && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    const char *kv[] = {"exitcode", codestr, "message", esc};
    if (pmi1_fd >= 0 && pmi1_call("abort", kv, *esc ? 2 : 1, NULL) == MPI_SUCCESS) {
        /* The launcher now kills the job; wait for that (bounded) so it learns of the abort
         * before it sees this process exit. */
        struct pollfd p = {.fd = pmi1_fd, .events = POLLIN};
        for (int i = 0; i < 100; i++) {
            char sink[256];
            if (poll(&p, 1, 100) > 0 && read(pmi1_fd, sink, sizeof sink) <= 0)
                break;
        }
    }
    _exit(code);
}

static int pmi1_finalize(void)
{
    int rc = MPI_SUCCESS;
    if (pmi1_fd >= 0) {
        rc = pmi1_call("finalize", NULL, 0, "finalize_ack");
        close(pmi1_fd);
        pmi1_fd = -1;
    }
    return rc;
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
