/*
 * main.c — mpiexec / mpirun: parse, start the ranks, supervise, return the job's exit status
 * (see mpiexec.h for the layout and the exit status contract).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpiexec.h"

int main(int argc, char **argv)
{
    mx_options opt;
    mx_job job;
    int code;

    /* Closed standard fds would be reused by our pipes and then clobbered by the ranks' dup2:
     * give them /dev/null (open returns the lowest free fd). */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            return 1;
    /* A vanished reader of our output must not kill the launcher (and orphan the job). */
    signal(SIGPIPE, SIG_IGN);
    if (argc > 1 && !strcmp(argv[1], "--proxy"))
        return mx_proxy_main(argc, argv);
    if (mx_options_parse(&opt, argc, argv, &code) != 0) {
        mx_options_free(&opt);
        return code;
    }
    /* Four fds per rank: let large jobs use what the hard limit allows. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    int sigfd = mx_signals_block();
    if (sigfd < 0) {
        perror("mpiexec: signalfd");
        return 1;
    }
    if (mx_job_setup(&job, &opt) != 0)
        return 1;

    code = opt.nhosts > 0 ? mx_remote_start(&job) : mx_proxy_launch(&job);
    if (code != 0) {
        for (int i = 0; i < job.n; i++)
            if (job.ranks[i].alive && !job.ranks[i].remote)
                (void)waitpid(job.ranks[i].pid, NULL, 0);
        if (job.rm)
            mx_remote_finish(&job);
    } else {
        code = mx_supervise(&job, sigfd);
    }
    mx_cleanup_host(&job);

    for (int i = 0; i < job.n; i++) {
        free(job.ranks[i].out.buf); /* left over only when the launch failed */
        free(job.ranks[i].err.buf);
    }
    mx_pmi_free(&job);
    free(job.ranks);
    mx_options_free(&opt);
    close(sigfd);
    return code;
}
