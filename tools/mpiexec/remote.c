/*
 * remote.c — mpiexec's side of a job on several hosts (--host / --hostfile).
 *
 * Every rank runs under a proxy (`mpiexec --proxy`, proxy_main.c), one per host, even when a
 * host is this one: mpiexec itself forks nothing but launcher commands. Start-up:
 *   1. listen on TCP (address from MANIFOLD_IF, port from MANIFOLD_PORT_RANGE);
 *   2. start the proxies of the first --launch-fanout hosts through the launcher command; each
 *      proxy, once it has its job description, starts the proxies of its own children (host i
 *      has children F*(i+1) ... F*(i+1)+F-1), so start-up takes log_F(hosts) launcher round trips;
 *   3. every proxy connects straight back here, proves it holds the job secret (given on the
 *      launcher's stdin, never on a command line) in the challenge-response of link_auth.h,
 *      checks our proof in turn, and gets its job description (jobdesc.h).
 * A connection that has not authenticated within MX_AUTH_TIMEOUT seconds is closed; at most
 * r_maxpend wait at once (a new one evicts the oldest, silent ones first); a refused one is closed
 * without a word and reported on stderr at most once per MX_REFUSE_REPORT seconds, with a count.
 * After that the proxies relay their ranks' PMI bytes, output and exits as frames (link.h), which
 * become the same calls local ranks cause (mx_pmi_feed, mx_stream_feed, mx_rank_exited): the PMI
 * server, output forwarding and the verdict on exits are shared with the single-host path.
 *
 * A host is lost — and the job ends with one line naming it — when its launcher command exits
 * before its proxy connected, when the connection breaks while ranks run there, when nothing is
 * heard from it for MANIFOLD_HOST_TIMEOUT seconds (both sides send a ping every second), or when
 * its proxy did not connect within MX_START_TIMEOUT seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ratelimit.h"
#include "link.h"
#include "link_auth.h"
#include "core/netif.h"
#include "mpiexec.h"

#define MX_START_TIMEOUT 30.0
#define MX_AUTH_TIMEOUT 5.0  /* seconds a new connection has to authenticate */
#define MX_REFUSE_REPORT 5.0 /* seconds between two reports of refused connections */
#define MX_ACCEPT_PAUSE 0.1  /* stop accepting this long after accept failed (EMFILE, ...) */
#define MX_PENDING_SPARE 32  /* unauthenticated connections allowed beyond one per host */
#define MX_PING_EVERY 1.0
#define MX_STDIN_WINDOW (1 << 20)

extern char **environ;

struct mx_host {
    int h_index;
    const char *h_name;
    int h_local; /* this machine (mx_host_is_local): its proxy starts without the launcher */
    mx_link h_link;
    int h_connected, h_lost;
    pid_t h_launcher; /* ours, or 0 */
    int *h_ranks;
    int h_nranks;
};

typedef struct mx_pending {
    mx_link p_link;
    mx_auth p_auth;
    double p_since;
    char p_peer[INET_ADDRSTRLEN + 8]; /* address:port, for the report of a refusal */
} mx_pending;

struct mx_remote {
    int r_listen;
    char r_addrs[512];
    int r_port;
    mx_host *r_hosts;
    int r_nhosts;
    mx_pending *r_pend;
    int r_npend, r_maxpend;
    const char **r_names;   /* host name by index: the proxies' identities */
    double r_accept_paused; /* until then the listener is not polled */
    double r_start_deadline;
    double r_timeout;
    int r_rank0_host;
};

