/*
 * ofi_test.c — the ofi fabric end to end between two forked processes, driven through its ops
 * (no p2p layer: this file provides the two upcalls), with each provider here. Addresses are
 * exchanged through pipes: each process reads its own published value from its singleton
 * key-value store and puts the other's.
 *
 * Scenarios (each with fresh processes, per provider):
 *   traffic  both ranks send frames of every size from 0 to max_frame at once (the inject
 *            size, the eager sizes, the largest frame), checked for order and content: the
 *            per-peer sequence must hold even where the provider completes out of order;
 *            then rank 0 describes a 3 MiB buffer (rkey_make) and sends the key, and rank 1
 *            pulls it at an offset into three iovecs with rget and checks it; both close
 *            cleanly (no failure reported).
 *   sleep    rank 0 sleeps on the wait fd (or, without one, polls every poll_interval_us)
 *            before each of 20 frames rank 1 sends a few ms apart: fi_trywait and the fd must
 *            wake it (a sleep that runs into its 2 s limit is a lost wake-up).
 *   badprov  MANIFOLD_OFI_PROVIDER=nosuch: open fails with a message naming the provider, the
 *            operation (fi_getinfo) and libfabric's reason.
 * Exits 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "fabric/fabric_test_util.h"

/* ---- Upcalls: received frames are checked (fabric_test_util.h) ---- */

void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    mf_ftest_rx_header(peer, hdr, sink);
}

void mf_fabric_peer_failed(mf_fabric *f, int peer, int code)
{
    mf_ftest_peer_failed(peer, code);
    fprintf(stderr, "rank %d: peer %d failed: %s\n", mf_g.rank, peer, mf_ftest_me.failed_msg);
}

/* ---- Helpers ---- */

/* Sends the next frame to the other rank, carrying rkey, with no completion record: what ofi
 * takes without one it must inject or copy at once (DONE or an error, never PENDING). */
