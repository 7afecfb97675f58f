/*
 * pmi_client_test.c — unit test of the PMI-1 and PMI-2 clients (pmi1.c, pmi2.c over
 * pmi_client.c) against a scripted server in a child process: the whole conversation of init, put,
 * fence, get, finalize and abort as Hydra, Manifold's mpiexec and Slurm hold it, PMI_PORT
 * connection, and bad replies (malformed, wrong command, failure rc, too long, closed connection),
 * each of which must end in an MPI error of the right class naming what happened. Exit 0 = pass.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "runtime/pm.h"
#include "unit_check.h"

/* One exchange of the script: the request must contain `expect`; `reply` is then sent as is, or
 * with a PMI-2 length header when it starts with "2:", or the connection is closed when it is
 * NULL. A step whose expect is NULL ends the script; the server then closes its end. */
typedef struct step {
    const char *expect;
    const char *reply;
} step;

/* Reads until the bytes received since the last step contain `expect` (5 s at most). */
static int serve_expect(int fd, const char *expect)
{
    static char buf[16384];
    size_t used = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        buf[used] = '\0';
        if (strstr(buf, expect))
            return 0;
        if (used == sizeof buf - 1 || poll(&p, 1, 5000) <= 0)
            break;
        ssize_t n = read(fd, buf + used, sizeof buf - 1 - used);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    fprintf(stderr, "server: expected '%s', got '%.200s'\n", expect, buf);
    return 1;
}

static void serve(int fd, const step *script)
{
    int bad = 0;
    for (; script->expect; script++) {
        if (serve_expect(fd, script->expect)) {
            bad = 1;
            break;
        }
        const char *r = script->reply;
        if (!r)
            break;
        char out[8192];
        int len = strncmp(r, "2:", 2) == 0
                      ? snprintf(out, sizeof out, "%-6zu%s", strlen(r + 2), r + 2)
                      : snprintf(out, sizeof out, "%s", r);
        if (write(fd, out, (size_t)len) != len)
            bad = 1;
    }
    close(fd);
    _exit(bad);
}

/* Starts the server on one end of a socket pair and exports the other as PMI_FD. */
static pid_t start(const step *script)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        serve(sv[1], script);
    }
    close(sv[1]);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", sv[0]);
    setenv("PMI_FD", fd, 1);
    return pid;
}

/* The server followed its script to the end. The client's descriptor is closed by then (finalize
 * or a failed init close it), or closed here so that a server waiting for more sees EOF. */
static void finish(int line, pid_t pid)
{
    int fd = atoi(getenv("PMI_FD"));
    struct pollfd p = {.fd = fd};
    (void)poll(&p, 1, 0);
    if (!(p.revents & POLLNVAL))
        close(fd);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "line %d: the server's script was not followed\n", line);
        unit_check_failures++;
    }
}

/* rc is an error of class `cls` whose text contains `text`. */
static void expect_error(int line, int rc, int cls, const char *text)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = '\0';
    if (rc != MPI_SUCCESS)
        (void)mf_error_string(rc, msg, &len);
    if (rc == MPI_SUCCESS || mf_error_class(rc) != cls || !strstr(msg, text)) {
        fprintf(stderr, "line %d: expected class %d with '%s', got rc=%d '%s'\n", line, cls, text,
                rc, msg);
        unit_check_failures++;
    }
}

/* A client process initialises and aborts with code 3 and msg, against `script`: it must exit
 * with 3 once the server, having received the abort, closes the connection. */
static void expect_abort(int line, const mf_pm_ops *ops, const step *script, const char *msg)
{
    pid_t pid = start(script), client = fork();
    if (client == 0) {
        mf_pm_identity id;
        if (ops->init(&id) != MPI_SUCCESS)
            _exit(1);
        ops->abort(3, msg);
        _exit(1);
    }
    close(atoi(getenv("PMI_FD")));
    int st, sst;
    if (waitpid(client, &st, 0) != client || !WIFEXITED(st) || WEXITSTATUS(st) != 3 ||
        waitpid(pid, &sst, 0) != pid || !WIFEXITED(sst) || WEXITSTATUS(sst) != 0) {
        fprintf(stderr, "line %d: abort did not end the client with 3 after the request\n", line);
        unit_check_failures++;
    }
}

