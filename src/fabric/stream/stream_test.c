/*
 * stream_test.c — unit test of the stream framing over a nonblocking socketpair with tiny socket
 * buffers, so that every write and read is partial: many small frames, big frames gathered from
 * and scattered into several iovecs, sinks smaller than the payload, copied remainders, the
 * goodbye, a dead peer, malformed headers, the handshake codec and what counts as progress.
 * Exits 0 on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mpi.h>

#include "fabric/stream/stream.h"
#include "unit_check.h"

/* ---- A receiver that checks what arrives against a deterministic pattern ---- */

typedef struct rx_state {
    int frames, done_calls, bad;
    size_t sink_cap;    /* bytes the sink offers (may be less than the payload) */
    int sink_pieces;    /* split the sink into this many iovecs */
    unsigned char *buf; /* sink storage */
    struct iovec iov[8];
    mf_wire_hdr last;
} rx_state;

static unsigned char pattern(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 131 + i * 7 + (i >> 8));
}

static void rx_done(mf_fabric_sink *sink, int status)
{
    rx_state *st = sink->fs_ctx;
    st->done_calls++;
    if (status != MPI_SUCCESS)
        return;
    size_t got = st->last.len < st->sink_cap ? st->last.len : st->sink_cap;
    for (size_t i = 0; i < got; i++) {
        if (st->buf[i] != pattern(st->last.sreq, i)) {
            st->bad++;
            break;
        }
    }
}

static void rx_header(void *ctx, const mf_wire_hdr *h, mf_fabric_sink *sink)
{
    rx_state *st = ctx;
    if (h->sreq != (uint64_t)st->frames)
        st->bad++; /* out of order or lost */
    st->frames++;
    st->last = *h;
    size_t cap = h->len < st->sink_cap ? h->len : st->sink_cap;
    int pieces = st->sink_pieces > 0 ? st->sink_pieces : 1;
    size_t per = cap / (size_t)pieces + 1, at = 0;
    int n = 0;
    for (; n < pieces && at < cap; n++) {
        size_t l = cap - at < per ? cap - at : per;
        st->iov[n].iov_base = st->buf + at;
        st->iov[n].iov_len = l;
        at += l;
    }
    sink->fs_iov = st->iov;
    sink->fs_niov = n;
    sink->fs_done = rx_done;
    sink->fs_ctx = st;
}

typedef struct tx_done {
    mf_fabric_done d;
    int calls, status;
} tx_done;

static void tx_done_fn(mf_fabric_done *d, int status)
{
    tx_done *t = (tx_done *)d;
    t->calls++;
    t->status = status;
}

static void make_pair(int sv[2], int bufsize)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        exit(1);
    }
    for (int i = 0; i < 2; i++) {
        fcntl(sv[i], F_SETFL, O_NONBLOCK);
        if (bufsize) {
            setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize);
            setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof bufsize);
        }
    }
}

static void encode(uint64_t seq, size_t len, unsigned char out[MF_WIRE_HDR_SIZE])
{
    mf_wire_hdr h = {
        .type = MF_MSG_DATA, .context = 7, .src = 1, .tag = 3, .len = len, .total = 0, .sreq = seq};
    mf_wire_encode(&h, out);
}

