/*
 * stdio_fwd.c — forwarding of the ranks' stdout/stderr and of mpiexec's stdin.
 *
 * Output contract:
 *   - each rank's stdout goes to our stdout, stderr to our stderr;
 *   - only whole lines are written, each rank's lines in order, one write_all per batch, so
 *     lines of different ranks never mix (we are the only writer and single-threaded);
 *   - with --tag-output every line starts with "[rank] ";
 *   - a partial line is written when the stream ends (tagged: with a newline added), when it
 *     outgrows MX_LINE_LIMIT, or -- untagged only, for prompts -- after waiting MX_IDLE_FLUSH
 *     seconds (see mx_stream_flush_idle); the next bytes then continue that line.
 * Input contract: bytes from our stdin reach rank 0's stdin in order; we read only when we have
 * room (MX_STDIN_BUF), so a rank that never reads stdin costs at most that much memory. EOF on
 * our stdin closes rank 0's stdin; rank 0 closing its stdin stops the forwarding.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpiexec.h"

#define MX_READ_CHUNK 65536
#define MX_LINE_LIMIT (1 << 20)
#define MX_STDIN_BUF 65536

void mx_write_all(int fd, const char *buf, size_t len)
{
    static int broken[3];
    if (fd >= 0 && fd < 3 && broken[fd])
        return;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* Our stdout was handed to us non-blocking: wait instead of spinning. */
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            (void)poll(&p, 1, 1000);
            continue;
        }
        if (n <= 0) {
            /* Reader gone (EPIPE) or a broken device: drop output, keep supervising the job. */
            if (fd >= 0 && fd < 3)
                broken[fd] = 1;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

int mx_stream_init(mx_stream *s, int fd, int out_fd)
{
    s->fd = fd;
    s->out_fd = out_fd;
    /* Non-blocking: draining a dead rank's pipe must not wait for descendants holding it. */
    if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        return -1;
    s->len = 0;
    s->cap = MX_READ_CHUNK * 2;
    s->mid_line = 0;
    s->partial_since = 0;
    s->buf = malloc(s->cap);
    if (!s->buf)
        return -1;
    return 0;
}

/* Emits buf[0..len) which holds whole lines (each ending in '\n') -- or, if `partial`, ends with
 * an unfinished line -- with tags when asked. */
static void mx_emit(mx_job *job, mx_rank *r, mx_stream *s, const char *data, size_t len,
                    int partial)
{
    if (len == 0)
        return;
    if (!job->opt->tag_output) {
        mx_write_all(s->out_fd, data, len);
        s->mid_line = partial;
        return;
    }
    char tag[24];
    int taglen = snprintf(tag, sizeof tag, "[%d] ", r->rank);
    /* Count lines to size one output buffer: one write per batch keeps syscalls few. */
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += data[i] == '\n';
    size_t cap = len + lines * (size_t)taglen + 2, o = 0;
    char *out = malloc(cap);
    if (!out) {
        mx_write_all(s->out_fd, data, len); /* degraded but nothing lost */
        return;
    }
    size_t i = 0;
    while (i < len) {
        if (!s->mid_line) {
            memcpy(out + o, tag, (size_t)taglen);
            o += (size_t)taglen;
        }
        const char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) + 1 : len;
        memcpy(out + o, data + i, end - i);
        o += end - i;
        s->mid_line = !nl;
        i = end;
    }
    mx_write_all(s->out_fd, out, o);
    free(out);
}

/* Forwards the complete lines at the head of the buffer and keeps the rest. */
static void mx_stream_forward(mx_job *job, mx_rank *r, mx_stream *s)
{
    char *last = NULL;
    for (size_t i = s->len; i > 0; i--) {
        if (s->buf[i - 1] == '\n') {
            last = s->buf + i - 1;
            break;
        }
    }
    size_t whole = last ? (size_t)(last - s->buf) + 1 : 0;
    if (whole == 0 && s->len >= MX_LINE_LIMIT)
        whole = s->len; /* an endless line: pass it on in pieces */
    if (whole > 0) {
        mx_emit(job, r, s, s->buf, whole, s->buf[whole - 1] != '\n');
        memmove(s->buf, s->buf + whole, s->len - whole);
        s->len -= whole;
    }
    s->partial_since = s->len > 0 ? (s->partial_since ? s->partial_since : mx_now()) : 0;
}

int mx_stream_readable(mx_job *job, mx_rank *r, mx_stream *s)
{
    /* A bounded number of reads per wake-up so one chatty rank cannot starve the others. */
    for (int round = 0; round < 4; round++) {
        if (s->cap - s->len < MX_READ_CHUNK) {
            char *n = realloc(s->buf, s->cap * 2);
            if (!n) {
                mx_stream_forward(job, r, s);
                if (s->cap - s->len < MX_READ_CHUNK) { /* flush unconditionally */
                    mx_emit(job, r, s, s->buf, s->len, 1);
                    s->len = 0;
                }
                continue;
            }
            s->buf = n;
            s->cap *= 2;
        }
        ssize_t n = read(s->fd, s->buf + s->len, MX_READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            mx_stream_close(job, r, s);
            return -1;
        }
        s->len += (size_t)n;
        if ((size_t)n < MX_READ_CHUNK)
            break;
    }
    mx_stream_forward(job, r, s);
    return 0;
}

