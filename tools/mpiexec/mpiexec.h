/*
 * mpiexec.h — the pieces of Manifold's launcher and how they fit.
 *
 *   options.c     command line and environment -> mx_options; --help, --version, --info.
 *   hosts.c       --host/--hostfile parsing and the rank -> host map (--map-by).
 *   proxy.c       the local "proxy": builds each rank's environment, forks and execs the ranks of
 *                 this host in one process group, wiring stdin/stdout/stderr pipes and one PMI
 *                 socketpair per rank (PMI_FD), binding them to cores when asked (bind.c).
 *   link.c        framed messages between mpiexec and its proxies over TCP (mx_link).
 *   link_auth.c   the challenge-response that authenticates a link before anything else.
 *   jobdesc.c     decoding the job description a proxy receives.
 *   remote.c      mpiexec's side of a multi-host job: listens, starts one proxy per host through
 *                 the launcher command (ssh by default) as a tree, and turns the proxies' frames
 *                 into the same mx_rank events (PMI lines, output, exits) local ranks produce.
 *   proxy_main.c  `mpiexec --proxy`: the program on each host; forks that host's ranks with
 *                 proxy.c, relays PMI, stdio, signals and exits, and starts further proxies.
 *   pmi_server.c  the PMI-1 server: key-value store, barrier, abort/finalize bookkeeping. Parsing
 *                 and formatting come from src/runtime/pmi_wire.c, the file the client uses.
 *   stdio_fwd.c   output of every rank to our stdout/stderr in whole lines (optionally tagged
 *                 "[rank] "), and our stdin to rank 0.
 *   stacks.c      the stack of every thread of each rank, read with gdb (--get-stack-traces).
 *   supervise.c   the event loop: poll over signals (signalfd), PMI sockets, output pipes, stdin,
 *                 and deadlines (timeout, kill grace, output drain); ends the job on the first
 *                 abnormal event and decides the exit status.
 *   main.c        glue.
 *
 * Exit status of mpiexec (also in --help):
 *   0         every rank exited 0 (ranks that used PMI also called finalize)
 *   N         the rank blamed for the failure (supervise.c: the strongest cause seen within a
 *             moment of the first) exited with code N, or called MPI_Abort with code N
 *   128+S     the rank blamed was killed by signal S, or mpiexec received signal S
 *   1         a rank exited 0 after MPI_Init without MPI_Finalize while others ran, broke the PMI
 *             protocol, a host or its proxy was lost, or mpiexec itself failed (fork, pipes)
 *   2         bad command line
 *   124       the job ran longer than --timeout / MPIEXEC_TIMEOUT
 *   126, 127  the program could not be executed / was not found
 *
 * Single-threaded; all fds are non-blocking except our own stdout/stderr, on which writes block
 * (back-pressure: a slow reader of mpiexec's output slows the ranks, it never loses lines).
 */
#ifndef MX_MPIEXEC_H
#define MX_MPIEXEC_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/auth.h"
#include "runtime/pmi_wire.h"

#define MX_EXIT_USAGE 2
#define MX_EXIT_TIMEOUT 124
#define MX_EXIT_NOEXEC 126
#define MX_EXIT_NOTFOUND 127

typedef struct mx_envset {
    char *name;
    char *value; /* NULL: forward the current value of `name` (-x NAME) */
} mx_envset;

/* One program of an MPMD command line (`-n 2 a : -n 2 b`); ranks are numbered app by app. */
typedef struct mx_app {
    int np;          /* 0: not given (filled in from the host slots, or 1) */
    char **argv;     /* program and its arguments, NULL-terminated */
    mx_envset *envs; /* -env VAR VALUE: this app only */
    int nenvs;
} mx_app;

typedef struct mx_hostspec {
    char *name;
    int slots;
} mx_hostspec;

enum { MX_MAP_SLOT, MX_MAP_NODE, MX_MAP_PPR };

typedef struct mx_options {
    int np;      /* total number of ranks (sum over apps) */
    char **argv; /* apps[0].argv */
    mx_app *apps;
    int napps;
    mx_hostspec *hosts; /* --host / --hostfile, merged by name; NULL: this host only */
    int nhosts;
    int map_by, ppr;
    int bind_core, report_bindings;
    char *launcher;   /* command template ({host} is replaced); NULL: ssh */
    char *proxy_path; /* mpiexec to run on the hosts; NULL: this program's path */
    int fanout;       /* proxies each proxy starts at most */
    int tag_output;
    double timeout;    /* seconds; 0 = none */
    int stack_traces;  /* --get-stack-traces: print the ranks' stacks when the timeout ends a job */
    int oversubscribe; /* --oversubscribe given (accepted; oversubscription is never refused) */
    mx_envset *envs;
    int nenvs;
    char *
        control_if; /* --control-if: interfaces mpiexec listens on for proxies; NULL: MANIFOLD_IF */
} mx_options;

