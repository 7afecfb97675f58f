/*
 * pmi_client.c — the client core shared by PMI-1 and PMI-2 (see pmi_client.h for the contract).
 */
#include "runtime/pmi_client.h"

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

void mf_pmi_client_init(mf_pmi_client *c, const mf_pmi_codec *codec)
{
    c->codec = codec;
    c->fd = -1;
    c->keymax = MF_PM_KEY_MAX;
    c->valmax = MF_PM_VAL_MAX;
    c->server_prints = 0;
    c->reply.nfields = 0;
    mf_pmi_lines_init(&c->pending);
}

int mf_pmi_env_int(const mf_pmi_client *c, const char *name, long lo, long hi, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return mf_error(MPI_ERR_OTHER, "%s: %s is not set", c->codec->tag, name);
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return mf_error(MPI_ERR_OTHER, "%s: %s='%.32s' is not an integer in [%ld, %ld]",
                        c->codec->tag, name, v, lo, hi);
    *out = (int)x;
    return MPI_SUCCESS;
}

int mf_pmi_client_adopt_fd(mf_pmi_client *c)
{
    int fd, rc = mf_pmi_env_int(c, "PMI_FD", 0, 1 << 20, &fd);
    if (rc != MPI_SUCCESS)
        return rc;
    if (fcntl(fd, F_GETFD) < 0)
        return mf_error(MPI_ERR_OTHER, "%s: PMI_FD=%d is not an open file descriptor",
                        c->codec->tag, fd);
    /* Programs this process starts must not inherit (and confuse) our PMI connection. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    c->fd = fd;
    return MPI_SUCCESS;
}

int mf_pmi_client_connect(mf_pmi_client *c, const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof host || !colon[1])
        return mf_error(MPI_ERR_OTHER, "%s: PMI_PORT='%.64s' is not host:port", c->codec->tag,
                        hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot resolve PMI_PORT host '%s': %s", c->codec->tag,
                        host, gai_strerror(gai));
    int err = 0;
    for (ai = res; ai && c->fd < 0; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            c->fd = fd;
            break;
        }
        err = errno;
        if (fd >= 0)
            close(fd);
    }
    freeaddrinfo(res);
    if (c->fd < 0)
        return mf_error(MPI_ERR_OTHER, "%s: cannot connect to PMI_PORT %.64s: %s", c->codec->tag,
                        hostport, strerror(err));
    return MPI_SUCCESS;
}

void mf_pmi_client_close(mf_pmi_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    mf_pmi_lines_init(&c->pending);
}

static int pmi_write(mf_pmi_client *c, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(c->fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return mf_error(MPI_ERR_OTHER, "%s: write to the process manager failed: %s",
                            c->codec->tag, strerror(errno));
        }
        buf += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

/* Reads what the socket has, at least one byte and at most `room`, into dst; *got is the count. */
static int pmi_read_some(mf_pmi_client *c, char *dst, size_t room, size_t *got)
{
    for (;;) {
        ssize_t n = read(c->fd, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return mf_error(MPI_ERR_OTHER, "%s: read from the process manager failed: %s",
                            c->codec->tag, strerror(errno));
        if (n == 0)
            return mf_error(MPI_ERR_OTHER, "%s: the process manager closed the connection",
                            c->codec->tag);
        *got = (size_t)n;
        return MPI_SUCCESS;
    }
}

int mf_pmi_client_read_line(mf_pmi_client *c, const char **line, size_t *len)
{
    for (;;) {
        int got = mf_pmi_lines_next(&c->pending, line, len);
        if (got > 0)
            return MPI_SUCCESS;
        size_t room, n;
        char *dst = mf_pmi_lines_space(&c->pending, &room);
        if (got < 0 || room == 0)
            return mf_error(MPI_ERR_OTHER, "%s: response line longer than %d bytes", c->codec->tag,
                            MF_PMI_LINE_MAX);
        int rc = pmi_read_some(c, dst, room, &n);
        if (rc != MPI_SUCCESS)
            return rc;
        mf_pmi_lines_commit(&c->pending, n);
    }
}

int mf_pmi_client_read_exact(mf_pmi_client *c, char *buf, size_t len)
{
    /* Bytes a line read took beyond its newline come first. */
    mf_pmi_lines *p = &c->pending;
    size_t held = p->used - p->start, take = held < len ? held : len;
    memcpy(buf, p->buf + p->start, take);
    p->start += take;
    if (p->start == p->used)
        p->start = p->used = 0;
    for (size_t have = take; have < len;) {
        size_t n;
        int rc = pmi_read_some(c, buf + have, len - have, &n);
        if (rc != MPI_SUCCESS)
            return rc;
        have += n;
    }
    return MPI_SUCCESS;
}

int mf_pmi_malformed(const mf_pmi_client *c, const char *why, const char *text)
{
    return mf_error(MPI_ERR_OTHER, "%s: malformed response (%s): '%.60s'", c->codec->tag, why,
                    text);
}

int mf_pmi_call(mf_pmi_client *c, const char *cmd, const char *const *kv, int npairs,
                const char *expect, int check_rc)
{
    char buf[MF_PMI_LINE_MAX + 16];
    int len = c->codec->format(buf, sizeof buf, cmd, kv, npairs);
    if (len < 0)
        return mf_error(MPI_ERR_OTHER,
                        "%s: cannot encode command '%s' (value not wire-safe or too long)",
                        c->codec->tag, cmd);
    int rc = pmi_write(c, buf, (size_t)len);
    if (rc != MPI_SUCCESS || !expect)
        return rc;
    if ((rc = mf_pmi_expect(c, expect, cmd)) != MPI_SUCCESS)
        return rc;
    return check_rc ? mf_pmi_check_rc(c, cmd) : MPI_SUCCESS;
}

int mf_pmi_expect(mf_pmi_client *c, const char *expect, const char *after)
{
    int rc = c->codec->read(c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (strcmp(mf_pmi_cmd(&c->reply), expect) != 0)
        return mf_error(MPI_ERR_OTHER, "%s: expected '%s' in reply to '%s', got '%.40s'",
                        c->codec->tag, expect, after, mf_pmi_cmd(&c->reply));
    return MPI_SUCCESS;
}

int mf_pmi_check_rc(mf_pmi_client *c, const char *cmd)
{
    int prc;
    if (mf_pmi_get_int(&c->reply, "rc", -1000000, 1000000, &prc) != 0)
        return mf_error(MPI_ERR_OTHER, "%s: reply to '%s' has no valid rc", c->codec->tag, cmd);
    if (prc != 0) {
        const char *msg = mf_pmi_get(&c->reply, c->codec->errmsg_key);
        return mf_error(MPI_ERR_OTHER, "%s: '%s' failed with rc=%d (%.80s)", c->codec->tag, cmd,
                        prc, msg && *msg ? msg : "no message");
    }
    return MPI_SUCCESS;
}

static int pmi_check_kv(const mf_pmi_client *c, const char *key, const char *value)
{
    const char *tag = c->codec->tag;
    if (strlen(key) >= (size_t)c->keymax || !c->codec->key_ok(key))
        return mf_error(MPI_ERR_OTHER,
                        "%s: key '%.40s' is not a valid %s key (1 to %d bytes, none of '=', %s)",
                        tag, key, tag, c->keymax - 1, c->codec->unsafe);
    if (!value)
        return MPI_SUCCESS;
    if (strlen(value) >= (size_t)c->valmax)
        return mf_error(MPI_ERR_OTHER, "%s: value for key '%.40s' too long (%zu bytes, at most %d)",
                        tag, key, strlen(value), c->valmax - 1);
    if (!c->codec->value_ok(value))
        return mf_error(MPI_ERR_OTHER,
                        "%s: value for key '%.40s' has characters the %s wire cannot carry (%s: "
                        "hex-encode binary values)",
                        tag, key, tag, c->codec->unsafe);
    return MPI_SUCCESS;
}

int mf_pmi_kvs_put(mf_pmi_client *c, const char *key, const char *value, const char *cmd,
                   const char *const *kv, int npairs, const char *expect)
{
    int rc = pmi_check_kv(c, key, value);
    return rc != MPI_SUCCESS ? rc : mf_pmi_call(c, cmd, kv, npairs, expect, 1);
}

int mf_pmi_kvs_get(mf_pmi_client *c, const char *key, char *value, size_t len, const char *cmd,
                   const char *const *kv, int npairs, const char *expect)
{
    int found, rc = pmi_check_kv(c, key, NULL);
    if (rc != MPI_SUCCESS || (rc = mf_pmi_call(c, cmd, kv, npairs, expect, 0)) != MPI_SUCCESS ||
        (rc = c->codec->found(c, cmd, &found)) != MPI_SUCCESS)
        return rc;
    if (!found)
        return mf_error(MPI_ERR_NAME, "%s: key '%.40s' not found", c->codec->tag, key);
    const char *v = mf_pmi_get(&c->reply, "value");
    if (!v)
        return mf_error(MPI_ERR_OTHER, "%s: reply to the get of '%.40s' has no value",
                        c->codec->tag, key);
    if (strlen(v) >= len)
        return mf_error(MPI_ERR_OTHER, "%s: value of '%.40s' does not fit in %zu bytes",
                        c->codec->tag, key, len);
    strcpy(value, v);
    return MPI_SUCCESS;
}

void mf_pmi_identity(mf_pm_identity *id, int rank, int size, int appnum, int universe,
                     const char *jobid)
{
    id->rank = rank;
    id->size = size;
    id->appnum = appnum < 0 ? 0 : appnum;
    id->universe_size = universe < size ? size : universe;
    /* Launchers' job names fit; a longer one is cut (it only names the job in messages and
     * keys). */
    size_t jl = strlen(jobid);
    if (jl >= sizeof id->jobid)
        jl = sizeof id->jobid - 1;
    memcpy(id->jobid, jobid, jl);
    id->jobid[jl] = '\0';
}

void mf_pmi_abort(mf_pmi_client *c, int code, const char *msg, const char *const *kv, int npairs,
                  int polls)
{
    if (!c->server_prints && msg && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    if (c->fd >= 0 && mf_pmi_call(c, "abort", kv, npairs, NULL, 0) == MPI_SUCCESS) {
        /* The launcher now kills the job; wait for that (bounded) so that it sees an abort
         * rather than one process's early exit. */
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        for (int i = 0; i < polls; i++) {
            char sink[256];
            if (poll(&p, 1, 100) > 0 && read(c->fd, sink, sizeof sink) <= 0)
                break;
        }
    }
    _exit(code);
}

int mf_pmi_finalize(mf_pmi_client *c, const char *ack)
{
    int rc = MPI_SUCCESS;
    if (c->fd >= 0) {
        rc = mf_pmi_call(c, "finalize", NULL, 0, ack, 0);
        mf_pmi_client_close(c);
    }
    return rc;
}
