/*
 * pmi_wire_test.c — unit test of the PMI-1 wire codec: parse/format round trips, rejection of
 * malformed lines, hex and percent escaping, and the line assembler with split and oversized
 * input. Exit 0 = pass; every failure prints the line and the expression.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/pmi_wire.h"
#include "unit_check.h"

static int parse(mf_pmi_msg *m, const char *s)
{
    const char *why = NULL;
    int rc = mf_pmi_parse(m, s, strlen(s), &why);
    if (rc != 0 && !why) {
        fprintf(stderr, "no reason given for rejecting '%s'\n", s);
        unit_check_failures++;
    }
    return rc;
}

static void test_parse(void)
{
    mf_pmi_msg m;
    CHECK(parse(&m, "cmd=put kvsname=kvs_1 key=a value=b=c\n") == 0);
    CHECK(strcmp(mf_pmi_cmd(&m), "put") == 0);
    CHECK(m.nfields == 4);
    CHECK(strcmp(mf_pmi_get(&m, "kvsname"), "kvs_1") == 0);
    CHECK(strcmp(mf_pmi_get(&m, "value"), "b=c") == 0); /* only the first '=' splits */
    CHECK(mf_pmi_get(&m, "missing") == NULL);

    CHECK(parse(&m, "cmd=get_result rc=-1 msg=x value=") == 0);
    CHECK(strcmp(mf_pmi_get(&m, "value"), "") == 0);
    int v = 0;
    CHECK(mf_pmi_get_int(&m, "rc", -10, 10, &v) == 0 && v == -1);
    CHECK(mf_pmi_get_int(&m, "rc", 0, 10, &v) == -1);  /* out of range */
    CHECK(mf_pmi_get_int(&m, "msg", 0, 10, &v) == -1); /* not a number */
    CHECK(mf_pmi_get_int(&m, "value", 0, 10, &v) == -1);

    CHECK(parse(&m, "  cmd=barrier_out   \r\n") == 0 && m.nfields == 1);
    CHECK(parse(&m, "cmd=put key=mf.tcp.3 value=x") == 0);
    CHECK(mf_pmi_key_ok("mf.tcp.3") && mf_pmi_key_ok("a/b:c"));
    CHECK(!mf_pmi_key_ok("a=b") && !mf_pmi_key_ok("a b") && !mf_pmi_key_ok(""));

    CHECK(parse(&m, "") != 0);
    CHECK(parse(&m, "\n") != 0);
    CHECK(parse(&m, "key=v cmd=put") != 0);
    CHECK(parse(&m, "cmd=") != 0);
    CHECK(parse(&m, "cmd=put novalue") != 0);
    CHECK(parse(&m, "cmd=put =v") != 0);
    CHECK(parse(&m, "cmd=put k\x01=v") != 0);
    CHECK(parse(&m, "cmd=put k=v\x01") != 0);
    CHECK(parse(&m, "cmd=put k=v\x7f") != 0);
    CHECK(mf_pmi_parse(&m, "cmd=put k=v\0x", 13, NULL) != 0); /* embedded NUL */
    /* cmd= and MF_PMI_FIELDS_MAX - 1 more fields fit; one more does not. */
    char many[1024] = "cmd=a";
    for (int i = 1; i < MF_PMI_FIELDS_MAX; i++)
        strcat(many, " k=v");
    CHECK(parse(&m, many) == 0 && m.nfields == MF_PMI_FIELDS_MAX);
    strcat(many, " k=v");
    CHECK(parse(&m, many) != 0);

    static char big[MF_PMI_LINE_MAX + 16];
    memset(big, 'x', sizeof big - 1);
    memcpy(big, "cmd=put v=", 10);
    CHECK(mf_pmi_parse(&m, big, MF_PMI_LINE_MAX + 1, NULL) != 0);
    CHECK(mf_pmi_parse(&m, big, MF_PMI_LINE_MAX, NULL) == 0);
}

