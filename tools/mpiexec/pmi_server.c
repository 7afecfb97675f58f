/*
 * pmi_server.c — mpiexec's PMI-1 server (the commands of the "simple PMI" wire protocol that
 * MPICH's Hydra also serves; parsing and formatting are src/runtime/pmi_wire.c).
 *
 * One key-value space per job, named job->kvsname. Contracts toward the client:
 *   - every request gets exactly one reply line, except barrier_in (reply when all job->n ranks
 *     have entered) and abort (no reply: the job ends);
 *   - put may overwrite a key; get sees any key put so far (fence only orders, it never hides);
 *   - our response_to_init carries `server=manifold`, telling our client that mpiexec prints
 *     abort messages itself.
 * A malformed line, an unknown command, a kvsname that is not this job's or a client that does not
 * read its replies is a protocol error: one clear line and the job ends with status 1 (a broken
 * rank must not leave the others waiting at a barrier forever).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpiexec.h"

#define MX_KV_BUCKETS 1024
#define MX_KEYLEN_MAX 64   /* including the NUL, as announced in `maxes` */
#define MX_VALLEN_MAX 1024 /* including the NUL */

struct mx_kv {
    mx_kv *next;
    char *key;
    char *value;
};

static unsigned mx_kv_hash(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % MX_KV_BUCKETS;
}

int mx_pmi_init(mx_job *job)
{
    job->kv_buckets = calloc(MX_KV_BUCKETS, sizeof *job->kv_buckets);
    if (!job->kv_buckets) {
        fprintf(stderr, "mpiexec: out of memory for the key-value store\n");
        return -1;
    }
    return 0;
}

void mx_pmi_free(mx_job *job)
{
    if (!job->kv_buckets)
        return;
    for (int b = 0; b < MX_KV_BUCKETS; b++) {
        for (mx_kv *kv = job->kv_buckets[b], *next; kv; kv = next) {
            next = kv->next;
            free(kv->key);
            free(kv->value);
            free(kv);
        }
    }
    free(job->kv_buckets);
    job->kv_buckets = NULL;
}

static mx_kv *mx_kv_find(mx_job *job, const char *key)
{
    for (mx_kv *kv = job->kv_buckets[mx_kv_hash(key)]; kv; kv = kv->next)
        if (strcmp(kv->key, key) == 0)
            return kv;
    return NULL;
}

static int mx_kv_put(mx_job *job, const char *key, const char *value)
{
    mx_kv *kv = mx_kv_find(job, key);
    char *v = strdup(value);
    if (!v)
        return -1;
    if (kv) {
        free(kv->value);
        kv->value = v;
        return 0;
    }
    kv = malloc(sizeof *kv);
    if (!kv || !(kv->key = strdup(key))) {
        free(kv);
        free(v);
        return -1;
    }
    kv->value = v;
    unsigned b = mx_kv_hash(key);
    kv->next = job->kv_buckets[b];
    job->kv_buckets[b] = kv;
    return 0;
}

static void mx_pmi_protocol_error(mx_job *job, mx_rank *r, const char *what, const char *detail)
{
    mx_job_end(job, 1, SIGTERM,
               "mpiexec: rank %d (host %s, pid %ld) broke the PMI protocol: %s%s%.80s", r->rank,
               r->host, (long)r->pid, what, detail ? ": " : "", detail ? detail : "");
    mx_pmi_close(job, r);
}

/* Sends one reply. The client reads replies synchronously, so the socket buffer never fills
 * unless the client misbehaves; then we fail rather than block the whole launcher. */