/* What to do after parsing: run, or exit with `exit_code` (after --help, --version, errors). */
int mx_options_parse(mx_options *opt, int argc, char **argv, int *exit_code);
void mx_options_free(mx_options *opt);

/* One output stream of one rank (stdout or stderr), line-assembled before forwarding. */
typedef struct mx_stream {
    int fd;     /* read end of the rank's pipe; -1 once closed */
    int out_fd; /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int mid_line;         /* part of the current line was already written (long or idle partial) */
    double partial_since; /* when the unwritten partial line started waiting (0: none) */
} mx_stream;

/* pmi_fd of a rank on another host whose PMI connection (through its proxy) is open. */
#define MX_FD_REMOTE (-2)

typedef struct mx_host mx_host;

typedef struct mx_rank {
    int rank;
    int app;          /* index into opt->apps */
    int local;        /* index among the ranks of its host */
    int nlocal;       /* ranks on its host */
    const char *host; /* name for messages */
    mx_host *remote;  /* the proxy that runs it; NULL: forked by this process */
    pid_t pid;
    int alive;  /* forked and not yet reaped */
    int pmi_fd; /* our end of the PMI socketpair; -1 once closed */
    mf_pmi_lines pmi_in;
    int pmi_inited, pmi_finalized, in_barrier;
    int aborted; /* called MPI_Abort: its exit is part of that, not another cause */
    mx_stream out, err;
} mx_rank;

typedef struct mx_kv mx_kv;

typedef struct mx_job {
    const mx_options *opt;
    int n;    /* ranks in ranks[] */
    int size; /* ranks in the job (PMI_SIZE): n, except in a proxy */
    mx_rank *ranks;
    int is_proxy;       /* this process is `mpiexec --proxy` */
    int stdin_to_rank0; /* give rank 0 a stdin pipe (its data comes from stdin_src or frames) */

    /* multi-host (remote.c); NULL for a single-host job */
    struct mx_remote *rm;
    char host[64];
    char kvsname[128];
    char secret[MF_AUTH_SECRET_HEX + 1]; /* printed form: ranks' MANIFOLD_JOB_SECRET */
    mf_auth_secret key;                  /* the same, for proofs on the proxy links */
    int oversubscribed;
    /* How the local ranks are grouped (mx_proxy_launch): each in a session of its own (its
     * process group's id is its pid), or all in one process group, pgid. */
    int rank_sessions;
    pid_t pgid;

    /* PMI server state */
    mx_kv **kv_buckets;
    int barrier_count;

    /* stdin forwarding to rank 0 */
    int stdin_src; /* our stdin while we forward it; -1 when done */
    int stdin_dst; /* write end of rank 0's stdin pipe; -1 when closed */
    char *stdin_buf;
    size_t stdin_len;
    int stdin_eof;
    int stdin_eof_sent; /* to a remote rank 0 */

    /* ending */
    int ending; /* the job is being torn down; the exit status is decided */
    int exit_code;
    double kill_at; /* when to SIGKILL what is left (0: not scheduled) */
    /* a failure whose verdict is held (mx_job_blame) */
    int blame_cause; /* MX_CAUSE_*, 0: none */
    int blame_code;
    double blame_until;
    char blame_line[2048];
    int signals_seen;
} mx_job;

/* hosts.c: fills opt->hosts from --host/--hostfile arguments; maps ranks to hosts. */
int mx_hosts_add_list(mx_options *opt, const char *list);
int mx_hosts_add_file(mx_options *opt, const char *path);
/* host_of[r] = index into opt->hosts for every rank; prints why and returns -1 if impossible. */
int mx_hosts_map(const mx_options *opt, int *host_of);
/* Total slots, or the default number of ranks for the mapping. */
int mx_hosts_default_np(const mx_options *opt);

/* bind.c: the cpu set for local rank `local` of `nlocal` (--bind-to core); describe it in text. */
int mx_bind_prepare(int nlocal);
int mx_bind_get(int local, void *cpuset, size_t setsize, char *desc, size_t desclen);