/* Listens and fills r_addrs ("ip,ip,...": non-loopback first) and r_port. */
static int mx_remote_listen(struct mx_remote *rm, const char *control_if)
{
    const char *spec = control_if ? control_if : getenv("MANIFOLD_IF");
    const char *var = control_if ? "--control-if" : "MANIFOLD_IF";
    spec = spec ? spec : "";
    /* The library's selection (core/netif): the same interfaces, the same verdict on a bad
     * entry. */
    char bad[MF_NETIF_ENTRY_MAX + 1];
    if (!mf_netif_spec_ok(spec, bad, sizeof bad)) {
        fprintf(stderr,
                "mpiexec: %s='%s': entry '%s' is neither an interface name nor an "
                "IPv4 CIDR such as 10.1.0.0/16\n",
                var, spec, bad);
        return -1;
    }
    mf_netif ifs[32];
    int nfound = mf_netif_select(spec, ifs, 32);
    if (nfound < 0) {
        fprintf(stderr, "mpiexec: cannot list network interfaces: %s\n", strerror(errno));
        return -1;
    }
    char loop[128] = "";
    size_t used = 0;
    for (int i = 0; i < nfound; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &ifs[i].addr, ip, sizeof ip);
        if (ifs[i].loopback) {
            if (strlen(loop) + strlen(ip) + 2 < sizeof loop)
                snprintf(loop + strlen(loop), sizeof loop - strlen(loop), "%s%s", *loop ? "," : "",
                         ip);
        } else if (used + strlen(ip) + 2 < sizeof rm->r_addrs - sizeof loop) {
            used += (size_t)snprintf(rm->r_addrs + used, sizeof rm->r_addrs - used, "%s%s",
                                     used ? "," : "", ip);
        }
    }
    if (*loop)
        snprintf(rm->r_addrs + used, sizeof rm->r_addrs - used, "%s%s", used ? "," : "", loop);
    struct in_addr only = nfound > 0 ? ifs[nfound - 1].addr : (struct in_addr){0};
    if (nfound == 0) {
        fprintf(stderr,
                "mpiexec: %s='%s' matches no up IPv4 interface to listen on for "
                "the proxies\n",
                var, spec);
        return -1;
    }

    int lo = 0, hi = 0;
    const char *range = getenv("MANIFOLD_PORT_RANGE");
    if (range && *range) {
        char *end;
        long a = strtol(range, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (*end || a < 1 || b > 65535 || a > b) {
            fprintf(stderr, "mpiexec: MANIFOLD_PORT_RANGE='%s' is not LOW-HIGH\n", range);
            return -1;
        }
        lo = (int)a;
        hi = (int)b;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "mpiexec: socket: %s\n", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* One matching address: listen there only; several: everywhere, telling proxies which. */
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = (*spec && nfound == 1) ? only.s_addr : htonl(INADDR_ANY);
    int err = 0;
    if (lo == 0) {
        err = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
    } else {
        int span = hi - lo + 1, start = (int)(getpid() % span);
        err = EADDRINUSE;
        for (int i = 0; i < span && err; i++) {
            sa.sin_port = htons((uint16_t)(lo + (start + i) % span));
            err = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
        }
    }
    if (err || listen(fd, SOMAXCONN) != 0) {
        fprintf(stderr, "mpiexec: cannot listen for proxies%s: %s\n",
                lo ? " in MANIFOLD_PORT_RANGE" : "", strerror(err ? err : errno));
        close(fd);
        return -1;
    }
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    rm->r_listen = fd;
    rm->r_port = ntohs(sa.sin_port);
    return 0;
}

/* Single-quotes s for /bin/sh into out. */
static void mx_shquote(mx_strbuf *out, const char *s)
{
    char c[2] = {0, 0};
    out->len--; /* strip the NUL of the previous piece: this builds one string */
    mx_sb_str(out, "'");
    for (; *s; s++) {
        out->len--;
        if (*s == '\'') {
            mx_sb_str(out, "'\\''");
        } else {
            c[0] = *s;
            mx_sb_str(out, c);
        }
    }
    out->len--;
    mx_sb_str(out, "'");
}

static void mx_sb_cat(mx_strbuf *out, const char *s)
{
    out->len--;
    mx_sb_str(out, s);
}

pid_t mx_launch_proxy(const char *tmpl, const char *proxy_path, const char *addrs, int port,
                      int index, const char *host, const char *secret)
{
    mx_strbuf cmd = {0};
    mx_sb_str(&cmd, "");
    if (!tmpl) {
        /* this machine: the proxy itself */
    } else if (strstr(tmpl, "{host}")) {
        for (const char *p = tmpl; *p;) {
            if (!strncmp(p, "{host}", 6)) {
                mx_sb_cat(&cmd, host);
                p += 6;
            } else {
                char c[2] = {*p++, 0};
                mx_sb_cat(&cmd, c);
            }
        }
    } else {
        mx_sb_cat(&cmd, tmpl);
        mx_sb_cat(&cmd, " ");
        mx_sb_cat(&cmd, host);
    }
    char num[64];
    mx_sb_cat(&cmd, tmpl ? " " : "exec ");
    mx_shquote(&cmd, proxy_path);
    mx_sb_cat(&cmd, " --proxy ");
    mx_shquote(&cmd, addrs);
    snprintf(num, sizeof num, " %d %d ", port, index);
    mx_sb_cat(&cmd, num);
    mx_shquote(&cmd, host);
    if (cmd.failed)
        return -1;

    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) {
        free(cmd.b);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Own process group: a terminal's ^C reaches mpiexec, which ends the job in order. */
        (void)setpgid(0, 0);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        dup2(in[0], 0);
        dup2(2, 1); /* launcher chatter (ssh banners) must not mix with the job's stdout */
        sigprocmask(SIG_SETMASK, &mx_orig_sigmask, NULL);
        signal(SIGPIPE, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd.b, (char *)NULL);
        _exit(MX_EXIT_NOTFOUND);
    }
    free(cmd.b);
    close(in[0]);
    if (pid > 0) {
        char line[128];
        int n = snprintf(line, sizeof line, "%s\n", secret);
        (void)!write(in[1], line, (size_t)n); /* fits the pipe buffer: never blocks */
    }
    close(in[1]);
    return pid;
}

