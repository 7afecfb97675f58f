/*
 * Unit test of the shm segment (segment.c) and of the doorbells that hand it out (doorbell.c):
 * create / attach from another process, anonymous (handed over a doorbell, never in /dev/shm) and
 * named (mode 0600, early unlink leaves nothing in /dev/shm); a stale namesake is replaced; a
 * segment too big for /dev/shm is a clear MPI_ERR_NO_MEM error for the creator and for the
 * waiting ranks (no SIGBUS, no file left); attaching to a segment that never appears times out
 * with a message; datagrams from another uid get no segment, deliver none, and are counted
 * (when run as root, which can become another user).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "fabric/shm/shm.h"
#include "fabric/shm/shm_name.h"
#define UNIT_CHECK_FATAL
#include "unit_check.h"

static bool shm_exists(const char *name)
{
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return stat(path, &st) == 0;
}

static void error_text(int code, char *buf)
{
    int len;
    CHECK(mf_error_string(code, buf, &len) == 0);
}

static void test_geometry(void)
{
    size_t c2 = mf_shm_ring_cap_for(2, 32768);
    CHECK(c2 >= 4 * mf_shm_frame_bytes(32768) && (c2 & (c2 - 1)) == 0);
    /* Many local ranks shrink rings, but never below one maximal frame. */
    size_t c64 = mf_shm_ring_cap_for(64, 32768);
    CHECK(c64 < c2 && c64 > mf_shm_frame_bytes(32768));
    /* Up to 6 ranks every ring holds 15 frames of the default 64 KiB eager limit; 8 ranks stay
     * within the budget (32 MiB). */
    CHECK(mf_shm_ring_cap_for(6, 65536) >= 15 * mf_shm_frame_bytes(65536));
    CHECK(mf_shm_ring_cap_for(8, 65536) * 56 <= ((size_t)32 << 20));
    size_t big = mf_shm_ring_cap_for(2, 1 << 20);
    CHECK(big > mf_shm_frame_bytes(1 << 20));
    CHECK(mf_shm_segment_size(4, 65536) >= 12 * 65536);
    char name[96];
    mf_shm_segment_name(name, sizeof name, 0xabcull, 3);
    CHECK(strncmp(name, "/manifold-", 10) == 0 && strstr(name, "0000000000000abc-3"));
}

/* Two processes: the parent creates, the child attaches; both arrive; the name is gone. With
 * `handout` the segment goes over the doorbells and never has a name at all. */
static void test_create_attach(const char *name, uint64_t job_hash, bool handout)
{
    const uint64_t secret = 0x5ec2e7;
    const size_t cap = 65536;
    /* Both doorbells exist before either side starts, as after MPI_Init's fence. */
    int db0 = mf_shm_doorbell_open(job_hash, 0), db1 = mf_shm_doorbell_open(job_hash, 1);
    CHECK(db0 >= 0 && db1 >= 0);
    mf_shm_channel ch0 = {db0, job_hash, 0}, ch1 = {db1, job_hash, 0};
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        mf_shm_segment s;
        if (mf_shm_segment_attach(&s, name, secret, 10000, handout ? &ch1 : NULL) != 0 ||
            s.nlocal != 2 || s.ring_cap != cap || s.named == handout)
            _exit(2);
        if (mf_shm_segment_arrive(&s, 10000, &ch1) != 0)
            _exit(3);
        /* Write into the ring parent -> child's data at its end: the parent checks it. */
        unsigned char *data;
        mf_shm_segment_ring(&s, 1, 0, &data);
        data[cap - 1] = 0x5a;
        mf_shm_segment_info(&s, 1)->pid = (int32_t)getpid();
        mf_shm_segment_detach(&s);
        _exit(0);
    }
    /* Give the child time to start waiting before the segment exists. */
    usleep(20000);
    mf_shm_segment s;
    CHECK(mf_shm_segment_create(&s, name, 2, cap, secret, handout) == 0);
    CHECK(s.named == !handout);
    if (handout) {
        struct stat st;
        CHECK(!shm_exists(name));
        CHECK(fstat(s.fd, &st) == 0 && (st.st_mode & 0777) == 0600);
    } else {
        /* Not yet unlinked (we have not arrived): private to our uid. */
        char path[128];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm%s", name);
        CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    }
    CHECK(mf_shm_segment_arrive(&s, 10000, &ch0) == 0);
    CHECK(s.fd < 0); /* handed out to everyone: closed */
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(!shm_exists(name));   /* unlinked by the last to arrive */
    mf_shm_doorbell_drain(db1); /* duplicate answers to repeated requests */
    close(db0);
    close(db1);
    unsigned char *data;
    mf_shm_segment_ring(&s, 1, 0, &data);
    CHECK(data[cap - 1] == 0x5a);
    CHECK(mf_shm_segment_info(&s, 1)->pid == child);
    mf_shm_segment_detach(&s);
    CHECK(!shm_exists(name));
}

