/*
 * tcp_test.c — the tcp fabric end to end between two forked processes, driven through its ops
 * (no p2p layer: this file provides the two upcalls). Addresses are exchanged through pipes: each
 * process reads its own published value from its singleton key-value store and puts the other's.
 *
 * Scenarios (each with fresh processes):
 *   traffic   both ranks send at once (simultaneous connect), frames of many sizes up to 64 MiB,
 *             checked for order and content; ping-pong latency and bandwidth over loopback are
 *             printed; both close cleanly (goodbye: no failure reported on either side).
 *   alltoall  six ranks send 300 frames each to every other at once (all connections cross),
 *             checked for per-peer order; a stress test of the simultaneous-connect rule. Also
 *             with ten ranks: more connections than the quiet regime reads directly (tcp.h).
 *   sleep     rank 0 sleeps on the wait fd (no timeout to speak of) before each of 20 frames
 *             rank 1 sends a few ms later: quiet connections must rejoin the epoll set.
 *   remote    the ranks pretend to be on different hosts: loopback is not used between them.
 *   secret    the ranks disagree on the job secret: the connector's peer fails with a message
 *             saying the handshake was refused; the acceptor logs and carries on.
 *   death     rank 1 dies abruptly after connecting: rank 0's peer fails with "lost".
 * Exits 0 on success.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "fabric/fabric.h"
#include "fabric/fabric_test_util.h"
#include "runtime/pm.h"

mf_fabric *mf_tcp_fabric(void);

/* ---- Upcalls: received frames are checked (fabric_test_util.h) ---- */

void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    mf_ftest_rx_header(peer, hdr, sink);
}

void mf_fabric_peer_failed(mf_fabric *f, int peer, int code)
{
    mf_ftest_peer_failed(peer, code);
}

/* ---- One process ---- */

