/*
 * raw_ofi — the limit under MPI over libfabric: two processes (fork), pinned to cores 0 and 1,
 * talking through one libfabric provider's reliable datagram endpoints, no MPI. The third level
 * beside the MPIs, as raw_tcp is for tcp (libfabric's fi_pingpong waits for completions instead
 * of polling, about 2 ms per round trip on tcp;ofi_rxm: no latency baseline).
 *   pingpong  size bytes there and back: fi_send (fi_inject up to the inject size) to a receive
 *             posted ahead into the destination buffer, completions busy-polled with
 *             fi_cq_read; latency_us = half the round trip. Each side sends from the buffer it
 *             receives into, as bench/pingpong.c does: a large message is then read from lines
 *             the other core just wrote, which a never-written send buffer would spare it.
 *   stream    messages of size bytes sent back to back (about --window per acknowledgement,
 *             like the MPI stream benchmark) into receives posted ahead, each message of a
 *             window into its own place as bench/stream.c receives them (all into one buffer,
 *             a window of 1 MiB messages stayed in the cache: 13.2 against 10.9 GB/s);
 *             bandwidth_MBps at the receiver
 * Output as the MPI programs (benchmark,size,metric,value), so results line up by name.
 * Options as bench_util.h plus --cpus A,B, --prov NAME (default tcp: tcp;ofi_rxm) and --domain
 * NAME (default lo for IP providers, as Manifold's bench config sets MANIFOLD_OFI_DOMAIN).
 */
#include "bench_raw.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <unistd.h>

typedef struct raw_ep {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fid_mr *mr;
    void *desc;
    fi_addr_t peer;
    long sends, recvs;         /* completions seen */
    struct fi_context2 ctx[2]; /* [0] sends, [1] receives: the CQ tells them apart by flags */
} raw_ep;

