/*
 * jobdesc_fuzz.c — libFuzzer target for the job description a proxy decodes (jobdesc.c). The
 * input is the payload of an MX_M_JOB frame. Whatever decodes must be consistent: every rank
 * and app index in range, every string inside the payload; then it is freed (leaks count).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobdesc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_inside(const char *s, const char *p, size_t len)
{
    return s >= p && s + strlen(s) < p + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    static mx_options opt;
    static mx_job job;
    mx_jobdesc d;
    memset(&opt, 0, sizeof opt);
    memset(&job, 0, sizeof job);
    if (mx_jobdesc_decode(p, size, &opt, &job, &d) != 0) {
        if (opt.apps || job.ranks || d.env || d.kids)
            abort(); /* a failed decode frees what it allocated */
        return 0;
    }
    if (job.size < 1 || job.n < 0 || job.n > job.size || opt.napps < 1 ||
        !fuzz_inside(d.cwd, p, size) || !fuzz_inside(d.tmpl, p, size) ||
        !fuzz_inside(d.path, p, size) || strlen(job.kvsname) >= sizeof job.kvsname)
        abort();
    for (int i = 0; i < job.n; i++)
        if (job.ranks[i].rank < 0 || job.ranks[i].rank >= job.size || job.ranks[i].app < 0 ||
            job.ranks[i].app >= opt.napps)
            abort();
    for (int a = 0; a < opt.napps; a++) {
        if (!opt.apps[a].argv[0])
            abort();
        for (int k = 0; opt.apps[a].argv[k]; k++)
            if (!fuzz_inside(opt.apps[a].argv[k], p, size))
                abort();
    }
    for (int i = 0; i < d.nenv; i++)
        if (!fuzz_inside(d.env[i], p, size))
            abort();
    for (int k = 0; k < d.nkids; k++)
        if (!fuzz_inside(d.kids[k].k_name, p, size))
            abort();
    mx_jobdesc_free(&opt, &job, &d);
    return 0;
}
