/*
 * proxy.c — starts the ranks of this host (the "local proxy").
 *
 * Contract: mx_proxy_launch forks job->n processes running opt->argv, each
 *   - when the host runs no more ranks than it has usable cores, each in a session and process
 *     group of its own (setsid), otherwise all in the job's process group (led by the first);
 *     either way killpg reaches every rank and any children it starts (mx_proxy_signal,
 *     mx_proxy_kill_groups); with PR_SET_PDEATHSIG=SIGKILL so that even a SIGKILLed mpiexec
 *     leaves no rank behind. Why sessions: Linux's autogroup scheduler (on by default) shares
 *     the CPU between sessions, then between the processes of a session. Ranks in mpiexec's
 *     session shared one share on a host loaded by other sessions' processes: two shm ranks
 *     beside four busy loops moved 1.3-1.5x less in bibw (64 KiB - 1 MiB) than when each led a
 *     session, as MPICH's launcher has its ranks do. Not when oversubscribed: a waiting rank
 *     then yields its core (sched_yield), which only steps aside within its own session, so a
 *     rank alone in its session kept the core from the peer it waited for (the mpi4py one-sided
 *     suite with 4 ranks on 2 cores took 28-120 s against 16-31 s);
 *   - with stdin from rank 0's pipe (rank 0) or /dev/null, stdout/stderr into pipes of its own;
 *   - with one end of a PMI socketpair as PMI_FD and the environment described in --help;
 *   - with the signal mask and dispositions mpiexec started with.
 * An exec failure is reported through a close-on-exec pipe, so mpiexec says "cannot run" with
 * errno instead of a mysterious exit 127 from some rank.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "link.h"
#include "mpiexec.h"

extern char **environ;

void mx_say(mx_job *job, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    if (job->is_proxy && mx_proxy_link) {
        (void)mx_link_send(mx_proxy_link, MX_M_SAY, 0, line, (size_t)n);
        return;
    }
    line[n++] = '\n';
    mx_write_all(2, line, (size_t)n);
}

/* Usable cores: the affinity mask we run with (what a container or taskset allows). */
static int mx_usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int mx_random_hex(char *out, size_t nbytes)
{
    unsigned char raw[32];
    if (nbytes > sizeof raw)
        return -1;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t n = getrandom(raw + got, nbytes - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        got += (size_t)n;
    }
    return mf_pmi_hex_encode(raw, nbytes, out, 2 * nbytes + 1) < 0 ? -1 : 0;
}

int mx_job_setup(mx_job *job, const mx_options *opt)
{
    memset(job, 0, sizeof *job);
    job->opt = opt;
    job->n = job->size = opt->np;
    job->stdin_to_rank0 = fcntl(0, F_GETFD) >= 0; /* forward stdin only if we have one */
    job->stdin_src = job->stdin_dst = -1;
    if (gethostname(job->host, sizeof job->host) != 0)
        strcpy(job->host, "localhost");
    job->host[sizeof job->host - 1] = '\0';

    char rnd[17];
    const char *why;
    if (mx_random_hex(job->secret, MF_AUTH_SECRET_BYTES) != 0 || mx_random_hex(rnd, 8) != 0) {
        fprintf(stderr, "mpiexec: getrandom failed: %s\n", strerror(errno));
        return -1;
    }
    if (mf_auth_secret_parse(job->secret, &job->key, &why) != 0) {
        fprintf(stderr, "mpiexec: %s\n", why); /* cannot happen: we just printed it */
        return -1;
    }
    /* kvsname doubles as the job id (<= 63 chars for mf_pm_identity.jobid); it must be a valid
     * PMI value, so the hostname part keeps only wire-safe characters. */
    char shorthost[25];
    memcpy(shorthost, job->host, sizeof shorthost - 1);
    shorthost[sizeof shorthost - 1] = '\0';
    for (char *p = shorthost; *p; p++)
        if (*p <= ' ' || *p == 0x7f || *p == '%')
            *p = '_';
    snprintf(job->kvsname, sizeof job->kvsname, "mf-%s-%ld-%s", shorthost, (long)getpid(), rnd);

    job->oversubscribed = job->n > mx_usable_cores();
    job->ranks = calloc((size_t)job->n, sizeof *job->ranks);
    if (!job->ranks) {
        fprintf(stderr, "mpiexec: out of memory for %d ranks\n", job->n);
        return -1;
    }
    for (int i = 0, app = 0, left = opt->apps[0].np; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        while (left == 0)
            left = opt->apps[++app].np;
        left--;
        r->rank = i;
        r->app = app;
        r->local = i;
        r->nlocal = job->n;
        r->host = job->host;
        r->pmi_fd = r->out.fd = r->err.fd = -1;
        mf_pmi_lines_init(&r->pmi_in);
    }
    return mx_pmi_init(job);
}

