/*
 * link.c — framed messages between mpiexec and its proxies (contract in link.h).
 */
#include "link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mpiexec.h"

double mx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void mx_put32(char *p, uint32_t v)
{
    p[0] = (char)(v & 0xff);
    p[1] = (char)((v >> 8) & 0xff);
    p[2] = (char)((v >> 16) & 0xff);
    p[3] = (char)((v >> 24) & 0xff);
}

static uint32_t mx_get32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

void mx_link_init(mx_link *l, int fd)
{
    memset(l, 0, sizeof *l);
    l->l_fd = fd;
    l->l_last_rx = l->l_last_tx = mx_now();
    l->l_max = MX_LINK_MAX;
}

static int mx_reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 65536;
    while (c < need)
        c *= 2;
    char *n = realloc(*buf, c);
    if (!n)
        return -1;
    *buf = n;
    *cap = c;
    return 0;
}

#define MX_HDR 20
/* A sequenced frame received this many times without our sending anything: acknowledge. */
#define MX_ACK_EVERY 32

int mx_link_send(mx_link *l, int type, int32_t arg, const void *data, size_t len)
{
    int numbered = l->l_resumable && type != MX_M_PING;
    if (l->l_fd < 0 && !numbered)
        return 0; /* a closed link swallows frames: its host is already being dealt with */
    if (len > MX_LINK_MAX)
        return -1;
    if (l->l_out_off > 0 && l->l_out_off == l->l_out_len)
        l->l_out_off = l->l_out_len = 0;
    char hdr[MX_HDR];
    mx_put32(hdr, (uint32_t)type);
    mx_put32(hdr + 4, (uint32_t)arg);
    mx_put32(hdr + 8, (uint32_t)len);
    mx_put32(hdr + 12, numbered ? l->l_tx_seq + 1 : 0);
    mx_put32(hdr + 16, l->l_rx_seq);
    if (numbered) { /* kept until acknowledged, sent again on a new connection */
        if (mx_reserve(&l->l_replay, &l->l_replay_cap, l->l_replay_len + MX_HDR + len) != 0)
            return -1;
        memcpy(l->l_replay + l->l_replay_len, hdr, MX_HDR);
        if (len)
            memcpy(l->l_replay + l->l_replay_len + MX_HDR, data, len);
        l->l_replay_len += MX_HDR + len;
        l->l_tx_seq++;
    }
    l->l_acked_sent = l->l_rx_seq;
    if (l->l_fd < 0)
        return 0; /* between two connections: the replay buffer has it */
    if (mx_reserve(&l->l_out, &l->l_out_cap, l->l_out_len + MX_HDR + len) != 0)
        return -1;
    char *p = l->l_out + l->l_out_len;
    memcpy(p, hdr, MX_HDR);
    if (len)
        memcpy(p + MX_HDR, data, len);
    l->l_out_len += MX_HDR + len;
    l->l_last_tx = mx_now();
    (void)mx_link_flush(l); /* errors surface at the next read or flush from the loop */
    return 0;
}

/* The peer has every numbered frame up to `ack`: they leave the replay buffer. */
static void mx_link_acked(mx_link *l, uint32_t ack)
{
    if (ack <= l->l_peer_ack || ack > l->l_tx_seq)
        return;
    l->l_peer_ack = ack;
    size_t off = 0;
    while (off + MX_HDR <= l->l_replay_len && mx_get32(l->l_replay + off + 12) <= ack)
        off += MX_HDR + mx_get32(l->l_replay + off + 8);
    memmove(l->l_replay, l->l_replay + off, l->l_replay_len - off);
    l->l_replay_len -= off;
}

void mx_link_resumable(mx_link *l)
{
    l->l_resumable = 1;
}

int mx_link_adopt(mx_link *l, mx_link *from)
{
    size_t in = from->l_in_len - from->l_in_off, out = from->l_out_len - from->l_out_off;
    if (mx_reserve(&l->l_in, &l->l_in_cap, in) != 0 ||
        mx_reserve(&l->l_out, &l->l_out_cap, out + l->l_replay_len) != 0)
        return -1;
    if (l->l_fd >= 0)
        close(l->l_fd);
    l->l_fd = from->l_fd;
    from->l_fd = -1;
    /* A frame half-read from the old connection is sent again whole: start clean. */
    memcpy(l->l_in, from->l_in + from->l_in_off, in);
    l->l_in_off = 0;
    l->l_in_len = in;
    memcpy(l->l_out, from->l_out + from->l_out_off, out);
    if (l->l_replay_len)
        memcpy(l->l_out + out, l->l_replay, l->l_replay_len);
    l->l_out_off = 0;
    l->l_out_len = out + l->l_replay_len;
    l->l_last_rx = l->l_last_tx = mx_now();
    mx_link_close(from);
    (void)mx_link_flush(l);
    return 0;
}

