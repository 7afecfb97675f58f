/*
 * pmi_wire.c — PMI-1 line parser/formatter and line assembler (see pmi_wire.h for the contract).
 * Compiled into libmpi and, as the same file, into mpiexec.
 */
#include "runtime/pmi_wire.h"
#include "runtime/pmi_chars.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Values: anything visible; space separates tokens, controls and DEL would break lines. */
static int pmi_value_char(unsigned char c)
{
    return c > 0x20 && c != 0x7f;
}

/* Keys: the same, minus '=' which ends the key ("mf.tcp.3" is a fine key). */
static int pmi_key_char(unsigned char c)
{
    return pmi_value_char(c) && c != '=';
}

int mf_pmi_key_ok(const char *s)
{
    return mf_pmi_chars_ok(s, pmi_key_char, 1);
}

int mf_pmi_value_ok(const char *s)
{
    return mf_pmi_chars_ok(s, pmi_value_char, 0);
}

int mf_pmi_parse(mf_pmi_msg *msg, const char *line, size_t len, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    msg->nfields = 0;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len > MF_PMI_LINE_MAX) {
        *why = "line too long";
        return -1;
    }
    if (memchr(line, '\0', len)) {
        *why = "NUL byte in line";
        return -1;
    }
    memcpy(msg->storage, line, len);
    msg->storage[len] = '\0';

    char *p = msg->storage, *end = msg->storage + len;
    while (p < end) {
        if (*p == ' ') {
            p++;
            continue;
        }
        char *tok = p;
        while (p < end && *p != ' ')
            p++;
        if (p < end)
            *p++ = '\0';
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            *why = "field is not key=value";
            return -1;
        }
        *eq = '\0';
        if (!mf_pmi_key_ok(tok)) {
            *why = "bad character in key";
            return -1;
        }
        if (!mf_pmi_value_ok(eq + 1)) {
            *why = "bad character in value";
            return -1;
        }
        if (msg->nfields == MF_PMI_FIELDS_MAX) {
            *why = "too many fields";
            return -1;
        }
        msg->keys[msg->nfields] = tok;
        msg->vals[msg->nfields] = eq + 1;
        msg->nfields++;
    }
    if (msg->nfields == 0) {
        *why = "empty line";
        return -1;
    }
    if (strcmp(msg->keys[0], "cmd") != 0 || msg->vals[0][0] == '\0') {
        msg->nfields = 0;
        *why = "first field is not cmd=NAME";
        return -1;
    }
    return 0;
}

const char *mf_pmi_cmd(const mf_pmi_msg *msg)
{
    return msg->nfields > 0 ? msg->vals[0] : "";
}

const char *mf_pmi_get(const mf_pmi_msg *msg, const char *key)
{
    for (int i = 1; i < msg->nfields; i++)
        if (strcmp(msg->keys[i], key) == 0)
            return msg->vals[i];
    return NULL;
}

