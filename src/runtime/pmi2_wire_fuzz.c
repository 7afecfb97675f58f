/*
 * pmi2_wire_fuzz.c — libFuzzer target for the PMI-2 wire decoder (what the library runs on bytes
 * from Slurm's or Hydra's PMI-2 server).
 *
 * The input is read as a stream the way pmi2.c reads its socket: a 6-byte length header, then that
 * many body bytes, repeated. Every accepted body is re-formatted and re-parsed, which must give the
 * same fields; the whole input is also parsed as one body. Any crash, sanitizer report or failed
 * invariant (abort) is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pmi2_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_message(const mf_pmi_msg *m)
{
    const char *kv[2 * MF_PMI_FIELDS_MAX];
    static char buf[MF_PMI2_HDR_LEN + MF_PMI2_BODY_MAX + 1];
    static mf_pmi_msg again;
    if (m->nfields < 1 || m->nfields > MF_PMI_FIELDS_MAX)
        abort();
    for (int i = 1; i < m->nfields; i++) {
        kv[2 * (i - 1)] = m->keys[i];
        kv[2 * (i - 1) + 1] = m->vals[i];
    }
    int len = mf_pmi2_format(buf, sizeof buf, mf_pmi_cmd(m), kv, m->nfields - 1);
    /* A body without its final ';' grows by one byte when formatted: it may then not fit. */
    if (len < 0)
        return;
    size_t n;
    if (mf_pmi2_parse_header(buf, &n, NULL) != 0 || n + MF_PMI2_HDR_LEN != (size_t)len)
        abort();
    if (mf_pmi2_parse(&again, buf + MF_PMI2_HDR_LEN, n, NULL) != 0 || again.nfields != m->nfields)
        abort();
    for (int i = 0; i < m->nfields; i++)
        if (strcmp(again.keys[i], m->keys[i]) || strcmp(again.vals[i], m->vals[i]))
            abort();
    int v;
    (void)mf_pmi_get_int(m, "rc", -1000, 1000, &v);
    (void)mf_pmi_get_bool(m, "found");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mf_pmi_msg m;
    if (mf_pmi2_parse(&m, (const char *)data, size, NULL) == 0)
        fuzz_check_message(&m);

    size_t pos = 0;
    while (size - pos >= MF_PMI2_HDR_LEN) {
        size_t n;
        if (mf_pmi2_parse_header((const char *)data + pos, &n, NULL) != 0)
            return 0; /* a bad header ends the stream, as it does for the client */
        if (n == 0 || n > MF_PMI2_BODY_MAX)
            abort();
        pos += MF_PMI2_HDR_LEN;
        if (n > size - pos)
            return 0;
        if (mf_pmi2_parse(&m, (const char *)data + pos, n, NULL) == 0)
            fuzz_check_message(&m);
        pos += n;
    }
    return 0;
}