int mx_link_flush(mx_link *l)
{
    while (l->l_fd >= 0 && l->l_out_off < l->l_out_len) {
        ssize_t n = send(l->l_fd, l->l_out + l->l_out_off, l->l_out_len - l->l_out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0)
            return -1;
        l->l_out_off += (size_t)n;
    }
    if (l->l_out_off == l->l_out_len)
        l->l_out_off = l->l_out_len = 0;
    return 0;
}

size_t mx_link_pending(const mx_link *l)
{
    return l->l_out_len - l->l_out_off;
}

int mx_link_read(mx_link *l)
{
    if (l->l_fd < 0)
        return -1;
    if (l->l_in_off > 0) { /* frames handed out before are consumed: compact */
        memmove(l->l_in, l->l_in + l->l_in_off, l->l_in_len - l->l_in_off);
        l->l_in_len -= l->l_in_off;
        l->l_in_off = 0;
    }
    int rounds = l->l_max < 65536 ? 1 : 16;
    for (int round = 0; round < rounds; round++) {
        if (mx_reserve(&l->l_in, &l->l_in_cap, l->l_in_len + 65536) != 0)
            return -1;
        ssize_t n = read(l->l_fd, l->l_in + l->l_in_len, l->l_in_cap - l->l_in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return -1;
        l->l_in_len += (size_t)n;
        l->l_last_rx = mx_now();
    }
    return 0;
}

int mx_link_next(mx_link *l, int *type, int32_t *arg, const char **data, size_t *len)
{
    for (;;) {
        size_t avail = l->l_in_len - l->l_in_off;
        if (avail < MX_HDR)
            return 0;
        const char *p = l->l_in + l->l_in_off;
        uint32_t t = mx_get32(p), n = mx_get32(p + 8), seq = mx_get32(p + 12);
        if (t == 0 || t >= MX_M_LAST || n > l->l_max || (seq && !l->l_resumable))
            return -1;
        if (avail < MX_HDR + (size_t)n)
            return 0;
        l->l_in_off += MX_HDR + (size_t)n;
        if (l->l_resumable)
            mx_link_acked(l, mx_get32(p + 16));
        if (seq) {
            if (seq <= l->l_rx_seq)
                continue; /* sent again after a reconnection, and already handled */
            if (seq != l->l_rx_seq + 1)
                return -1;
            l->l_rx_seq = seq;
            if (l->l_rx_seq - l->l_acked_sent >= MX_ACK_EVERY)
                (void)mx_link_send(l, MX_M_PING, 0, NULL, 0);
        }
        *type = (int)t;
        *arg = (int32_t)mx_get32(p + 4);
        *data = p + MX_HDR;
        *len = n;
        return 1;
    }
}

void mx_link_close(mx_link *l)
{
    if (l->l_fd >= 0)
        close(l->l_fd);
    l->l_fd = -1;
    free(l->l_in);
    free(l->l_out);
    free(l->l_replay);
    l->l_replay = NULL;
    l->l_replay_len = l->l_replay_cap = 0;
    l->l_resumable = 0;
    l->l_in = l->l_out = NULL;
    l->l_in_len = l->l_in_off = l->l_in_cap = 0;
    l->l_out_len = l->l_out_off = l->l_out_cap = 0;
}

int mx_frame_int(const char *data, size_t len, long lo, long hi, long *out)
{
    char text[32];
    if (len > 0 && data[len - 1] == '\0')
        len--;
    if (len == 0 || len >= sizeof text || memchr(data, '\0', len))
        return -1;
    memcpy(text, data, len);
    text[len] = '\0';
    mx_strrd rd = {text, text + len + 1};
    return mx_rd_int(&rd, lo, hi, out);
}

void mx_sb_str(mx_strbuf *sb, const char *s)
{
    size_t n = strlen(s) + 1;
    if (sb->failed || mx_reserve(&sb->b, &sb->cap, sb->len + n) != 0) {
        sb->failed = 1;
        return;
    }
    memcpy(sb->b + sb->len, s, n);
    sb->len += n;
}

void mx_sb_int(mx_strbuf *sb, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    mx_sb_str(sb, num);
}

const char *mx_rd_str(mx_strrd *rd)
{
    if (rd->p >= rd->end)
        return NULL;
    const char *nul = memchr(rd->p, '\0', (size_t)(rd->end - rd->p));
    if (!nul)
        return NULL;
    const char *s = rd->p;
    rd->p = nul + 1;
    return s;
}

int mx_rd_int(mx_strrd *rd, long lo, long hi, long *out)
{
    const char *s = mx_rd_str(rd);
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