static const char *mx_launcher_tmpl(const mx_options *opt)
{
    return opt->launcher ? opt->launcher : "ssh -o BatchMode=yes -x {host}";
}

/* Whether `name` is this machine: "localhost", our host name (or its first label, or a name
 * whose first label is our host name), or a literal address of one of our interfaces. Only
 * these textual checks: no name lookup, which could stall on a slow resolver. A "user@host"
 * entry asks for a login, so it is never local. */
static int mx_host_is_local(const char *name)
{
    char self[256] = "";
    if (strchr(name, '@'))
        return 0;
    if (!strcmp(name, "localhost") || !strcmp(name, "localhost.localdomain"))
        return 1;
    if (gethostname(self, sizeof self - 1) == 0 && *self) {
        size_t ls = strcspn(self, "."), ln = strcspn(name, ".");
        if (!strcmp(name, self) || (!name[ln] && ln == ls && !strncmp(name, self, ls)) ||
            (!self[ls] && ln == ls && !strncmp(name, self, ln)))
            return 1;
    }
    unsigned char want[16];
    int fam = inet_pton(AF_INET, name, want) == 1    ? AF_INET
              : inet_pton(AF_INET6, name, want) == 1 ? AF_INET6
                                                     : 0;
    if (!fam)
        return 0;
    if (fam == AF_INET && want[0] == 127)
        return 1;
    int found = 0;
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
            continue;
        const void *a = fam == AF_INET
                            ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        found = memcmp(a, want, fam == AF_INET ? 4 : 16) == 0;
    }
    freeifaddrs(ifs);
    return found;
}

static char mx_self_path[4096];

static const char *mx_proxy_path(const mx_options *opt)
{
    if (opt->proxy_path)
        return opt->proxy_path;
    if (!*mx_self_path) {
        ssize_t n = readlink("/proc/self/exe", mx_self_path, sizeof mx_self_path - 1);
        if (n <= 0)
            snprintf(mx_self_path, sizeof mx_self_path, "mpiexec");
        else
            mx_self_path[n] = '\0';
    }
    return mx_self_path;
}

static void mx_host_lost(mx_job *job, mx_host *h, const char *fmt, const char *detail)
{
    if (h->h_lost)
        return;
    h->h_lost = 1;
    int running = 0;
    for (int k = 0; k < h->h_nranks; k++)
        running += job->ranks[h->h_ranks[k]].alive;
    mx_link_close(&h->h_link);
    if (!running && h->h_connected)
        return; /* its work is done: a closing proxy is no loss */
    char why[256];
    snprintf(why, sizeof why, fmt, detail);
    mx_job_blame(job, MX_CAUSE_EXIT, 1, "mpiexec: lost host %s (%s); ending the job", h->h_name,
                 why);
    for (int k = 0; k < h->h_nranks; k++) {
        mx_rank *r = &job->ranks[h->h_ranks[k]];
        r->alive = 0;
        mx_pmi_close(job, r);
        mx_stream_close(job, r, &r->out);
        mx_stream_close(job, r, &r->err);
    }
}

