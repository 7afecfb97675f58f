/*
 * options.c — mpiexec's command line.
 *
 * Options come before the program; the first argument that is not an option (or everything after
 * `--`) is the program and its arguments, passed untouched. Every error names the offending
 * argument and exits with status 2; nothing is guessed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config_spec.h"
#include "mpiexec.h"

#ifndef MANIFOLD_VERSION_STRING
#define MANIFOLD_VERSION_STRING "unknown"
#endif
#ifndef MX_FABRICS
#define MX_FABRICS ""
#endif

static const char mx_help[] =
    "Usage: mpiexec [options] program [args...] [: [-n N] [-env VAR VALUE] program [args...]]...\n"
    "       mpirun  [options] program [args...]\n"
    "\n"
    "Starts N copies of program as one MPI job, on this host or on the hosts given. Programs\n"
    "separated by ':' form one job (MPMD); ranks are numbered program by program and each learns\n"
    "its program's index as MPI_APPNUM.\n"
    "\n"
    "Options:\n"
    "  -n N, -np N           number of processes (default 1)\n"
    "  -x VAR                forward VAR's current value (the whole environment is forwarded\n"
    "                        anyway; -x makes it explicit and checks that VAR is set)\n"
    "  -x VAR=VALUE          set VAR to VALUE in every process\n"
    "  -genv VAR VALUE       same as -x VAR=VALUE (MPICH spelling)\n"
    "  -env VAR VALUE        set VAR for the processes of this program only (MPMD)\n"
    "  -l, --tag-output      prefix every output line with \"[rank] \"\n"
    "  --timeout SECS        end the job after SECS seconds (exit status 124);\n"
    "                        the environment variable MPIEXEC_TIMEOUT does the same\n"
    "  --get-stack-traces    when the timeout ends the job, first print the stack of every\n"
    "                        thread of each process (with gdb, a few seconds per process)\n"
    "  --oversubscribe       accepted for compatibility: more processes than cores is always\n"
    "                        allowed; it is detected and processes are told to yield the CPU\n"
    "  --bind-to core|none   pin local rank i of each host to core i (default none)\n"
    "  --report-bindings     print one line per rank saying where it is bound\n"
    "  --fabric F            the network fabric(s) for point-to-point traffic: tcp, sctp, ofi,\n"
    "                        or the full MANIFOLD_FABRIC grammar (e.g. tcp:eth0,tcp:eth1 for\n"
    "                        two rails); same as MANIFOLD_FABRIC=F (docs/FABRICS.md)\n"
    "  --rma-fabric F        the fabric(s) for one-sided traffic; same as MANIFOLD_RMA_FABRIC=F\n"
    "  --initial-errhandler H  the handler of errors before MPI_Init, after MPI_Finalize, and\n"
    "                        the one MPI_COMM_WORLD and MPI_COMM_SELF start with (MPI-4.0):\n"
    "                        mpi_errors_are_fatal (default), mpi_errors_abort, mpi_errors_return\n"
    "  --memory-alloc-kinds K  the kinds of memory the program will give MPI (MPI-4.1), e.g.\n"
    "                        system,mpi; same as MANIFOLD_MEMORY_ALLOC_KINDS=K\n"
    "  --report-fabrics      at the end, once per job: the fabric instances used per host pair\n"
    "                        and function, and what each carried (same as MANIFOLD_REPORT=fabrics)\n"
    "\n"
    "Hosts (docs/CLUSTER.md):\n"
    "  --host H1[:S],H2[:S]  run on these hosts, S slots each (default 1); -H is the same\n"
    "  --hostfile FILE       hosts from FILE, one per line: \"host slots=N\" ('#' comments)\n"
    "  --map-by slot|node|ppr:N:node\n"
    "                        fill each host's slots in turn (slot, the default), one rank per host\n"
    "                        in turn (node), or N ranks per host (ppr). Without -n the job has one\n"
    "                        rank per slot (N per host with ppr)\n"
    "  --launcher CMD        how to start the proxy on a host: CMD with {host} replaced by the\n"
    "                        host name (appended if absent) followed by the proxy's command line,\n"
    "                        run by /bin/sh; default \"ssh -o BatchMode=yes -x {host}\", and none\n"
    "                        for this machine (localhost, its name or address). Example:\n"
    "                        --launcher 'ip netns exec {host} env'\n"
    "  --proxy-path PATH     mpiexec to run on the hosts (default: this one's absolute path)\n"
    "  --launch-fanout N     each proxy starts at most N further proxies (a tree; default 32)\n"
    "  --control-if IFS      the interfaces (names or CIDRs, comma-separated) mpiexec listens on\n"
    "                        for its proxies, instead of MANIFOLD_IF's\n"
    "  mpiexec listens for its proxies on the addresses MANIFOLD_IF (or --control-if) selects (by\n"
    "  name or CIDR; default all interfaces), on a port in MANIFOLD_PORT_RANGE if set. A proxy\n"
    "  that hears nothing for 3 seconds connects again over the next of these addresses and its\n"
    "  link resumes where it was, so naming two networks lets the job survive losing either. A\n"
    "  host whose proxy cannot be started, disconnects or stays silent for MANIFOLD_HOST_TIMEOUT\n"
    "  seconds ends the job with a line naming the host.\n"
    "\n"
    "Other:\n"
    "  --info                list Manifold's environment variables with their current values\n"
    "                        and the values each accepts, the version and the fabrics built in.\n"
    "                        mpiexec refuses a value that is not accepted (from the environment,\n"
    "                        -x, -genv or -env) before any process starts\n"
    "  --version             print the version\n"
    "  -h, --help            this text\n"
    "  --                    end of options\n"
    "\n"
    "Processes:\n"
    "  Every process gets the whole environment plus PMI_FD, PMI_RANK, PMI_SIZE (PMI-1),\n"
    "  MANIFOLD_LOCAL_RANK, MANIFOLD_LOCAL_SIZE, MANIFOLD_JOB_SECRET, and MANIFOLD_OVERSUBSCRIBED=1\n"
    "  when its host runs more processes than it has usable cores. On other hosts, mpiexec's\n"
    "  environment is forwarded (without host-specific variables such as HOSTNAME and SSH_*),\n"
    "  the working directory is mpiexec's, and MANIFOLD_HOSTNAME names the host. Where a host\n"
    "  has a usable core for each of its processes, each leads a session of its own, so that the\n"
    "  scheduler weighs it like any other session's process; otherwise the host's processes share\n"
    "  one process group. None outlives mpiexec.\n"
    "\n"
    "Input and output:\n"
    "  stdin goes to rank 0 only (the others read /dev/null). stdout and stderr of every rank go\n"
    "  to mpiexec's stdout and stderr in whole lines, never mixed within a line; a last line\n"
    "  without newline is written when the process ends (with --tag-output a newline is added).\n"
    "\n"
    "Ending:\n"
    "  The job ends when every process has exited. The first process to fail -- a non-zero exit\n"
    "  code, death by a signal, MPI_Abort, or exit 0 after MPI_Init but without MPI_Finalize --\n"
    "  ends the whole job: mpiexec prints one line naming the rank, sends SIGTERM to the others\n"
    "  and SIGKILL one second later. SIGINT, SIGTERM and SIGHUP sent to mpiexec are forwarded to\n"
    "  all processes the same way (a second one kills at once).\n"
    "\n"
    "Exit status:\n"
    "  0        success\n"
    "  N        exit code (or MPI_Abort code) of the process blamed: of the failures seen within\n"
    "           0.5 s of the first, a death by signal before an exit before an MPI_Abort\n"
    "  128+S    the process blamed died of signal S, or mpiexec got signal S\n"
    "  1        exit 0 without MPI_Finalize, a PMI protocol error, or an mpiexec failure\n"
    "  2        bad command line\n"
    "  124      timeout\n"
    "  126/127  program not executable / not found\n";

static int mx_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(mpiexec --help lists the options)\n");
    return -1;
}

/* An integer in [1, 1000000]: digits only (no sign, blanks or junk). */
static int mx_parse_np(const char *s, int *out)
{
    long long v;
    if (*s == '-' || mf_config_parse_long(s, &v) != 0 || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

/* Seconds as --timeout and MPIEXEC_TIMEOUT take them: the same check as the variable's. */
static int mx_parse_seconds(const char *s, double *out)
{
    return mf_config_parse_seconds(s, 1e9, out);
}

static int mx_env_name_ok(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '=' || s[i] == '\0')
            return 0;
    return 1;
}

static int mx_add_env(mx_options *opt, const char *name, size_t namelen, const char *value)
{
    mx_envset *n = realloc(opt->envs, (size_t)(opt->nenvs + 1) * sizeof *n);
    if (!n)
        return -1;
    opt->envs = n;
    n[opt->nenvs].name = strndup(name, namelen);
    n[opt->nenvs].value = value ? strdup(value) : NULL;
    if (!n[opt->nenvs].name || (value && !n[opt->nenvs].value))
        return -1;
    opt->nenvs++;
    return 0;
}

static void mx_print_info(void)
{
    printf("Manifold %s\n", MANIFOLD_VERSION_STRING);
    printf("fabrics built in: %s\n", *MX_FABRICS ? MX_FABRICS : "(none yet)");
    printf("launcher: mpiexec (PMI-1 server; hosts through ssh or --launcher, one proxy per host); "
           "library also runs under MPICH Hydra (PMI-1) and as a singleton\n\n");
    printf("Environment variables (value now; default; meaning; accepted values):\n");
    for (size_t i = 0; i < MF_CONFIG_NVARS; i++) {
        const mf_config_var *c = &mf_config_vars[i];
        const char *v = getenv(c->name);
        char accepted[256];
        mf_config_value_ok(c->check, "", accepted, sizeof accepted);
        printf("  %-26s %s%s%s; default \"%s\"\n      %s\n      accepted: %s\n", c->name,
               v ? "\"" : "", v ? v : "(unset)", v ? "\"" : "", c->def, c->meaning, accepted);
    }
}

/* The value a rank of `app` gets for `name`: the last -x/-genv, then -env, else ours. */
static const char *mx_effective(const mx_options *opt, const mx_app *app, const char *name)
{
    const char *v = getenv(name);
    for (int i = 0; i < opt->nenvs; i++)
        if (strcmp(opt->envs[i].name, name) == 0 && opt->envs[i].value)
            v = opt->envs[i].value;
    for (int i = 0; i < app->nenvs; i++)
        if (strcmp(app->envs[i].name, name) == 0)
            v = app->envs[i].value;
    return v;
}

/* Refuses, before any rank starts, a value of one of the library's variables that MPI_Init
 * would refuse (config_spec.h): every rank of every program gets what it is checked against. */
static int mx_check_settings(const mx_options *opt)
{
    char msg[512];
    for (int a = 0; a < opt->napps; a++)
        for (size_t i = 0; i < MF_CONFIG_NVARS; i++)
            if (!mf_config_check_one(&mf_config_vars[i],
                                     mx_effective(opt, &opt->apps[a], mf_config_vars[i].name), msg,
                                     sizeof msg)) {
                fprintf(stderr,
                        "mpiexec: %s\n(mpiexec --info lists every variable with the values "
                        "it accepts)\n",
                        msg);
                return -1;
            }
    return 0;
}

static int mx_add_app(mx_options *opt)
{
    mx_app *n = realloc(opt->apps, (size_t)(opt->napps + 1) * sizeof *n);
    if (!n)
        return -1;
    opt->apps = n;
    memset(&n[opt->napps++], 0, sizeof *n);
    return 0;
}

static int mx_add_app_env(mx_app *app, const char *name, const char *value)
{
    mx_envset *n = realloc(app->envs, (size_t)(app->nenvs + 1) * sizeof *n);
    if (!n)
        return -1;
    app->envs = n;
    n[app->nenvs].name = strdup(name);
    n[app->nenvs].value = strdup(value);
    if (!n[app->nenvs].name || !n[app->nenvs].value)
        return -1;
    app->nenvs++;
    return 0;
}

static int mx_parse_map(mx_options *opt, const char *v)
{
    if (!strcmp(v, "slot") || !strcmp(v, "core")) {
        opt->map_by = MX_MAP_SLOT;
    } else if (!strcmp(v, "node")) {
        opt->map_by = MX_MAP_NODE;
    } else if (!strncmp(v, "ppr:", 4)) {
        char n[16];
        size_t len = strcspn(v + 4, ":");
        int ppr;
        if (len >= sizeof n || strcmp(v + 4 + len, ":node") != 0)
            return -1;
        memcpy(n, v + 4, len);
        n[len] = '\0';
        if (mx_parse_np(n, &ppr) != 0 || ppr > 100000)
            return -1;
        opt->map_by = MX_MAP_PPR;
        opt->ppr = ppr;
    } else {
        return -1;
    }
    return 0;
}

/* Options of one program segment; returns the index of the program, or -1 (usage printed). */
static int mx_parse_segment(mx_options *opt, mx_app *app, int argc, char **argv, int i,
                            int *have_timeout, int *exit_code)
{
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0)
            return i + 1;
        if (a[0] != '-' || a[1] == '\0')
            return i;
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-c")) {
            if (!next)
                return mx_usage("%s needs a number of processes", a);
            if (mx_parse_np(next, &app->np) != 0)
                return mx_usage("bad number of processes '%s' (want an integer >= 1)", next);
            i++;
        } else if (!strcmp(a, "-x")) {
            if (!next)
                return mx_usage("%s needs VAR or VAR=VALUE", a);
            const char *eq = strchr(next, '=');
            size_t nl = eq ? (size_t)(eq - next) : strlen(next);
            if (!mx_env_name_ok(next, nl))
                return mx_usage("bad variable name in -x '%s'", next);
            if (!eq && !getenv(next))
                return mx_usage("-x %s: variable is not set in mpiexec's environment", next);
            if (mx_add_env(opt, next, nl, eq ? eq + 1 : NULL) != 0)
                return mx_usage("%s", "out of memory");
            i++;
        } else if (!strcmp(a, "-genv") || !strcmp(a, "--genv")) {
            if (!next || i + 2 >= argc)
                return mx_usage("%s needs VAR VALUE", a);
            if (!mx_env_name_ok(next, strlen(next)))
                return mx_usage("bad variable name in -genv '%s'", next);
            if (mx_add_env(opt, next, strlen(next), argv[i + 2]) != 0)
                return mx_usage("%s", "out of memory");
            i += 2;
        } else if (!strcmp(a, "-env") || !strcmp(a, "--env")) {
            if (!next || i + 2 >= argc)
                return mx_usage("%s needs VAR VALUE", a);
            if (!mx_env_name_ok(next, strlen(next)))
                return mx_usage("bad variable name in -env '%s'", next);
            if (mx_add_app_env(app, next, argv[i + 2]) != 0)
                return mx_usage("%s", "out of memory");
            i += 2;
        } else if (!strcmp(a, "-l") || !strcmp(a, "--tag-output") || !strcmp(a, "-tag-output")) {
            opt->tag_output = 1;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (!next)
                return mx_usage("%s needs a number of seconds", a);
            if (mx_parse_seconds(next, &opt->timeout) != 0)
                return mx_usage("bad timeout '%s' (want seconds above 0, e.g. 30 or 2.5)", next);
            *have_timeout = 1;
            i++;
        } else if (!strncmp(a, "--timeout=", 10)) {
            if (mx_parse_seconds(a + 10, &opt->timeout) != 0)
                return mx_usage("bad timeout '%s' (want seconds above 0, e.g. 30 or 2.5)", a + 10);
            *have_timeout = 1;
        } else if (!strcmp(a, "--get-stack-traces") || !strcmp(a, "-get-stack-traces")) {
            opt->stack_traces = 1;
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "-oversubscribe")) {
            opt->oversubscribe = 1;
        } else if (!strcmp(a, "--host") || !strcmp(a, "-host") || !strcmp(a, "-H") ||
                   !strcmp(a, "--hosts") || !strcmp(a, "-hosts")) {
            if (!next)
                return mx_usage("%s needs a host list", a);
            if (mx_hosts_add_list(opt, next) != 0)
                return mx_usage("bad host list '%s' (want h1[:slots],h2[:slots]...)", next);
            i++;
        } else if (!strcmp(a, "--hostfile") || !strcmp(a, "-hostfile") || !strcmp(a, "-f") ||
                   !strcmp(a, "--machinefile") || !strcmp(a, "-machinefile")) {
            if (!next)
                return mx_usage("%s needs a file", a);
            if (mx_hosts_add_file(opt, next) != 0)
                return mx_usage("bad hostfile '%s'", next);
            i++;
        } else if (!strcmp(a, "--map-by") || !strcmp(a, "-map-by")) {
            if (!next || mx_parse_map(opt, next) != 0)
                return mx_usage("bad --map-by '%s' (want slot, node or ppr:N:node)",
                                next ? next : "");
            i++;
        } else if (!strcmp(a, "--bind-to") || !strcmp(a, "-bind-to")) {
            if (!next || (strcmp(next, "core") && strcmp(next, "none")))
                return mx_usage("bad --bind-to '%s' (want core or none)", next ? next : "");
            opt->bind_core = !strcmp(next, "core");
            i++;
        } else if (!strcmp(a, "--report-bindings") || !strcmp(a, "-report-bindings")) {
            opt->report_bindings = 1;
        } else if (!strcmp(a, "--control-if") || !strcmp(a, "-control-if")) {
            if (!next || !*next)
                return mx_usage("%s needs interfaces (names or CIDRs, comma-separated)", a);
            free(opt->control_if);
            if (!(opt->control_if = strdup(next)))
                return mx_usage("%s", "out of memory");
            i++;
        } else if (!strcmp(a, "--fabric") || !strcmp(a, "-fabric") || !strcmp(a, "--rma-fabric") ||
                   !strcmp(a, "-rma-fabric")) {
            /* A spelling of the setting, as classic MPIs select their network with one option:
             * every rank inherits it, and it is checked with all settings below (a bad value
             * is refused before any rank starts). */
            if (!next || !*next)
                return mx_usage("%s needs a fabric (tcp, sctp, ofi, or MANIFOLD_FABRIC syntax)", a);
            setenv(strstr(a, "rma") ? "MANIFOLD_RMA_FABRIC" : "MANIFOLD_FABRIC", next, 1);
            i++;
        } else if (!strcmp(a, "--initial-errhandler") || !strcmp(a, "-initial-errhandler")) {
            /* MPI-4.0's start-up choice of the initial error handler (mpi_initial_errhandler);
             * checked with every setting below. */
            if (!next)
                return mx_usage("%s needs mpi_errors_are_fatal, mpi_errors_abort or "
                                "mpi_errors_return",
                                a);
            setenv("MANIFOLD_INITIAL_ERRHANDLER", next, 1);
            i++;
        } else if (!strcmp(a, "--memory-alloc-kinds") || !strcmp(a, "-memory-alloc-kinds") ||
                   !strcmp(a, "--memory_alloc_kinds") || !strcmp(a, "-memory_alloc_kinds")) {
            /* MPI-4.1's start-up request (section 12.5), as MPICH spells it; the library
             * answers in the info of its objects (src/comm/memkind.h). */
            if (!next)
                return mx_usage("%s needs a list of kinds (e.g. system,mpi)", a);
            setenv("MANIFOLD_MEMORY_ALLOC_KINDS", next, 1);
            i++;
        } else if (!strcmp(a, "--report-fabrics") || !strcmp(a, "-report-fabrics")) {
            /* The library reports (src/fabric/fabric.c); every rank inherits the setting. */
            setenv("MANIFOLD_REPORT", "fabrics", 1);
        } else if (!strcmp(a, "--launcher") || !strcmp(a, "-launcher") ||
                   !strcmp(a, "--launcher-exec") || !strcmp(a, "-launcher-exec")) {
            if (!next || !*next)
                return mx_usage("%s needs a command", a);
            free(opt->launcher);
            if (!(opt->launcher = strdup(next)))
                return mx_usage("%s", "out of memory");
            i++;
        } else if (!strcmp(a, "--proxy-path")) {
            if (!next || !*next)
                return mx_usage("%s needs a path", a);
            free(opt->proxy_path);
            if (!(opt->proxy_path = strdup(next)))
                return mx_usage("%s", "out of memory");
            i++;
        } else if (!strcmp(a, "--launch-fanout")) {
            if (!next || mx_parse_np(next, &opt->fanout) != 0)
                return mx_usage("bad --launch-fanout '%s' (want an integer >= 1)",
                                next ? next : "");
            i++;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-version") || !strcmp(a, "-V")) {
            printf("mpiexec (Manifold) %s\n", MANIFOLD_VERSION_STRING);
            *exit_code = 0;
            return -1;
        } else if (!strcmp(a, "--info") || !strcmp(a, "-info")) {
            mx_print_info();
            *exit_code = 0;
            return -1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            fputs(mx_help, stdout);
            *exit_code = 0;
            return -1;
        } else {
            return mx_usage("unknown option '%s'", a);
        }
    }
    return i;
}