static int mx_pmi_reply(mx_job *job, mx_rank *r, const char *cmd, const char *const *kv, int npairs)
{
    char line[MF_PMI_LINE_MAX + 2];
    int len = mf_pmi_format(line, sizeof line, cmd, kv, npairs);
    if (len < 0) {
        mx_pmi_protocol_error(job, r, "reply not encodable for command", cmd);
        return -1;
    }
    if (r->pmi_fd == -1)
        return -1;
    if (r->pmi_fd == MX_FD_REMOTE) {
        mx_remote_pmi_reply(job, r, line, (size_t)len);
        return 0;
    }
    size_t off = 0;
    while (off < (size_t)len) {
        ssize_t n = send(r->pmi_fd, line + off, (size_t)len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            mx_pmi_close(job, r); /* the rank is exiting; its exit status tells the story */
            return -1;
        }
        if (n < 0) {
            mx_pmi_protocol_error(job, r, "does not read its PMI replies", strerror(errno));
            return -1;
        }
        off += (size_t)n;
    }
    return 0;
}

static int mx_pmi_check_kvs(mx_job *job, mx_rank *r, const mf_pmi_msg *m)
{
    const char *kvs = mf_pmi_get(m, "kvsname");
    if (!kvs || strcmp(kvs, job->kvsname) != 0) {
        mx_pmi_protocol_error(job, r, "unknown kvsname", kvs ? kvs : "(none)");
        return -1;
    }
    return 0;
}

static void mx_pmi_barrier_check(mx_job *job)
{
    if (job->barrier_count < job->n)
        return;
    job->barrier_count = 0;
    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        if (r->in_barrier) {
            r->in_barrier = 0;
            (void)mx_pmi_reply(job, r, "barrier_out", NULL, 0);
        }
    }
}

static void mx_pmi_serve(mx_job *job, mx_rank *r, const mf_pmi_msg *m)
{
    const char *cmd = mf_pmi_cmd(m);
    char num[3][24];

    if (!strcmp(cmd, "init")) {
        int ver;
        int ok = mf_pmi_get_int(m, "pmi_version", 0, 1000, &ver) == 0 && ver == 1;
        const char *kv[] = {"pmi_version",   "1",      "pmi_subversion", "1", "rc",
                            ok ? "0" : "-1", "server", "manifold"};
        r->pmi_inited = ok;
        (void)mx_pmi_reply(job, r, "response_to_init", kv, 4);
    } else if (!strcmp(cmd, "get_maxes")) {
        snprintf(num[0], sizeof num[0], "%zu", sizeof job->kvsname);
        snprintf(num[1], sizeof num[1], "%d", MX_KEYLEN_MAX);
        snprintf(num[2], sizeof num[2], "%d", MX_VALLEN_MAX);
        const char *kv[] = {"kvsname_max", num[0], "keylen_max", num[1], "vallen_max", num[2]};
        (void)mx_pmi_reply(job, r, "maxes", kv, 3);
    } else if (!strcmp(cmd, "get_appnum")) {
        snprintf(num[0], sizeof num[0], "%d", r->app);
        const char *kv[] = {"appnum", num[0]};
        (void)mx_pmi_reply(job, r, "appnum", kv, 1);
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        const char *kv[] = {"kvsname", job->kvsname};
        (void)mx_pmi_reply(job, r, "my_kvsname", kv, 1);
    } else if (!strcmp(cmd, "get_universe_size")) {
        snprintf(num[0], sizeof num[0], "%d", job->n);
        const char *kv[] = {"size", num[0]};
        (void)mx_pmi_reply(job, r, "universe_size", kv, 1);
    } else if (!strcmp(cmd, "put")) {
        if (mx_pmi_check_kvs(job, r, m) != 0)
            return;
        const char *key = mf_pmi_get(m, "key"), *val = mf_pmi_get(m, "value");
        const char *rc = "0", *msg = "success";
        if (!key || !val || !*key) {
            rc = "-1";
            msg = "key_or_value_missing";
        } else if (strlen(key) >= MX_KEYLEN_MAX || strlen(val) >= MX_VALLEN_MAX) {
            rc = "-1";
            msg = "key_or_value_too_long";
        } else if (mx_kv_put(job, key, val) != 0) {
            rc = "-1";
            msg = "out_of_memory";
        }
        const char *kv[] = {"rc", rc, "msg", msg};
        (void)mx_pmi_reply(job, r, "put_result", kv, 2);
    } else if (!strcmp(cmd, "get")) {
        if (mx_pmi_check_kvs(job, r, m) != 0)
            return;
        const char *key = mf_pmi_get(m, "key");
        mx_kv *kv = key ? mx_kv_find(job, key) : NULL;
        const char *found[] = {"rc", "0", "msg", "success", "value", kv ? kv->value : ""};
        const char *missing[] = {"rc", "-1", "msg", "key_not_found", "value", "unknown"};
        (void)mx_pmi_reply(job, r, "get_result", kv ? found : missing, 3);
    } else if (!strcmp(cmd, "barrier_in")) {
        if (r->in_barrier) {
            mx_pmi_protocol_error(job, r, "entered the barrier twice", NULL);
            return;
        }
        r->in_barrier = 1;
        job->barrier_count++;
        mx_pmi_barrier_check(job);
    } else if (!strcmp(cmd, "finalize")) {
        r->pmi_finalized = 1;
        (void)mx_pmi_reply(job, r, "finalize_ack", NULL, 0);
    } else if (!strcmp(cmd, "abort")) {
        int code = 1;
        char text[MF_PMI_LINE_MAX];
        const char *msg = mf_pmi_get(m, "message");
        (void)mf_pmi_get_int(m, "exitcode", -2147483647L - 1, 2147483647L, &code);
        mf_pmi_unescape(msg ? msg : "", text, sizeof text);
        r->aborted = 1;
        mx_job_blame(job, MX_CAUSE_ABORT, code & 0xff,
                     "mpiexec: rank %d (host %s, pid %ld) called MPI_Abort with exit code %d%s%s",
                     r->rank, r->host, (long)r->pid, code, *text ? ": " : "", text);
    } else {
        mx_pmi_protocol_error(job, r, "unsupported command", cmd);
    }
}

