/*
 * fabric_test_util.h — what the network fabrics' unit tests (tcp_test.c, sctp_test.c,
 * ofi_test.c) share. Test code only, never part of the library: ranks as forked processes whose
 * fabric addresses meet through their parent (no launcher, no PMI server), a record of one
 * send's completion, the progress engine's way of waiting when idle, and checked frames (a
 * pattern per frame, arrivals checked for order and content, failures recorded). Each test
 * provides the two upcalls (mf_fabric_rx_header, mf_fabric_peer_failed), as one-line calls of
 * mf_ftest_rx_header and mf_ftest_peer_failed, and its scenarios.
 */
#ifndef MF_FABRIC_TEST_UTIL_H
#define MF_FABRIC_TEST_UTIL_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "runtime/pm.h"

#define MF_FTEST_MAXP 16 /* ranks of one scenario, at most */

/* ---- Inside a rank ---- */

/* A send's completion, for senders that wait for it: calls counts the upcalls (exactly one is
 * right), status is the last one's. */
typedef struct mf_ftest_tx {
    mf_fabric_done d;
    int calls, status;
} mf_ftest_tx;

static inline void mf_ftest_tx_done(mf_fabric_done *d, int status)
{
    ((mf_ftest_tx *)d)->calls++;
    ((mf_ftest_tx *)d)->status = status;
}

/* One sleep of an idle engine: sleep_prepare, a poll of the wait fd for at most limit_ms (or
 * the instance's poll interval when it has one: its fd may then not signal everything), and
 * sleep_end. Returns false when a sleep on the fd alone ran into limit_ms — a wake-up that never
 * came, when work was on its way. */
static inline bool mf_ftest_sleep(mf_fabric *f, int limit_ms)
{
    int fd = f->ops->wait_fd(f), ms = limit_ms;
    if (f->poll_interval_us > 0)
        ms = (f->poll_interval_us + 999) / 1000;
    bool timed_out = false;
    if (f->ops->sleep_prepare(f)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        timed_out = poll(&p, fd >= 0 ? 1 : 0, ms) == 0 && f->poll_interval_us == 0;
    }
    f->ops->sleep_end(f);
    return !timed_out;
}

/* One step of the progress engine: a progress pass; after `spins` passes in a row that found
 * nothing to do, a sleep of at most 10 ms (mf_ftest_sleep). spins = 0 sleeps at once. */
static inline void mf_ftest_pump(mf_fabric *f, int spins)
{
    static int idle; /* passes in a row without work */
    if (f->ops->progress(f) > 0) {
        idle = 0;
        return;
    }
    if (++idle < spins)
        return;
    mf_ftest_sleep(f, 10);
}

/* Makes the forked process rank `rank` of np in the library's global state, as MPI_Init would:
 * its log prefix, a singleton key-value store, every rank on one host (or, when `remote`, each
 * on a host of its own, so that a fabric must not use loopback) and the job's secret, which in
 * an `impostor` differs by one bit. Returns 0, or 1 when the key-value store cannot be had. */
static inline int mf_ftest_rank_init(int rank, int np, bool remote, bool impostor)
{
    static int node_of[MF_FTEST_MAXP];
    mf_log_set_rank(rank);
    if (mf_pm_init(&mf_g.pm) != MPI_SUCCESS)
        return 1;
    mf_g.rank = rank;
    mf_g.size = np;
    for (int r = 0; r < np; r++)
        node_of[r] = remote ? r : 0;
    mf_g.node_of = node_of;
    mf_g.node = remote ? rank : 0;
    mf_g.num_nodes = remote ? np : 1;
    mf_g.job_hash = 0x5eed;
    memset(&mf_g.job_secret, 0x60, sizeof mf_g.job_secret);
    if (impostor)
        mf_g.job_secret.as_key[MF_AUTH_SECRET_BYTES - 1] ^= 1;
    return 0;
}

/* ---- Checked frames ---- */