#define P2_INIT                                                                                    \
    {                                                                                              \
        "cmd=init pmi_version=2 pmi_subversion=0\n",                                               \
            "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"                           \
    }
#define P2_FULLINIT                                                                                \
    {                                                                                              \
        "cmd=fullinit;pmijobid=12.0;pmirank=1;threaded=FALSE;",                                    \
            "2:cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=4;appnum=-1;"      \
            "spawner-jobid=;debugged=FALSE;pmiverbose=FALSE;rc=0;"                                 \
    }
#define P2_GETID                                                                                   \
    {                                                                                              \
        "cmd=job-getid;", "2:cmd=job-getid-response;jobid=12.0;rc=0;"                              \
    }

static void test_pmi2(void)
{
    const mf_pm_ops *ops = &mf_pm_pmi2_ops;
    mf_pm_identity id;
    char v[64];
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_JOBID", "12.0", 1);

    /* The conversation of `srun --mpi=pmi2`. */
    static const step ok[] = {
        P2_INIT,
        P2_FULLINIT,
        P2_GETID,
        {"cmd=info-getjobattr;key=universeSize;wait=FALSE;",
         "2:cmd=info-getjobattr-response;found=TRUE;value=8;rc=0;"},
        {"cmd=kvs-put;key=mf.addr.1;value=00ff;", "2:cmd=kvs-put-response;rc=0;"},
        {"cmd=kvs-fence;", "2:cmd=kvs-fence-response;rc=0;"},
        {"cmd=kvs-get;jobid=12.0;srcid=-1;key=mf.addr.0;",
         "2:cmd=kvs-get-response;found=TRUE;value=a=b;rc=0;"},
        {"cmd=kvs-get;jobid=12.0;srcid=-1;key=nothere;",
         "2:cmd=kvs-get-response;found=FALSE;rc=0;"},
        {"cmd=kvs-get;jobid=12.0;srcid=-1;key=mf.addr.0;",
         "2:cmd=kvs-get-response;found=TRUE;value=0123456789;rc=0;"},
        {"cmd=kvs-put;key=k;value=v;", "2:cmd=kvs-put-response;rc=1;errmsg=duplicate key;"},
        {"cmd=finalize;", "2:cmd=finalize-response;rc=0;"},
        {NULL, NULL}};
    pid_t pid = start(ok);
    CHECK(ops->init(&id) == MPI_SUCCESS);
    CHECK(id.rank == 1 && id.size == 4 && id.appnum == 0 && id.universe_size == 8);
    CHECK(strcmp(id.jobid, "12.0") == 0);
    CHECK(ops->put("mf.addr.1", "00ff") == MPI_SUCCESS);
    CHECK(ops->fence() == MPI_SUCCESS);
    CHECK(ops->get("mf.addr.0", v, sizeof v) == MPI_SUCCESS && strcmp(v, "a=b") == 0);
    expect_error(__LINE__, ops->get("nothere", v, sizeof v), MPI_ERR_NAME, "not found");
    expect_error(__LINE__, ops->get("mf.addr.0", v, 4), MPI_ERR_OTHER, "does not fit in 4 bytes");
    expect_error(__LINE__, ops->put("k", "v"), MPI_ERR_OTHER, "failed with rc=1 (duplicate key)");
    /* Refused before anything is sent. */
    expect_error(__LINE__, ops->put("k", "a;b"), MPI_ERR_OTHER, "cannot carry");
    expect_error(__LINE__, ops->get("a;b", v, sizeof v), MPI_ERR_OTHER, "not a valid");
    CHECK(ops->finalize() == MPI_SUCCESS);
    finish(__LINE__, pid);

    /* Bad replies during init: each a clear error, the connection closed. */
    static const step badhdr[] = {P2_INIT, {"cmd=fullinit;", "abcdefcmd=x;"}, {NULL, NULL}};
    pid = start(badhdr);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "bad message header");
    finish(__LINE__, pid);

    static const step badbody[] = {P2_INIT, {"cmd=fullinit;", "2:rank=1;cmd=x;"}, {NULL, NULL}};
    pid = start(badbody);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "malformed response");
    finish(__LINE__, pid);

    static const step closed[] = {P2_INIT, {"cmd=fullinit;", NULL}, {NULL, NULL}};
    pid = start(closed);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "closed the connection");
    finish(__LINE__, pid);

    static const step wrong[] = {
        P2_INIT, {"cmd=fullinit;", "2:cmd=kvs-put-response;rc=0;"}, {NULL, NULL}};
    pid = start(wrong);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER,
                 "expected 'fullinit-response' in reply to 'fullinit'");
    finish(__LINE__, pid);

    static const step norank[] = {
        P2_INIT, {"cmd=fullinit;", "2:cmd=fullinit-response;rank=4;size=4;rc=0;"}, {NULL, NULL}};
    pid = start(norank);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "without a valid rank and size");
    finish(__LINE__, pid);

    static const step refused[] = {
        {"cmd=init", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"}, {NULL, NULL}};
    pid = start(refused);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "refused PMI version 2");
    finish(__LINE__, pid);

    /* Abort: the request, then the wait for the launcher's kill (here: the server closing). */
    static const step abrt[] = {
        P2_INIT,
        P2_FULLINIT,
        P2_GETID,
        {"cmd=info-getjobattr;", "2:cmd=info-getjobattr-response;found=FALSE;rc=0;"},
        {"cmd=abort;isworld=TRUE;msg=bye_now;", NULL},
        {NULL, NULL}};
    expect_abort(__LINE__, ops, abrt, "bye\nnow");

    unsetenv("PMI_JOBID");
}

