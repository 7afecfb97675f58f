/*
 * impostor.c — a stranger attacking a live tcp job's rank (driven by impostor.sh / flood.sh).
 *
 *   impostor attack PORT JOBHASH SIZE TARGET CLAIM SECRET
 *     Against the rank TARGET listening on 127.0.0.1:PORT of a job of SIZE ranks whose job hash
 *     (not secret) is JOBHASH (hex), each on a fresh connection:
 *       garbage     300 random bytes
 *       old-hello   the old 32-byte handshake (version 1) that used to be answered with the
 *                   job's hash and secret, padded to a record
 *       frame       a frame header claiming to come from CLAIM, before any handshake
 *       no-secret   a correct HELLO claiming CLAIM; after the CHALLENGE a PROOF of random bytes,
 *                   and (another connection) an eager frame instead of a PROOF
 *       wrong       the whole handshake with a wrong secret
 *       replay      first a legitimate handshake with the job's SECRET (the test knows it),
 *                   claiming CLAIM while CLAIM's real connection is up, so the verdict is an
 *                   authenticated REJECT (checked: the responder proved itself too); then its
 *                   recorded HELLO and PROOF replayed on a fresh connection
 *     Every answer must be the fixed refusal (or nothing, then the end of the stream), except
 *     CHALLENGEs (a fresh nonce each, no other content) and the replay's own REJECT. Exits 0
 *     when all held, 1 otherwise, with a line per attack.
 *
 *   impostor flood PORT COUNT SECONDS READYFILE
 *     Holds COUNT idle connections to the port (reopening those the rank closes, at most every
 *     10 ms), creates READYFILE once all are open, and stops after SECONDS or once the port
 *     refuses connections. Raises its own
 *     open-file limit to its hard limit; exits 77 (skip) when that is not enough.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/auth.h"
#include "fabric/stream/stream.h"
#include "fabric/wire.h"

#define CHANNEL "manifold-tcp-1" /* MF_TCP_CHANNEL */

static int port;
static uint64_t job_hash;
static int size, target, claim;
static int failures;
static bool flooding; /* a refused connect is no error then: the job may have ended */

static int dial(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (flooding) {
            if (fd >= 0)
                close(fd);
            return -1; /* poll ignores it */
        }
        perror("impostor: connect");
        exit(2);
    }
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void put(int fd, const void *p, size_t n)
{
    /* The rank may have closed already (it refused): that is an answer too, read below. */
    (void)send(fd, p, n, MSG_NOSIGNAL);
}