int mx_options_parse(mx_options *opt, int argc, char **argv, int *exit_code)
{
    memset(opt, 0, sizeof *opt);
    opt->fanout = 32;
    int have_timeout = 0, i = 1;
    *exit_code = MX_EXIT_USAGE;

    /* One segment per program: options, then the program and its arguments up to ':'. Options
     * other than -n and -env apply to the whole job wherever they are given. */
    for (;;) {
        if (mx_add_app(opt) != 0)
            return mx_usage("%s", "out of memory");
        mx_app *app = &opt->apps[opt->napps - 1];
        i = mx_parse_segment(opt, app, argc, argv, i, &have_timeout, exit_code);
        if (i < 0)
            return -1;
        if (i >= argc || !strcmp(argv[i], ":"))
            return mx_usage("%s", opt->napps > 1 ? "no program after ':'" : "no program to run");
        app->argv = argv + i;
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        if (i >= argc)
            break;
        argv[i++] = NULL; /* ends this program's arguments */
    }
    opt->argv = opt->apps[0].argv;

    if (opt->nhosts > 0 && opt->napps == 1 && opt->apps[0].np == 0)
        opt->apps[0].np = mx_hosts_default_np(opt);
    opt->np = 0;
    for (int a = 0; a < opt->napps; a++) {
        if (opt->apps[a].np == 0)
            opt->apps[a].np = 1;
        if (opt->np > 1000000 - opt->apps[a].np)
            return mx_usage("%s", "too many processes");
        opt->np += opt->apps[a].np;
    }
    if (opt->map_by == MX_MAP_PPR && opt->nhosts == 0)
        return mx_usage("%s", "--map-by ppr:N:node needs --host or --hostfile");

    if (mx_check_settings(opt) != 0)
        return -1;
    if (!have_timeout) {
        const char *t = getenv("MPIEXEC_TIMEOUT");
        if (t && *t && mx_parse_seconds(t, &opt->timeout) != 0)
            return mx_usage("bad MPIEXEC_TIMEOUT '%s' (want seconds > 0)", t);
    }
    *exit_code = 0;
    return 0;
}

void mx_options_free(mx_options *opt)
{
    for (int a = 0; a < opt->napps; a++) {
        for (int i = 0; i < opt->apps[a].nenvs; i++) {
            free(opt->apps[a].envs[i].name);
            free(opt->apps[a].envs[i].value);
        }
        free(opt->apps[a].envs);
    }
    free(opt->apps);
    opt->apps = NULL;
    opt->napps = 0;
    for (int h = 0; h < opt->nhosts; h++)
        free(opt->hosts[h].name);
    free(opt->hosts);
    opt->hosts = NULL;
    opt->nhosts = 0;
    free(opt->launcher);
    free(opt->control_if);
    free(opt->proxy_path);
    opt->launcher = opt->proxy_path = NULL;
    for (int i = 0; i < opt->nenvs; i++) {
        free(opt->envs[i].name);
        free(opt->envs[i].value);
    }
    free(opt->envs);
    opt->envs = NULL;
    opt->nenvs = 0;
}
