/*
 * mpiexec.h — the pieces of Manifold's launcher and how they fit.
 *
 *   options.c     command line and environment -> mx_options; --help, --version, --info.
 *   proxy.c       the local "proxy": builds each rank's environment, forks and execs the ranks of
 *                 this host in one process group, wiring stdin/stdout/stderr pipes and one PMI
 *                 socketpair per rank (PMI_FD). Multi-host support adds proxies started over ssh
 *                 that do the same remotely and relay the same three streams over one connection;
 *                 everything above this seam only sees mx_rank fds and events.
 *   pmi_server.c  the PMI-1 server: key-value store, barrier, abort/finalize bookkeeping. Parsing
 *                 and formatting come from src/runtime/pmi_wire.c, the file the client uses.
 *   stdio_fwd.c   output of every rank to our stdout/stderr in whole lines (optionally tagged
 *                 "[rank] "), and our stdin to rank 0.
 *   supervise.c   the event loop: poll over signals (signalfd), PMI sockets, output pipes, stdin,
 *                 and deadlines (timeout, kill grace, output drain); ends the job on the first
 *                 abnormal event and decides the exit status.
 *   main.c        glue.
 *
 * Exit status of mpiexec (also in --help):
 *   0         every rank exited 0 (ranks that used PMI also called finalize)
 *   N         the first rank to fail exited with code N, or called MPI_Abort with code N
 *   128+S     the first rank to fail was killed by signal S, or mpiexec received signal S
 *   1         a rank exited 0 after MPI_Init without MPI_Finalize while others ran, broke the PMI
 *             protocol, or mpiexec itself failed (fork, pipes)
 *   2         bad command line
 *   124       the job ran longer than --timeout / MPIEXEC_TIMEOUT
 *   126, 127  the program could not be executed / was not found
 *
 * Single-threaded; all fds are non-blocking except our own stdout/stderr, on which writes block
 * (back-pressure: a slow reader of mpiexec's output slows the ranks, it never loses lines).
 */
#ifndef MX_MPIEXEC_H
#define MX_MPIEXEC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "runtime/pmi_wire.h"

#define MX_EXIT_USAGE 2
#define MX_EXIT_TIMEOUT 124
#define MX_EXIT_NOEXEC 126
#define MX_EXIT_NOTFOUND 127

typedef struct mx_envset {
    char *name;
    char *value; /* NULL: forward the current value of `name` (-x NAME) */
} mx_envset;

typedef struct mx_options {
    int np;
    char **argv; /* program and its arguments, NULL-terminated, pointing into main's argv */
    int tag_output;
    double timeout; /* seconds; 0 = none */
    int oversubscribe; /* --oversubscribe given (accepted; oversubscription is never refused) */
    mx_envset *envs;
    int nenvs;
} mx_options;

/* What to do after parsing: run, or exit with `exit_code` (after --help, --version, errors). */
int mx_options_parse(mx_options *opt, int argc, char **argv, int *exit_code);
void mx_options_free(mx_options *opt);

/* One output stream of one rank (stdout or stderr), line-assembled before forwarding. */
typedef struct mx_stream {
    int fd;         /* read end of the rank's pipe; -1 once closed */
    int out_fd;     /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int mid_line;   /* part of the current line was already written (long or idle partial) */
    double partial_since; /* when the unwritten partial line started waiting (0: none) */
} mx_stream;

typedef struct mx_rank {
    int rank;
    pid_t pid;
    int alive;        /* forked and not yet reaped */
    int pmi_fd;       /* our end of the PMI socketpair; -1 once closed */
    mf_pmi_lines pmi_in;
    int pmi_inited, pmi_finalized, in_barrier;
    mx_stream out, err;
} mx_rank;

typedef struct mx_kv mx_kv;

typedef struct mx_job {
    const mx_options *opt;
    int n;
    mx_rank *ranks;
    char host[64];
    char kvsname[128];
    char secret[65];
    int oversubscribed;
    pid_t pgid;       /* process group of all local ranks */

    /* PMI server state */
    mx_kv **kv_buckets;
    int barrier_count;

    /* stdin forwarding to rank 0 */
    int stdin_src;    /* our stdin while we forward it; -1 when done */
    int stdin_dst;    /* write end of rank 0's stdin pipe; -1 when closed */
    char *stdin_buf;
    size_t stdin_len;
    int stdin_eof;

    /* ending */
    int ending;       /* the job is being torn down; the exit status is decided */
    int exit_code;
    double kill_at;   /* when to SIGKILL what is left (0: not scheduled) */
    int signals_seen;
} mx_job;

/* proxy.c */
int mx_job_setup(mx_job *job, const mx_options *opt);
/* Starts all ranks. Returns 0, or an exit status after printing why (nothing left running). */
int mx_proxy_launch(mx_job *job);
/* Sends `sig` to every live rank (the process group and each pid). */
void mx_proxy_signal(mx_job *job, int sig);

/* pmi_server.c */
int mx_pmi_init(mx_job *job);
/* Reads and serves what rank r sent. Returns 0, or -1 once the connection is closed. */
int mx_pmi_readable(mx_job *job, mx_rank *r);
void mx_pmi_close(mx_job *job, mx_rank *r);
void mx_pmi_free(mx_job *job);

/* stdio_fwd.c */
int mx_stream_init(mx_stream *s, int fd, int out_fd);
/* Reads what is available and forwards complete lines. Returns -1 at EOF (stream closed). */
int mx_stream_readable(mx_job *job, mx_rank *r, mx_stream *s);
/* Writes a partial line that has waited since before `older_than` (untagged mode only). */
void mx_stream_flush_idle(mx_job *job, mx_rank *r, mx_stream *s, double older_than);
/* Flushes what is left and closes the stream. */
void mx_stream_close(mx_job *job, mx_rank *r, mx_stream *s);
void mx_stdin_readable(mx_job *job);
void mx_stdin_writable(mx_job *job);
void mx_stdin_close(mx_job *job);
/* Writes all of buf to fd (blocking, retrying); gives up silently if the reader is gone. */
void mx_write_all(int fd, const char *buf, size_t len);

/* supervise.c */
double mx_now(void);
/* Ends the job (first call only): records the exit status, prints `msg` (if not NULL) as one line
 * to stderr, sends `sig` to all ranks and schedules SIGKILL after the grace period. */
void mx_job_end(mx_job *job, int exit_code, int sig, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int mx_supervise(mx_job *job, int sigfd);
/* Blocks the signals the loop takes from a signalfd; returns the fd or -1. The mask mpiexec
 * started with is kept in mx_orig_sigmask for the ranks. */
int mx_signals_block(void);
extern sigset_t mx_orig_sigmask;

#endif