/* Sends `count` frames of sizes from size_of(i), pumping both ends until all arrived. */
static void run_frames(int count, size_t (*size_of)(int), size_t copy_limit, size_t sink_cap,
                       int sink_pieces, int send_pieces)
{
    int sv[2];
    make_pair(sv, 4096);
    mf_stream_io tx, rxio;
    mf_stream_io_fd(&tx, sv[0]);
    mf_stream_io_fd(&rxio, sv[1]);
    mf_stream_out out;
    mf_stream_out_init(&out, copy_limit);
    rx_state st = {.sink_cap = sink_cap, .sink_pieces = sink_pieces};
    st.buf = malloc(sink_cap ? sink_cap : 1);
    mf_stream_in in;
    CHECK(mf_stream_in_init(&in, 1024, rx_header, &st) == MPI_SUCCESS);

    unsigned char **payloads = calloc((size_t)count, sizeof *payloads);
    tx_done *dones = calloc((size_t)count, sizeof *dones);
    int pending = 0;
    for (int i = 0; i < count; i++) {
        size_t len = size_of(i);
        payloads[i] = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++)
            payloads[i][k] = pattern((uint64_t)i, k);
        struct iovec v[4];
        int nv = 0;
        size_t at = 0, per = len / (size_t)send_pieces + 1;
        while (at < len && nv < 4) {
            size_t l = len - at < per ? len - at : per;
            if (nv == 3)
                l = len - at;
            v[nv].iov_base = payloads[i] + at;
            v[nv].iov_len = l;
            at += l;
            nv++;
        }
        unsigned char h[MF_WIRE_HDR_SIZE];
        encode((uint64_t)i, len, h);
        dones[i].d.fd_fn = tx_done_fn;
        int err = 0;
        int rc = mf_stream_out_send(&out, &tx, h, v, nv, len, &dones[i].d, &err);
        CHECK(rc == MF_FABRIC_DONE || rc == MF_FABRIC_PENDING);
        if (rc == MF_FABRIC_PENDING) {
            pending++;
        } else {
            /* DONE: the buffer is ours again; scribbling on it must not change what arrives. */
            memset(payloads[i], 0xEE, len);
        }
        /* Pump a little so the queue does not grow without bound. */
        for (int k = 0; k < 4; k++) {
            CHECK(mf_stream_out_flush(&out, &tx, &err) >= 0);
            CHECK(mf_stream_in_progress(&in, &rxio) >= 0);
        }
    }
    for (int spin = 0; spin < 10000000 && (st.done_calls < count || !mf_stream_out_empty(&out));
         spin++) {
        int err = 0;
        CHECK(mf_stream_out_flush(&out, &tx, &err) >= 0);
        CHECK(mf_stream_in_progress(&in, &rxio) >= 0);
    }
    CHECK(st.frames == count);
    CHECK(st.done_calls == count);
    CHECK(st.bad == 0);
    int completed = 0;
    for (int i = 0; i < count; i++) {
        CHECK(dones[i].calls <= 1);
        completed += dones[i].calls;
        if (dones[i].calls)
            CHECK(dones[i].status == MPI_SUCCESS);
    }
    CHECK(completed == pending);

    /* Goodbye, then end of stream: a clean close. */
    int err = 0;
    CHECK(mf_stream_out_bye(&out, &err) == MF_FABRIC_DONE);
    CHECK(mf_stream_out_flush(&out, &tx, &err) >= 0);
    CHECK(mf_stream_out_empty(&out));
    shutdown(sv[0], SHUT_WR);
    int rc = 0;
    for (int spin = 0; spin < 1000 && rc >= 0; spin++)
        rc = mf_stream_in_progress(&in, &rxio);
    CHECK(rc == MF_STREAM_CLOSED);

    mf_stream_in_free(&in);
    for (int i = 0; i < count; i++)
        free(payloads[i]);
    free(payloads);
    free(dones);
    free(st.buf);
    close(sv[0]);
    close(sv[1]);
}

static size_t size_small(int i)
{
    return (size_t)(i * 37) % 301;
}

static size_t size_big(int i)
{
    return i % 2 ? 3u << 20 : (size_t)i * 1000 + 1;
}