static int send_frame(mf_fabric *f, unsigned char *buf, size_t len, int tag, uint64_t rkey)
{
    int peer = 1 - mf_g.rank;
    mf_wire_hdr h = mf_ftest_next_frame(peer, buf, len, tag);
    h.rkey = rkey;
    struct iovec v[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
    return f->ops->send(f, peer, &h, v, 2, NULL);
}

/* ---- One process ---- */

static int traffic(mf_fabric *f, int rank, unsigned char *tx)
{
    mf_ftest_rank *me = &mf_ftest_me;
    static const size_t sizes[] = {0, 1, 8, 63, 64, 100, 4000, 4096, 16384, 16385, 65536, 5};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int total = 0;
    for (int rep = 0; rep < 20; rep++)
        for (int i = 0; i < nsizes; i++, total++)
            if (send_frame(f, tx, sizes[i] < f->max_frame ? sizes[i] : f->max_frame, 1, 0) !=
                MF_FABRIC_DONE)
                return 20;
    mf_ftest_wait_frames(f, total, 30);
    if (me->frames < total || me->bad || me->failed_peer >= 0) {
        fprintf(stderr, "rank %d: %d/%d frames, %d bad\n", rank, me->frames, total, me->bad);
        return 21;
    }
    if (!(f->flags & MF_FABRIC_RGET))
        return 0;
    /* Rendezvous by RMA read: rank 0 offers, rank 1 pulls at an offset and says so. */
    size_t big = 3u << 20, off = 12345;
    unsigned char *mem = malloc(big), *dst = calloc(1, big);
    int rc = 0;
    if (rank == 0) {
        for (size_t i = 0; i < big; i++)
            mem[i] = (unsigned char)(i * 13 + (i >> 16));
        uint64_t rkey = 0;
        if (f->ops->rkey_make(f, mem, big, &rkey) != MPI_SUCCESS || rkey == 0)
            rc = 30;
        if (!rc && send_frame(f, tx, 0, 2, rkey) != MF_FABRIC_DONE)
            rc = 31;
        mf_ftest_wait_frames(f, total + 1, 30); /* rank 1's "done" */
        if (!rc && me->frames < total + 1)
            rc = 32;
        f->ops->rkey_release(f, rkey);
    } else {
        mf_ftest_wait_frames(f, total + 1, 30);
        size_t len = big - off, a = len / 3;
        struct iovec iov[3] = {{dst, a}, {dst + a + 7, a}, {dst + 2 * a + 14, len - 2 * a}};
        mf_ftest_tx g = {.d.fd_fn = mf_ftest_tx_done};
        uint64_t rkey = me->hdr[0].tag == 2 ? me->hdr[0].rkey : 0; /* rank 0's offer */
        int r = rkey ? f->ops->rget(f, 0, rkey, off, iov, 3, len, &g.d) : -100;
        while (r == MF_FABRIC_PENDING && !g.calls && me->failed_peer < 0)
            mf_ftest_pump(f, 0);
        if (r == MF_FABRIC_PENDING)
            r = g.calls == 1 ? g.status : -101;
        if (r != MF_FABRIC_DONE) {
            fprintf(stderr, "rank 1: rget returned %d\n", r);
            rc = 33;
        }
        for (int k = 0; k < 3 && !rc; k++) {
            size_t base = off + (size_t)k * a;
            for (size_t i = 0; i < iov[k].iov_len; i++)
                if (((unsigned char *)iov[k].iov_base)[i] !=
                    (unsigned char)((base + i) * 13 + ((base + i) >> 16))) {
                    fprintf(stderr, "rank 1: pulled byte %zu differs\n", base + i);
                    rc = 34;
                    break;
                }
        }
        if (send_frame(f, tx, 0, 3, 0) != MF_FABRIC_DONE)
            rc = 35;
    }
    /* Both idle before closing: everything handed over has left. */
    for (double t0 = mf_clock_s(); !f->ops->tx_idle(f) && mf_clock_s() - t0 < 10;)
        f->ops->progress(f);
    free(mem);
    free(dst);
    return rc;
}

static int sleeper(mf_fabric *f, int rank, unsigned char *tx)
{
    mf_ftest_rank *me = &mf_ftest_me;
    for (int i = 0; i < 20; i++) {
        if (rank == 1) {
            usleep(3000);
            if (send_frame(f, tx, 8, 1, 0) != MF_FABRIC_DONE)
                return 40;
            continue;
        }
        while (me->frames <= i && me->failed_peer < 0) {
            if (f->ops->progress(f) > 0)
                continue;
            if (!mf_ftest_sleep(f, 2000)) {
                fprintf(stderr, "rank 0: slept 2 s while frame %d was on its way\n", i);
                return 41;
            }
        }
    }
    if (rank == 1) /* stay until rank 0 has everything (it sends nothing back) */
        for (double t0 = mf_clock_s(); mf_clock_s() - t0 < 0.5;)
            f->ops->progress(f);
    return me->bad ? 42 : 0;
}

typedef struct ofi_case {
    const char *prov, *scenario;
} ofi_case;

static int child(int rank, int np, void *arg, int wfd, int rfd)
{
    const char *prov = ((ofi_case *)arg)->prov, *scenario = ((ofi_case *)arg)->scenario;
    setenv("MANIFOLD_OFI_PROVIDER", strcmp(scenario, "badprov") ? prov : "nosuch", 1);
    setenv("MANIFOLD_OFI_DOMAIN", strcmp(prov, "tcp") ? "" : "lo", 1);
    if (mf_ftest_rank_init(rank, 2, false, false))
        return 10;
    /* Frames of tag 1 are checked, scattered into three pieces; waits sleep at once. */
    mf_ftest_me.checked_tag = 1;
    mf_ftest_me.pieces = 3;
    mf_ftest_me.spins = 0;
    mf_ftest_me.cap = 1 << 20;
    mf_ftest_me.buf[1 - rank] = malloc(mf_ftest_me.cap);
    unsigned char *tx = malloc(1 << 20);
    mf_fabric *f = mf_fabric_instance_new(&mf_ofi_class, 0, "");
    if (!f)
        return 11;
    int rc = f->ops->open(f);
    if (strcmp(scenario, "badprov") == 0) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        mf_error_string(rc, msg, &len);
        bool ok = rc != MPI_SUCCESS && strstr(msg, "provider nosuch") &&
                  strstr(msg, "fi_getinfo") && strstr(msg, "No data available");
        if (!ok)
            fprintf(stderr, "badprov: open returned %d: %s\n", rc, msg);
        mf_fabric_instance_free(f);
        return ok ? 0 : 12;
    }
    if (rc != MPI_SUCCESS)
        return 13;
    if (mf_ftest_exchange("mf.ofi0", rank, np, wfd, rfd) != 0)
        return 14;
    if (f->ops->start(f) != MPI_SUCCESS || !f->ops->reachable(f, 1 - rank) ||
        f->ops->reachable(f, rank))
        return 15;
    rc = strcmp(scenario, "traffic") == 0 ? traffic(f, rank, tx) : sleeper(f, rank, tx);
    char what[512];
    f->ops->describe(f, what, sizeof what);
    if (rank == 0)
        printf("ofi_test %s %s: %s\n", prov, scenario, what);
    if (f->ops->close(f) != MPI_SUCCESS && !rc)
        rc = 50;
    if (mf_ftest_me.failed_peer >= 0 && !rc)
        rc = 51;
    mf_fabric_instance_free(f);
    free(mf_ftest_me.buf[1 - rank]);
    free(tx);
    return rc;
}

static int run(const char *prov, const char *scenario)
{
    ofi_case c = {prov, scenario};
    char label[64];
    snprintf(label, sizeof label, "%s %s", prov, scenario);
    mf_ftest_job job;
    int bad = mf_ftest_start(&job, strcmp(scenario, "badprov") ? 2 : 1, child, &c);
    return mf_ftest_finish(&job, label) | bad;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int bad = run("tcp", "badprov");
    static const char *const provs[] = {"tcp", "shm"};
    for (int i = 0; i < 2; i++)
        bad |= run(provs[i], "traffic") | run(provs[i], "sleep");
    printf("ofi_test: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
