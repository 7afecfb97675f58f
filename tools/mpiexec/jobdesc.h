/*
 * jobdesc.h — the job description mpiexec sends each proxy (MX_M_JOB) after the link is
 * authenticated: a payload of NUL-terminated strings (mx_strbuf), written by remote.c
 * (mx_send_job) and read here, in this order:
 *
 *   "mfjob2" kvsname size bind_core report_bindings stdin_to_rank0 cwd
 *   nenv "NAME=value"...                       (the environment of the ranks)
 *   napps { argc argv... nenvs {name value}... }...
 *   nranks {rank app}...                       (the ranks of this host)
 *   launcher-template proxy-path
 *   nkids {index name}...                      (the proxies this one starts)
 *
 * The job secret is not part of it: the proxy has it already (from its launcher's stdin).
 */
#ifndef MX_JOBDESC_H
#define MX_JOBDESC_H

#include <stddef.h>
#include <sys/types.h>

#include "mpiexec.h"

typedef struct mx_kid {
    pid_t k_pid;
    int k_index;
    const char *k_name;
} mx_kid;

/* What the description says beyond opt and job. Strings point into the payload. */
typedef struct mx_jobdesc {
    const char *cwd, *tmpl, *path;
    const char **env; /* nenv "NAME=value" strings */
    int nenv;
    mx_kid *kids;
    int nkids;
} mx_jobdesc;

/* Decodes `data` into opt (apps, np, bind_core, report_bindings), job (kvsname, size, n, ranks,
 * stdin_to_rank0) and *d, without side effects (no environment or directory change). The payload
 * must outlive them. 0, or -1 when malformed (what was allocated is freed then too). */
int mx_jobdesc_decode(const char *data, size_t len, mx_options *opt, mx_job *job, mx_jobdesc *d);
/* Frees what mx_jobdesc_decode allocated. */
void mx_jobdesc_free(mx_options *opt, mx_job *job, mx_jobdesc *d);

#endif