/* Feeds raw bytes to a receiver and returns the final progress result. */
static int feed_raw(const unsigned char *bytes, size_t n, bool close_after, const char **why)
{
    int sv[2];
    make_pair(sv, 0);
    CHECK(write(sv[0], bytes, n) == (ssize_t)n);
    if (close_after)
        shutdown(sv[0], SHUT_WR);
    rx_state st = {.sink_cap = 64, .sink_pieces = 2};
    st.buf = malloc(64);
    mf_stream_io io;
    mf_stream_io_fd(&io, sv[1]);
    mf_stream_in in;
    mf_stream_in_init(&in, 256, rx_header, &st);
    int rc = 0;
    for (int i = 0; i < 100 && rc >= 0; i++)
        rc = mf_stream_in_progress(&in, &io);
    if (rc == MF_STREAM_FAILED) {
        *why = in.why;
        int before = st.done_calls;
        mf_stream_in_abort(&in, MPI_ERR_OTHER);
        mf_stream_in_abort(&in, MPI_ERR_OTHER);
        CHECK(st.done_calls - before <= 1); /* a live sink is completed exactly once */
        CHECK(st.done_calls == st.frames);
    }
    mf_stream_in_free(&in);
    free(st.buf);
    close(sv[0]);
    close(sv[1]);
    return rc;
}

static void test_malformed(void)
{
    unsigned char b[3 * MF_WIRE_HDR_SIZE + 100];
    const char *why = NULL;
    encode(0, 10, b);
    b[0] = 'X';
    CHECK(feed_raw(b, MF_WIRE_HDR_SIZE, false, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "magic"));

    mf_wire_hdr h = {
        .type = MF_MSG_EAGER, .len = MF_WIRE_MAX_FRAME + 1, .total = MF_WIRE_MAX_FRAME + 1};
    mf_wire_encode(&h, b);
    why = NULL;
    CHECK(feed_raw(b, MF_WIRE_HDR_SIZE, false, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "maximum"));

    /* A good frame cut short by the end of the stream. */
    encode(0, 100, b);
    memset(b + MF_WIRE_HDR_SIZE, 1, 50);
    why = NULL;
    CHECK(feed_raw(b, MF_WIRE_HDR_SIZE + 50, true, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "middle"));

    /* End of stream at a frame boundary but without goodbye: the peer vanished. */
    encode(0, 0, b);
    why = NULL;
    CHECK(feed_raw(b, MF_WIRE_HDR_SIZE, true, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "closed by the peer"));

    /* Goodbye followed by more data. */
    memset(b, 0, sizeof b);
    b[0] = 'M';
    b[1] = 'F';
    b[2] = MF_WIRE_VERSION;
    encode(0, 0, b + MF_WIRE_HDR_SIZE);
    why = NULL;
    CHECK(feed_raw(b, 2 * MF_WIRE_HDR_SIZE, true, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "goodbye"));

    /* A malformed header after a valid frame with payload: the first is still delivered. */
    encode(0, 100, b);
    for (int i = 0; i < 100; i++)
        b[MF_WIRE_HDR_SIZE + i] = pattern(0, (size_t)i);
    encode(1, 0, b + MF_WIRE_HDR_SIZE + 100);
    b[MF_WIRE_HDR_SIZE + 100 + 3] = 99; /* unknown type */
    why = NULL;
    CHECK(feed_raw(b, 2 * MF_WIRE_HDR_SIZE + 100, false, &why) == MF_STREAM_FAILED);
    CHECK(why && strstr(why, "type"));
}

static void test_dead_peer(void)
{
    int sv[2];
    make_pair(sv, 4096);
    mf_stream_io tx;
    mf_stream_io_fd(&tx, sv[0]);
    mf_stream_out out;
    mf_stream_out_init(&out, 0);
    static unsigned char big[1 << 20];
    struct iovec v = {big, sizeof big};
    unsigned char h[MF_WIRE_HDR_SIZE];
    encode(0, sizeof big, h);
    tx_done d = {.d.fd_fn = tx_done_fn};
    int err = 0;
    CHECK(mf_stream_out_send(&out, &tx, h, &v, 1, sizeof big, &d.d, &err) == MF_FABRIC_PENDING);
    close(sv[1]);
    /* SIGPIPE is not ignored here: the write must still not raise it. */
    int rc = 0;
    for (int i = 0; i < 100 && rc >= 0; i++)
        rc = mf_stream_out_flush(&out, &tx, &err);
    CHECK(rc == MF_STREAM_FAILED);
    CHECK(err == EPIPE || err == ECONNRESET);
    CHECK(d.calls == 0);
    CHECK(mf_stream_out_fail(&out, MPI_ERR_OTHER) == 1);
    CHECK(d.calls == 1 && d.status == MPI_ERR_OTHER);
    CHECK(mf_stream_out_empty(&out));
    /* A send whose iovecs disagree with its length is refused before touching the stream. */
    CHECK(mf_stream_out_send(&out, &tx, h, &v, 1, 5, &d.d, &err) == MF_STREAM_FAILED);
    CHECK(err == EINVAL);
    close(sv[0]);
}