/* Variables mpiexec defines itself; inherited values would point at another job. */
static int mx_managed(const char *entry)
{
    static const char *const names[] = {"PMI_FD",
                                        "PMI_PORT",
                                        "PMI_ID",
                                        "PMI_RANK",
                                        "PMI_SIZE",
                                        "MANIFOLD_LOCAL_RANK",
                                        "MANIFOLD_LOCAL_SIZE",
                                        "MANIFOLD_JOB_SECRET",
                                        "MANIFOLD_HOSTNAME",
                                        NULL};
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(entry, names[i], n) == 0 && entry[n] == '=')
            return 1;
    }
    return 0;
}

/* A rank's environment under construction: env points at environ's strings and at strings of
 * our own (own), which mx_env_free releases after the fork. */
typedef struct mx_env {
    char **env;
    int count;
    char **own;
    int nown;
} mx_env;

/* Sets NAME=VALUE (replacing an existing NAME). Room was reserved by mx_build_env. */
static int mx_env_set(mx_env *e, const char *name, const char *value)
{
    size_t nl = strlen(name);
    char *s = malloc(nl + strlen(value) + 2);
    if (!s)
        return -1;
    sprintf(s, "%s=%s", name, value);
    e->own[e->nown++] = s;
    for (int i = 0; i < e->count; i++) {
        if (strncmp(e->env[i], name, nl) == 0 && e->env[i][nl] == '=') {
            e->env[i] = s;
            return 0;
        }
    }
    e->env[e->count++] = s;
    e->env[e->count] = NULL;
    return 0;
}

static void mx_env_free(mx_env *e)
{
    for (int i = 0; i < e->nown; i++)
        free(e->own[i]);
    free(e->own);
    free(e->env);
    e->own = e->env = NULL;
}

/* The environment of rank `rank` (pmi_fd is its end of the socketpair). Built before fork so
 * that the child only calls async-signal-safe functions. */
