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
#include "core/log.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "fabric/fabric_test_util.h"
#include "runtime/pm.h"

/* ---- Upcalls ---- */

static uint64_t rx_next;
static int rx_frames, rx_bad, failed_peer = -1;
static uint64_t rx_rkey; /* tag 2: the rkey rank 0 hands out */
static unsigned char *rx_buf;
static struct iovec rx_iov[3];
static mf_wire_hdr rx_last;

static unsigned char pat(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 31 + i + (i >> 9));
}

static void rx_done(mf_fabric_sink *s, int status)
{
    const mf_wire_hdr *h = &rx_last;
    if (status != MPI_SUCCESS)
        rx_bad++;
    for (size_t i = 0; h->tag == 1 && i < h->len; i++)
        if (rx_buf[i] != pat(h->sreq, i)) {
            fprintf(stderr, "frame %llu: byte %zu differs\n", (unsigned long long)h->sreq, i);
            rx_bad++;
            break;
        }
    rx_frames++;
}

void mf_fabric_rx_header(mf_fabric *f, int peer, const mf_wire_hdr *hdr, mf_fabric_sink *sink)
{
    if (hdr->sreq != rx_next++ || peer != 1 - mf_g.rank) {
        fprintf(stderr, "frame %llu from %d arrived, expected %llu\n",
                (unsigned long long)hdr->sreq, peer, (unsigned long long)rx_next - 1);
        rx_bad++;
    }
    rx_last = *hdr;
    if (hdr->tag == 2)
        rx_rkey = hdr->rkey;
    size_t a = hdr->len / 3, b = hdr->len / 3; /* scattered into three pieces */
    rx_iov[0] = (struct iovec){rx_buf, a};
    rx_iov[1] = (struct iovec){rx_buf + a, b};
    rx_iov[2] = (struct iovec){rx_buf + a + b, hdr->len - a - b};
    sink->fs_iov = rx_iov;
    sink->fs_niov = 3;
    sink->fs_done = rx_done;
}

void mf_fabric_peer_failed(mf_fabric *f, int peer, int code)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    mf_error_string(code, msg, &len);
    fprintf(stderr, "rank %d: peer %d failed: %s\n", mf_g.rank, peer, msg);
    failed_peer = peer;
}

/* ---- Helpers ---- */

static void wait_frames(mf_fabric *f, int n)
{
    double t0 = mf_clock_s();
    while (rx_frames < n && failed_peer < 0 && mf_clock_s() - t0 < 30)
        mf_ftest_pump(f, 0);
}

static uint64_t tx_seq;

static int send_frame(mf_fabric *f, unsigned char *buf, size_t len, int tag, uint64_t rkey)
{
    mf_wire_hdr h = {
        .type = MF_MSG_DATA, .context = 1, .tag = tag, .len = len, .sreq = tx_seq, .rkey = rkey};
    for (size_t i = 0; tag == 1 && i < len; i++)
        buf[i] = pat(tx_seq, i);
    tx_seq++;
    struct iovec v[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
    return f->ops->send(f, 1 - mf_g.rank, &h, v, 2, NULL);
}

/* ---- One process ---- */

static int traffic(mf_fabric *f, int rank, unsigned char *tx)
{
    static const size_t sizes[] = {0, 1, 8, 63, 64, 100, 4000, 4096, 16384, 16385, 65536, 5};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int total = 0;
    for (int rep = 0; rep < 20; rep++)
        for (int i = 0; i < nsizes; i++, total++)
            if (send_frame(f, tx, sizes[i] < f->max_frame ? sizes[i] : f->max_frame, 1, 0) !=
                MF_FABRIC_DONE)
                return 20;
    wait_frames(f, total);
    if (rx_frames < total || rx_bad || failed_peer >= 0) {
        fprintf(stderr, "rank %d: %d/%d frames, %d bad\n", rank, rx_frames, total, rx_bad);
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
        wait_frames(f, total + 1); /* rank 1's "done" */
        if (!rc && rx_frames < total + 1)
            rc = 32;
        f->ops->rkey_release(f, rkey);
    } else {
        wait_frames(f, total + 1);
        size_t len = big - off, a = len / 3;
        struct iovec iov[3] = {{dst, a}, {dst + a + 7, a}, {dst + 2 * a + 14, len - 2 * a}};
        mf_ftest_tx g = {.d.fd_fn = mf_ftest_tx_done};
        int r = rx_rkey ? f->ops->rget(f, 0, rx_rkey, off, iov, 3, len, &g.d) : -100;
        while (r == MF_FABRIC_PENDING && !g.calls && failed_peer < 0)
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
    for (int i = 0; i < 20; i++) {
        if (rank == 1) {
            usleep(3000);
            if (send_frame(f, tx, 8, 1, 0) != MF_FABRIC_DONE)
                return 40;
            continue;
        }
        while (rx_frames <= i && failed_peer < 0) {
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
    return rx_bad ? 42 : 0;
}

typedef struct ofi_case {
    const char *prov, *scenario;
} ofi_case;

static int child(int rank, int np, void *arg, int wfd, int rfd)
{
    const char *prov = ((ofi_case *)arg)->prov, *scenario = ((ofi_case *)arg)->scenario;
    mf_log_set_rank(rank);
    setenv("MANIFOLD_OFI_PROVIDER", strcmp(scenario, "badprov") ? prov : "nosuch", 1);
    setenv("MANIFOLD_OFI_DOMAIN", strcmp(prov, "tcp") ? "" : "lo", 1);
    if (mf_pm_init(&mf_g.pm) != MPI_SUCCESS)
        return 10;
    static int node_of[2];
    mf_g.rank = rank;
    mf_g.size = 2;
    mf_g.node_of = node_of;
    mf_g.num_nodes = 1;
    rx_buf = malloc(1 << 20);
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
    if (failed_peer >= 0 && !rc)
        rc = 51;
    mf_fabric_instance_free(f);
    free(rx_buf);
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