/* proxy.c */
int mx_job_setup(mx_job *job, const mx_options *opt);
/* Random hex string of 2*nbytes digits. */
int mx_random_hex(char *out, size_t nbytes);
/* Prints one line for the user: to stderr in mpiexec, to mpiexec through the link in a proxy. */
void mx_say(mx_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Starts all ranks. Returns 0, or an exit status after printing why (nothing left running). */
int mx_proxy_launch(mx_job *job);
/* Sends `sig` to every live rank (its process group and its pid). */
void mx_proxy_signal(mx_job *job, int sig);
/* SIGKILLs what is left of the local ranks' process groups, reaped ranks included: their
 * descendants do not outlive the job. */
void mx_proxy_kill_groups(mx_job *job);

/* pmi_server.c */
int mx_pmi_init(mx_job *job);
/* Reads and serves what rank r sent. Returns 0, or -1 once the connection is closed. */
int mx_pmi_readable(mx_job *job, mx_rank *r);
/* Serves bytes rank r sent through its proxy. */
void mx_pmi_feed(mx_job *job, mx_rank *r, const char *data, size_t len);
void mx_pmi_close(mx_job *job, mx_rank *r);
void mx_pmi_free(mx_job *job);

/* stdio_fwd.c */
int mx_stream_init(mx_stream *s, int fd, int out_fd);
/* Reads what is available and forwards complete lines. Returns -1 at EOF (stream closed). */
int mx_stream_readable(mx_job *job, mx_rank *r, mx_stream *s);
/* Writes a partial line that has waited since before `older_than` (untagged mode only). */
void mx_stream_flush_idle(mx_job *job, mx_rank *r, mx_stream *s, double older_than);
/* Forwards bytes a remote rank wrote (the stream has fd -1 and stays open until closed). */
void mx_stream_feed(mx_job *job, mx_rank *r, mx_stream *s, const char *data, size_t len);
/* Flushes what is left and closes the stream. */
void mx_stream_close(mx_job *job, mx_rank *r, mx_stream *s);
/* Queues bytes for rank 0's stdin (a proxy receiving them from mpiexec); len 0: end of input. */
void mx_stdin_feed(mx_job *job, const char *data, size_t len);
void mx_stdin_readable(mx_job *job);
void mx_stdin_writable(mx_job *job);
void mx_stdin_close(mx_job *job);
/* Writes all of buf to fd (blocking, retrying); gives up silently if the reader is gone. */
void mx_write_all(int fd, const char *buf, size_t len);

/* link.c: the monotonic clock, in seconds */
double mx_now(void);

/* supervise.c */
/* Ends the job (first call only): records the exit status, prints `msg` (if not NULL) as one line
 * to stderr, sends `sig` to all ranks and schedules SIGKILL after the grace period. */
void mx_job_end(mx_job *job, int exit_code, int sig, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A rank failed (or a host was lost): ends the job after a short wait for a stronger cause, with
 * the exit status and one-line message of the strongest cause seen (supervise.c explains). */
enum { MX_CAUSE_SIGNAL = 1, MX_CAUSE_EXIT, MX_CAUSE_ABORT };
void mx_job_blame(mx_job *job, int cause, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int mx_supervise(mx_job *job, int sigfd);
/* Removes the job's leftovers on this host (shm segments of killed ranks); see cleanup.c. */
void mx_cleanup_host(const mx_job *job);
/* Judges the exit of rank r (wait status) as described in supervise.c. */
void mx_rank_exited(mx_job *job, mx_rank *r, int status);
/* Reads how long hosts may stay silent (MANIFOLD_HOST_TIMEOUT), in seconds. */
double mx_host_timeout(void);

/* stacks.c: prints (mx_say) the stack of every thread of each live rank forked by this
 * process, with gdb; at most a few seconds per rank. */
void mx_stacks_report(mx_job *job);

/* remote.c (mpiexec's side of a multi-host job) */
int mx_remote_start(mx_job *job);
/* Adds the fds to poll; returns the count added (at most mx_remote_maxfds). */
size_t mx_remote_maxfds(mx_job *job);
size_t mx_remote_pollfds(mx_job *job, struct pollfd *pfd, int *idx);
void mx_remote_event(mx_job *job, int idx, short revents);
/* Timers (heartbeats, silent hosts, start-up deadline); lowers *wait_ms to the next one. */
void mx_remote_tick(mx_job *job, double now, int *wait_ms);
/* A child exited: returns 1 if it was a launcher command of ours. */
int mx_remote_child_exited(mx_job *job, pid_t pid, int status);
void mx_remote_signal(mx_job *job, int sig);
/* Asks every proxy for its ranks' stacks (mx_stacks_report there; the lines come as SAY frames,
 * before the proxy handles any later frame). */
void mx_remote_stacks(mx_job *job);
/* Whether rank 0's stdin may take more bytes now; sends bytes (len 0: EOF). */
int mx_remote_stdin_room(mx_job *job);
void mx_remote_stdin(mx_job *job, const char *data, size_t len);
void mx_remote_pmi_reply(mx_job *job, mx_rank *r, const char *line, size_t len);
void mx_remote_finish(mx_job *job);

/* Starts `tmpl` (a launcher command template; NULL: none, the host is this machine) for the
 * proxy of host `host`, numbered `index`, which connects to addrs:port; the secret goes to the
 * command's stdin. Returns the pid, -1. */
pid_t mx_launch_proxy(const char *tmpl, const char *proxy_path, const char *addrs, int port,
                      int index, const char *host, const char *secret);

/* proxy_main.c: `mpiexec --proxy ADDRS PORT INDEX HOST` */
int mx_proxy_main(int argc, char **argv);
/* Blocks the signals the loop takes from a signalfd; returns the fd or -1. The mask mpiexec
 * started with is kept in mx_orig_sigmask for the ranks. */
int mx_signals_block(void);
extern sigset_t mx_orig_sigmask;

#endif