/* Serves every complete line received so far. 0, or -1 once the connection is closed. */
static int mx_pmi_serve_lines(mx_job *job, mx_rank *r)
{
    const char *line, *why;
    size_t len;
    int got;
    while (r->pmi_fd != -1 && (got = mf_pmi_lines_next(&r->pmi_in, &line, &len)) != 0) {
        static mf_pmi_msg m; /* 4 KiB: not on the stack of a deep call chain */
        if (got < 0) {
            mx_pmi_protocol_error(job, r, "line too long", NULL);
            return -1;
        }
        if (mf_pmi_parse(&m, line, len, &why) != 0) {
            mx_pmi_protocol_error(job, r, why, line);
            return -1;
        }
        mx_pmi_serve(job, r, &m);
    }
    return r->pmi_fd == -1 ? -1 : 0;
}

void mx_pmi_feed(mx_job *job, mx_rank *r, const char *data, size_t len)
{
    while (len > 0 && r->pmi_fd != -1) {
        size_t room;
        char *dst = mf_pmi_lines_space(&r->pmi_in, &room);
        if (room == 0) {
            mx_pmi_protocol_error(job, r, "line too long", NULL);
            return;
        }
        size_t n = len < room ? len : room;
        memcpy(dst, data, n);
        mf_pmi_lines_commit(&r->pmi_in, n);
        data += n;
        len -= n;
        if (mx_pmi_serve_lines(job, r) != 0)
            return;
    }
}

int mx_pmi_readable(mx_job *job, mx_rank *r)
{
    for (;;) {
        if (mx_pmi_serve_lines(job, r) != 0 || r->pmi_fd < 0)
            return -1;
        size_t room;
        char *dst = mf_pmi_lines_space(&r->pmi_in, &room);
        if (room == 0) {
            mx_pmi_protocol_error(job, r, "line too long", NULL);
            return -1;
        }
        ssize_t n = read(r->pmi_fd, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            mx_pmi_close(job, r);
            return -1;
        }
        mf_pmi_lines_commit(&r->pmi_in, (size_t)n);
    }
}

void mx_pmi_close(mx_job *job, mx_rank *r)
{
    if (r->pmi_fd >= 0)
        close(r->pmi_fd);
    r->pmi_fd = -1;
    if (r->in_barrier) {
        r->in_barrier = 0;
        job->barrier_count--;
    }
}
