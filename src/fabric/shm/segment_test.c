/*
 * Unit test of the shm segment (segment.c): create / attach from another process / early unlink
 * leaves nothing in /dev/shm; a stale namesake is replaced; a segment too big for /dev/shm is a
 * clear MPI_ERR_NO_MEM error for the creator and for the waiting ranks (no SIGBUS, no file
 * left); attaching to a segment that never appears times out with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "fabric/shm/shm.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

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

/* Two processes: the parent creates, the child attaches; both arrive; the name is gone. */
static void test_create_attach(const char *name)
{
    const uint64_t secret = 0x5ec2e7;
    const size_t cap = 65536;
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        mf_shm_segment s;
        if (mf_shm_segment_attach(&s, name, secret, 10000) != 0 || s.nlocal != 2 ||
            s.ring_cap != cap)
            _exit(2);
        if (mf_shm_segment_arrive(&s, 10000) != 0)
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
    CHECK(mf_shm_segment_create(&s, name, 2, cap, secret) == 0);
    CHECK(mf_shm_segment_arrive(&s, 10000) == 0);
    int st;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(!shm_exists(name)); /* unlinked by the last to arrive */
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
    CHECK(mf_shm_segment_create(&s, name, 2, 4096, 1) == 0);
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
    rc = mf_shm_segment_create(&s, name, 3000, 262144, 7);
    CHECK(mf_error_class(rc) == MPI_ERR_NO_MEM);
    error_text(rc, msg);
    CHECK(strstr(msg, "needs"));
    CHECK(shm_exists(name)); /* kept so that waiting ranks learn why */
    mf_shm_segment w;
    rc = mf_shm_segment_attach(&w, name, 7, 2000);
    CHECK(mf_error_class(rc) == MPI_ERR_NO_MEM);
    error_text(rc, msg);
    CHECK(strstr(msg, "local rank 0 could not create") && strstr(msg, "needs"));
    CHECK(!shm_exists(name));
}

/* Makes a READY segment whose creator record says `pid`, then drops it without unlinking (as
 * a job killed during MPI_Init would), aged by `age_s` seconds. */
static void leave_segment(const char *name, pid_t pid, int age_s)
{
    mf_shm_segment s;
    CHECK(mf_shm_segment_create(&s, name, 2, 4096, 3) == 0);
    mf_shm_segment_info(&s, 0)->pid = (int32_t)pid;
    munmap(s.base, s.size);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age_s;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

static void test_reap(const char *name)
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
}

static void test_timeout(const char *name)
{
    mf_shm_segment s;
    char msg[MPI_MAX_ERROR_STRING];
    int rc = mf_shm_segment_attach(&s, name, 1, 300);
    CHECK(rc != 0);
    error_text(rc, msg);
    CHECK(strstr(msg, "did not create"));
}

int main(void)
{
    char name[96];
    /* The uid prefix of real segments, so that the reaper test sees these too. */
    snprintf(name, sizeof name, "/manifold-%u-segment-test-%d", (unsigned)getuid(), (int)getpid());
    test_geometry();
    test_create_attach(name);
    test_stale(name);
    test_too_big(name);
    test_timeout(name);
    test_reap(name);
    CHECK(!shm_exists(name));
    printf("segment_test: ok\n");
    return 0;
}