static void mx_str_env(mx_strbuf *sb, const mx_options *opt)
{
    static const char *const skip[] = {"HOSTNAME=",
                                       "HOST=",
                                       "SSH_",
                                       "DISPLAY=",
                                       "PWD=",
                                       "OLDPWD=",
                                       "SHLVL=",
                                       "_=",
                                       "PMI_",
                                       "MANIFOLD_LOCAL_",
                                       "MANIFOLD_JOB_SECRET=",
                                       "MANIFOLD_HOSTNAME=",
                                       NULL};
    int n = 0;
    for (char **e = environ; *e; e++) {
        int keep = strchr(*e, '=') != NULL;
        for (int k = 0; skip[k] && keep; k++)
            keep = strncmp(*e, skip[k], strlen(skip[k])) != 0;
        n += keep;
    }
    mx_sb_int(sb, n + opt->nenvs);
    for (char **e = environ; *e; e++) {
        int keep = strchr(*e, '=') != NULL;
        for (int k = 0; skip[k] && keep; k++)
            keep = strncmp(*e, skip[k], strlen(skip[k])) != 0;
        if (keep)
            mx_sb_str(sb, *e);
    }
    for (int i = 0; i < opt->nenvs; i++) { /* -x/-genv last: they win */
        const char *v = opt->envs[i].value ? opt->envs[i].value : getenv(opt->envs[i].name);
        mx_strbuf one = {0};
        mx_sb_str(&one, opt->envs[i].name);
        mx_sb_cat(&one, "=");
        mx_sb_cat(&one, v ? v : "");
        mx_sb_str(sb, one.failed ? "MANIFOLD_UNUSED_=" : one.b);
        free(one.b);
    }
}

static void mx_send_job(mx_job *job, mx_host *h)
{
    const mx_options *opt = job->opt;
    struct mx_remote *rm = job->rm;
    mx_strbuf sb = {0};
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    mx_sb_str(&sb, "mfjob2"); /* format: jobdesc.h */
    mx_sb_str(&sb, job->kvsname);
    mx_sb_int(&sb, job->size);
    mx_sb_int(&sb, opt->bind_core);
    mx_sb_int(&sb, opt->report_bindings);
    mx_sb_int(&sb, job->stdin_to_rank0);
    mx_sb_str(&sb, cwd);
    mx_str_env(&sb, opt);
    mx_sb_int(&sb, opt->napps);
    for (int a = 0; a < opt->napps; a++) {
        int argc = 0;
        while (opt->apps[a].argv[argc])
            argc++;
        mx_sb_int(&sb, argc);
        for (int k = 0; k < argc; k++)
            mx_sb_str(&sb, opt->apps[a].argv[k]);
        mx_sb_int(&sb, opt->apps[a].nenvs);
        for (int k = 0; k < opt->apps[a].nenvs; k++) {
            mx_sb_str(&sb, opt->apps[a].envs[k].name);
            mx_sb_str(&sb, opt->apps[a].envs[k].value);
        }
    }
    mx_sb_int(&sb, h->h_nranks);
    for (int k = 0; k < h->h_nranks; k++) {
        mx_sb_int(&sb, h->h_ranks[k]);
        mx_sb_int(&sb, job->ranks[h->h_ranks[k]].app);
    }
    mx_sb_str(&sb, mx_launcher_tmpl(opt));
    mx_sb_str(&sb, mx_proxy_path(opt));
    int first = opt->fanout * (h->h_index + 1), nkids = 0;
    for (int c = first; c < first + opt->fanout && c < rm->r_nhosts; c++)
        nkids += !rm->r_hosts[c].h_local; /* mpiexec started the local ones itself */
    mx_sb_int(&sb, nkids);
    for (int c = first; c < first + opt->fanout && c < rm->r_nhosts; c++) {
        if (rm->r_hosts[c].h_local)
            continue;
        mx_sb_int(&sb, c);
        mx_sb_str(&sb, rm->r_hosts[c].h_name);
    }
    if (sb.failed || mx_link_send(&h->h_link, MX_M_JOB, 0, sb.b, sb.len) != 0)
        mx_host_lost(job, h, "%s", "out of memory for its job description");
    free(sb.b);
}

