/*
 * tcp_auth_test.c — the bounds on strangers (tcp.h), at the level of the fabric's state machine:
 * one process opens the tcp fabric as rank 0 of 2 and connects plain sockets to its own
 * listener, pumping progress in between (rank 1 never exists: nothing here authenticates).
 *
 *   cap       past t_pending_max the oldest pending connection is closed, but one that sent a
 *             valid HELLO outlives idle ones older than it
 *   deadline  pending connections are closed once t_auth_timeout has passed, not before
 *   emfile    out of descriptors with strangers pending: the oldest is shed for the newcomer
 *   reserve   out of descriptors with nothing to shed: the newcomer is taken with the reserve
 *             descriptor and dropped, the listener pauses (no spin), one warning line
 * Exits 0 on success.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/tcp/tcp.h"
#include "unit_check.h"

void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    unit_check_failures++; /* no frame may ever arrive */
}

void mf_fabric_peer_failed(mf_fabric *f, int peer, int code)
{
}

static struct sockaddr_in self;
static mf_tcp *t;

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&self, sizeof self) != 0)
        return -1;
    return fd;
}

/* Progress for `seconds`. */
static void pump(double seconds)
{
    double end = mf_clock_s() + seconds;
    do {
        t->t_base.ops->progress(&t->t_base);
        usleep(1000);
    } while (mf_clock_s() < end);
}

/* Progress until cond() holds, for at most `seconds`; whether it held. */
static bool pump_until(bool (*cond)(void), double seconds)
{
    double end = mf_clock_s() + seconds;
    while (!cond() && mf_clock_s() < end) {
        t->t_base.ops->progress(&t->t_base);
        usleep(1000);
    }
    return cond();
}

static int want_pending;
static bool pending_is(void)
{
    return t->t_npending == want_pending;
}

/* 1: the rank closed it; 0: open and silent; 2: open, bytes waiting. */
static int state_of(int fd)
{
    char b[128];
    ssize_t n = recv(fd, b, sizeof b, MSG_DONTWAIT | MSG_PEEK);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return 1;
    return n > 0 ? 2 : 0;
}

static void send_hello(int fd)
{
    mf_stream_hs h = {
        .kind = MF_STREAM_HS_HELLO, .from = 1, .to = 0, .size = 2, .job_hash = mf_g.job_hash};
    unsigned char b[MF_STREAM_HS_SIZE];
    mf_stream_hs_encode(&h, b);
    CHECK(send(fd, b, sizeof b, MSG_NOSIGNAL) == (ssize_t)sizeof b);
}

static void test_cap(void)
{
    t->t_pending_max = 4;
    int a = dial(), idle[6];
    send_hello(a);
    want_pending = 1; /* a is accepted and challenged first: the oldest */
    CHECK(pump_until(pending_is, 5));
    for (int i = 0; i < 6; i++)
        idle[i] = dial();
    want_pending = 4;
    CHECK(pump_until(pending_is, 5));
    pump(0.05); /* all six accepted: the count stays */
    CHECK(t->t_npending == 4);
    CHECK(state_of(a) == 2); /* its CHALLENGE, still open */
    for (int i = 0; i < 6; i++)
        CHECK(state_of(idle[i]) == (i < 3 ? 1 : 0));
    for (int i = 0; i < 6; i++)
        close(idle[i]);
    close(a);
    want_pending = 0;
    CHECK(pump_until(pending_is, 5));
}

static void test_deadline(void)
{
    t->t_pending_max = 100;
    t->t_auth_timeout = 1.0;
    int fd[5];
    double t0 = mf_clock_s();
    for (int i = 0; i < 5; i++)
        fd[i] = dial();
    send_hello(fd[0]);
    want_pending = 5;
    CHECK(pump_until(pending_is, 0.8));
    want_pending = 0;
    CHECK(pump_until(pending_is, 5));
    CHECK(mf_clock_s() - t0 >= 1.0); /* not before the deadline */
    for (int i = 0; i < 5; i++) {
        if (i == 0) { /* the CHALLENGE, then the end */
            char b[MF_STREAM_HS_SIZE];
            CHECK(recv(fd[i], b, sizeof b, MSG_DONTWAIT) == (ssize_t)sizeof b);
        }
        CHECK(state_of(fd[i]) == 1);
        close(fd[i]);
    }
    t->t_auth_timeout = 5;
}

/* Lowers the open-file limit so that exactly `spare` descriptors are free (holes below the
 * highest open one filled with /dev/null); unsqueeze undoes it. */
static int fillers[4096], nfill;
static struct rlimit old_limit;

