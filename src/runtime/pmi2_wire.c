/*
 * pmi2_wire.c — PMI-2 message framing, parser and formatter (see pmi2_wire.h for the contract).
 */
#include "runtime/pmi2_wire.h"
#include "runtime/pmi_chars.h"

#include <stdio.h>
#include <string.h>

_Static_assert(MF_PMI2_BODY_MAX <= MF_PMI_LINE_MAX, "a PMI-2 body must fit in mf_pmi_msg");

static int pmi2_value_char(unsigned char c)
{
    return c >= 0x20 && c != 0x7f && c != ';';
}

static int pmi2_key_char(unsigned char c)
{
    return pmi2_value_char(c) && c != '=';
}

int mf_pmi2_key_ok(const char *s)
{
    return mf_pmi_chars_ok(s, pmi2_key_char, 1);
}

int mf_pmi2_value_ok(const char *s)
{
    return mf_pmi_chars_ok(s, pmi2_value_char, 0);
}

int mf_pmi2_parse_header(const char *hdr, size_t *body_len, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    size_t i = 0, n = 0;
    int digits = 0;
    while (i < MF_PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    while (i < MF_PMI2_HDR_LEN && hdr[i] >= '0' && hdr[i] <= '9') {
        n = n * 10 + (size_t)(hdr[i] - '0');
        digits++;
        i++;
    }
    while (i < MF_PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    if (digits == 0 || i != MF_PMI2_HDR_LEN) {
        *why = "length header is not a decimal number padded with spaces";
        return -1;
    }
    if (n == 0 || n > MF_PMI2_BODY_MAX) {
        *why = n ? "message longer than the client accepts" : "empty message";
        return -1;
    }
    *body_len = n;
    return 0;
}

int mf_pmi2_parse(mf_pmi_msg *msg, const char *body, size_t len, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    msg->nfields = 0;
    if (len > MF_PMI2_BODY_MAX) {
        *why = "message too long";
        return -1;
    }
    memcpy(msg->storage, body, len);
    msg->storage[len] = '\0';

    char *p = msg->storage, *end = msg->storage + len;
    while (p < end) {
        char *tok = p;
        while (p < end && *p != ';')
            p++;
        char *fend = p; /* the ';' ending this field, or the end of the body */
        if (p < end)
            p++;
        char *eq = memchr(tok, '=', (size_t)(fend - tok));
        if (!eq || eq == tok) {
            *why = "field is not key=value";
            return -1;
        }
        for (const char *c = tok; c < eq; c++) {
            if (!pmi2_key_char((unsigned char)*c)) {
                *why = "bad character in key";
                return -1;
            }
        }
        for (const char *c = eq + 1; c < fend; c++) {
            if (!pmi2_value_char((unsigned char)*c)) {
                *why = "bad character in value";
                return -1;
            }
        }
        *eq = '\0';
        *fend = '\0';
        if (msg->nfields == 0 && strcmp(tok, "cmd") != 0) {
            *why = "first field is not cmd=";
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
        *why = "empty message";
        return -1;
    }
    if (!*msg->vals[0]) {
        *why = "empty command name";
        msg->nfields = 0;
        return -1;
    }
    return 0;
}

int mf_pmi2_format(char *buf, size_t cap, const char *cmd, const char *const *kv, int npairs)
{
    if (!mf_pmi2_value_ok(cmd) || !*cmd || strchr(cmd, '=') || npairs < 0 ||
        npairs >= MF_PMI_FIELDS_MAX || cap < MF_PMI2_HDR_LEN + 1)
        return -1;
    size_t body = strlen("cmd=") + strlen(cmd) + 1;
    for (int i = 0; i < npairs; i++) {
        if (!mf_pmi2_key_ok(kv[2 * i]) || !mf_pmi2_value_ok(kv[2 * i + 1]))
            return -1;
        body += strlen(kv[2 * i]) + 1 + strlen(kv[2 * i + 1]) + 1;
    }
    if (body > MF_PMI2_BODY_MAX || MF_PMI2_HDR_LEN + body + 1 > cap)
        return -1;
    /* "%-6d" then the body; every piece was measured above, so nothing below truncates. */
    char *p = buf;
    p += snprintf(p, cap, "%-6zu", body);
    p += snprintf(p, cap - (size_t)(p - buf), "cmd=%s;", cmd);
    for (int i = 0; i < npairs; i++)
        p += snprintf(p, cap - (size_t)(p - buf), "%s=%s;", kv[2 * i], kv[2 * i + 1]);
    return (int)(p - buf);
}
