/*
 * Unit test of the settings table and its checks (config_spec.h, config.c): every row of
 * config_vars.def has a well-formed check that its own default passes; each kind of check takes
 * what it documents and refuses the rest with a message naming the variable, the value and the
 * accepted values; mf_config_check stops at a bad value; unknown MANIFOLD_* names are found and
 * matched to the closest known name; the typed accessors never return a refused value.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/config_spec.h"
#include "core/error.h"
#include "unit_check.h"

static bool ok(const char *check, const char *value)
{
    char accepted[256];
    return mf_config_value_ok(check, value, accepted, sizeof accepted);
}

static void test_table(void)
{
    static const char *const kinds[] = {"bool",       "int ",  "size ",  "seconds ", "enum ",
                                        "interfaces", "ports", "string", "fabrics "};
    for (size_t i = 0; i < MF_CONFIG_NVARS; i++) {
        const mf_config_var *v = &mf_config_vars[i];
        bool known = false;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            known |= strncmp(v->check, kinds[k], strlen(kinds[k])) == 0;
        char a[32], b[32], msg[512];
        if (strncmp(v->check, "int ", 4) == 0 || strncmp(v->check, "size ", 5) == 0)
            known &= sscanf(strchr(v->check, ' ') + 1, "%31s %31s", a, b) == 2;
        if (!known)
            fprintf(stderr, "%s: malformed check '%s'\n", v->name, v->check);
        CHECK(known);
        if (!mf_config_check_one(v, v->def, msg, sizeof msg))
            fprintf(stderr, "default refused: %s\n", msg);
        CHECK(mf_config_check_one(v, v->def, msg, sizeof msg));
        CHECK(mf_config_known(v->name));
        CHECK(strcmp(mf_config_closest(v->name), v->name) == 0);
    }
}

static void test_kinds(void)
{
    for (const char *const *s = (const char *const[]){"1", "0", "yes", "No", "TRUE", "off", NULL};
         *s; s++)
        CHECK(ok("bool", *s));
    for (const char *const *s = (const char *const[]){"maybe", "2", " 1", "yes!", NULL}; *s; s++)
        CHECK(!ok("bool", *s));
    CHECK(ok("int 0 2", "2") && ok("int 0 2", "0") && !ok("int 0 2", "3"));
    CHECK(!ok("int 0 2", "-1") && !ok("int 0 2", "+1") && !ok("int 0 2", " 1") &&
          !ok("int 0 2", "1x"));
    CHECK(ok("size 0 1G", "65536") && ok("size 0 1G", "64K") && ok("size 0 1G", "1g"));
    CHECK(!ok("size 0 1G", "-5") && !ok("size 0 1G", "2G") && !ok("size 0 1G", "1T") &&
          !ok("size 0 1G", "12KB") && !ok("size 0 1G", "99999999999999999999") &&
          !ok("size 0 1G", "18014398509481984K"));
    CHECK(ok("size 0 1M", "1M") && !ok("size 0 1M", "1048577"));
    CHECK(ok("seconds 100", "2.5") && ok("seconds 100", "100") && ok("seconds 100", ".5"));
    CHECK(!ok("seconds 100", "0") && !ok("seconds 100", "101") && !ok("seconds 100", "0x10") &&
          !ok("seconds 100", "inf") && !ok("seconds 100", "nan") && !ok("seconds 100", "1e2") &&
          !ok("seconds 100", "."));
    CHECK(ok("enum auto|pmi1", "auto") && ok("enum auto|pmi1", "pmi1"));
    CHECK(!ok("enum auto|pmi1", "pmi") && !ok("enum auto|pmi1", "auto|pmi1") &&
          !ok("enum auto|pmi1", "AUTO"));
    CHECK(ok("interfaces", "eth0") && ok("interfaces", "eth*,10.1.0.0/16") &&
          ok("interfaces", "lo,192.168.1.7/32"));
    CHECK(!ok("interfaces", "eth0,") && !ok("interfaces", "10.0.0.0/33") &&
          !ok("interfaces", "10.0.0/8") && !ok("interfaces", "eth 0") && !ok("interfaces", ",") &&
          !ok("interfaces", "1.2.3.4/"));
    /* Fabric settings (core/fabric_spec.h): entries CLASS[:IFACE+IFACE], comma-separated. */
    CHECK(ok("fabrics tcp", "tcp") && ok("fabrics tcp", "tcp:eth0") &&
          ok("fabrics tcp", "tcp:lo,tcp:eth0") && ok("fabrics tcp|sctp", "sctp:eth*+10.0.0.0/8"));
    CHECK(!ok("fabrics tcp", "udp") && !ok("fabrics tcp", "tcp:") && !ok("fabrics tcp", "tcp,") &&
          !ok("fabrics tcp", "tcp:10.0.0.0/33") && !ok("fabrics tcp", ":eth0") &&
          !ok("fabrics tcp", "tcp:eth0+") && !ok("fabrics tcp", "tc"));
    char why[512];
    CHECK(!mf_config_value_ok("fabrics tcp", "tcp:1.2.3.4/99", why, sizeof why) &&
          strstr(why, "1.2.3.4/99") && strstr(why, "FABRIC:IFACE"));
    CHECK(ok("ports", "5000") && ok("ports", "5000-5100") && ok("ports", "1-65535"));
    CHECK(!ok("ports", "0") && !ok("ports", "5100-5000") && !ok("ports", "5000-70000") &&
          !ok("ports", "-5") && !ok("ports", "5000--5100") && !ok("ports", "a-b") &&
          !ok("ports", "5000-"));
    char accepted[256];
    CHECK(!mf_config_value_ok("enum auto|pmi1|pmi2", "x", accepted, sizeof accepted) &&
          strcmp(accepted, "auto, pmi1 or pmi2") == 0);
}