static void die(const char *what, int rc)
{
    fprintf(stderr, "raw_ofi: %s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
    exit(1);
}

static void setup(raw_ep *e, const char *prov, const char *domain)
{
    struct fi_info *h = fi_allocinfo(), *list = NULL;
    h->caps = FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &list);
    if (rc)
        die("fi_getinfo", rc);
    struct fi_info *pick = list;
    for (struct fi_info *i = list; i && *domain; i = i->next)
        if (strcmp(i->domain_attr->name, domain) == 0 && i->addr_format == FI_SOCKADDR_IN) {
            pick = i;
            break;
        }
    e->info = fi_dupinfo(pick);
    fi_freeinfo(list);
    fi_freeinfo(h);
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr av = {.type = FI_AV_TABLE, .count = 2};
    if ((rc = fi_fabric(e->info->fabric_attr, &e->fabric, NULL)) ||
        (rc = fi_domain(e->fabric, e->info, &e->domain, NULL)) ||
        (rc = fi_cq_open(e->domain, &cq, &e->cq, NULL)) ||
        (rc = fi_av_open(e->domain, &av, &e->av, NULL)) ||
        (rc = fi_endpoint(e->domain, e->info, &e->ep, NULL)) ||
        (rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (rc = fi_ep_bind(e->ep, &e->av->fid, 0)) || (rc = fi_enable(e->ep)))
        die("opening the endpoint", rc);
}

static void teardown(raw_ep *e)
{
    if (e->mr)
        fi_close(&e->mr->fid);
    fi_close(&e->ep->fid);
    fi_close(&e->av->fid);
    fi_close(&e->cq->fid);
    fi_close(&e->domain->fid);
    fi_close(&e->fabric->fid);
    fi_freeinfo(e->info);
}

/* Reads the CQ once, counting send and receive completions. */
static void poll_cq(raw_ep *e)
{
    struct fi_cq_entry ev[16];
    ssize_t k = fi_cq_read(e->cq, ev, 16);
    if (k == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(e->cq, &err, 0);
        die("a completion", err.err);
    }
    for (ssize_t i = 0; i < k; i++) {
        if (ev[i].op_context == &e->ctx[1])
            e->recvs++;
        else
            e->sends++;
    }
}

static void post_recv(raw_ep *e, void *buf, size_t size)
{
    ssize_t rc;
    while ((rc = fi_recv(e->ep, buf, size, e->desc, FI_ADDR_UNSPEC, &e->ctx[1])) == -FI_EAGAIN)
        poll_cq(e);
    if (rc)
        die("fi_recv", (int)rc);
}

/* Sends; a send that is not injected completes later (counted in e->sends). Returns 1 if a
 * completion is to come. */
static int send_msg(raw_ep *e, const void *buf, size_t size)
{
    ssize_t rc;
    int inject = size <= e->info->tx_attr->inject_size && !e->desc;
    for (;;) {
        rc = inject ? fi_inject(e->ep, buf, size, e->peer)
                    : fi_send(e->ep, buf, size, e->desc, e->peer, &e->ctx[0]);
        if (rc != -FI_EAGAIN)
            break;
        poll_cq(e);
    }
    if (rc)
        die("fi_send", (int)rc);
    return !inject;
}

#define WINDOW_BYTES (64L << 20)

/* Waits (busy) until `recvs` receives and `sends` sends have completed in all. */
static void wait_for(raw_ep *e, long recvs, long sends)
{
    while (e->recvs < recvs || e->sends < sends)
        poll_cq(e);
}

static void run(raw_ep *e, int lead, const bench_opts *o, unsigned char *sbuf, unsigned char *rbuf,
                unsigned char *ack, unsigned char *wbuf)
{
    long want_s = 0, want_r = 0; /* completions expected so far */
    for (size_t size = o->min_size; size; size = bench_next_size(o, size)) {
        /* Checked round trip: the lead sends sbuf, the follower echoes what it received. */
        if (lead) {
            bench_fill(sbuf, size, 5);
            memset(rbuf, 0, size);
        }
        post_recv(e, rbuf, size);
        want_r++;
        if (lead) {
            want_s += send_msg(e, sbuf, size);
            wait_for(e, want_r, want_s);
            if (bench_check(rbuf, size, 5) != 0) {
                fprintf(stderr, "raw_ofi: echo of %zu bytes differs\n", size);
                exit(3);
            }
        } else {
            wait_for(e, want_r, want_s);
            want_s += send_msg(e, rbuf, size);
            wait_for(e, want_r, want_s);
        }
        long iters = bench_iters(o, size);
        double best = 1e30;
        for (int rep = -1; rep < o->reps; rep++) {
            long n = rep < 0 ? o->warmup : iters;
            double t0 = bench_now();
            for (long i = 0; i < n; i++) {
                post_recv(e, rbuf, size); /* the answer's (lead) or the ping's (follower) */
                want_r++;
                /* rbuf out too: the answer cannot land before the peer has the ping whole */
                if (lead) {
                    want_s += send_msg(e, rbuf, size);
                    wait_for(e, want_r, want_s);
                } else {
                    wait_for(e, want_r, want_s);
                    want_s += send_msg(e, rbuf, size);
                }
            }
            wait_for(e, want_r, want_s);
            double t = (bench_now() - t0) / (2.0 * (double)n);
            if (rep >= 0 && t < best)
                best = t;
        }
        if (lead) {
            bench_emit("pingpong", size, "latency_us", best * 1e6);
            bench_emit("pingpong", size, "bandwidth_MBps", (double)size / best / 1e6);
        }
        /* Stream: the follower sends a window, the lead receives, acknowledges and times. */
        long w = bench_window_for(o, size, WINDOW_BYTES);
        long witers = bench_window_iters(o, size, w);
        best = 1e30;
        for (int rep = -1; rep < o->reps; rep++) {
            long n = rep < 0 ? 1 : witers;
            if (lead) {
                for (long k = 0; k < w; k++)
                    post_recv(e, wbuf + (size_t)k * size, size);
                want_r += w;
                want_s += send_msg(e, ack, 1); /* go */
                double t0 = bench_now();
                for (long i = 0; i < n; i++) {
                    wait_for(e, want_r, 0);
                    if (i + 1 < n) {
                        for (long k = 0; k < w; k++)
                            post_recv(e, wbuf + (size_t)k * size, size);
                        want_r += w;
                    }
                    want_s += send_msg(e, ack, 1);
                }
                double t = (bench_now() - t0) / (double)n;
                wait_for(e, want_r, want_s);
                if (rep >= 0 && t < best)
                    best = t;
            } else {
                post_recv(e, ack, 1);
                want_r++;
                wait_for(e, want_r, want_s); /* go */
                for (long i = 0; i < n; i++) {
                    post_recv(e, ack, 1);
                    want_r++;
                    for (long k = 0; k < w; k++)
                        want_s += send_msg(e, sbuf, size);
                    wait_for(e, want_r, 0);
                }
                wait_for(e, want_r, want_s);
            }
        }
        if (lead)
            bench_emit("stream", size, "bandwidth_MBps", (double)size * (double)w / best / 1e6);
    }
}

int main(int argc, char **argv)
{
    int cpus[2];
    bench_take_cpus(&argc, argv, cpus);
    const char *prov = "tcp", *domain = "lo";
    char *args[64];
    int nargs = 0;
    for (int i = 0; i < argc && nargs < 63; i++) {
        if (!strcmp(argv[i], "--prov") && i + 1 < argc) {
            prov = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--domain") && i + 1 < argc) {
            domain = argv[++i];
            continue;
        }
        args[nargs++] = argv[i];
    }
    args[nargs] = NULL;
    bench_opts o;
    if (bench_parse(nargs, args, &o, 1, 4u << 20, " [--cpus A,B] [--prov NAME] [--domain NAME]") !=
        0)
        return 2;
    int up[2], down[2]; /* addresses: child -> parent, parent -> child */
    if (pipe(up) || pipe(down)) {
        perror("raw_ofi: pipe");
        return 1;
    }
    pid_t pid = bench_fork_pinned("raw_ofi", cpus);
    int lead = pid != 0;
    raw_ep e = {0};
    setup(&e, prov, domain);
    if (lead)
        printf("# raw_ofi provider=%s domain=%s inject=%zu cpus=%d,%d polling\n",
               e.info->fabric_attr->prov_name, e.info->domain_attr->name,
               e.info->tx_attr->inject_size, cpus[0], cpus[1]);
    fflush(stdout);
    /* One allocation, so that one registration covers everything (FI_MR_LOCAL): the ping-pong's
     * buffers, the acknowledgement, and the stream receiver's window (wbuf). */
    size_t wbytes = lead ? bench_window_bytes(&o, WINDOW_BYTES) : 0,
           total = 2 * o.max_size + 64 + wbytes;
    unsigned char *mem = bench_alloc(total), *sbuf = mem, *rbuf = mem + o.max_size,
                  *ack = mem + 2 * o.max_size, *wbuf = mem + 2 * o.max_size + 64;
    if (e.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        int rc = fi_mr_reg(e.domain, mem, total, FI_SEND | FI_RECV, 0, 0, 0, &e.mr, NULL);
        if (rc)
            die("fi_mr_reg", rc);
        e.desc = fi_mr_desc(e.mr);
    }
    unsigned char name[256], peer[256];
    size_t len = sizeof name;
    int rc = fi_getname(&e.ep->fid, name, &len);
    if (rc)
        die("fi_getname", rc);
    int wfd = lead ? down[1] : up[1], rfd = lead ? up[0] : down[0];
    if (write(wfd, &len, sizeof len) != sizeof len || write(wfd, name, len) != (ssize_t)len ||
        read(rfd, &len, sizeof len) != sizeof len || len > sizeof peer ||
        read(rfd, peer, len) != (ssize_t)len) {
        perror("raw_ofi: address exchange");
        return 1;
    }
    if (fi_av_insert(e.av, peer, 1, &e.peer, 0, NULL) != 1)
        die("fi_av_insert", FI_EADDRNOTAVAIL);
    run(&e, lead, &o, sbuf, rbuf, ack, wbuf);
    /* Both ends finished their last exchange; one more round trip, so neither closes early. */
    post_recv(&e, ack, 1);
    long s = e.sends + send_msg(&e, ack, 1);
    wait_for(&e, e.recvs + 1, s);
    teardown(&e);
    free(mem);
    if (lead)
        printf("# done\n");
    return bench_join(pid);
}
