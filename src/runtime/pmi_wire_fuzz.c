/*
 * pmi_wire_fuzz.c — libFuzzer target for the PMI-1 wire decoder (what mpiexec runs on bytes from
 * untrusted ranks and the client runs on bytes from the launcher).
 *
 * The input is fed through the line assembler in chunks whose sizes come from the input itself;
 * every complete line is parsed; parsed messages are re-formatted and re-parsed, which must give
 * the same fields (the codec is its own inverse on valid messages). Values are also run through
 * unescape and hex decode. Any crash, sanitizer report or failed invariant (abort) is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pmi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_message(const mf_pmi_msg *m)
{
    const char *kv[2 * MF_PMI_FIELDS_MAX];
    static char line[MF_PMI_LINE_MAX + 2];
    static mf_pmi_msg again;
    for (int i = 1; i < m->nfields; i++) {
        kv[2 * (i - 1)] = m->keys[i];
        kv[2 * (i - 1) + 1] = m->vals[i];
    }
    int len = mf_pmi_format(line, sizeof line, mf_pmi_cmd(m), kv, m->nfields - 1);
    if (len < 0)
        abort(); /* everything the parser accepts must be formattable */
    if (mf_pmi_parse(&again, line, (size_t)len, NULL) != 0 || again.nfields != m->nfields)
        abort();
    for (int i = 0; i < m->nfields; i++)
        if (strcmp(again.keys[i], m->keys[i]) || strcmp(again.vals[i], m->vals[i]))
            abort();

    char out[MF_PMI_LINE_MAX + 1];
    unsigned char bin[MF_PMI_LINE_MAX];
    for (int i = 0; i < m->nfields; i++) {
        mf_pmi_unescape(m->vals[i], out, sizeof out);
        (void)mf_pmi_hex_decode(m->vals[i], bin, sizeof bin);
        int el = mf_pmi_escape(m->vals[i], out, sizeof out);
        if (el >= 0 && !mf_pmi_value_ok(out))
            abort();
    }
    int v;
    (void)mf_pmi_get_int(m, "rc", -1000, 1000, &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mf_pmi_lines lb;
    static mf_pmi_msg m;
    mf_pmi_lines_init(&lb);

    /* Whole input as one line first. */
    if (mf_pmi_parse(&m, (const char *)data, size, NULL) == 0)
        fuzz_check_message(&m);

    size_t pos = 0;
    while (pos < size) {
        size_t chunk = 1 + data[pos] % 97; /* irregular split points */
        if (chunk > size - pos)
            chunk = size - pos;
        size_t room;
        char *dst = mf_pmi_lines_space(&lb, &room);
        if (room == 0)
            return 0; /* oversized line: the stream is refused, as a real peer would be */
        if (chunk > room)
            chunk = room;
        memcpy(dst, data + pos, chunk);
        mf_pmi_lines_commit(&lb, chunk);
        pos += chunk;
        const char *line;
        size_t len;
        int got;
        while ((got = mf_pmi_lines_next(&lb, &line, &len)) == 1) {
            if (memchr(line, '\n', len))
                abort();
            if (mf_pmi_parse(&m, line, len, NULL) == 0)
                fuzz_check_message(&m);
        }
        if (got < 0)
            return 0;
    }
    return 0;
}