/* The handshake records: round trips, the structural checks, the HELLO checks against the job,
 * and the proofs (each side's MAC checks only in its own role, its own verdict, its own
 * transcript). */
static void test_hello(void)
{
    unsigned char b[MF_STREAM_HS_SIZE];
    mf_stream_hs h = {.kind = MF_STREAM_HS_HELLO,
                      .from = 3,
                      .to = 5,
                      .size = 8,
                      .job_hash = 0x1234567890abcdefULL};
    memset(h.blob, 0xa5, sizeof h.blob);
    mf_stream_hs g;
    const char *why = NULL;
    mf_stream_hs_encode(&h, b);
    CHECK(mf_stream_hs_decode(b, &g, &why) == 0);
    CHECK(g.kind == h.kind && g.from == 3 && g.to == 5 && g.size == 8 && g.job_hash == h.job_hash &&
          memcmp(g.blob, h.blob, sizeof h.blob) == 0);
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 5, &why) == 0);
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash + 1, 8, 5, &why) == -1 &&
          strstr(why, "another job"));
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 9, 5, &why) == -1 && strstr(why, "size"));
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 4, &why) == -1 &&
          strstr(why, "another rank"));
    g.from = 5;
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 5, &why) == -1 && strstr(why, "this very"));
    g.from = 8;
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 5, &why) == -1 && strstr(why, "range"));
    g.from = -1;
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 5, &why) == -1 && strstr(why, "range"));
    g.kind = MF_STREAM_HS_PROOF;
    CHECK(mf_stream_hs_check_hello(&g, h.job_hash, 8, 5, &why) == -1 && strstr(why, "HELLO"));

    /* Structure: magic, version, kind, zero padding, fields a kind does not have. */
    mf_stream_hs_encode(&h, b);
    b[0] = 'G';
    CHECK(mf_stream_hs_decode(b, &g, &why) == -1 && strstr(why, "not a Manifold"));
    mf_stream_hs_encode(&h, b);
    b[4] = 1; /* the old record that carried the secret */
    CHECK(mf_stream_hs_decode(b, &g, &why) == -1 && strstr(why, "version"));
    mf_stream_hs z = {.kind = MF_STREAM_HS_HELLO}; /* all fields zero: valid for any kind */
    for (int k = 0; k <= 255; k += (k < 8 ? 1 : 31)) {
        mf_stream_hs_encode(&z, b);
        b[5] = (unsigned char)k;
        CHECK((mf_stream_hs_decode(b, &g, &why) == 0) == (k >= 1 && k <= 6));
    }
    mf_stream_hs_encode(&h, b);
    b[21] = 1;
    CHECK(mf_stream_hs_decode(b, &g, &why) == -1 && strstr(why, "nonzero"));
    mf_stream_hs c = {.kind = MF_STREAM_HS_CHALLENGE};
    memset(c.blob, 7, sizeof c.blob);
    mf_stream_hs_encode(&c, b);
    CHECK(mf_stream_hs_decode(b, &g, &why) == 0 && g.kind == MF_STREAM_HS_CHALLENGE &&
          g.blob[31] == 7 && g.from == 0 && g.job_hash == 0);
    b[8] = 1; /* a CHALLENGE has no ranks */
    CHECK(mf_stream_hs_decode(b, &g, &why) == -1);

    /* The refusal is one constant: 'MFHS', version, kind 6, then zeros whatever was set. */
    mf_stream_hs r = h;
    r.kind = MF_STREAM_HS_REFUSE;
    mf_stream_hs_encode(&r, b);
    unsigned char want[MF_STREAM_HS_SIZE] = {'M', 'F', 'H', 'S', 2, MF_STREAM_HS_REFUSE};
    CHECK(memcmp(b, want, sizeof want) == 0);
    CHECK(mf_stream_hs_decode(b, &g, &why) == 0 && g.kind == MF_STREAM_HS_REFUSE);
    b[40] = 1;
    CHECK(mf_stream_hs_decode(b, &g, &why) == -1);

    /* Proofs. */
    CHECK(mf_auth_init() == 0);
    mf_auth_secret k, other;
    memset(&k, 0x11, sizeof k);
    other = k;
    other.as_key[0] ^= 0x80;
    mf_stream_auth a;
    memset(&a, 0, sizeof a);
    mf_auth_nonce(a.sa_nonce_i);
    mf_auth_nonce(a.sa_nonce_r);
    mf_stream_auth_ids(&a, 0x1234, 8, 3, 5);
    mf_stream_hs p = {.kind = MF_STREAM_HS_PROOF};
    mf_stream_auth_mac(&k, "manifold-tcp-1", MF_STREAM_HS_PROOF, &a, p.blob);
    mf_stream_hs_encode(&p, b);
    CHECK(mf_stream_hs_decode(b, &g, &why) == 0);
    CHECK(mf_stream_auth_check(&k, "manifold-tcp-1", &g, &a));
    CHECK(!mf_stream_auth_check(&other, "manifold-tcp-1", &g, &a)); /* wrong secret */
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-2", &g, &a));     /* another protocol */
    g.kind = MF_STREAM_HS_ACCEPT; /* an initiator's proof is no responder's verdict */
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &g, &a));
    g.kind = MF_STREAM_HS_CHALLENGE;
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &g, &a));
    g.kind = MF_STREAM_HS_PROOF;
    mf_stream_auth replay = a; /* the next connection draws another N_r */
    mf_auth_nonce(replay.sa_nonce_r);
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &g, &replay));
    mf_stream_auth liar = a; /* claims another rank */
    mf_stream_auth_ids(&liar, 0x1234, 8, 4, 5);
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &g, &liar));
    mf_stream_hs acc = {.kind = MF_STREAM_HS_ACCEPT};
    mf_stream_auth_mac(&k, "manifold-tcp-1", MF_STREAM_HS_ACCEPT, &a, acc.blob);
    CHECK(mf_stream_auth_check(&k, "manifold-tcp-1", &acc, &a));
    acc.kind = MF_STREAM_HS_REJECT; /* the verdict is bound */
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &acc, &a));
    acc.kind = MF_STREAM_HS_PROOF;
    CHECK(!mf_stream_auth_check(&k, "manifold-tcp-1", &acc, &a));
}