static int mx_build_env(mx_job *job, mx_rank *r, int pmi_fd, int oversubscribed, mx_env *e)
{
    const mx_options *opt = job->opt;
    const mx_app *app = &opt->apps[r->app];
    int n = 0, rc = 0;
    while (environ[n])
        n++;
    e->count = e->nown = 0;
    e->env = calloc((size_t)(n + opt->nenvs + app->nenvs + 16), sizeof *e->env);
    e->own = calloc((size_t)(opt->nenvs + app->nenvs + 16), sizeof *e->own);
    if (!e->env || !e->own) {
        mx_env_free(e);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!mx_managed(environ[i]))
            e->env[e->count++] = environ[i];
    for (int i = 0; i < opt->nenvs; i++) {
        const char *v = opt->envs[i].value ? opt->envs[i].value : getenv(opt->envs[i].name);
        if (v)
            rc |= mx_env_set(e, opt->envs[i].name, v);
    }
    for (int i = 0; i < app->nenvs; i++)
        rc |= mx_env_set(e, app->envs[i].name, app->envs[i].value);
    char num[32];
    snprintf(num, sizeof num, "%d", pmi_fd);
    rc |= mx_env_set(e, "PMI_FD", num);
    snprintf(num, sizeof num, "%d", r->rank);
    rc |= mx_env_set(e, "PMI_RANK", num);
    snprintf(num, sizeof num, "%d", r->local);
    rc |= mx_env_set(e, "MANIFOLD_LOCAL_RANK", num);
    snprintf(num, sizeof num, "%d", job->size);
    rc |= mx_env_set(e, "PMI_SIZE", num);
    snprintf(num, sizeof num, "%d", r->nlocal);
    rc |= mx_env_set(e, "MANIFOLD_LOCAL_SIZE", num);
    rc |= mx_env_set(e, "MANIFOLD_JOB_SECRET", job->secret);
    if (job->is_proxy) /* the name this host was started as: namespaces share a hostname */
        rc |= mx_env_set(e, "MANIFOLD_HOSTNAME", job->host);
    if (oversubscribed)
        rc |= mx_env_set(e, "MANIFOLD_OVERSUBSCRIBED", "1");
    if (rc)
        mx_env_free(e);
    return rc ? -1 : 0;
}

/* In the child, after fork: only async-signal-safe calls until exec. */
static void mx_child(mx_job *job, mx_rank *r, int in_fd, int out_fd, int err_fd, int pmi_fd,
                     int report_fd, pid_t parent, char **env, const sigset_t *origmask,
                     const cpu_set_t *bind)
{
    if (job->rank_sessions)
        (void)setsid(); /* fails only for a group leader, which a fresh child is not */
    else
        (void)setpgid(0, job->pgid == 0 ? 0 : job->pgid);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1); /* mpiexec already died */
    /* Under Yama's ptrace_scope 1, gdb started by us may then attach (stacks.c); it fails
     * harmlessly without Yama. */
    (void)prctl(PR_SET_PTRACER, (unsigned long)parent, 0, 0, 0);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    int flags = fcntl(pmi_fd, F_GETFD);
    if (flags < 0 || fcntl(pmi_fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
        goto fail;
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, origmask, NULL);
    if (bind && sched_setaffinity(0, sizeof *bind, bind) != 0)
        goto fail;
    char **argv = job->opt->apps[r->app].argv;
    execvpe(argv[0], argv, env);
fail:;
    int e = errno;
    (void)!write(report_fd, &e, sizeof e);
    _exit(MX_EXIT_NOTFOUND);
}

static int mx_cloexec_pipe(int fds[2])
{
    return pipe2(fds, O_CLOEXEC);
}