/* A leftover file of the same name (crashed job) is replaced by the creator. */
static void test_stale(const char *name)
{
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 8192) == 0);
    close(fd);
    mf_shm_segment s;
    CHECK(mf_shm_segment_create(&s, name, 2, 4096, 1, false) == 0);
    mf_shm_segment_detach(&s); /* nobody else arrived: detach unlinks */
    CHECK(!shm_exists(name));
}

/* A segment larger than /dev/shm: clear errors, no SIGBUS, nothing left behind. */
static void test_too_big(const char *name)
{
    char msg[MPI_MAX_ERROR_STRING];
    int rc = mf_shm_space_check("/dev/shm", (size_t)1 << 62);
    CHECK(mf_error_class(rc) == MPI_ERR_NO_MEM);
    error_text(rc, msg);
    CHECK(strstr(msg, "/dev/shm") && strstr(msg, "KiB") && strstr(msg, "MANIFOLD_SHM=0"));
    CHECK(mf_shm_space_check("/dev/shm", 4096) == 0);

    /* 3000 local ranks with 256 KiB rings need terabytes. */
    mf_shm_segment s;
    rc = mf_shm_segment_create(&s, name, 3000, 262144, 7, false);
    CHECK(mf_error_class(rc) == MPI_ERR_NO_MEM);
    error_text(rc, msg);
    CHECK(strstr(msg, "needs"));
    CHECK(shm_exists(name)); /* kept so that waiting ranks learn why */
    mf_shm_segment w;
    rc = mf_shm_segment_attach(&w, name, 7, 2000, NULL);
    CHECK(mf_error_class(rc) == MPI_ERR_NO_MEM);
    error_text(rc, msg);
    CHECK(strstr(msg, "local rank 0 could not create") && strstr(msg, "needs"));
    CHECK(!shm_exists(name));
}

/* Sets the times of /dev/shm`name` back by `age_s` seconds. */
static void age_file(const char *name, int age_s)
{
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age_s;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

/* Makes a READY segment whose creator record says `pid`, then drops it without unlinking (as
 * a job killed during MPI_Init would), aged by `age_s` seconds. */
static void leave_segment(const char *name, pid_t pid, int age_s)
{
    mf_shm_segment s;
    CHECK(mf_shm_segment_create(&s, name, 2, 4096, 3, false) == 0);
    mf_shm_segment_info(&s, 0)->pid = (int32_t)pid;
    munmap(s.base, s.size);
    age_file(name, age_s);
}

/* Leaves an empty /dev/shm file called `name`, aged by `age_s` seconds (a communicator's host
 * segment of a killed job: no header, only its name says who made it). */
static void leave_file(const char *name, int age_s)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 8192) == 0);
    close(fd);
    age_file(name, age_s);
}

/* Host segments of communicators are judged by the creator's pid in their name. */
static void test_reap_host_segments(pid_t dead, uint64_t job_hash)
{
    unsigned uid = (unsigned)getuid();
    char dead_old[128], dead_new[128], live_old[128], odd[128];
    mf_shm_host_segment_name(dead_old, sizeof dead_old, uid, job_hash, "coll", (int)dead, 0);
    mf_shm_host_segment_name(dead_new, sizeof dead_new, uid, job_hash, "rma", (int)dead, 1);
    mf_shm_host_segment_name(live_old, sizeof live_old, uid, job_hash, "coll", (int)getpid(), 2);
    /* Not a host segment's name (a digit in the kind): judged as a host's segment, which it is
     * not either (no header), so kept. */
    snprintf(odd, sizeof odd, "/manifold-%u-%016llx-c0ll-%d-3", uid, (unsigned long long)job_hash,
             (int)dead);
    leave_file(dead_old, 600);
    leave_file(dead_new, 0);
    leave_file(live_old, 600);
    leave_file(odd, 600);
    CHECK(mf_shm_segment_reap("/dev/shm", 120) >= 1);
    CHECK(!shm_exists(dead_old) && shm_exists(dead_new) && shm_exists(live_old) && shm_exists(odd));
    shm_unlink(dead_new);
    shm_unlink(live_old);
    shm_unlink(odd);
}