/* Reads up to n bytes until the end of the stream (or a reset, or the timeout). */
static size_t get(int fd, unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, p + got, n - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

static void verdict(const char *attack, bool ok, const char *what)
{
    printf("impostor: %-10s %s%s%s\n", attack, ok ? "ok" : "FAILED", what ? ": " : "",
           what ? what : "");
    failures += !ok;
}

/* The rest of the connection must be the fixed refusal, or nothing, then the end. */
static void expect_refusal(const char *attack, int fd)
{
    unsigned char want[MF_STREAM_HS_SIZE], got[4 * MF_STREAM_HS_SIZE];
    mf_stream_hs r = {.kind = MF_STREAM_HS_REFUSE};
    mf_stream_hs_encode(&r, want);
    size_t n = get(fd, got, sizeof got);
    close(fd);
    if (n == 0)
        verdict(attack, true, "closed without a word");
    else if (n == sizeof want && memcmp(got, want, n) == 0)
        verdict(attack, true, "the fixed refusal");
    else
        verdict(attack, false, "the rank answered something else than the fixed refusal");
}

/* Reads a CHALLENGE: kind 2, a nonce, nothing else; returns the nonce. False otherwise. */
static bool expect_challenge(const char *attack, int fd, unsigned char nonce[MF_STREAM_HS_BLOB])
{
    unsigned char b[MF_STREAM_HS_SIZE];
    mf_stream_hs h;
    const char *why;
    if (get(fd, b, sizeof b) != sizeof b || mf_stream_hs_decode(b, &h, &why) != 0 ||
        h.kind != MF_STREAM_HS_CHALLENGE) {
        verdict(attack, false, "no CHALLENGE after a correct HELLO");
        return false;
    }
    memcpy(nonce, h.blob, MF_STREAM_HS_BLOB);
    return true;
}

static void hello(mf_stream_hs *h, mf_stream_auth *a)
{
    memset(a, 0, sizeof *a);
    mf_auth_nonce(a->sa_nonce_i);
    mf_stream_auth_ids(a, job_hash, size, claim, target);
    *h = (mf_stream_hs){.kind = MF_STREAM_HS_HELLO,
                        .from = claim,
                        .to = target,
                        .size = size,
                        .job_hash = job_hash};
    memcpy(h->blob, a->sa_nonce_i, sizeof h->blob);
}

/* HELLO, CHALLENGE, PROOF with key k; records what was sent. Returns the connection, -1 when
 * no CHALLENGE came. */
static int handshake(const char *attack, const mf_auth_secret *k, mf_stream_auth *a,
                     unsigned char rec_hello[MF_STREAM_HS_SIZE],
                     unsigned char rec_proof[MF_STREAM_HS_SIZE])
{
    mf_stream_hs h;
    hello(&h, a);
    mf_stream_hs_encode(&h, rec_hello);
    int fd = dial();
    put(fd, rec_hello, MF_STREAM_HS_SIZE);
    if (!expect_challenge(attack, fd, a->sa_nonce_r)) {
        close(fd);
        return -1;
    }
    mf_stream_hs p = {.kind = MF_STREAM_HS_PROOF};
    mf_stream_auth_mac(k, CHANNEL, MF_STREAM_HS_PROOF, a, p.blob);
    mf_stream_hs_encode(&p, rec_proof);
    put(fd, rec_proof, MF_STREAM_HS_SIZE);
    return fd;
}

static void frame(unsigned char out[MF_WIRE_HDR_SIZE + 8])
{
    mf_wire_hdr w = {
        .type = MF_MSG_EAGER, .context = 0, .src = claim, .tag = 7, .len = 8, .total = 8};
    mf_wire_encode(&w, out);
    memcpy(out + MF_WIRE_HDR_SIZE, "IMPOSTOR", 8);
}

static int attack(char **argv)
{
    port = atoi(argv[0]);
    job_hash = strtoull(argv[1], NULL, 16);
    size = atoi(argv[2]);
    target = atoi(argv[3]);
    claim = atoi(argv[4]);
    mf_auth_secret secret, wrong;
    const char *why;
    if (mf_auth_init() != 0 || mf_auth_secret_parse(argv[5], &secret, &why) != 0) {
        fprintf(stderr, "impostor: bad secret argument\n");
        return 2;
    }
    unsigned char b[512], rec_hello[MF_STREAM_HS_SIZE], rec_proof[MF_STREAM_HS_SIZE];
    mf_stream_auth a;
    mf_stream_hs h;

    int fd = dial();
    for (size_t i = 0; i < 300; i++)
        b[i] = (unsigned char)rand();
    put(fd, b, 300);
    expect_refusal("garbage", fd);

    /* 'MFHS', version 1, HELLO, rank, size, job hash, a guessed secret of 0. */
    memset(b, 0, MF_STREAM_HS_SIZE);
    memcpy(b, "MFHS\001\001", 6);
    memcpy(b + 8, &claim, 4);
    memcpy(b + 12, &size, 4);
    memcpy(b + 16, &job_hash, 8);
    fd = dial();
    put(fd, b, MF_STREAM_HS_SIZE);
    expect_refusal("old-hello", fd);

    fd = dial();
    frame(b);
    put(fd, b, MF_WIRE_HDR_SIZE + 8);
    expect_refusal("frame", fd);

    /* The job hash without the secret: a CHALLENGE, then a guessed PROOF. Two CHALLENGEs for
     * the same HELLO must differ (fresh nonces, nothing computed from the key). */
    unsigned char first[MF_STREAM_HS_BLOB];
    hello(&h, &a);
    mf_stream_hs_encode(&h, rec_hello);
    fd = dial();
    put(fd, rec_hello, MF_STREAM_HS_SIZE);
    if (expect_challenge("no-secret", fd, first)) {
        mf_stream_hs p = {.kind = MF_STREAM_HS_PROOF};
        mf_auth_nonce(p.blob);
        mf_stream_hs_encode(&p, b);
        put(fd, b, MF_STREAM_HS_SIZE);
        expect_refusal("no-secret", fd);
    }
    fd = dial();
    put(fd, rec_hello, MF_STREAM_HS_SIZE);
    if (expect_challenge("no-secret", fd, a.sa_nonce_r)) {
        verdict("fresh", memcmp(first, a.sa_nonce_r, sizeof first) != 0,
                "two CHALLENGEs to one HELLO differ");
        frame(b);
        put(fd, b, MF_WIRE_HDR_SIZE + 8);
        expect_refusal("frame-late", fd);
    }

    wrong = secret;
    wrong.as_key[5] ^= 0x20;
    fd = handshake("wrong", &wrong, &a, rec_hello, rec_proof);
    if (fd >= 0)
        expect_refusal("wrong", fd);

    /* Replay: record a legitimate handshake, then play it again. */
    fd = handshake("record", &secret, &a, rec_hello, rec_proof);
    if (fd >= 0) {
        size_t n = get(fd, b, MF_STREAM_HS_SIZE + 1);
        close(fd);
        bool ok = n == MF_STREAM_HS_SIZE && mf_stream_hs_decode(b, &h, &why) == 0 &&
                  h.kind == MF_STREAM_HS_REJECT && mf_stream_auth_check(&secret, CHANNEL, &h, &a);
        verdict("record", ok, "a proven peer gets the authenticated REJECT (its rank is up)");
    }
    fd = dial();
    put(fd, rec_hello, MF_STREAM_HS_SIZE);
    if (expect_challenge("replay", fd, a.sa_nonce_r)) {
        put(fd, rec_proof, MF_STREAM_HS_SIZE);
        frame(b);
        put(fd, b, MF_WIRE_HDR_SIZE + 8);
        expect_refusal("replay", fd);
    }
    printf("impostor: %s\n", failures ? "FAILED" : "all attacks refused");
    return failures ? 1 : 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int flood(char **argv)
{
    flooding = true;
    port = atoi(argv[0]);
    int count = atoi(argv[1]);
    double seconds = atof(argv[2]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < (rlim_t)count + 64) {
        printf("impostor: cannot hold %d connections (open-file limit %llu)\n", count,
               (unsigned long long)rl.rlim_cur);
        return 77;
    }
    struct pollfd *p = calloc((size_t)count, sizeof *p);
    for (int i = 0; i < count; i++)
        p[i] = (struct pollfd){.fd = dial(), .events = POLLIN};
    FILE *f = fopen(argv[3], "w");
    if (f)
        fclose(f);
    long reopened = 0;
    for (double end = now() + seconds; now() < end;) {
        if (poll(p, (nfds_t)count, 10) <= 0)
            continue;
        char sink[256];
        for (int i = 0; i < count; i++) {
            if (!p[i].revents)
                continue;
            if (recv(p[i].fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
                continue;
            close(p[i].fd);
            p[i].fd = dial();
            if (p[i].fd < 0) { /* the job is gone: stop before its port serves someone else */
                printf("impostor: the rank stopped listening\n");
                return 0;
            }
            reopened++;
        }
        usleep(10000);
    }
    printf("impostor: flood of %d connections held, %ld reopened after the rank closed them\n",
           count, reopened);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    srand((unsigned)getpid());
    if (argc == 8 && strcmp(argv[1], "attack") == 0)
        return attack(argv + 2);
    if (argc == 6 && strcmp(argv[1], "flood") == 0)
        return flood(argv + 2);
    fprintf(stderr, "usage: impostor attack PORT JOBHASH SIZE TARGET CLAIM SECRET\n"
                    "       impostor flood PORT COUNT SECONDS READYFILE\n");
    return 2;
}
