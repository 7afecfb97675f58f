/*
 * jobdesc.c — reading the job description a proxy receives (format in jobdesc.h). Every count
 * is bounded before it sizes an allocation, every string must end inside the payload, every
 * rank and app index must be in range: the payload comes from a socket (fuzzed in
 * jobdesc_fuzz.c).
 */
#include "jobdesc.h"

#include <stdlib.h>
#include <string.h>

#include "link.h"

/* Copies the next string into a fixed buffer. 0, or -1 when missing or too long. */
static int mx_rd_copy(mx_strrd *rd, char *dst, size_t cap)
{
    const char *s = mx_rd_str(rd);
    if (!s || strlen(s) >= cap)
        return -1;
    strcpy(dst, s);
    return 0;
}

/* Reads a count in [lo, hi] of items that take at least `per` payload bytes each: a count the
 * rest of the payload cannot hold is malformed, so no count sizes an allocation beyond what the
 * payload itself justifies. */
static int mx_rd_count(mx_strrd *rd, long lo, long hi, size_t per, long *n)
{
    return mx_rd_int(rd, lo, hi, n) || (size_t)*n > (size_t)(rd->end - rd->p) / per ? -1 : 0;
}

static int mx_jobdesc_apps(mx_strrd *rd, mx_options *opt)
{
    long n;
    if (mx_rd_count(rd, 1, 100000, 5, &n) || !(opt->apps = calloc((size_t)n, sizeof *opt->apps)))
        return -1;
    opt->napps = (int)n;
    for (int a = 0; a < opt->napps; a++) {
        mx_app *app = &opt->apps[a];
        if (mx_rd_count(rd, 1, 1 << 20, 1, &n) ||
            !(app->argv = calloc((size_t)n + 1, sizeof *app->argv)))
            return -1;
        for (long k = 0; k < n; k++)
            if (!(app->argv[k] = (char *)mx_rd_str(rd)))
                return -1;
        if (mx_rd_count(rd, 0, 1 << 20, 2, &n) ||
            !(app->envs = calloc((size_t)n + 1, sizeof *app->envs)))
            return -1;
        app->nenvs = (int)n;
        for (long k = 0; k < n; k++)
            if (!(app->envs[k].name = (char *)mx_rd_str(rd)) ||
                !(app->envs[k].value = (char *)mx_rd_str(rd)))
                return -1;
    }
    return 0;
}

static int mx_jobdesc_ranks(mx_strrd *rd, mx_options *opt, mx_job *job)
{
    long n;
    /* A host may run no rank (more hosts than ranks) and still start proxies of the tree. */
    if (mx_rd_count(rd, 0, job->size, 4, &n) ||
        !(job->ranks = calloc((size_t)n + 1, sizeof *job->ranks)))
        return -1;
    job->n = (int)n;
    opt->np = job->n;
    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        long rank, app;
        if (mx_rd_int(rd, 0, job->size - 1, &rank) || mx_rd_int(rd, 0, opt->napps - 1, &app))
            return -1;
        r->rank = (int)rank;
        r->app = (int)app;
        r->local = i;
        r->nlocal = job->n;
        r->host = job->host;
        r->pmi_fd = r->out.fd = r->err.fd = -1;
    }
    return 0;
}

static int mx_jobdesc_body(mx_strrd *rd, mx_options *opt, mx_job *job, mx_jobdesc *d)
{
    long v, n;
    const char *s;
    if (!(s = mx_rd_str(rd)) || strcmp(s, "mfjob2") != 0 ||
        mx_rd_copy(rd, job->kvsname, sizeof job->kvsname) || mx_rd_int(rd, 1, 1000000, &v))
        return -1;
    job->size = (int)v;
    if (mx_rd_int(rd, 0, 1, &v))
        return -1;
    opt->bind_core = (int)v;
    if (mx_rd_int(rd, 0, 1, &v))
        return -1;
    opt->report_bindings = (int)v;
    if (mx_rd_int(rd, 0, 1, &v))
        return -1;
    job->stdin_to_rank0 = (int)v;
    if (!(d->cwd = mx_rd_str(rd)) || mx_rd_count(rd, 0, 1 << 20, 1, &n) ||
        !(d->env = calloc((size_t)n + 1, sizeof *d->env)))
        return -1;
    d->nenv = (int)n;
    for (int i = 0; i < d->nenv; i++)
        if (!(d->env[i] = mx_rd_str(rd)))
            return -1;
    if (mx_jobdesc_apps(rd, opt) || mx_jobdesc_ranks(rd, opt, job))
        return -1;
    if (!(d->tmpl = mx_rd_str(rd)) || !(d->path = mx_rd_str(rd)))
        return -1;
    if (mx_rd_count(rd, 0, 1000000, 3, &n) || !(d->kids = calloc((size_t)n + 1, sizeof *d->kids)))
        return -1;
    d->nkids = (int)n;
    for (int k = 0; k < d->nkids; k++) {
        if (mx_rd_int(rd, 0, 1000000, &v) || !(s = mx_rd_str(rd)))
            return -1;
        d->kids[k] = (mx_kid){.k_pid = -1, .k_index = (int)v, .k_name = s};
    }
    return 0;
}

int mx_jobdesc_decode(const char *data, size_t len, mx_options *opt, mx_job *job, mx_jobdesc *d)
{
    mx_strrd rd = {data, data + len};
    memset(d, 0, sizeof *d);
    if (mx_jobdesc_body(&rd, opt, job, d) != 0) {
        mx_jobdesc_free(opt, job, d);
        return -1;
    }
    return 0;
}

void mx_jobdesc_free(mx_options *opt, mx_job *job, mx_jobdesc *d)
{
    for (int a = 0; opt->apps && a < opt->napps; a++) {
        free(opt->apps[a].argv);
        free(opt->apps[a].envs);
    }
    free(opt->apps);
    opt->apps = NULL;
    opt->napps = 0;
    /* A proxy forwards its ranks' output by fd and never hands the stream buffers back. */
    for (int i = 0; job->ranks && i < job->n; i++) {
        free(job->ranks[i].out.buf);
        free(job->ranks[i].err.buf);
    }
    free(job->ranks);
    job->ranks = NULL;
    job->n = 0;
    free(d->env);
    free(d->kids);
    d->env = NULL;
    d->kids = NULL;
    d->nenv = d->nkids = 0;
}
