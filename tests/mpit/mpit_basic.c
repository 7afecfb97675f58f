/*
 * MPI tool information interface: every control variable, performance variable and category is
 * listed and checked against the environment of the run and the messages this test sends; every
 * event's description is checked (delivery is tested where events happen); every
 * documented error path of the MPI_T calls is taken; MPI_T works before MPI_Init and after
 * MPI_Finalize.
 *
 * Run with MANIFOLD_TCP_EAGER_LIMIT=12345 and MANIFOLD_COLL_BCAST=binomial (tests/mpit/
 * CMakeLists.txt): the control variables must read exactly those values.
 *
 * Checks do not call MPI (some run after MPI_Finalize), so failures are printed here.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int rank = -1, errors;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: ", rank, __FILE__, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            errors++;                                                                              \
        }                                                                                          \
    } while (0)
/* An MPI_T call must return `want`. */
#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == (want), "%s returned %d, expected %d (%s)", #call, rc_, (int)(want), #want);  \
    } while (0)
#define OK(call) EXPECT(call, MPI_SUCCESS)

/* A size as MANIFOLD_* settings write it: digits with an optional K, M or G. */
static unsigned long parse_size(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    return *end == 'K' || *end == 'k'   ? v << 10
           : *end == 'M' || *end == 'm' ? v << 20
           : *end == 'G' || *end == 'g' ? v << 30
                                        : v;
}

static bool parse_bool(const char *s)
{
    return !(strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0 ||
             strcasecmp(s, "off") == 0);
}