int mx_remote_start(mx_job *job)
{
    const mx_options *opt = job->opt;
    struct mx_remote *rm = calloc(1, sizeof *rm);
    int *host_of = calloc((size_t)job->n, sizeof *host_of);
    if (!rm || !host_of)
        goto nomem;
    job->rm = rm;
    rm->r_listen = -1;
    rm->r_nhosts = opt->nhosts;
    rm->r_timeout = mx_host_timeout();
    rm->r_hosts = calloc((size_t)opt->nhosts, sizeof *rm->r_hosts);
    rm->r_maxpend = opt->nhosts + MX_PENDING_SPARE;
    rm->r_pend = calloc((size_t)rm->r_maxpend, sizeof *rm->r_pend);
    rm->r_names = calloc((size_t)opt->nhosts, sizeof *rm->r_names);
    if (!rm->r_hosts || !rm->r_pend || !rm->r_names)
        goto nomem;
    if (mf_auth_init() != 0) {
        free(host_of);
        fprintf(stderr, "mpiexec: libsodium cannot start (no entropy source?)\n");
        return 1;
    }
    if (mx_hosts_map(opt, host_of) != 0) {
        free(host_of);
        return MX_EXIT_USAGE;
    }
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_host *host = &rm->r_hosts[h];
        host->h_index = h;
        host->h_name = rm->r_names[h] = opt->hosts[h].name;
        host->h_link.l_fd = -1;
        host->h_local = !opt->launcher && mx_host_is_local(host->h_name);
        if (!(host->h_ranks = calloc((size_t)job->n, sizeof *host->h_ranks)))
            goto nomem;
    }
    for (int i = 0; i < job->n; i++) {
        mx_rank *r = &job->ranks[i];
        mx_host *host = &rm->r_hosts[host_of[i]];
        r->remote = host;
        r->host = host->h_name;
        r->local = host->h_nranks;
        r->alive = 1; /* until its proxy reports the exit (or the host is lost) */
        r->pmi_fd = MX_FD_REMOTE;
        host->h_ranks[host->h_nranks++] = i;
        if (mx_stream_init(&r->out, -1, 1) || mx_stream_init(&r->err, -1, 2))
            goto nomem;
    }
    for (int i = 0; i < job->n; i++)
        job->ranks[i].nlocal = ((mx_host *)job->ranks[i].remote)->h_nranks;
    rm->r_rank0_host = host_of[0];
    if (job->stdin_to_rank0)
        job->stdin_src = 0; /* read once rank 0's proxy is connected (mx_remote_stdin_room) */
    free(host_of);
    host_of = NULL;
    if (mx_remote_listen(rm, job->opt->control_if) != 0)
        return 1;
    rm->r_start_deadline = mx_now() + MX_START_TIMEOUT;
    /* The top of the launch tree, and every host that is this machine (started here, without
     * ssh, whatever its place in the tree). */
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_host *host = &rm->r_hosts[h];
        if (h >= opt->fanout && !host->h_local)
            continue;
        host->h_launcher =
            mx_launch_proxy(host->h_local ? NULL : mx_launcher_tmpl(opt), mx_proxy_path(opt),
                            rm->r_addrs, rm->r_port, h, host->h_name, job->secret);
        if (host->h_launcher < 0) {
            fprintf(stderr, "mpiexec: cannot start the launcher for host %s: %s\n", host->h_name,
                    strerror(errno));
            mx_remote_signal(job, SIGKILL);
            return 1;
        }
    }
    return 0;
nomem:
    free(host_of);
    fprintf(stderr, "mpiexec: out of memory for %d hosts\n", opt->nhosts);
    return 1;
}

size_t mx_remote_maxfds(mx_job *job)
{
    return 1 + (size_t)job->rm->r_nhosts + (size_t)job->rm->r_maxpend;
}

size_t mx_remote_pollfds(mx_job *job, struct pollfd *pfd, int *idx)
{
    struct mx_remote *rm = job->rm;
    size_t n = 0;
    if (rm->r_listen >= 0 && mx_now() >= rm->r_accept_paused) {
        pfd[n] = (struct pollfd){.fd = rm->r_listen, .events = POLLIN};
        idx[n++] = -1;
    }
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_link *l = &rm->r_hosts[h].h_link;
        if (l->l_fd >= 0) {
            pfd[n] = (struct pollfd){.fd = l->l_fd,
                                     .events = POLLIN | (mx_link_pending(l) ? POLLOUT : 0)};
            idx[n++] = h;
        }
    }
    for (int p = 0; p < rm->r_npend; p++) {
        pfd[n] = (struct pollfd){.fd = rm->r_pend[p].p_link.l_fd, .events = POLLIN};
        idx[n++] = rm->r_nhosts + p;
    }
    return n;
}

static void mx_pending_drop(struct mx_remote *rm, int p)
{
    mx_link_close(&rm->r_pend[p].p_link);
    rm->r_pend[p] = rm->r_pend[--rm->r_npend];
}

/* Closes a connection that failed to authenticate, reporting it (rate-limited). */
static void mx_pending_refuse(struct mx_remote *rm, int p, const char *why)
{
    static mf_ratelimit rl = MF_RATELIMIT_INIT(MX_REFUSE_REPORT);
    unsigned held;
    if (mf_ratelimit_pass(&rl, mx_now(), &held))
        fprintf(stderr,
                "mpiexec: warning: refused a connection from %s (%s); %u more refused since the "
                "last report\n",
                rm->r_pend[p].p_peer, why, held);
    mx_pending_drop(rm, p);
}