static int child(int rank, int np, void *arg, int wfd, int rfd)
{
    const char *scenario = arg;
    mf_ftest_rank *me = &mf_ftest_me;
    signal(SIGPIPE, SIG_DFL); /* MSG_NOSIGNAL must make this irrelevant */
    if (getenv("TCP_TEST_DEBUG"))
        mf_verbose_level = 2;
    if (mf_ftest_rank_init(rank, np, strcmp(scenario, "remote") == 0,
                           strcmp(scenario, "secret") == 0 && rank == 1))
        return 10;
    /* Frames of tag 1 are checked (the ping-pong's tag 2 is not), scattered into three pieces;
     * the sender spins a while before it sleeps, as the engine does. */
    me->checked_tag = 1;
    me->pieces = 3;
    me->spins = 20000;
    me->cap = np == 2 ? 64u << 20 : 1u << 20;
    for (int r = 0; r < np; r++)
        me->buf[r] = malloc(me->cap);
    unsigned char *tx_buf = malloc(me->cap);

    mf_fabric *f = mf_fabric_instance_new(&mf_tcp_class, 0, getenv("MANIFOLD_IF"));
    if (!f)
        return 11;
    if (f->ops->open(f) != MPI_SUCCESS)
        return 11;
    if (mf_ftest_exchange("mf.tcp0", rank, np, wfd, rfd) != 0)
        return 12;
    if (f->ops->start(f) != MPI_SUCCESS || !f->ops->reachable(f, (rank + 1) % np) ||
        f->ops->reachable(f, rank))
        return 14;
    int peer = np == 2 ? 1 - rank : -1, rc = 0;

    if (strcmp(scenario, "traffic") == 0) {
        /* Both send at once: the connections cross. */
        static const size_t sizes[] = {0, 1, 8, 100, 4096, 65536, 1 << 20, 64u << 20, 3, 77777};
        int nsizes = (int)(sizeof sizes / sizeof sizes[0]), total = 0;
        for (int rep = 0; rep < 3; rep++)
            for (int i = 0; i < nsizes; i++, total++)
                if (mf_ftest_send(f, peer, tx_buf, sizes[i], 1) != MF_FABRIC_DONE)
                    return 20;
        mf_ftest_wait_frames(f, total, 30);
        if (me->frames < total || me->bad || me->failed_peer >= 0) {
            fprintf(stderr, "rank %d: %d/%d frames, %d bad, failed %d: %s\n", rank, me->frames,
                    total, me->bad, me->failed_peer, me->failed_msg);
            return 21;
        }
        /* Ping-pong: rank 0 measures. */
        for (size_t len = 8; len <= (64u << 20); len *= len < 65536 ? 8192 : 16) {
            int iters = len <= 65536 ? 2000 : len <= (4u << 20) ? 50 : 5;
            double t0 = mf_clock_s();
            for (int i = 0; i < iters; i++) {
                if (rank == 0 && mf_ftest_send(f, peer, tx_buf, len, 2) != MF_FABRIC_DONE)
                    return 22;
                mf_ftest_wait_frames(f, total + 1, 30);
                total++;
                if (rank == 1 && mf_ftest_send(f, peer, tx_buf, len, 2) != MF_FABRIC_DONE)
                    return 22;
            }
            double dt = (mf_clock_s() - t0) / iters / 2;
            if (rank == 0)
                printf("tcp loopback: %9zu bytes  one-way %8.2f us  %8.1f MB/s\n", len, dt * 1e6,
                       (double)len / dt / 1e6);
            if (me->bad || me->failed_peer >= 0)
                return 23;
        }
    } else if (strcmp(scenario, "alltoall") == 0) {
        /* Everyone sends to everyone at once: every pair's connections cross. Small frames
         * complete at once (copied), bigger ones stay queued while others are sent. */
        enum { PER_PEER = 300 };
        mf_ftest_tx *t = calloc((size_t)np * PER_PEER, sizeof *t);
        unsigned char *src = malloc(256 * 1024 + 1);
        int pending = 0;
        for (int i = 0; i < PER_PEER; i++) {
            for (int k = 1; k < np; k++) {
                int dst = (rank + k) % np;
                size_t len = (size_t)((i * 7919 + dst * 104729) % (i % 10 == 0 ? 262144 : 3000));
                mf_wire_hdr h = mf_ftest_next_frame(dst, src, len, 0); /* tag 0: unchecked */
                struct iovec v = {src, len};
                mf_ftest_tx *d = &t[dst * PER_PEER + i];
                d->d.fd_fn = mf_ftest_tx_done;
                int r = f->ops->send(f, dst, &h, &v, 1, &d->d);
                if (r == MF_FABRIC_PENDING)
                    pending++;
                else if (r != MF_FABRIC_DONE)
                    return 60;
                f->ops->progress(f);
            }
        }
        int expect = PER_PEER * (np - 1);
        double t0 = mf_clock_s();
        for (;;) {
            int done = 0;
            for (int k = 0; k < np * PER_PEER; k++)
                done += t[k].calls;
            if ((done == pending && me->frames >= expect) || me->failed_peer >= 0 ||
                mf_clock_s() - t0 > 60)
                break;
            mf_ftest_pump(f, me->spins);
        }
        if (me->frames != expect || me->bad || me->failed_peer >= 0) {
            fprintf(stderr, "rank %d: %d/%d frames, %d bad, failed %d: %s\n", rank, me->frames,
                    expect, me->bad, me->failed_peer, me->failed_msg);
            return 61;
        }
    } else if (strcmp(scenario, "remote") == 0) {
        /* Another host must not be given loopback: without a real interface the send fails
         * with a message saying so; with one, frames flow over it. */
        char key[MF_PM_KEY_MAX], val[MF_PM_VAL_MAX] = "";
        snprintf(key, sizeof key, "mf.tcp0.%d", peer);
        mf_pm_get(key, val, sizeof val);
        bool routable = false;
        for (char *p = val; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
            routable |= strncmp(p, "127.", 4) != 0;
        rc = mf_ftest_send(f, peer, tx_buf, 1000, 1);
        if (!routable) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            mf_error_string(rc, msg, &len);
            if (rc == MF_FABRIC_DONE || !strstr(msg, "no address reachable"))
                return 70;
            printf("remote: no routable interface here (%s)\n", msg);
            f->ops->close(f);
            mf_fabric_instance_free(f);
            return 0;
        }
        if (rc != MF_FABRIC_DONE)
            return 71;
        mf_ftest_wait_frames(f, 1, 30);
        if (me->frames != 1 || me->bad || me->failed_peer >= 0)
            return 72;
    } else if (strcmp(scenario, "secret") == 0) {
        if (rank == 1) {
            if (mf_ftest_send(f, peer, tx_buf, 10, 1) != MF_FABRIC_DONE)
                return 30;
            double t0 = mf_clock_s();
            while (me->failed_peer < 0 && mf_clock_s() - t0 < 10)
                mf_ftest_pump(f, me->spins);
            if (me->failed_peer != 0 || !strstr(me->failed_msg, "refused")) {
                fprintf(stderr, "secret: expected a refusal, got peer %d: %s\n", me->failed_peer,
                        me->failed_msg);
                return 31;
            }
            mf_wire_hdr h = {.type = MF_MSG_FIN};
            if (f->ops->send(f, peer, &h, NULL, 0, NULL) != me->failed_code)
                return 32; /* later sends fail at once with the same code */
        } else {
            double t0 = mf_clock_s();
            while (mf_clock_s() - t0 < 1)
                mf_ftest_pump(f, me->spins);
            if (me->frames || me->failed_peer >= 0)
                return 33;
        }
    } else if (strcmp(scenario, "sleep") == 0) {
        if (mf_ftest_send(f, peer, tx_buf, 8, 1) != MF_FABRIC_DONE)
            return 70;
        mf_ftest_wait_frames(f, 1, 30);
        for (int i = 0; i < 20; i++) {
            if (rank == 1) {
                usleep(3000);
                if (mf_ftest_send(f, peer, tx_buf, 8 + (size_t)i, 1) != MF_FABRIC_DONE)
                    return 71;
                mf_ftest_wait_frames(f, 2 + i, 30); /* rank 0's answer */
                continue;
            }
            for (int k = 0; k < 1000; k++) /* the pass after a sleep made the fabric quiet */
                f->ops->progress(f);
            if (me->frames < 2 + i) {
                struct pollfd p = {.fd = f->ops->wait_fd(f), .events = POLLIN};
                int r = f->ops->sleep_prepare(f) ? poll(&p, 1, 2000) : 1;
                f->ops->sleep_end(f);
                if (r != 1) {
                    fprintf(stderr, "sleep: rank 0 slept through frame %d\n", i);
                    return 72;
                }
            }
            mf_ftest_wait_frames(f, 2 + i, 30);
            if (mf_ftest_send(f, peer, tx_buf, 8, 1) != MF_FABRIC_DONE)
                return 73;
        }
        if (me->frames != 21 || me->bad || me->failed_peer >= 0)
            return 74;
    } else if (strcmp(scenario, "death") == 0) {
        if (mf_ftest_send(f, peer, tx_buf, 100, 1) != MF_FABRIC_DONE)
            return 40;
        mf_ftest_wait_frames(f, 1, 30);
        if (rank == 1)
            _exit(0); /* no goodbye */
        double t0 = mf_clock_s();
        while (me->failed_peer < 0 && mf_clock_s() - t0 < 10)
            mf_ftest_pump(f, me->spins);
        if (me->failed_peer != 1 || !strstr(me->failed_msg, "rank 1") ||
            !strstr(me->failed_msg, "lost")) {
            fprintf(stderr, "death: expected a lost peer, got %d: %s\n", me->failed_peer,
                    me->failed_msg);
            return 41;
        }
        printf("death: %s\n", me->failed_msg);
    }
    rc = f->ops->close(f);
    mf_fabric_instance_free(f);
    if ((strcmp(scenario, "traffic") == 0 || strcmp(scenario, "alltoall") == 0 ||
         strcmp(scenario, "remote") == 0 || strcmp(scenario, "sleep") == 0) &&
        (rc != MPI_SUCCESS || me->failed_peer >= 0)) {
        fprintf(stderr, "rank %d: close rc %d, failed peer %d: %s\n", rank, rc, me->failed_peer,
                me->failed_msg);
        return 50;
    }
    return 0;
}

static int run(const char *scenario, int np)
{
    mf_ftest_job job;
    int bad = mf_ftest_start(&job, np, child, (void *)scenario);
    return mf_ftest_finish(&job, scenario) | bad;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int bad = run("traffic", 2) | run("alltoall", 6) | run("alltoall", 10) | run("remote", 2) |
              run("secret", 2) | run("sleep", 2) | run("death", 2);
    printf("tcp_test: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