static void squeeze(int spare)
{
    getrlimit(RLIMIT_NOFILE, &old_limit);
    int top = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            top = fd;
    struct rlimit rl = old_limit;
    rl.rlim_cur = (rlim_t)(top + 1 + spare);
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    for (int fd; nfill < 4096 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
        fillers[nfill++] = fd;
    for (int i = 0; i < spare && nfill > 0; i++)
        close(fillers[--nfill]);
}

static void unsqueeze(void)
{
    while (nfill > 0)
        close(fillers[--nfill]);
    setrlimit(RLIMIT_NOFILE, &old_limit);
}

/* Client sockets live in a child (its own descriptor table, its limit restored): squeezes our
 * descriptors to `spare` free ones, and returns how many of the child's `n` connections the
 * rank closed while we progressed for `hold` seconds. */
static int strangers(int n, int spare, double hold)
{
    int up[2];
    CHECK(pipe(up) == 0);
    squeeze(spare);
    pid_t pid = fork();
    if (pid == 0) {
        unsqueeze();
        int *fd = calloc((size_t)n, sizeof *fd);
        for (int i = 0; i < n; i++)
            fd[i] = dial();
        char c = 0;
        (void)!write(up[1], &c, 1);
        usleep((useconds_t)(hold * 1e6) + 200000);
        int closed = 0;
        for (int i = 0; i < n; i++)
            closed += fd[i] >= 0 && state_of(fd[i]) == 1;
        _exit(closed);
    }
    char c;
    CHECK(read(up[0], &c, 1) == 1);
    pump(hold);
    int st = 0;
    waitpid(pid, &st, 0);
    unsqueeze();
    close(up[0]);
    close(up[1]);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* stderr into a file while fn runs; returns the lines it got. */
static int warnings_during(void (*fn)(void))
{
    FILE *tmp = tmpfile();
    t->t_rl_shed = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
    t->t_rl_accept = (mf_ratelimit)MF_RATELIMIT_INIT(10.0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    int lines = 0;
    char line[512];
    while (fgets(line, sizeof line, tmp)) {
        fputs(line, stderr);
        lines++;
    }
    fclose(tmp);
    return lines;
}

static void emfile_body(void)
{
    t->t_pending_max = 1000;
    int closed = strangers(40, 6, 0.5);
    /* Every newcomer took the place of the oldest: the pending count stayed within the limit. */
    CHECK(closed >= 30);
    CHECK(t->t_npending > 0 && t->t_npending <= 6);
    CHECK(!t->t_listen_paused);
    pump(0.02);
}

static void test_emfile(void)
{
    int lines = warnings_during(emfile_body);
    CHECK(lines >= 1 && lines <= 2); /* shed reports, rate-limited */
    t->t_auth_timeout = 0.01;
    want_pending = 0;
    CHECK(pump_until(pending_is, 5));
    t->t_auth_timeout = 5;
}

static void reserve_body(void)
{
    /* Nothing pending: every descriptor is taken. */
    int closed = strangers(40, 0, 1.0);
    printf("reserve: %d of 40 strangers dropped in 1 s\n", closed);
    /* One drop per back-off at most: not a spin through all of them, but some. */
    CHECK(closed >= 1 && closed <= 20);
    CHECK(t->t_npending == 0);
    pump(0.3); /* the listeners resume */
    CHECK(!t->t_listen_paused);
}

static void test_reserve(void)
{
    int lines = warnings_during(reserve_body);
    CHECK(lines == 1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    mf_log_set_rank(0);
    if (mf_pm_init(&mf_g.pm) != MPI_SUCCESS || mf_auth_init() != 0)
        return 10;
    static int node_of[2];
    mf_g.rank = 0;
    mf_g.size = 2;
    mf_g.node_of = node_of;
    mf_g.job_hash = 0xfeedbeef;
    mf_auth_secret_generate(&mf_g.job_secret);
    mf_fabric *f = mf_fabric_instance_new(&mf_tcp_class, 0, "lo");
    if (!f)
        return 11;
    t = mf_tcp_of(f);
    if (f->ops->open(f) != MPI_SUCCESS)
        return 11;
    char val[MF_PM_VAL_MAX];
    if (mf_pm_get("mf.tcp0.0", val, sizeof val) != 0 ||
        mf_tcp_parse_addrs(val, true, &self, 1) != 1)
        return 12;
    test_cap();
    test_deadline();
    test_emfile();
    test_reserve();
    f->ops->close(f);
    mf_fabric_instance_free(f);
    printf("tcp_auth_test: %s\n", unit_check_failures ? "FAILED" : "ok");
    return unit_check_failures ? 1 : 0;
}