int mf_pmi_get_int(const mf_pmi_msg *msg, const char *key, long lo, long hi, int *out)
{
    const char *v = mf_pmi_get(msg, key);
    if (!v || !*v)
        return -1;
    char *endp;
    errno = 0;
    long x = strtol(v, &endp, 10);
    if (errno || *endp || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

int mf_pmi_get_bool(const mf_pmi_msg *msg, const char *key)
{
    const char *v = mf_pmi_get(msg, key);
    if (!v)
        return -1;
    if (strcasecmp(v, "TRUE") == 0)
        return 1;
    if (strcasecmp(v, "FALSE") == 0)
        return 0;
    return -1;
}

/* Appends `s` at buf[*pos], keeping room for the trailing "\n\0". */
static int pmi_append(char *buf, size_t cap, size_t *pos, const char *s)
{
    size_t n = strlen(s);
    if (*pos + n + 2 > cap)
        return -1;
    memcpy(buf + *pos, s, n);
    *pos += n;
    return 0;
}

int mf_pmi_format(char *buf, size_t cap, const char *cmd, const char *const *kv, int npairs)
{
    if (cap > MF_PMI_LINE_MAX + 2)
        cap = MF_PMI_LINE_MAX + 2;
    if (!buf || cap < 2 || !mf_pmi_value_ok(cmd) || !*cmd || npairs < 0)
        return -1;
    size_t pos = 0;
    if (pmi_append(buf, cap, &pos, "cmd=") || pmi_append(buf, cap, &pos, cmd))
        return -1;
    for (int i = 0; i < npairs; i++) {
        const char *k = kv[2 * i], *v = kv[2 * i + 1];
        if (!mf_pmi_key_ok(k) || !mf_pmi_value_ok(v))
            return -1;
        if (pmi_append(buf, cap, &pos, " ") || pmi_append(buf, cap, &pos, k) ||
            pmi_append(buf, cap, &pos, "=") || pmi_append(buf, cap, &pos, v))
            return -1;
    }
    buf[pos++] = '\n';
    buf[pos] = '\0';
    return (int)pos;
}

int mf_pmi_hex_encode(const void *data, size_t len, char *out, size_t outcap)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = data;
    if (outcap < 1 || len > (outcap - 1) / 2)
        return -1;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * len] = '\0';
    return (int)(2 * len);
}

static int pmi_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int mf_pmi_hex_decode(const char *hex, void *out, size_t outcap)
{
    size_t n = strlen(hex);
    unsigned char *o = out;
    if (n % 2 || n / 2 > outcap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = pmi_hexval(hex[2 * i]), lo = pmi_hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        o[i] = (unsigned char)(hi << 4 | lo);
    }
    return (int)(n / 2);
}

int mf_pmi_escape(const char *in, char *out, size_t outcap)
{
    static const char digits[] = "0123456789ABCDEF";
    size_t o = 0;
    if (outcap == 0)
        return -1;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        int plain = pmi_value_char(c) && c != '%';
        size_t need = plain ? 1 : 3;
        if (o + need >= outcap) {
            out[o] = '\0';
            return -1;
        }
        if (plain) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = digits[c >> 4];
            out[o++] = digits[c & 15];
        }
    }
    out[o] = '\0';
    return (int)o;
}

void mf_pmi_unescape(const char *in, char *out, size_t outcap)
{
    size_t o = 0;
    if (outcap == 0)
        return;
    while (*in && o + 1 < outcap) {
        unsigned char c = (unsigned char)*in;
        int hi, lo;
        if (c == '%' && in[1] && in[2] && (hi = pmi_hexval(in[1])) >= 0 &&
            (lo = pmi_hexval(in[2])) >= 0) {
            c = (unsigned char)(hi << 4 | lo);
            in += 3;
        } else {
            in++;
        }
        out[o++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
    }
    out[o] = '\0';
}

void mf_pmi_lines_init(mf_pmi_lines *lb)
{
    lb->used = 0;
    lb->start = 0;
}

char *mf_pmi_lines_space(mf_pmi_lines *lb, size_t *room)
{
    if (lb->start > 0) {
        memmove(lb->buf, lb->buf + lb->start, lb->used - lb->start);
        lb->used -= lb->start;
        lb->start = 0;
    }
    /* One byte is kept for the NUL the consumer gets after its line. */
    *room = MF_PMI_LINE_MAX - lb->used;
    return lb->buf + lb->used;
}

void mf_pmi_lines_commit(mf_pmi_lines *lb, size_t n)
{
    lb->used += n;
}

int mf_pmi_lines_next(mf_pmi_lines *lb, const char **line, size_t *len)
{
    char *s = lb->buf + lb->start;
    size_t avail = lb->used - lb->start;
    char *nl = memchr(s, '\n', avail);
    if (!nl) {
        if (lb->start == 0 && lb->used >= MF_PMI_LINE_MAX)
            return -1;
        return 0;
    }
    *nl = '\0';
    *line = s;
    *len = (size_t)(nl - s);
    lb->start += *len + 1;
    if (lb->start == lb->used)
        lb->start = lb->used = 0;
    return 1;
}