/* The string conventions, on cvar 0's name. */
static void check_strings(void)
{
    char full[256], buf[8];
    int len = sizeof full;
    OK(MPI_T_cvar_get_info(0, full, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len == (int)strlen(full) + 1, "len %d for \"%s\"", len, full);
    int need = 0;
    OK(MPI_T_cvar_get_info(0, buf, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(need == len, "len 0 gives %d, want %d", need, len);
    need = 5;
    OK(MPI_T_cvar_get_info(0, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(need == len, "NULL name gives %d, want %d", need, len);
    int small = 4;
    memset(buf, 'x', sizeof buf);
    OK(MPI_T_cvar_get_info(0, buf, &small, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(small == 4 && buf[3] == '\0' && strncmp(buf, full, 3) == 0 && buf[4] == 'x',
          "truncated to \"%s\" len %d", buf, small);
    int neg = -1;
    EXPECT(MPI_T_cvar_get_info(0, buf, &neg, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID);
}

/* Enumerates every control variable; checks each against the environment of the run. */
static void check_cvars(void)
{
    int num = 0;
    OK(MPI_T_cvar_get_num(&num));
    CHECK(num >= 29, "only %d control variables", num);
    bool saw_eager = false, saw_bcast = false;
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope, count, idx = -1;
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope));
        CHECK(strncmp(name, "MANIFOLD_", 9) == 0 || strcmp(name, "MPIEXEC_TIMEOUT") == 0,
              "cvar %d named %s", i, name);
        CHECK(dlen > 10, "%s: description \"%s\"", name, desc);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "%s: verbosity %d", name, verb);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        CHECK(scope == MPI_T_SCOPE_READONLY, "%s: scope %d", name, scope);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG || dt == MPI_DOUBLE || dt == MPI_CHAR,
              "%s: datatype", name);
        CHECK(en == MPI_T_ENUM_NULL || dt == MPI_INT, "%s: enum with a non-int type", name);
        OK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "%s: index %d, get_index %d", name, i, idx);

        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(h != MPI_T_CVAR_HANDLE_NULL && count >= 1, "%s: handle, count %d", name, count);
        union {
            int i;
            unsigned long ul;
            double d;
            char s[4096];
        } val;
        memset(&val, 0, sizeof val);
        if (dt != MPI_CHAR || count <= (int)sizeof val.s)
            OK(MPI_T_cvar_read(h, &val));
        EXPECT(MPI_T_cvar_write(h, &val), MPI_T_ERR_CVAR_SET_NEVER);
        EXPECT(MPI_T_cvar_read(h, NULL), MPI_T_ERR_INVALID);

        const char *env = getenv(name);
        if (en != MPI_T_ENUM_NULL) {
            int n = 0, item_len = 64, value = -1;
            char item[64] = "", ename[64];
            int elen = sizeof ename;
            OK(MPI_T_enum_get_info(en, &n, ename, &elen));
            CHECK(n >= 1 && val.i >= 0 && val.i < n, "%s: enum value %d of %d", name, val.i, n);
            OK(MPI_T_enum_get_item(en, val.i, &value, item, &item_len));
            CHECK(value == val.i, "%s: item value %d", name, value);
            EXPECT(MPI_T_enum_get_item(en, n, &value, item, &item_len), MPI_T_ERR_INVALID_ITEM);
            EXPECT(MPI_T_enum_get_item(en, -1, &value, item, &item_len), MPI_T_ERR_INVALID_ITEM);
            if (env && *env)
                CHECK(strcmp(item, env) == 0, "%s: reads %s, environment %s", name, item, env);
            if (strcmp(name, "MANIFOLD_COLL_BCAST") == 0) {
                saw_bcast = true;
                CHECK(strcmp(item, "binomial") == 0, "%s reads %s", name, item);
            }
        } else if (env && *env) {
            if (dt == MPI_INT && strcmp(name, "MANIFOLD_SHM") == 0)
                CHECK(val.i == parse_bool(env), "%s: reads %d, environment %s", name, val.i, env);
            else if (dt == MPI_INT)
                CHECK(val.i == atoi(env), "%s: reads %d, environment %s", name, val.i, env);
            else if (dt == MPI_UNSIGNED_LONG)
                CHECK(val.ul == parse_size(env), "%s: reads %lu, environment %s", name, val.ul,
                      env);
            else if (dt == MPI_DOUBLE)
                CHECK(val.d == strtod(env, NULL), "%s: reads %g, environment %s", name, val.d, env);
            else if (strcmp(name, "MANIFOLD_JOB_SECRET") == 0)
                CHECK(strstr(val.s, env) == NULL, "%s: the secret is shown", name);
            else
                CHECK(strcmp(val.s, env) == 0, "%s: reads \"%s\", environment %s", name, val.s,
                      env);
        }
        if (strcmp(name, "MANIFOLD_TCP_EAGER_LIMIT") == 0) {
            saw_eager = true;
            CHECK(dt == MPI_UNSIGNED_LONG && val.ul == 12345, "%s reads %lu", name, val.ul);
        }
        OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "%s: handle not reset by free", name);
    }
    CHECK(saw_eager && saw_bcast, "MANIFOLD_TCP_EAGER_LIMIT or MANIFOLD_COLL_BCAST missing");

    /* Error paths. */
    int idx, count;
    MPI_T_cvar_handle h;
    EXPECT(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_NO_SUCH_THING", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_cvar_handle_alloc(num, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_handle_alloc(0, NULL, NULL, &count), MPI_T_ERR_INVALID);
    OK(MPI_T_cvar_handle_alloc(0, NULL, &h, &count));
    MPI_T_cvar_handle stale = h;
    OK(MPI_T_cvar_handle_free(&h));
    int buf[1024];
    EXPECT(MPI_T_cvar_read(stale, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_write(stale, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_read((MPI_T_cvar_handle)buf, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, buf), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_enum_get_info((MPI_T_enum)buf, &count, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &count, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &count, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
}

/* Every category: members are valid indices, each cvar and pvar is in exactly one category, and
 * the tree hangs from "manifold". */
static void check_categories(void)
{
    int ncat = 0, ncvar = 0, npvar = 0;
    OK(MPI_T_category_get_num(&ncat));
    OK(MPI_T_cvar_get_num(&ncvar));
    OK(MPI_T_pvar_get_num(&npvar));
    int *cseen = calloc((size_t)ncvar + 1, sizeof *cseen);
    int *pseen = calloc((size_t)npvar + 1, sizeof *pseen);
    int *kseen = calloc((size_t)ncat + 1, sizeof *kseen), eseen[16] = {0}, nevent = 0;
    OK(MPI_T_event_get_num(&nevent));
    const char *want[] = {"manifold", "fabric", "shm", "tcp", "p2p", "coll", "launcher"};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int idx = -1;
        OK(MPI_T_category_get_index(want[w], &idx));
        CHECK(idx >= 0 && idx < ncat, "category %s: index %d", want[w], idx);
    }
    for (int c = 0; c < ncat; c++) {
        char name[128], desc[512];
        int nlen = sizeof name, dlen = sizeof desc, nc, np, nk, idx = -1, nev = -1;
        OK(MPI_T_category_get_info(c, name, &nlen, desc, &dlen, &nc, &np, &nk));
        OK(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c, "category %s: index %d, get_index %d", name, c, idx);
        CHECK(dlen > 5, "category %s: description \"%s\"", name, desc);
        int *v = malloc(sizeof(int) * (size_t)(nc + np + nk + 1));
        OK(MPI_T_category_get_cvars(c, nc, v));
        for (int k = 0; k < nc; k++)
            if (v[k] >= 0 && v[k] < ncvar)
                cseen[v[k]]++;
        OK(MPI_T_category_get_pvars(c, np, v));
        for (int k = 0; k < np; k++)
            if (v[k] >= 0 && v[k] < npvar)
                pseen[v[k]]++;
        OK(MPI_T_category_get_categories(c, nk, v));
        for (int k = 0; k < nk; k++) {
            CHECK(v[k] > c && v[k] < ncat, "category %s: subcategory %d", name, v[k]);
            if (v[k] >= 0 && v[k] < ncat)
                kseen[v[k]]++;
        }
        OK(MPI_T_category_get_num_events(c, &nev));
        int *ev = malloc((size_t)(nev + 1) * sizeof *ev);
        OK(MPI_T_category_get_events(c, nev, ev));
        for (int k = 0; k < nev; k++)
            if (ev[k] >= 0 && ev[k] < 16)
                eseen[ev[k]]++;
        free(ev);
        /* len smaller than the list: only len entries are written */
        if (nc > 1) {
            v[1] = -7;
            OK(MPI_T_category_get_cvars(c, 1, v));
            CHECK(v[1] == -7, "category %s: get_cvars wrote past len", name);
        }
        free(v);
    }
    for (int i = 0; i < ncvar; i++)
        CHECK(cseen[i] == 1, "cvar %d is in %d categories", i, cseen[i]);
    for (int i = 0; i < npvar; i++)
        CHECK(pseen[i] == 1, "pvar %d is in %d categories", i, pseen[i]);
    for (int i = 1; i < ncat; i++)
        CHECK(kseen[i] == 1, "category %d is below %d categories", i, kseen[i]);
    for (int i = 0; i < nevent && i < 16; i++)
        CHECK(eseen[i] == 1, "event %d is in %d categories", i, eseen[i]);
    free(cseen);
    free(pseen);
    free(kseen);

    int idx, stamp1 = -1, stamp2 = -2, buf[4];
    OK(MPI_T_category_changed(&stamp1));
    OK(MPI_T_category_changed(&stamp2));
    CHECK(stamp1 == stamp2, "category_changed moved without a change: %d %d", stamp1, stamp2);
    EXPECT(MPI_T_category_changed(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_category_get_num(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_index("nonesuch", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_category_get_cvars(ncat, 4, buf), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_pvars(-1, 4, buf), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_categories(0, -1, buf), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_category_get_categories(0, 4, NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_category_get_num_events(ncat, &idx), MPI_T_ERR_INVALID_INDEX);
}

/* MPI-4 events: the table (names, elements, bindings, the one source), registrations and
 * their callbacks' settings, and every error path. Delivery is tested where events happen
 * (tests/fabric/fault.c, tests/fabric_rail/rail_check.c, tests/security/victim.c). */
static const struct {
    const char *name;
    int nelements;
} known_events[] = {
    {"peer_lost", 2}, {"connection_refused", 1}, {"rail_failover", 3}, {"rail_revived", 2}};

static int free_calls;
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety s, void *ud)
{
    free_calls += ud == &free_calls;
}
static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                     void *ud)
{
}

static void check_events(bool initialized)
{
    int n = -1, idx, nknown = (int)(sizeof known_events / sizeof known_events[0]);
    MPI_T_event_registration reg = NULL;
    OK(MPI_T_event_get_num(&n));
    CHECK(n == nknown, "%d events, not %d", n, nknown);
    for (int k = 0; k < nknown; k++) {
        MPI_Datatype dts[4];
        MPI_Aint displs[4];
        int ne = 4, verb = -1, bind = -1, nlen = 0, dlen = 0;
        MPI_T_enum en;
        MPI_Info info;
        char name[64];
        OK(MPI_T_event_get_index(known_events[k].name, &idx));
        OK(MPI_T_event_get_info(idx, NULL, &nlen, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dlen,
                                NULL));
        CHECK(nlen == (int)strlen(known_events[k].name) + 1 && dlen > 20,
              "event %s: name length %d, description length %d", known_events[k].name, nlen, dlen);
        nlen = sizeof name;
        OK(MPI_T_event_get_info(idx, name, &nlen, &verb, dts, displs, &ne, &en, &info, NULL, NULL,
                                &bind));
        CHECK(strcmp(name, known_events[k].name) == 0 && ne == known_events[k].nelements &&
                  en == MPI_T_ENUM_NULL && info == MPI_INFO_NULL && bind == MPI_T_BIND_NO_OBJECT &&
                  verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "event %s: name %s, %d elements, bind %d", known_events[k].name, name, ne, bind);
        for (int e = 0; e < ne && e < 4; e++)
            CHECK(dts[e] == MPI_INT && displs[e] == (MPI_Aint)(e * sizeof(int)),
                  "event %s: element %d", name, e);
        /* Arrays shorter than the elements: only that many entries written. */
        dts[1] = MPI_DATATYPE_NULL;
        ne = 1;
        OK(MPI_T_event_get_info(idx, NULL, NULL, NULL, dts, displs, &ne, NULL, NULL, NULL, NULL,
                                NULL));
        CHECK(ne == known_events[k].nelements && dts[1] == MPI_DATATYPE_NULL,
              "event %s: get_info wrote past num_elements", name);
    }
    OK(MPI_T_source_get_num(&n));
    CHECK(n == 1, "%d event sources", n);
    MPI_T_source_order order = -1;
    MPI_Count tps = 0, max = 0, t1 = 0, t2 = 0;
    char sname[64];
    int slen = sizeof sname;
    OK(MPI_T_source_get_info(0, sname, &slen, NULL, NULL, &order, &tps, &max, NULL));
    OK(MPI_T_source_get_timestamp(0, &t1));
    OK(MPI_T_source_get_timestamp(0, &t2));
    CHECK(tps == 1000000000 && max > 0 && order == MPI_T_SOURCE_UNORDERED && t1 > 0 && t2 >= t1,
          "source %s: %lld ticks/s, order %d, timestamps %lld %lld", sname, (long long)tps, order,
          (long long)t1, (long long)t2);

    /* A registration: callbacks per safety level, info calls, free with its callback. */
    OK(MPI_T_event_get_index("peer_lost", &idx));
    OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                     on_event));
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL));
    OK(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL));
    if (initialized) { /* info objects are made once MPI is */
        MPI_Info used = MPI_INFO_NULL;
        int nkeys = -1;
        OK(MPI_T_event_handle_get_info(reg, &used));
        MPI_Info_get_nkeys(used, &nkeys);
        CHECK(nkeys == 0, "handle_get_info: %d keys", nkeys);
        MPI_Info_free(&used);
        OK(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, &used));
        MPI_Info_free(&used);
    }
    OK(MPI_T_event_set_dropped_handler(reg, NULL));
    EXPECT(MPI_T_event_register_callback(reg, 7, MPI_INFO_NULL, NULL, on_event), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_event_register_callback(reg, -1, MPI_INFO_NULL, NULL, on_event),
           MPI_T_ERR_INVALID);
    free_calls = 0;
    OK(MPI_T_event_handle_free(reg, &free_calls, on_free));
    CHECK(free_calls == 1, "the free callback was called %d times", free_calls);
    /* Freed: every call on it is refused. */
    EXPECT(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_event),
           MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_set_dropped_handler(reg, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);

    EXPECT(MPI_T_event_get_num(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_event_get_info(n + 9, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_get_index("x", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_event_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    /* Instances exist only inside a callback. */
    MPI_Count ts;
    EXPECT(MPI_T_event_read(NULL, 0, &n), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_copy((MPI_T_event_instance)&n, &n), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_get_timestamp(NULL, &ts), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_get_source(NULL, &n), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_source_get_timestamp(-1, &ts), MPI_T_ERR_INVALID_INDEX);
}

/* Index of the pvar called name (class COUNTER), after checking its description. */
static int counter_index(const char *name)
{
    int idx = -1, cls, ro, cont, atomic, bind;
    MPI_Datatype dt;
    OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    EXPECT(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &idx), MPI_T_ERR_INVALID_NAME);
    OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, &bind, &ro, &cont,
                           &atomic));
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && !ro && !cont &&
              atomic && bind == MPI_T_BIND_NO_OBJECT,
          "%s: class %d ro %d continuous %d atomic %d", name, cls, ro, cont, atomic);
    return idx;
}

static unsigned long long read_pvar(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Sends n messages of `bytes` bytes each to the next rank (receiving as many from the previous)
 * with a different send call each time. */
static void ring_traffic(int n, int bytes)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *sbuf = calloc((size_t)bytes + 1, 1), *rbuf = calloc((size_t)bytes + 1, 1);
    for (int i = 0; i < n; i++) {
        MPI_Request rq[2];
        MPI_Irecv(rbuf, bytes, MPI_CHAR, (rank + size - 1) % size, i, MPI_COMM_WORLD, &rq[0]);
        if (i % 3 == 0) {
            MPI_Isend(sbuf, bytes, MPI_CHAR, (rank + 1) % size, i, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        } else if (i % 3 == 1) {
            MPI_Send(sbuf, bytes, MPI_CHAR, (rank + 1) % size, i, MPI_COMM_WORLD);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Ssend_c(sbuf, bytes, MPI_CHAR, (rank + 1) % size, i, MPI_COMM_WORLD);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        }
    }
    /* Not messages: to MPI_PROC_NULL. */
    MPI_Send(sbuf, bytes, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
}

/* The message counters against the traffic above: sessions, handles, start/stop/reset. */
static void check_counters(void)
{
    int msgs = counter_index("p2p_api_messages_sent");
    int bytes = counter_index("p2p_api_bytes_sent");
    MPI_T_pvar_session s, s2;
    MPI_T_pvar_handle hm, hb, h2;
    int count;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_session_create(&s2));
    OK(MPI_T_pvar_handle_alloc(s, msgs, NULL, &hm, &count));
    CHECK(count == 1, "count %d", count);
    OK(MPI_T_pvar_handle_alloc(s, bytes, NULL, &hb, &count));
    OK(MPI_T_pvar_handle_alloc(s2, msgs, NULL, &h2, &count));
    CHECK(read_pvar(s, hm) == 0, "a new handle does not start at 0");

    ring_traffic(3, 100); /* not started yet: not counted */
    CHECK(read_pvar(s, hm) == 0, "counted while stopped");
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_start(s2, h2));
    ring_traffic(7, 1000);
    unsigned long long m = read_pvar(s, hm), b = read_pvar(s, hb);
    CHECK(m == 7 && b == 7000, "after 7 messages of 1000 bytes: %llu messages, %llu bytes", m, b);
    OK(MPI_T_pvar_stop(s, hm));
    ring_traffic(2, 10);
    m = read_pvar(s, hm);
    b = read_pvar(s, hb);
    CHECK(m == 7 && b == 7020, "stopped: %llu messages (want 7), running: %llu bytes (want 7020)",
          m, b);
    OK(MPI_T_pvar_start(s, hm));
    ring_traffic(1, 5);
    m = read_pvar(s, hm);
    CHECK(m == 8, "restarted: %llu messages, want 8", m);
    CHECK(read_pvar(s2, h2) == 10, "other session: %llu, want 10", read_pvar(s2, h2));

    unsigned long long v = 0;
    OK(MPI_T_pvar_readreset(s, hm, &v));
    CHECK(v == 8 && read_pvar(s, hm) == 0, "readreset read %llu, left %llu", v, read_pvar(s, hm));
    v = 40;
    OK(MPI_T_pvar_write(s, hm, &v));
    ring_traffic(2, 1);
    CHECK(read_pvar(s, hm) == 42, "written 40 + 2 sends: %llu", read_pvar(s, hm));
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(read_pvar(s, hm) == 0 && read_pvar(s, hb) == 0, "reset of all handles");
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    /* Error paths. */
    int idx;
    EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_read(s, h2, &v), MPI_T_ERR_INVALID_HANDLE); /* s2's handle */
    EXPECT(MPI_T_pvar_read(s, hm, NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_pvar_read((MPI_T_pvar_session)&v, hm, &v), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, hm, &v), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_handle_alloc(s, -1, NULL, &h2, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, msgs, NULL, &h2, &count),
           MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_get_index("nonesuch", MPI_T_PVAR_CLASS_COUNTER, &idx),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_num(NULL), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_pvar_session_create(NULL), MPI_T_ERR_INVALID);
    MPI_T_pvar_handle stale = hb;
    OK(MPI_T_pvar_handle_free(s, &hb));
    CHECK(hb == MPI_T_PVAR_HANDLE_NULL, "pvar handle not reset by free");
    EXPECT(MPI_T_pvar_read(s, stale, &v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_handle_free(s, &stale), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_session stale_s = s2;
    OK(MPI_T_pvar_session_free(&s2));
    CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "session not reset by free");
    EXPECT(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_start(stale_s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_pvar_session_free(&s)); /* frees hm with it */
}

/* Every pvar's description, read through a continuous or a started handle. */
static void check_pvars(void)
{
    int num = 0;
    OK(MPI_T_pvar_get_num(&num));
    CHECK(num >= 2, "%d performance variables", num);
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < num; i++) {
        char name[128], desc[1024];
        int nlen = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic, count, idx;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_handle h;
        OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro,
                               &cont, &atomic));
        OK(MPI_T_pvar_get_index(name, cls, &idx));
        CHECK(idx == i, "%s: index %d, get_index %d", name, i, idx);
        CHECK(dlen > 20, "%s: description \"%s\"", name, desc);
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC, "%s: class", name);
        CHECK(dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_UNSIGNED_LONG || dt == MPI_DOUBLE,
              "%s: datatype", name);
        OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
        if (cont)
            EXPECT(MPI_T_pvar_start(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
        else
            OK(MPI_T_pvar_start(s, h));
        double buf[4];
        OK(MPI_T_pvar_read(s, h, buf));
        if (ro) {
            EXPECT(MPI_T_pvar_reset(s, h), MPI_T_ERR_PVAR_NO_WRITE);
            EXPECT(MPI_T_pvar_write(s, h, buf), MPI_T_ERR_PVAR_NO_WRITE);
        }
    }
    OK(MPI_T_pvar_session_free(&s));
}

