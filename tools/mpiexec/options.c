/*
 * options.c — mpiexec's command line.
 *
 * Options come before the program; the first argument that is not an option (or everything after
 * `--`) is the program and its arguments, passed untouched. Every error names the offending
 * argument and exits with status 2; nothing is guessed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiexec.h"

#ifndef MANIFOLD_VERSION_STRING
#define MANIFOLD_VERSION_STRING "unknown"
#endif
#ifndef MX_FABRICS
#define MX_FABRICS ""
#endif

static const char mx_help[] =
    "Usage: mpiexec [options] program [args...]\n"
    "       mpirun  [options] program [args...]\n"
    "\n"
    "Starts N copies of program as one MPI job on this host.\n"
    "\n"
    "Options:\n"
    "  -n N, -np N           number of processes (default 1)\n"
    "  -x VAR                forward VAR's current value (the whole environment is forwarded\n"
    "                        anyway; -x makes it explicit and checks that VAR is set)\n"
    "  -x VAR=VALUE          set VAR to VALUE in every process\n"
    "  -genv VAR VALUE       same as -x VAR=VALUE (MPICH spelling)\n"
    "  -l, --tag-output      prefix every output line with \"[rank] \"\n"
    "  --timeout SECS        end the job after SECS seconds (exit status 124);\n"
    "                        the environment variable MPIEXEC_TIMEOUT does the same\n"
    "  --oversubscribe       accepted for compatibility: more processes than cores is always\n"
    "                        allowed; it is detected and processes are told to yield the CPU\n"
    "  --info                list Manifold's environment variables with their current values,\n"
    "                        the version and the fabrics built in\n"
    "  --version             print the version\n"
    "  -h, --help            this text\n"
    "  --                    end of options\n"
    "\n"
    "Processes:\n"
    "  Every process gets the whole environment plus PMI_FD, PMI_RANK, PMI_SIZE (PMI-1),\n"
    "  MANIFOLD_LOCAL_RANK, MANIFOLD_LOCAL_SIZE, MANIFOLD_JOB_SECRET, and MANIFOLD_OVERSUBSCRIBED=1\n"
    "  when there are more processes than usable cores. All run in one process group of their own;\n"
    "  none outlives mpiexec.\n"
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
    "  N        exit code (or MPI_Abort code) of the first process to fail\n"
    "  128+S    the first process to fail died of signal S, or mpiexec got signal S\n"
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

/* Strictly positive integer, no junk. */
static int mx_parse_np(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static int mx_parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e9)
        return -1;
    *out = v;
    return 0;
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
    printf("launcher: mpiexec (PMI-1 server, single host); library also runs under MPICH Hydra "
           "(PMI-1) and as a singleton\n\n");
    printf("Environment variables (value now; default; meaning):\n");
#define MF_CONFIG_VAR(name, def, meaning)                                                         \
    do {                                                                                          \
        const char *v_ = getenv(#name);                                                           \
        printf("  %-26s %s%s%s; default \"%s\"\n      %s\n", #name, v_ ? "\"" : "",              \
               v_ ? v_ : "(unset)", v_ ? "\"" : "", def, meaning);                                \
    } while (0);
#include "core/config_vars.def"
#undef MF_CONFIG_VAR
}

int mx_options_parse(mx_options *opt, int argc, char **argv, int *exit_code)
{
    memset(opt, 0, sizeof *opt);
    opt->np = 1;
    int have_timeout = 0, i;
    *exit_code = MX_EXIT_USAGE;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-c")) {
            if (!next)
                return mx_usage("%s needs a number of processes", a);
            if (mx_parse_np(next, &opt->np) != 0)
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
        } else if (!strcmp(a, "-l") || !strcmp(a, "--tag-output") || !strcmp(a, "-tag-output")) {
            opt->tag_output = 1;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (!next)
                return mx_usage("%s needs a number of seconds", a);
            if (mx_parse_seconds(next, &opt->timeout) != 0)
                return mx_usage("bad timeout '%s' (want seconds > 0)", next);
            have_timeout = 1;
            i++;
        } else if (!strncmp(a, "--timeout=", 10)) {
            if (mx_parse_seconds(a + 10, &opt->timeout) != 0)
                return mx_usage("bad timeout '%s' (want seconds > 0)", a + 10);
            have_timeout = 1;
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "-oversubscribe")) {
            opt->oversubscribe = 1;
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
    if (i >= argc)
        return mx_usage("%s", "no program to run");
    opt->argv = argv + i;

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
    for (int i = 0; i < opt->nenvs; i++) {
        free(opt->envs[i].name);
        free(opt->envs[i].value);
    }
    free(opt->envs);
    opt->envs = NULL;
    opt->nenvs = 0;
}