/* Part of a large frame moving is progress: flush and progress return at least 1 for it, so
 * that a progress engine does not count the pass as idle and go to sleep mid-transfer, and 0
 * only when nothing moved. */
static void test_partial_counts(void)
{
    int sv[2];
    make_pair(sv, 4096);
    mf_stream_io tx, rxio;
    mf_stream_io_fd(&tx, sv[0]);
    mf_stream_io_fd(&rxio, sv[1]);
    mf_stream_out out;
    mf_stream_out_init(&out, 0);
    rx_state st = {.sink_cap = 1u << 20, .sink_pieces = 1};
    st.buf = malloc(st.sink_cap);
    mf_stream_in in;
    CHECK(mf_stream_in_init(&in, 256, rx_header, &st) == MPI_SUCCESS);
    unsigned char *big = malloc(st.sink_cap), h[MF_WIRE_HDR_SIZE];
    for (size_t i = 0; i < st.sink_cap; i++)
        big[i] = pattern(0, i);
    struct iovec v = {big, st.sink_cap};
    encode(0, st.sink_cap, h);
    tx_done d = {.d.fd_fn = tx_done_fn};
    int err = 0;
    CHECK(mf_stream_out_send(&out, &tx, h, &v, 1, st.sink_cap, &d.d, &err) == MF_FABRIC_PENDING);
    CHECK(mf_stream_out_flush(&out, &tx, &err) == 0); /* the socket is still full */
    int partial_reads = 0, partial_writes = 0;
    for (int spin = 0; spin < 1000000 && st.done_calls == 0; spin++) {
        int r = mf_stream_in_progress(&in, &rxio);
        CHECK(r >= 0);
        partial_reads += r == 1 && st.done_calls == 0;
        int w = mf_stream_out_flush(&out, &tx, &err);
        CHECK(w >= 0);
        partial_writes += w == 1 && d.calls == 0;
    }
    CHECK(st.done_calls == 1 && st.bad == 0 && d.calls == 1);
    CHECK(partial_reads > 0 && partial_writes > 0);
    CHECK(mf_stream_in_progress(&in, &rxio) == 0); /* nothing left: an idle pass */
    mf_stream_in_free(&in);
    free(big);
    free(st.buf);
    close(sv[0]);
    close(sv[1]);
}