static void test_reap(const char *name, uint64_t job_hash)
{
    pid_t dead = fork();
    CHECK(dead >= 0);
    if (dead == 0)
        _exit(0);
    CHECK(waitpid(dead, NULL, 0) == dead); /* now surely not a live pid (until reused) */
    char a[128], b[128], c[128];
    snprintf(a, sizeof a, "%s-dead-old", name);
    snprintf(b, sizeof b, "%s-dead-new", name);
    snprintf(c, sizeof c, "%s-live-old", name);
    /* Names must carry the uid prefix the reaper looks for. */
    CHECK(strncmp(name, "/manifold-", 10) == 0);
    leave_segment(a, dead, 600);
    leave_segment(b, dead, 0);       /* a job may still be attaching: kept */
    leave_segment(c, getpid(), 600); /* creator alive: kept */
    CHECK(mf_shm_segment_reap("/dev/shm", 120) >= 1);
    CHECK(!shm_exists(a) && shm_exists(b) && shm_exists(c));
    shm_unlink(b);
    shm_unlink(c);
    test_reap_host_segments(dead, job_hash);
}

static void test_timeout(const char *name)
{
    mf_shm_segment s;
    char msg[MPI_MAX_ERROR_STRING];
    int rc = mf_shm_segment_attach(&s, name, 1, 300, NULL);
    CHECK(rc != 0);
    error_text(rc, msg);
    CHECK(strstr(msg, "did not create"));
}

/* The abstract address of doorbell `rank` of job_hash, as a foreign user finds it. */
static socklen_t doorbell_addr(struct sockaddr_un *sa, uint64_t job_hash, int rank)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "manifold-%u-%016llx-%d",
                     (unsigned)getuid(), (unsigned long long)job_hash, rank);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Another user (uid 65534) asks rank 0's doorbell for the segment and pushes a descriptor of
 * its own to rank 1's, dressed as the segment: rank 0 answers nothing, rank 1 takes nothing,
 * both datagrams are counted as dropped; the same request from our uid is answered. */
static void test_foreign(uint64_t job_hash)
{
    if (geteuid() != 0) {
        printf("segment_test: not root, foreign-uid doorbell test skipped\n");
        return;
    }
    int db0 = mf_shm_doorbell_open(job_hash, 0), db1 = mf_shm_doorbell_open(job_hash, 1);
    CHECK(db0 >= 0 && db1 >= 0);
    int sent[2], answer[2];
    CHECK(pipe(sent) == 0 && pipe(answer) == 0);
    struct sockaddr_un sa0, sa1; /* the names carry our uid */
    socklen_t len0 = doorbell_addr(&sa0, job_hash, 0), len1 = doorbell_addr(&sa1, job_hash, 1);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(10);
        int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        /* An autobound address, so that an answer could reach us. */
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) != 0)
            _exit(11);
        if (sendto(fd, "MFSHMREQ", 8, 0, (struct sockaddr *)&sa0, len0) != 8)
            _exit(12);
        if (mf_shm_doorbell_give(fd, (struct sockaddr *)&sa1, len1, fd) != 0)
            _exit(13);
        char b = 1;
        if (write(sent[1], &b, 1) != 1 || read(answer[0], &b, 1) != 1)
            _exit(14);
        char reply[16];
        _exit(recv(fd, reply, sizeof reply, MSG_DONTWAIT) >= 0 ? 15 : 0);
    }
    char b;
    close(sent[1]); /* a child that fails cannot block us */
    CHECK(read(sent[0], &b, 1) == 1);
    unsigned long dropped = mf_shm_doorbell_dropped();
    int seg = memfd_create("segment-test", MFD_CLOEXEC);
    CHECK(seg >= 0);
    mf_shm_doorbell_serve(db0, seg);
    CHECK(mf_shm_doorbell_recv_fd(db1) == -1);
    CHECK(mf_shm_doorbell_dropped() == dropped + 2);
    CHECK(write(answer[1], &b, 1) == 1);
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* The control: the same request from our own uid is answered with the segment. */
    CHECK(mf_shm_doorbell_request(db1, job_hash, 0) == 0);
    mf_shm_doorbell_serve(db0, seg);
    int got = mf_shm_doorbell_recv_fd(db1);
    struct stat a, g;
    CHECK(got >= 0 && fstat(seg, &a) == 0 && fstat(got, &g) == 0 && a.st_ino == g.st_ino);
    close(got);
    close(seg);
    close(db0);
    close(db1);
    close(sent[0]);
    close(answer[0]);
    close(answer[1]);
}

int main(void)
{
    char name[96];
    /* The uid prefix of real segments, so that the reaper test sees these too. */
    snprintf(name, sizeof name, "/manifold-%u-segment-test-%d", (unsigned)getuid(), (int)getpid());
    test_geometry();
    uint64_t job_hash = 0x5e9000000000ull + (uint64_t)getpid();
    test_create_attach(name, job_hash, false);
    test_create_attach(name, job_hash + 1, true);
    test_foreign(job_hash + 2);
    test_stale(name);
    test_too_big(name);
    test_timeout(name);
    test_reap(name, job_hash + 3);
    CHECK(!shm_exists(name));
    printf("segment_test: ok\n");
    return 0;
}