#define P1_INIT_REPLY "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
#define P1_SETUP                                                                                   \
    {"cmd=get_maxes\n", "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n"},         \
        {"cmd=get_appnum\n", "cmd=appnum appnum=2\n"},                                             \
        {"cmd=get_my_kvsname\n", "cmd=my_kvsname kvsname=kvs_77_0 rc=0\n"},                        \
    {                                                                                              \
        "cmd=get_universe_size\n", "cmd=universe_size size=-1 rc=0\n"                              \
    }

static void test_pmi1(void)
{
    const mf_pm_ops *ops = &mf_pm_pmi1_ops;
    mf_pm_identity id;
    char v[64];
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "2", 1);

    /* The conversation of MPICH's Hydra. */
    static const step ok[] = {
        {"cmd=init pmi_version=1 pmi_subversion=1\n", P1_INIT_REPLY},
        P1_SETUP,
        {"cmd=put kvsname=kvs_77_0 key=mf.addr.1 value=00ff\n", "cmd=put_result rc=0\n"},
        {"cmd=barrier_in\n", "cmd=barrier_out\n"},
        {"cmd=get kvsname=kvs_77_0 key=mf.addr.0\n", "cmd=get_result rc=0 value=a=b\n"},
        {"cmd=get kvsname=kvs_77_0 key=nothere\n", "cmd=get_result rc=-1 msg=key_not_found\n"},
        {"cmd=put kvsname=kvs_77_0 key=k value=v\n", "cmd=put_result rc=-1 msg=duplicate\n"},
        {"cmd=finalize\n", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    pid_t pid = start(ok);
    CHECK(ops->init(&id) == MPI_SUCCESS);
    CHECK(id.rank == 1 && id.size == 2 && id.appnum == 2 && id.universe_size == 2);
    CHECK(strcmp(id.jobid, "kvs_77_0") == 0);
    CHECK(ops->put("mf.addr.1", "00ff") == MPI_SUCCESS);
    CHECK(ops->fence() == MPI_SUCCESS);
    CHECK(ops->get("mf.addr.0", v, sizeof v) == MPI_SUCCESS && strcmp(v, "a=b") == 0);
    expect_error(__LINE__, ops->get("nothere", v, sizeof v), MPI_ERR_NAME, "not found");
    expect_error(__LINE__, ops->put("k", "v"), MPI_ERR_OTHER, "failed with rc=-1 (duplicate)");
    expect_error(__LINE__, ops->put("k", "a b"), MPI_ERR_OTHER, "cannot carry");
    expect_error(__LINE__, ops->get("a b", v, sizeof v), MPI_ERR_OTHER, "not a valid");
    CHECK(ops->finalize() == MPI_SUCCESS);
    finish(__LINE__, pid);

    static const step garbage[] = {{"cmd=init", "rc=0 cmd=response_to_init\n"}, {NULL, NULL}};
    pid = start(garbage);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "malformed response");
    finish(__LINE__, pid);

    static char longline[6000];
    memset(longline, 'x', sizeof longline - 1);
    memcpy(longline, "cmd=", 4);
    static const step toolong[] = {{"cmd=init", longline}, {NULL, NULL}};
    pid = start(toolong);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "longer than 4096 bytes");
    finish(__LINE__, pid);

    static const step closed[] = {
        {"cmd=init", P1_INIT_REPLY}, {"cmd=get_maxes", NULL}, {NULL, NULL}};
    pid = start(closed);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "closed the connection");
    finish(__LINE__, pid);

    static const step failed[] = {{"cmd=init", "cmd=response_to_init rc=-2 msg=version\n"},
                                  {NULL, NULL}};
    pid = start(failed);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "'init' failed with rc=-2 (version)");
    finish(__LINE__, pid);

    static const step wrong[] = {{"cmd=init", "cmd=barrier_out\n"}, {NULL, NULL}};
    pid = start(wrong);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER,
                 "expected 'response_to_init' in reply to 'init'");
    finish(__LINE__, pid);

    /* Abort: the message travels percent-escaped; a server that is not Manifold's does not print
     * it, so the client does. */
    static const step abrt[] = {{"cmd=init", P1_INIT_REPLY},
                                P1_SETUP,
                                {"cmd=abort exitcode=3 message=bye%20now\n", NULL},
                                {NULL, NULL}};
    expect_abort(__LINE__, ops, abrt, "bye now");
}