/* The bytes of one frame of `type` (EAGER or DATA) whose payload is pattern(seq, i); *n its size. */
static unsigned char *frame_bytes(int type, uint64_t seq, size_t len, size_t *n)
{
    mf_wire_hdr h = {.type = (uint8_t)type,
                     .context = 7,
                     .src = 1,
                     .tag = 3,
                     .len = len,
                     .total = type == MF_MSG_EAGER ? len : 0,
                     .sreq = seq};
    unsigned char *b = malloc(MF_WIRE_HDR_SIZE + len);
    mf_wire_encode(&h, b);
    for (size_t i = 0; i < len; i++)
        b[MF_WIRE_HDR_SIZE + i] = pattern(seq, i);
    *n = MF_WIRE_HDR_SIZE + len;
    return b;
}

static void write_frame(int fd, int type, uint64_t seq, size_t len)
{
    size_t n;
    unsigned char *b = frame_bytes(type, seq, len, &n);
    CHECK(write(fd, b, n) == (ssize_t)n);
    free(b);
}

/* Takes the peeked frame into a buffer of `cap` bytes (two iovecs) and checks what arrived. */
static void take_check(mf_stream_in *in, const mf_wire_hdr *h, uint64_t seq, size_t cap)
{
    unsigned char *buf = malloc(cap + 1);
    struct iovec v[2] = {{buf, cap / 2}, {buf + cap / 2, cap - cap / 2}};
    mf_stream_in_take(in, h, v, 2);
    size_t got = h->len < cap ? (size_t)h->len : cap;
    for (size_t i = 0; i < got; i++)
        CHECK(buf[i] == pattern(seq, i));
    free(buf);
}

/* The direct receive (peek/take) and progress sharing one staging buffer: whole eager frames
 * are taken in order, anything else is left to progress, which then delivers it and what
 * follows in order; a frame that arrives in pieces is taken once whole; one larger than the
 * staging buffer, and the goodbye, are progress's. */