/* A new connection: the authentication of link_auth.h, then it becomes its host's link. */
static void mx_pending_event(mx_job *job, int p)
{
    struct mx_remote *rm = job->rm;
    mx_pending *pe = &rm->r_pend[p];
    mx_link *l = &pe->p_link;
    int type, got, step = MX_AUTH_MORE;
    int32_t arg;
    const char *data;
    size_t len;
    if (mx_link_read(l) != 0) {
        mx_pending_drop(rm, p); /* a stranger that gave up, or a port scan: not worth a word */
        return;
    }
    while (step == MX_AUTH_MORE && (got = mx_link_next(l, &type, &arg, &data, &len)) != 0) {
        mx_auth_out out;
        step = got < 0 ? MX_AUTH_FAIL : mx_auth_feed(&pe->p_auth, type, arg, data, len, &out);
        if (step == MX_AUTH_FAIL) {
            mx_pending_refuse(rm, p, got < 0 ? "malformed frame" : "no proof of the job secret");
            return;
        }
        if (step == MX_AUTH_DONE && rm->r_hosts[pe->p_auth.a_index].h_lost) {
            mx_pending_refuse(rm, p, "a connection for a host already lost");
            return;
        }
        (void)mx_link_send(l, out.o_type, out.o_arg, out.o_data, out.o_len);
    }
    if (step != MX_AUTH_DONE)
        return;
    mx_host *h = &rm->r_hosts[pe->p_auth.a_index];
    if (h->h_connected) {
        /* The proxy lost its connection (a network went away) and came back, possibly over
         * another network: the new connection replaces the old, nothing lost (link.h). */
        char where[sizeof pe->p_peer];
        snprintf(where, sizeof where, "%s", pe->p_peer);
        if (mx_link_adopt(&h->h_link, l) != 0) {
            mx_pending_refuse(rm, p, "out of memory");
            return;
        }
        rm->r_pend[p] = rm->r_pend[--rm->r_npend];
        fprintf(stderr, "mpiexec: the link to host %s resumed over a new connection (from %s)\n",
                h->h_name, where);
        return;
    }
    h->h_link = *l; /* moves the buffers with anything queued or received */
    h->h_link.l_max = MX_LINK_MAX;
    mx_link_resumable(&h->h_link);
    h->h_connected = 1;
    rm->r_pend[p] = rm->r_pend[--rm->r_npend];
    mx_send_job(job, h);
}

static mx_rank *mx_host_rank(mx_job *job, mx_host *h, int32_t rank)
{
    if (rank < 0 || rank >= job->n || job->ranks[rank].remote != h) {
        mx_host_lost(job, h, "%s", "its proxy sent a frame for a rank it does not run");
        return NULL;
    }
    return &job->ranks[rank];
}

static void mx_host_frame(mx_job *job, mx_host *h, int type, int32_t arg, const char *data,
                          size_t len)
{
    struct mx_remote *rm = job->rm;
    char text[2048];
    mx_rank *r;
    long num;
    switch (type) {
    case MX_M_PMI:
        if ((r = mx_host_rank(job, h, arg)) && r->alive)
            mx_pmi_feed(job, r, data, len);
        break;
    case MX_M_OUT:
    case MX_M_ERR:
        if ((r = mx_host_rank(job, h, arg)))
            mx_stream_feed(job, r, type == MX_M_OUT ? &r->out : &r->err, data, len);
        break;
    case MX_M_STARTED:
    case MX_M_EXIT:
        if (!(r = mx_host_rank(job, h, arg)) || !r->alive)
            break;
        if (mx_frame_int(data, len, type == MX_M_STARTED ? 1 : INT_MIN, INT_MAX, &num) != 0)
            mx_host_lost(job, h, "%s", "its proxy sent a malformed message");
        else if (type == MX_M_STARTED)
            r->pid = (pid_t)num;
        else
            mx_rank_exited(job, r, (int)num);
        break;
    case MX_M_SAY:
        snprintf(text, sizeof text - 1, "%.*s",
                 (int)(len < sizeof text - 2 ? len : sizeof text - 2), data);
        strcat(text, "\n");
        mx_write_all(2, text, strlen(text));
        break;
    case MX_M_FAILED:
        /* The proxy said why; ranks it never started will not report an exit. */
        if (!job->ending)
            mx_job_end(job, arg > 0 && arg < 256 ? arg : 1, SIGTERM, NULL);
        for (int k = 0; k < h->h_nranks; k++) {
            mx_rank *q = &job->ranks[h->h_ranks[k]];
            if (q->alive && q->pid == 0) {
                q->alive = 0;
                mx_pmi_close(job, q);
                mx_stream_close(job, q, &q->out);
                mx_stream_close(job, q, &q->err);
            }
        }
        break;
    case MX_M_LAUNCHED:
        if (mx_frame_int(data, len, INT_MIN, INT_MAX, &num) != 0) {
            mx_host_lost(job, h, "%s", "its proxy sent a malformed message");
        } else if (arg >= 0 && arg < rm->r_nhosts && !rm->r_hosts[arg].h_connected) {
            int st = (int)num;
            snprintf(text, sizeof text, "%d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            mx_host_lost(job, &rm->r_hosts[arg],
                         "its proxy could not be started: the launcher command exited with status "
                         "%s",
                         text);
        }
        break;
    case MX_M_PING:
        break;
    default:
        mx_host_lost(job, h, "%s", "its proxy sent an unexpected message");
    }
}