static void test_messages(void)
{
    char msg[512];
    const mf_config_var *shm = mf_config_var_find("MANIFOLD_SHM");
    CHECK(shm && !mf_config_check_one(shm, "maybe", msg, sizeof msg));
    CHECK(strstr(msg, "MANIFOLD_SHM='maybe'") && strstr(msg, "yes, no, true, false"));
    const mf_config_var *eager = mf_config_var_find("MANIFOLD_TCP_EAGER_LIMIT");
    CHECK(eager && !mf_config_check_one(eager, "-5", msg, sizeof msg));
    CHECK(strstr(msg, "MANIFOLD_TCP_EAGER_LIMIT='-5'") && strstr(msg, "from 0 to 1G"));
    CHECK(mf_config_check_one(eager, "", msg, sizeof msg) &&
          mf_config_check_one(eager, NULL, msg, sizeof msg));

    /* Through the library's check, as MPI_Init runs it. */
    CHECK(mf_config_check() == MPI_SUCCESS);
    setenv("MANIFOLD_COLL_BCAST", "fastest", 1);
    int rc = mf_config_check(), len;
    CHECK(rc != MPI_SUCCESS);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG);
    mf_error_string(rc, msg, &len);
    CHECK(strstr(msg, "MANIFOLD_COLL_BCAST='fastest'") &&
          strstr(msg, "auto, binomial, scatter_allgather, chain or shm"));
    unsetenv("MANIFOLD_COLL_BCAST");

    /* The typed accessors: a refused value gives the default, never itself. */
    setenv("MANIFOLD_TCP_EAGER_LIMIT", "-5", 1);
    CHECK(mf_config_size("MANIFOLD_TCP_EAGER_LIMIT") == 65536);
    setenv("MANIFOLD_TCP_EAGER_LIMIT", "2M", 1);
    CHECK(mf_config_size("MANIFOLD_TCP_EAGER_LIMIT") == 2u << 20);
    unsetenv("MANIFOLD_TCP_EAGER_LIMIT");
    setenv("MANIFOLD_SHM", "maybe", 1);
    CHECK(mf_config_bool("MANIFOLD_SHM"));
    setenv("MANIFOLD_SHM", "off", 1);
    CHECK(!mf_config_bool("MANIFOLD_SHM"));
    unsetenv("MANIFOLD_SHM");
    setenv("MANIFOLD_VERBOSE", "7", 1);
    CHECK(mf_config_long("MANIFOLD_VERBOSE") == 0);
    unsetenv("MANIFOLD_VERBOSE");
}

static void test_unknown(void)
{
    CHECK(strcmp(mf_config_closest("MANIFOLD_FABRC"), "MANIFOLD_FABRIC") == 0);
    CHECK(strcmp(mf_config_closest("MANIFOLD_SHM_EAGER_LIMT"), "MANIFOLD_SHM_EAGER_LIMIT") == 0);
    CHECK(strcmp(mf_config_closest("MANIFOLD_VERBSOE"), "MANIFOLD_VERBOSE") == 0);
    CHECK(mf_config_closest("MANIFOLD_XYZZY_PLUGH") == NULL);
    CHECK(mf_config_distance("kitten", "sitting") == 3);
    CHECK(mf_config_known("MANIFOLD_CI_STAGES") && mf_config_known("MANIFOLD_CC"));
    CHECK(!mf_config_known("MANIFOLD_CI") && !mf_config_known("MANIFOLD_FABRC"));
    int before = mf_config_warn_unknown();
    setenv("MANIFOLD_FABRC", "tcp", 1);
    setenv("MANIFOLD_CMAKE_ARGS", "-DX=1", 1);
    CHECK(mf_config_warn_unknown() == before + 1);
    unsetenv("MANIFOLD_FABRC");
    unsetenv("MANIFOLD_CMAKE_ARGS");
}

int main(void)
{
    test_table();
    test_kinds();
    test_messages();
    test_unknown();
    if (unit_check_failures) {
        fprintf(stderr, "config_test: %d check(s) failed\n", unit_check_failures);
        return 1;
    }
    printf("config_test: ok\n");
    return 0;
}