static void test_format(void)
{
    char buf[256];
    const char *kv[] = {"kvsname", "k1", "key", "addr", "value", "0a0b"};
    int n = mf_pmi_format(buf, sizeof buf, "put", kv, 3);
    CHECK(n > 0 && strcmp(buf, "cmd=put kvsname=k1 key=addr value=0a0b\n") == 0);
    CHECK(n == (int)strlen(buf));

    mf_pmi_msg m;
    CHECK(mf_pmi_parse(&m, buf, (size_t)n, NULL) == 0);
    CHECK(strcmp(mf_pmi_get(&m, "value"), "0a0b") == 0);

    CHECK(mf_pmi_format(buf, sizeof buf, "barrier_in", NULL, 0) == 15);
    const char *bad_val[] = {"k", "has space"};
    CHECK(mf_pmi_format(buf, sizeof buf, "put", bad_val, 1) == -1);
    const char *bad_key[] = {"k=x", "v"};
    CHECK(mf_pmi_format(buf, sizeof buf, "put", bad_key, 1) == -1);
    const char *nl_val[] = {"k", "a\nb"};
    CHECK(mf_pmi_format(buf, sizeof buf, "put", nl_val, 1) == -1);
    CHECK(mf_pmi_format(buf, 10, "put", kv, 3) == -1); /* does not fit */
    CHECK(mf_pmi_format(buf, sizeof buf, "", NULL, 0) == -1);
}

static void test_hex_escape(void)
{
    unsigned char bin[5] = {0, 0xff, 0x20, '\n', 'A'}, back[5];
    char hex[11];
    CHECK(mf_pmi_hex_encode(bin, 5, hex, sizeof hex) == 10);
    CHECK(strcmp(hex, "00ff200a41") == 0);
    CHECK(mf_pmi_hex_encode(bin, 5, hex, 10) == -1);
    CHECK(mf_pmi_hex_decode(hex, back, sizeof back) == 5 && memcmp(bin, back, 5) == 0);
    CHECK(mf_pmi_hex_decode("00FF", back, sizeof back) == 2 && back[1] == 0xff);
    CHECK(mf_pmi_hex_decode("abc", back, sizeof back) == -1);
    CHECK(mf_pmi_hex_decode("zz", back, sizeof back) == -1);
    CHECK(mf_pmi_hex_decode("000000000000", back, sizeof back) == -1);

    char esc[64], plain[64];
    CHECK(mf_pmi_escape("rank 1: 100% bad\n", esc, sizeof esc) > 0);
    CHECK(mf_pmi_value_ok(esc));
    mf_pmi_unescape(esc, plain, sizeof plain);
    CHECK(strcmp(plain, "rank 1: 100% bad?") == 0); /* newline neutralised for printing */
    CHECK(mf_pmi_escape("a b c d e f", esc, 6) == -1 && mf_pmi_value_ok(esc));
    mf_pmi_unescape("%zz%4", plain, sizeof plain); /* malformed escapes pass through */
    CHECK(strcmp(plain, "%zz%4") == 0);
    mf_pmi_unescape("%0a%41", plain, sizeof plain);
    CHECK(strcmp(plain, "?A") == 0);
}

static void feed(mf_pmi_lines *lb, const char *s)
{
    size_t room;
    char *dst = mf_pmi_lines_space(lb, &room);
    size_t n = strlen(s);
    CHECK(n <= room);
    memcpy(dst, s, n);
    mf_pmi_lines_commit(lb, n);
}

static void test_lines(void)
{
    mf_pmi_lines lb;
    const char *line;
    size_t len;
    mf_pmi_lines_init(&lb);
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 0);
    feed(&lb, "cmd=in");
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 0);
    feed(&lb, "it\ncmd=get_maxes\ncmd=b");
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 1 && len == 8 && !memcmp(line, "cmd=init", 8));
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 1 && !strcmp(line, "cmd=get_maxes"));
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 0);
    feed(&lb, "arrier_in\n");
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 1 && !strcmp(line, "cmd=barrier_in"));
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == 0);

    /* A line that never ends must be refused, not buffered forever. */
    mf_pmi_lines_init(&lb);
    size_t room;
    char *dst = mf_pmi_lines_space(&lb, &room);
    CHECK(room == MF_PMI_LINE_MAX);
    memset(dst, 'y', room);
    mf_pmi_lines_commit(&lb, room);
    CHECK(mf_pmi_lines_next(&lb, &line, &len) == -1);
    mf_pmi_lines_space(&lb, &room);
    CHECK(room == 0);
}

int main(void)
{
    test_parse();
    test_format();
    test_hex_escape();
    test_lines();
    if (unit_check_failures) {
        fprintf(stderr, "pmi_wire_test: %d failures\n", unit_check_failures);
        return 1;
    }
    printf("pmi_wire_test: all checks passed\n");
    return 0;
}