int mx_proxy_launch(mx_job *job)
{
    const sigset_t *origmask = &mx_orig_sigmask;

    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        fprintf(stderr, "mpiexec: cannot open /dev/null: %s\n", strerror(errno));
        return 1;
    }
    int nlocal = 0;
    for (int i = 0; i < job->n; i++)
        nlocal += job->ranks[i].remote == NULL;
    int oversubscribed = nlocal > mx_usable_cores();
    job->rank_sessions = !oversubscribed;
    if (job->opt->bind_core && mx_bind_prepare(nlocal) != 0) {
        mx_say(job, "mpiexec: --bind-to core: cannot find the cores of host %s", job->host);
        close(devnull);
        return 1;
    }

    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        if (r->remote)
            continue;
        int outp[2], errp[2], inp[2] = {-1, -1}, sp[2], rep[2];
        if (mx_cloexec_pipe(outp) || mx_cloexec_pipe(errp) || mx_cloexec_pipe(rep) ||
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) ||
            (r->rank == 0 && job->stdin_to_rank0 && mx_cloexec_pipe(inp))) {
            mx_say(job, "mpiexec: cannot create pipes for rank %d: %s", r->rank, strerror(errno));
            goto fail;
        }
        cpu_set_t bindset, *bind = NULL;
        if (job->opt->bind_core) {
            char desc[160];
            if (mx_bind_get(r->local, &bindset, sizeof bindset, desc, sizeof desc) != 0) {
                mx_say(job, "mpiexec: --bind-to core: no core for rank %d on host %s", r->rank,
                       job->host);
                goto fail;
            }
            bind = &bindset;
            if (job->opt->report_bindings)
                mx_say(job, "mpiexec: rank %d (host %s, local rank %d) bound to %s", r->rank,
                       job->host, r->local, desc);
        }
        mx_env env;
        if (mx_build_env(job, r, sp[1], oversubscribed, &env) != 0) {
            mx_say(job, "mpiexec: out of memory building the environment");
            goto fail;
        }
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
            mx_say(job, "mpiexec: fork failed for rank %d: %s", r->rank, strerror(errno));
            goto fail;
        }
        if (pid == 0)
            mx_child(job, r, inp[0] >= 0 ? inp[0] : devnull, outp[1], errp[1], sp[1], rep[1],
                     parent, env.env, origmask, bind);
        mx_env_free(&env);
        r->pid = pid;
        r->alive = 1;
        if (!job->rank_sessions) {
            if (job->pgid == 0)
                job->pgid = pid;
            (void)setpgid(pid, job->pgid); /* also here: whichever runs first wins the race */
        }
        close(outp[1]);
        close(errp[1]);
        close(sp[1]);
        close(rep[1]);
        if (inp[0] >= 0) {
            close(inp[0]);
            fcntl(inp[1], F_SETFL, O_NONBLOCK);
            job->stdin_dst = inp[1];
            job->stdin_src = job->is_proxy ? -1 : 0;
        }
        r->pmi_fd = sp[0];
        fcntl(sp[0], F_SETFL, O_NONBLOCK);
        if (mx_stream_init(&r->out, outp[0], 1) || mx_stream_init(&r->err, errp[0], 2)) {
            mx_say(job, "mpiexec: out of memory");
            close(rep[0]);
            goto fail;
        }

        int e;
        ssize_t got;
        do
            got = read(rep[0], &e, sizeof e);
        while (got < 0 && errno == EINTR);
        close(rep[0]);
        if (got == (ssize_t)sizeof e) {
            mx_say(job, "mpiexec: cannot run '%s'%s%s: %s", job->opt->apps[r->app].argv[0],
                   job->is_proxy ? " on host " : "", job->is_proxy ? job->host : "", strerror(e));
            close(devnull);
            mx_proxy_signal(job, SIGKILL);
            return e == ENOENT ? MX_EXIT_NOTFOUND : MX_EXIT_NOEXEC;
        }
    }
    close(devnull);
    return 0;
fail:
    close(devnull);
    mx_proxy_signal(job, SIGKILL);
    return 1;
}

void mx_proxy_signal(mx_job *job, int sig)
{
    if (job->pgid > 0)
        (void)killpg(job->pgid, sig);
    /* Each rank's own group; and the rank itself, which may have left its group (setsid of its
     * own), or not reached it yet: before its setsid ran, no group bears its pid. */
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].alive && !job->ranks[i].remote) {
            if (job->rank_sessions)
                (void)killpg(job->ranks[i].pid, sig);
            (void)kill(job->ranks[i].pid, sig);
        }
    if (job->rm)
        mx_remote_signal(job, sig);
}

void mx_proxy_kill_groups(mx_job *job)
{
    /* A reaped leader's group id cannot be taken by another process while members remain. */
    if (job->pgid > 0)
        (void)killpg(job->pgid, SIGKILL);
    for (int i = 0; i < job->n && job->rank_sessions; i++)
        if (job->ranks[i].pid > 0 && !job->ranks[i].remote)
            (void)killpg(job->ranks[i].pid, SIGKILL);
}