/* Takes the connections waiting on the listener, each as a pending link. */
static void mx_accept(mx_job *job)
{
    static mf_ratelimit rl = MF_RATELIMIT_INIT(MX_REFUSE_REPORT);
    struct mx_remote *rm = job->rm;
    for (int k = 0; k < 64; k++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(rm->r_listen, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
                return;
            /* Out of descriptors (or memory): the connection stays queued and poll would report
             * it again at once. Pause the listener instead of spinning. */
            unsigned held;
            if (mf_ratelimit_pass(&rl, mx_now(), &held))
                fprintf(stderr, "mpiexec: warning: cannot accept a connection: %s (%u more)\n",
                        strerror(errno), held);
            rm->r_accept_paused = mx_now() + MX_ACCEPT_PAUSE;
            return;
        }
        if (rm->r_npend == rm->r_maxpend) {
            /* A flood of strangers: the oldest goes, preferably one that has not even said a
             * valid HELLO (a genuine proxy says it at once, so a flood cannot starve it). */
            int victim = 0;
            for (int p = 1; p < rm->r_npend; p++) {
                int vs = rm->r_pend[victim].p_auth.a_step, ps = rm->r_pend[p].p_auth.a_step;
                if (ps < vs || (ps == vs && rm->r_pend[p].p_since < rm->r_pend[victim].p_since))
                    victim = p;
            }
            mx_pending_drop(rm, victim);
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        mx_pending *pe = &rm->r_pend[rm->r_npend++];
        mx_link_init(&pe->p_link, fd);
        pe->p_link.l_max = MX_AUTH_FRAME_MAX;
        mx_auth_responder(&pe->p_auth, &job->key, rm->r_names, rm->r_nhosts);
        pe->p_since = mx_now();
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(pe->p_peer, sizeof pe->p_peer, "%s:%d", ip, ntohs(sa.sin_port));
    }
}

void mx_remote_event(mx_job *job, int idx, short revents)
{
    struct mx_remote *rm = job->rm;
    if (idx < 0) {
        mx_accept(job);
        return;
    }
    if (idx >= rm->r_nhosts) {
        mx_pending_event(job, idx - rm->r_nhosts);
        return;
    }
    mx_host *h = &rm->r_hosts[idx];
    if ((revents & POLLOUT) && mx_link_flush(&h->h_link) != 0) {
        mx_host_lost(job, h, "%s", "the connection to its proxy broke");
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    int eof = mx_link_read(&h->h_link) != 0;
    int type, got;
    int32_t arg;
    const char *data;
    size_t len;
    while (!h->h_lost && (got = mx_link_next(&h->h_link, &type, &arg, &data, &len)) != 0) {
        if (got < 0) {
            mx_host_lost(job, h, "%s", "its proxy sent a malformed message");
            return;
        }
        mx_host_frame(job, h, type, arg, data, len);
    }
    if (eof)
        mx_host_lost(job, h, "%s", "the connection to its proxy closed");
}

void mx_remote_tick(mx_job *job, double now, int *wait_ms)
{
    struct mx_remote *rm = job->rm;
    int unconnected = 0;
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_host *host = &rm->r_hosts[h];
        if (host->h_lost)
            continue;
        if (!host->h_connected) {
            unconnected++;
            if (now >= rm->r_start_deadline) {
                char t[32];
                snprintf(t, sizeof t, "%g", MX_START_TIMEOUT);
                mx_host_lost(job, host, "its proxy did not connect within %s seconds", t);
            }
            continue;
        }
        if (now - host->h_link.l_last_tx >= MX_PING_EVERY)
            (void)mx_link_send(&host->h_link, MX_M_PING, 0, NULL, 0);
        if (now - host->h_link.l_last_rx >= rm->r_timeout) {
            char t[32];
            snprintf(t, sizeof t, "%g", rm->r_timeout);
            mx_host_lost(job, host, "nothing heard from it for %s seconds (MANIFOLD_HOST_TIMEOUT)",
                         t);
        }
    }
    for (int p = 0; p < rm->r_npend;) { /* a connection that does not authenticate in time */
        if (now - rm->r_pend[p].p_since > MX_AUTH_TIMEOUT)
            mx_pending_refuse(rm, p, "did not authenticate in time");
        else
            p++;
    }
    int ms = unconnected || rm->r_npend || now < rm->r_accept_paused
                 ? 100
                 : (int)(MX_PING_EVERY * 1000 / 2);
    if (*wait_ms < 0 || ms < *wait_ms)
        *wait_ms = ms;
}

int mx_remote_child_exited(mx_job *job, pid_t pid, int status)
{
    struct mx_remote *rm = job->rm;
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_host *host = &rm->r_hosts[h];
        if (host->h_launcher != pid)
            continue;
        host->h_launcher = 0;
        if (!host->h_connected) {
            char t[32];
            snprintf(t, sizeof t, "%d",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            mx_host_lost(job, host,
                         "its proxy could not be started: the launcher command exited with "
                         "status %s",
                         t);
        }
        return 1;
    }
    return 0;
}

void mx_remote_signal(mx_job *job, int sig)
{
    struct mx_remote *rm = job->rm;
    for (int h = 0; h < rm->r_nhosts; h++)
        if (rm->r_hosts[h].h_connected && !rm->r_hosts[h].h_lost)
            (void)mx_link_send(&rm->r_hosts[h].h_link, MX_M_SIGNAL, sig, NULL, 0);
    if (sig == SIGKILL) /* launchers of proxies that never connected */
        for (int h = 0; h < rm->r_nhosts; h++)
            if (rm->r_hosts[h].h_launcher > 0 && !rm->r_hosts[h].h_connected)
                (void)kill(-rm->r_hosts[h].h_launcher, SIGKILL);
}

void mx_remote_stacks(mx_job *job)
{
    struct mx_remote *rm = job->rm;
    for (int h = 0; h < rm->r_nhosts; h++)
        if (rm->r_hosts[h].h_connected && !rm->r_hosts[h].h_lost)
            (void)mx_link_send(&rm->r_hosts[h].h_link, MX_M_STACKS, 0, NULL, 0);
}

int mx_remote_stdin_room(mx_job *job)
{
    mx_host *h = &job->rm->r_hosts[job->rm->r_rank0_host];
    return h->h_connected && !h->h_lost && mx_link_pending(&h->h_link) < MX_STDIN_WINDOW;
}

void mx_remote_stdin(mx_job *job, const char *data, size_t len)
{
    mx_host *h = &job->rm->r_hosts[job->rm->r_rank0_host];
    (void)mx_link_send(&h->h_link, MX_M_STDIN, 0, data, len);
}

void mx_remote_pmi_reply(mx_job *job, mx_rank *r, const char *line, size_t len)
{
    (void)mx_link_send(&r->remote->h_link, MX_M_PMI, r->rank, line, len);
}

void mx_remote_finish(mx_job *job)
{
    struct mx_remote *rm = job->rm;
    /* Closing the links tells every proxy the job is over; give the launchers a moment to
     * notice, then make sure none is left. */
    for (int h = 0; h < rm->r_nhosts; h++) {
        mx_link_close(&rm->r_hosts[h].h_link);
        free(rm->r_hosts[h].h_ranks);
    }
    for (int p = 0; p < rm->r_npend; p++)
        mx_link_close(&rm->r_pend[p].p_link);
    if (rm->r_listen >= 0)
        close(rm->r_listen);
    double until = mx_now() + 2.0;
    for (;;) {
        int left = 0;
        for (int h = 0; h < rm->r_nhosts; h++) {
            pid_t p = rm->r_hosts[h].h_launcher;
            if (p > 0 && waitpid(p, NULL, WNOHANG) == 0)
                left++;
            else
                rm->r_hosts[h].h_launcher = 0;
        }
        if (!left)
            break;
        if (mx_now() >= until) {
            for (int h = 0; h < rm->r_nhosts; h++)
                if (rm->r_hosts[h].h_launcher > 0) {
                    (void)kill(-rm->r_hosts[h].h_launcher, SIGKILL);
                    (void)waitpid(rm->r_hosts[h].h_launcher, NULL, 0);
                }
            break;
        }
        usleep(10000);
    }
    free(rm->r_hosts);
    free(rm->r_pend);
    free(rm->r_names);
    free(rm);
    job->rm = NULL;
}
