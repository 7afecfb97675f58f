/*
 * pmi2_wire_test.c — unit test of the PMI-2 wire codec: length headers, parse/format round trips
 * on the messages Slurm and Hydra send, rejection of malformed bodies. Exit 0 = pass.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/pmi2_wire.h"
#include "unit_check.h"

static int parse(mf_pmi_msg *m, const char *s)
{
    const char *why = NULL;
    int rc = mf_pmi2_parse(m, s, strlen(s), &why);
    if (rc != 0 && !why) {
        fprintf(stderr, "no reason given for rejecting '%s'\n", s);
        unit_check_failures++;
    }
    return rc;
}

static int header(const char *h, size_t *n)
{
    const char *why = NULL;
    int rc = mf_pmi2_parse_header(h, n, &why);
    if (rc != 0 && !why) {
        fprintf(stderr, "no reason given for rejecting header '%.6s'\n", h);
        unit_check_failures++;
    }
    return rc;
}

static void test_header(void)
{
    size_t n = 0;
    CHECK(header("123   ", &n) == 0 && n == 123);
    CHECK(header("   123", &n) == 0 && n == 123);
    CHECK(header("4096  ", &n) == 0 && n == 4096);
    CHECK(header("1     ", &n) == 0 && n == 1);
    CHECK(header("4097  ", &n) != 0); /* over MF_PMI2_BODY_MAX */
    CHECK(header("999999", &n) != 0);
    CHECK(header("0     ", &n) != 0);
    CHECK(header("      ", &n) != 0);
    CHECK(header("12 3  ", &n) != 0);
    CHECK(header("-12   ", &n) != 0);
    CHECK(header("12x   ", &n) != 0);
    CHECK(header("cmd=fu", &n) != 0);
}

static void test_parse(void)
{
    mf_pmi_msg m;
    /* Slurm 22.05's fullinit response. */
    CHECK(parse(&m, "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;"
                    "appnum=-1;debugged=FALSE;pmiverbose=FALSE;") == 0);
    CHECK(strcmp(mf_pmi_cmd(&m), "fullinit-response") == 0);
    CHECK(m.nfields == 9);
    int v = -7;
    CHECK(mf_pmi_get_int(&m, "rank", 0, 100, &v) == 0 && v == 3);
    CHECK(mf_pmi_get_int(&m, "appnum", -1, 100, &v) == 0 && v == -1);
    CHECK(mf_pmi_get_int(&m, "appnum", 0, 100, &v) == -1);
    CHECK(mf_pmi_get_int(&m, "debugged", 0, 100, &v) == -1);
    CHECK(mf_pmi_get_int(&m, "missing", 0, 100, &v) == -1);
    CHECK(mf_pmi_get_bool(&m, "debugged") == 0);
    CHECK(mf_pmi_get_bool(&m, "rank") == -1);
    CHECK(mf_pmi_get_bool(&m, "missing") == -1);

    /* Last ';' optional, '=' inside values, empty values. */
    CHECK(parse(&m, "cmd=kvs-get-response;rc=0;found=TRUE;value=a=b") == 0);
    CHECK(strcmp(mf_pmi_get(&m, "value"), "a=b") == 0);
    CHECK(mf_pmi_get_bool(&m, "found") == 1);
    CHECK(parse(&m, "cmd=kvs-fence-response;rc=0;errmsg=;") == 0);
    CHECK(strcmp(mf_pmi_get(&m, "errmsg"), "") == 0);
    CHECK(parse(&m, "cmd=abort;msg=spaces are fine here;") == 0);
    CHECK(strcmp(mf_pmi_get(&m, "msg"), "spaces are fine here") == 0);

    CHECK(parse(&m, "") != 0);
    CHECK(parse(&m, ";") != 0);
    CHECK(parse(&m, "cmd=;") != 0);
    CHECK(parse(&m, "rc=0;cmd=x;") != 0);
    CHECK(parse(&m, "cmd=x;;") != 0);
    CHECK(parse(&m, "cmd=x;novalue;") != 0);
    CHECK(parse(&m, "cmd=x;=v;") != 0);
    CHECK(parse(&m, "cmd=x;k=a\nb;") != 0);
    CHECK(mf_pmi2_parse(&m, "cmd=x;k=a\0b;", 12, NULL) != 0); /* NUL inside the body */
    CHECK(parse(&m, "cmd=x;k\x01=v;") != 0);

    char many[2048] = "cmd=x;";
    for (int i = 0; i < MF_PMI_FIELDS_MAX; i++)
        strcat(many, "k=v;");
    CHECK(parse(&m, many) != 0);

    static char big[MF_PMI2_BODY_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    memcpy(big, "cmd=x;k=", 8);
    CHECK(mf_pmi2_parse(&m, big, MF_PMI2_BODY_MAX + 1, NULL) != 0);
    CHECK(mf_pmi2_parse(&m, big, MF_PMI2_BODY_MAX, NULL) == 0);
}

static void test_format(void)
{
    char buf[MF_PMI2_HDR_LEN + MF_PMI2_BODY_MAX + 1];
    const char *kv[] = {"pmijobid", "12.0", "pmirank", "3", "threaded", "FALSE"};
    int len = mf_pmi2_format(buf, sizeof buf, "fullinit", kv, 3);
    const char *want = "cmd=fullinit;pmijobid=12.0;pmirank=3;threaded=FALSE;";
    CHECK(len == (int)(MF_PMI2_HDR_LEN + strlen(want)));
    CHECK(strncmp(buf, "52    ", 6) == 0);
    CHECK(strcmp(buf + 6, want) == 0);

    size_t n;
    mf_pmi_msg m;
    CHECK(header(buf, &n) == 0 && n == strlen(want));
    CHECK(mf_pmi2_parse(&m, buf + 6, n, NULL) == 0 && m.nfields == 4);
    CHECK(strcmp(mf_pmi_get(&m, "pmijobid"), "12.0") == 0);

    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-fence", NULL, 0) == 6 + 14);
    CHECK(strcmp(buf, "14    cmd=kvs-fence;") == 0);

    const char *bad1[] = {"key", "a;b"};
    const char *bad2[] = {"k=y", "v"};
    const char *bad3[] = {"", "v"};
    const char *bad4[] = {"k", "line\n"};
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", bad1, 1) == -1);
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", bad2, 1) == -1);
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", bad3, 1) == -1);
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", bad4, 1) == -1);
    CHECK(mf_pmi2_format(buf, sizeof buf, "a;b", NULL, 0) == -1);
    CHECK(mf_pmi2_format(buf, sizeof buf, "", NULL, 0) == -1);
    CHECK(mf_pmi2_format(buf, 20, "kvs-fence", NULL, 0) == -1); /* NUL does not fit */
    CHECK(mf_pmi2_format(buf, 21, "kvs-fence", NULL, 0) == 20);

    static char val[MF_PMI2_BODY_MAX];
    memset(val, 'x', sizeof val - 1);
    const char *kbig[] = {"value", val};
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", kbig, 1) == -1);
    val[1000] = '\0';
    CHECK(mf_pmi2_format(buf, sizeof buf, "kvs-put", kbig, 1) > 1000);
}

int main(void)
{
    test_header();
    test_parse();
    test_format();
    if (unit_check_failures) {
        fprintf(stderr, "%d check(s) failed\n", unit_check_failures);
        return 1;
    }
    printf("pmi2_wire_test: ok\n");
    return 0;
}