static void test_peek(void)
{
    int sv[2];
    make_pair(sv, 0);
    mf_stream_io io;
    mf_stream_io_fd(&io, sv[1]);
    rx_state st = {.sink_cap = 2000, .sink_pieces = 2};
    st.buf = malloc(st.sink_cap);
    mf_stream_in in;
    CHECK(mf_stream_in_init(&in, 256, rx_header, &st) == MPI_SUCCESS);
    mf_wire_hdr h;
    CHECK(mf_stream_in_peek(&in, &io, &h) == 0); /* nothing sent */
    CHECK(!mf_stream_in_staged(&in));

    /* Two eager frames and a DATA frame in one read; the second taken truncated. */
    write_frame(sv[0], MF_MSG_EAGER, 100, 10);
    write_frame(sv[0], MF_MSG_EAGER, 101, 100);
    write_frame(sv[0], MF_MSG_DATA, 0, 20);
    CHECK(mf_stream_in_peek(&in, &io, &h) == 1);
    CHECK(h.type == MF_MSG_EAGER && h.sreq == 100 && h.len == 10);
    CHECK(mf_stream_in_peek(&in, &io, &h) == 1 && h.sreq == 100); /* peek consumes nothing */
    take_check(&in, &h, 100, 10);
    CHECK(mf_stream_in_staged(&in));
    CHECK(mf_stream_in_peek(&in, &io, &h) == 1 && h.sreq == 101 && h.len == 100);
    take_check(&in, &h, 101, 40);
    CHECK(mf_stream_in_peek(&in, &io, &h) == -1); /* DATA: progress's */
    CHECK(mf_stream_in_staged(&in));
    CHECK(mf_stream_in_progress(&in, &io) == 1);
    CHECK(st.frames == 1 && st.done_calls == 1 && st.bad == 0);
    CHECK(!mf_stream_in_staged(&in));

    /* An eager frame in two pieces: not whole after the first, taken after the second. */
    size_t n;
    unsigned char *b = frame_bytes(MF_MSG_EAGER, 102, 150, &n);
    CHECK(write(sv[0], b, 40) == 40);
    CHECK(mf_stream_in_peek(&in, &io, &h) == 0);
    CHECK(mf_stream_in_staged(&in));
    CHECK(write(sv[0], b + 40, n - 40) == (ssize_t)(n - 40));
    CHECK(mf_stream_in_peek(&in, &io, &h) == 1 && h.sreq == 102);
    take_check(&in, &h, 102, 150);
    free(b);

    /* Larger than the staging buffer: progress reads it into the sink. */
    write_frame(sv[0], MF_MSG_EAGER, 1, 1000);
    CHECK(mf_stream_in_peek(&in, &io, &h) == -1);
    for (int spin = 0; spin < 100 && st.done_calls < 2; spin++)
        CHECK(mf_stream_in_progress(&in, &io) >= 0);
    CHECK(st.frames == 2 && st.done_calls == 2 && st.bad == 0);

    /* The goodbye and the end of the stream: progress's to see. */
    unsigned char bye[MF_WIRE_HDR_SIZE] = {'M', 'F', MF_WIRE_VERSION};
    CHECK(write(sv[0], bye, sizeof bye) == (ssize_t)sizeof bye);
    shutdown(sv[0], SHUT_WR);
    CHECK(mf_stream_in_peek(&in, &io, &h) == -1);
    int rc = 0;
    for (int spin = 0; spin < 100 && rc >= 0; spin++)
        rc = mf_stream_in_progress(&in, &io);
    CHECK(rc == MF_STREAM_CLOSED);
    mf_stream_in_free(&in);
    free(st.buf);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    /* Many small frames, sink as big as needed, payload in 1..3 pieces. */
    run_frames(2000, size_small, 0, 400, 1, 1);
    run_frames(2000, size_small, 0, 400, 3, 3);
    /* Same with remainders copied (sends mostly return DONE while the socket is full). */
    run_frames(2000, size_small, 4096, 400, 2, 2);
    /* Big frames scattered into 5 pieces; sinks that take only part of the payload. */
    run_frames(12, size_big, 0, 3u << 20, 5, 3);
    run_frames(12, size_big, 0, 1000, 3, 2);
    run_frames(200, size_small, 0, 0, 0, 1);
    test_malformed();
    test_dead_peer();
    test_hello();
    test_partial_counts();
    test_peek();
    if (unit_check_failures) {
        fprintf(stderr, "stream_test: %d failure(s)\n", unit_check_failures);
        return 1;
    }
    printf("stream_test: ok\n");
    return 0;
}