void mx_stream_flush_idle(mx_job *job, mx_rank *r, mx_stream *s, double older_than)
{
    if (job->opt->tag_output || s->len == 0 || s->partial_since == 0 ||
        s->partial_since > older_than)
        return;
    mx_emit(job, r, s, s->buf, s->len, 1);
    s->len = 0;
    s->partial_since = 0;
}

void mx_stream_feed(mx_job *job, mx_rank *r, mx_stream *s, const char *data, size_t len)
{
    if (!s->buf)
        return; /* closed: the rank's exit was already reported */
    while (len > 0) {
        if (s->cap - s->len < len && s->cap < MX_LINE_LIMIT * 2) {
            char *n = realloc(s->buf, s->cap * 2);
            if (n) {
                s->buf = n;
                s->cap *= 2;
            }
        }
        if (s->len == s->cap) { /* no memory: pass on what we hold, unfinished or not */
            mx_emit(job, r, s, s->buf, s->len, s->buf[s->len - 1] != '\n');
            s->len = 0;
        }
        size_t n = s->cap - s->len < len ? s->cap - s->len : len;
        memcpy(s->buf + s->len, data, n);
        s->len += n;
        data += n;
        len -= n;
        mx_stream_forward(job, r, s);
    }
}

void mx_stream_close(mx_job *job, mx_rank *r, mx_stream *s)
{
    if (s->fd < 0 && !s->buf)
        return;
    mx_stream_forward(job, r, s);
    if (s->len > 0) {
        if (job->opt->tag_output && s->len < s->cap)
            s->buf[s->len++] = '\n';
        mx_emit(job, r, s, s->buf, s->len, s->buf[s->len - 1] != '\n');
    } else if (job->opt->tag_output && s->mid_line) {
        mx_write_all(s->out_fd, "\n", 1);
    }
    s->len = 0;
    s->mid_line = 0;
    s->partial_since = 0;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
}

void mx_stdin_readable(mx_job *job)
{
    if (job->stdin_src < 0 || job->stdin_len >= MX_STDIN_BUF)
        return;
    if (!job->stdin_buf && !(job->stdin_buf = malloc(MX_STDIN_BUF)))
        return;
    ssize_t n;
    do
        n = read(job->stdin_src, job->stdin_buf + job->stdin_len, MX_STDIN_BUF - job->stdin_len);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        job->stdin_src = -1; /* EOF (or an unreadable stdin): rank 0 sees EOF after the rest */
        job->stdin_eof = 1;
    } else {
        job->stdin_len += (size_t)n;
    }
    mx_stdin_writable(job);
}

void mx_stdin_feed(mx_job *job, const char *data, size_t len)
{
    if (len == 0) {
        job->stdin_eof = 1;
    } else if (job->stdin_dst >= 0) {
        char *n = realloc(job->stdin_buf, job->stdin_len + len);
        if (!n)
            return;
        job->stdin_buf = n;
        memcpy(job->stdin_buf + job->stdin_len, data, len);
        job->stdin_len += len;
    }
    mx_stdin_writable(job);
}

void mx_stdin_writable(mx_job *job)
{
    if (job->rm) { /* rank 0 is on another host: its proxy writes the pipe */
        if (job->stdin_len > 0)
            mx_remote_stdin(job, job->stdin_buf, job->stdin_len);
        job->stdin_len = 0;
        if (job->stdin_eof && job->stdin_src < 0 && !job->stdin_eof_sent) {
            job->stdin_eof_sent = 1;
            mx_remote_stdin(job, NULL, 0);
        }
        return;
    }
    while (job->stdin_dst >= 0 && job->stdin_len > 0) {
        ssize_t n = write(job->stdin_dst, job->stdin_buf, job->stdin_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) { /* EPIPE: rank 0 closed its stdin or exited */
            mx_stdin_close(job);
            return;
        }
        memmove(job->stdin_buf, job->stdin_buf + n, job->stdin_len - (size_t)n);
        job->stdin_len -= (size_t)n;
    }
    if (job->stdin_eof && job->stdin_len == 0 && job->stdin_dst >= 0) {
        close(job->stdin_dst);
        job->stdin_dst = -1;
    }
}

void mx_stdin_close(mx_job *job)
{
    if (job->stdin_dst >= 0)
        close(job->stdin_dst);
    job->stdin_dst = -1;
    job->stdin_src = -1;
    job->stdin_len = 0;
    free(job->stdin_buf);
    job->stdin_buf = NULL;
}