/* Threads using MPI_T at once, each with its own init/finalize pair and session. */
static void *hammer(void *arg)
{
    (void)arg;
    for (int k = 0; k < 200; k++) {
        int provided, n, idx, count;
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        unsigned long long v;
        OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
        OK(MPI_T_cvar_get_num(&n));
        OK(MPI_T_pvar_get_index("p2p_api_messages_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
        OK(MPI_T_pvar_session_create(&s));
        OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
        OK(MPI_T_pvar_start(s, h));
        OK(MPI_T_pvar_read(s, h, &v));
        OK(MPI_T_pvar_session_free(&s));
        OK(MPI_T_finalize());
    }
    return NULL;
}

static void check_threads(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, hammer, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    int provided, n;
    /* Before MPI_T_init_thread: nothing but init works. */
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);

    /* Before MPI_Init: the settings are there already. */
    check_strings();
    check_cvars();
    check_events(false);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_events(true);
    check_cvars();
    check_categories();
    check_pvars();
    check_counters();
    check_threads();

    /* A second init nests: one finalize leaves MPI_T usable. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    OK(MPI_T_finalize());
    MPI_Finalize();

    /* After MPI_Finalize: still readable. */
    check_cvars();
    check_pvars();
    /* A registration the tool leaves behind goes with the last MPI_T_finalize. */
    MPI_T_event_registration left = NULL;
    OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &left));
    OK(MPI_T_event_register_callback(left, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                     on_event));
    OK(MPI_T_finalize());
    EXPECT(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT(MPI_T_event_handle_free(left, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    OK(MPI_T_finalize());

    if (errors)
        printf(" Found %d errors on rank %d\n", errors, rank);
    else if (rank == 0)
        printf(" No Errors\n");
    return errors != 0;
}