/* What a rank receives and how it waits. Frames from peer p land in buf[p] (the payloads of
 * several peers interleave; one peer's frames arrive one after the other), scattered over
 * `pieces` iovecs. Each frame must carry its peer's next sequence number (the header's sreq, one
 * count per sender and receiver) and its sender's rank; frames whose tag is `checked_tag` (-1:
 * every frame) must carry the pattern of their sequence number. */
typedef struct mf_ftest_rank {
    /* Set by the test before traffic. */
    int pieces;      /* 1 to 3 */
    int checked_tag; /* -1: all */
    size_t cap;      /* bytes of each buf */
    unsigned char *buf[MF_FTEST_MAXP];
    int spins;           /* idle progress passes before a sleep (mf_ftest_pump) */
    double send_limit_s; /* how long mf_ftest_send waits for a completion */
    /* Kept by the helpers. */
    uint64_t tx_seq[MF_FTEST_MAXP], rx_next[MF_FTEST_MAXP];
    mf_wire_hdr hdr[MF_FTEST_MAXP]; /* the frame arriving from each peer (rreq: the peer) */
    struct iovec iov[MF_FTEST_MAXP][3];
    int frames, bad;              /* frames completed; frames out of order, torn or failed */
    int failed_peer, failed_code; /* the last peer reported failed (-1: none), its error */
    char failed_msg[MPI_MAX_ERROR_STRING];
} mf_ftest_rank;

static mf_ftest_rank mf_ftest_me = {
    .checked_tag = -1, .pieces = 2, .send_limit_s = 30, .failed_peer = -1};

/* The pattern of frame `seq`, written and checked at every byte of the first 4 KiB and at every
 * 4093rd after (a prime stride, which no period of the pattern hides), so that frames of tens of
 * MiB stay cheap to check. */
static inline unsigned char mf_ftest_pat(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 31 + i + (i >> 9));
}

static inline size_t mf_ftest_stride(size_t i)
{
    return i < 4096 ? 1 : 4093;
}

static inline bool mf_ftest_checked(int tag)
{
    return mf_ftest_me.checked_tag < 0 || tag == mf_ftest_me.checked_tag;
}

static inline void mf_ftest_rx_done(mf_fabric_sink *s, int status)
{
    mf_ftest_rank *me = &mf_ftest_me;
    const mf_wire_hdr *h = s->fs_ctx;
    const unsigned char *buf = me->buf[h->rreq];
    size_t len = h->len < me->cap ? h->len : me->cap;
    if (status != MPI_SUCCESS) {
        me->bad++;
    } else if (mf_ftest_checked(h->tag)) {
        for (size_t i = 0; i < len; i += mf_ftest_stride(i))
            if (buf[i] != mf_ftest_pat(h->sreq, i)) {
                fprintf(stderr, "rank %d: frame %llu from %d: byte %zu differs\n", mf_g.rank,
                        (unsigned long long)h->sreq, (int)h->rreq, i);
                me->bad++;
                break;
            }
    }
    me->frames++;
}

/* The body of mf_fabric_rx_header: checks the frame's place in its peer's sequence and gives
 * the fabric a sink in the peer's buffer. */
static inline void mf_ftest_rx_header(int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    mf_ftest_rank *me = &mf_ftest_me;
    if (hdr->sreq != me->rx_next[peer]++ || hdr->src != peer) {
        fprintf(stderr, "rank %d: frame %llu (tag %d, sender %d) from %d arrived, expected %llu\n",
                mf_g.rank, (unsigned long long)hdr->sreq, hdr->tag, hdr->src, peer,
                (unsigned long long)me->rx_next[peer] - 1);
        me->bad++;
    }
    size_t len = hdr->len;
    if (len > me->cap) {
        fprintf(stderr, "rank %d: frame of %zu bytes from %d, more than the test's %zu\n",
                mf_g.rank, len, peer, me->cap);
        me->bad++;
        len = me->cap;
    }
    me->hdr[peer] = *hdr;
    me->hdr[peer].rreq = (uint64_t)peer;
    size_t part = len / (size_t)me->pieces;
    for (int k = 0; k < me->pieces; k++)
        me->iov[peer][k] = (struct iovec){me->buf[peer] + (size_t)k * part,
                                          k == me->pieces - 1 ? len - (size_t)k * part : part};
    sink->fs_iov = me->iov[peer];
    sink->fs_niov = me->pieces;
    sink->fs_done = mf_ftest_rx_done;
    sink->fs_ctx = &me->hdr[peer];
}