/* PMI_PORT=host:port with PMI_ID: connect, initack, then the `set` lines give rank and size. */
static void test_pmi1_port(void)
{
    const mf_pm_ops *ops = &mf_pm_pmi1_ops;
    mf_pm_identity id;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0) {
        perror("listen");
        unit_check_failures++;
        return;
    }
    static const step ok[] = {
        {"cmd=initack pmiid=5\n", "cmd=initack\ncmd=set size=3\ncmd=set rank=2\ncmd=set debug=0\n"},
        {"cmd=init pmi_version=1", P1_INIT_REPLY},
        P1_SETUP,
        {"cmd=finalize\n", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    pid_t pid = fork();
    if (pid == 0) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            _exit(1);
        serve(fd, ok);
    }
    close(lfd);
    char port[64];
    snprintf(port, sizeof port, "127.0.0.1:%d", ntohs(sa.sin_port));
    unsetenv("PMI_FD");
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    setenv("PMI_PORT", port, 1);
    setenv("PMI_ID", "5", 1);
    CHECK(ops->init(&id) == MPI_SUCCESS);
    CHECK(id.rank == 2 && id.size == 3 && id.universe_size == 3);
    CHECK(ops->finalize() == MPI_SUCCESS);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    setenv("PMI_PORT", "nocolon", 1);
    expect_error(__LINE__, ops->init(&id), MPI_ERR_OTHER, "is not host:port");
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
}

int main(void)
{
    test_pmi2();
    test_pmi1();
    test_pmi1_port();
    if (unit_check_failures)
        fprintf(stderr, "%d failure(s)\n", unit_check_failures);
    return unit_check_failures ? 1 : 0;
}