/* The body of mf_fabric_peer_failed: records the peer and the error's text. */
static inline void mf_ftest_peer_failed(int peer, int code)
{
    int len;
    mf_ftest_me.failed_peer = peer;
    mf_ftest_me.failed_code = code;
    mf_error_string(code, mf_ftest_me.failed_msg, &len);
}

/* The header of this rank's next frame to peer, its pattern written into buf[0, len) when the
 * tag is checked. */
static inline mf_wire_hdr mf_ftest_next_frame(int peer, unsigned char *buf, size_t len, int tag)
{
    uint64_t seq = mf_ftest_me.tx_seq[peer]++;
    if (mf_ftest_checked(tag))
        for (size_t i = 0; i < len; i += mf_ftest_stride(i))
            buf[i] = mf_ftest_pat(seq, i);
    return (mf_wire_hdr){
        .type = MF_MSG_DATA, .context = 1, .src = mf_g.rank, .tag = tag, .len = len, .sreq = seq};
}

/* Sends the next frame to peer (len bytes from buf, in two pieces) and waits up to send_limit_s
 * for its completion. Returns MF_FABRIC_DONE or an error. */
static inline int mf_ftest_send(mf_fabric *f, int peer, unsigned char *buf, size_t len, int tag)
{
    mf_wire_hdr h = mf_ftest_next_frame(peer, buf, len, tag);
    struct iovec v[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
    mf_ftest_tx t = {.d.fd_fn = mf_ftest_tx_done};
    int rc = f->ops->send(f, peer, &h, v, 2, &t.d);
    if (rc != MF_FABRIC_PENDING)
        return rc;
    for (double t0 = mf_clock_s(); !t.calls && mf_clock_s() - t0 < mf_ftest_me.send_limit_s;)
        mf_ftest_pump(f, mf_ftest_me.spins);
    if (!t.calls) {
        fprintf(stderr, "rank %d: send of %zu bytes (seq %llu) to %d not done; %d frames in\n",
                mf_g.rank, len, (unsigned long long)h.sreq, peer, mf_ftest_me.frames);
        return MPI_ERR_OTHER;
    }
    return t.status == MPI_SUCCESS ? MF_FABRIC_DONE : t.status;
}

/* Progress until n frames have completed, a peer failed or limit_s passed. */
static inline void mf_ftest_wait_frames(mf_fabric *f, int n, double limit_s)
{
    double t0 = mf_clock_s();
    while (mf_ftest_me.frames < n && mf_ftest_me.failed_peer < 0 && mf_clock_s() - t0 < limit_s)
        mf_ftest_pump(f, mf_ftest_me.spins);
}

/* The rank's side of the address exchange, after its instance is open: writes the value it
 * published under "<prefix>.<rank>" up wfd, reads every rank's value (np of them, rank order)
 * from rfd and puts the other ranks' into its key-value store, where the instance's start looks
 * for them. Returns 0, or 1 when a pipe fails (the parent or a rank went away). */
static inline int mf_ftest_exchange(const char *prefix, int rank, int np, int wfd, int rfd)
{
    char key[MF_PM_KEY_MAX], val[MF_PM_VAL_MAX] = "";
    snprintf(key, sizeof key, "%s.%d", prefix, rank);
    mf_pm_get(key, val, sizeof val);
    if (write(wfd, val, sizeof val) != (ssize_t)sizeof val)
        return 1;
    for (int r = 0; r < np; r++) {
        if (read(rfd, val, sizeof val) != (ssize_t)sizeof val)
            return 1;
        snprintf(key, sizeof key, "%s.%d", prefix, r);
        if (r != rank)
            mf_pm_put(key, val);
    }
    return 0;
}

/* ---- The parent ---- */

/* One scenario's ranks. up[r] carries rank r's messages to the parent, down[r] the parent's to
 * rank r; the parent keeps only its own ends (up[r][0], down[r][1]), so a rank that dies before
 * writing is an end of file, not a hang. */
typedef struct mf_ftest_job {
    int np;      /* ranks forked (pipes open for each) */
    bool failed; /* a pipe or a fork could not be had: the forked ranks were killed */
    pid_t pid[MF_FTEST_MAXP];
    int up[MF_FTEST_MAXP][2], down[MF_FTEST_MAXP][2];
} mf_ftest_job;

/* The body of rank `rank`: its return value is the rank's exit status (0: passed). wfd and rfd
 * are its ends of up and down, for mf_ftest_exchange and any later handshake. */
typedef int (*mf_ftest_rank_fn)(int rank, int np, void *arg, int wfd, int rfd);

/* Forks np ranks running fn(rank, np, arg, ...), then relays the address table: reads one
 * MF_PM_VAL_MAX value from each rank (zeros from a rank that ended without one) and writes all
 * np to every rank. Returns 0, or 1 when a pipe or a fork could not be had (ranks already
 * forked are then killed and reaped). */
static inline int mf_ftest_start(mf_ftest_job *j, int np, mf_ftest_rank_fn fn, void *arg)
{
    j->np = 0;
    j->failed = false;
    for (int r = 0; r < np; r++) {
        if (pipe(j->up[r]) != 0)
            goto fail;
        if (pipe(j->down[r]) != 0) {
            close(j->up[r][0]);
            close(j->up[r][1]);
            goto fail;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(j->up[r][0]);
            close(j->down[r][1]);
            _exit(fn(r, np, arg, j->up[r][1], j->down[r][0]));
        }
        close(j->up[r][1]);
        close(j->down[r][0]);
        if (pid < 0) {
            close(j->up[r][0]);
            close(j->down[r][1]);
            goto fail;
        }
        j->pid[r] = pid;
        j->np = r + 1;
    }
    static char table[MF_FTEST_MAXP][MF_PM_VAL_MAX];
    for (int r = 0; r < np; r++)
        if (read(j->up[r][0], table[r], MF_PM_VAL_MAX) != MF_PM_VAL_MAX)
            memset(table[r], 0, MF_PM_VAL_MAX);
    void (*was)(int) = signal(SIGPIPE, SIG_IGN); /* a rank that is gone is no reason to die */
    for (int r = 0; r < np; r++)
        for (int k = 0; k < np; k++)
            if (write(j->down[r][1], table[k], MF_PM_VAL_MAX) != MF_PM_VAL_MAX)
                break; /* the rank is gone; finish reports it */
    signal(SIGPIPE, was);
    return 0;
fail:
    perror("fabric test: pipe or fork");
    for (int r = 0; r < j->np; r++)
        kill(j->pid[r], SIGKILL); /* finish reaps them and fails */
    j->failed = true;
    return 1;
}

/* Waits for every rank and closes the parent's pipe ends. Returns 0 when all ranks ended with
 * status 0, else 1, with a line naming `label` and each rank that did not. */
static inline int mf_ftest_finish(mf_ftest_job *j, const char *label)
{
    int bad = j->failed;
    for (int r = 0; r < j->np; r++) {
        int st = 0;
        if (waitpid(j->pid[r], &st, 0) != j->pid[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s: rank %d exited with status %d\n", label, r,
                    WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
            bad = 1;
        }
        close(j->up[r][0]);
        close(j->down[r][1]);
    }
    return bad;
}

#endif
