/*
 * Unit test of the MPI_T registration API (mpit.h), the way fabric instances and the p2p engine
 * will use it, seen through the MPI_T entry points: new categories and variables appear and
 * advance MPI_T_category_changed, counters and callbacks are read through session handles,
 * a source registered again goes on from where the old one stopped, a detached source keeps its
 * last value, and invalid descriptions are refused. Events raised here (outside MPI_Init, so
 * only a thread-safe callback suits) that a registration has no suitable callback for are
 * counted as dropped and reported, once, to its dropped handler before its next delivery.
 */
#include <stdio.h>
#include <string.h>

#include "tool/mpit.h"
#include "unit_check.h"

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECKF(rc_ == (want), "%s returned %d, expected %d", #call, rc_, (int)(want));             \
    } while (0)
#define OK(call) EXPECT(call, MPI_SUCCESS)

static double seconds;
static unsigned long queue_length;

static void read_seconds(void *arg, void *out)
{
    CHECKF(arg == &seconds, "callback argument");
    *(double *)out = seconds;
}

static void read_queue(void *arg, void *out)
{
    *(uint64_t *)out = queue_length;
}

static int stamp(void)
{
    int s = -1;
    OK(MPI_T_category_changed(&s));
    return s;
}

static unsigned long long read_u(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Events: what the callbacks heard. */
static int heard, dropped_calls, dropped_safety = -1;
static MPI_Count dropped_count;
static void *dropped_user;
static MPI_T_event_registration dropped_reg;
static int user_a, user_b;

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                     void *ud)
{
    int el[2] = {0, 0};
    if (MPI_T_event_copy(ev, el) == MPI_SUCCESS && el[0] == 3 && el[1] == MPI_ERR_OTHER)
        heard++;
    CHECKF(dropped_calls == 0 || dropped_count > 0, "the drops were reported after the delivery");
}

static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety s,
                       void *ud)
{
    dropped_calls++;
    dropped_count = count;
    dropped_reg = reg;
    dropped_safety = s;
    dropped_user = ud;
    CHECKF(heard == 0, "the drops were reported after the delivery");
    CHECKF(source == 0, "dropped handler given source %d", source);
}

static void test_dropped_events(void)
{
    int idx, el[2] = {3, MPI_ERR_OTHER};
    MPI_T_event_registration reg;
    OK(MPI_T_event_get_index("peer_lost", &idx));
    OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    OK(MPI_T_event_set_dropped_handler(reg, on_dropped));
    /* Only a callback that needs the main thread alone in MPI: nothing here suits it. */
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &user_a,
                                     on_event));
    for (int i = 0; i < 3; i++)
        mf_t_event_raise(MF_T_EVENT_PEER_LOST, el);
    CHECKF(heard == 0 && dropped_calls == 0,
           "an unsuitable callback heard %d events, the "
           "dropped handler ran %d times before any delivery",
           heard, dropped_calls);
    /* A thread-safe callback suits: the next event reports the 3 drops first, then arrives. */
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &user_b,
                                     on_event));
    mf_t_event_raise(MF_T_EVENT_PEER_LOST, el);
    CHECKF(dropped_calls == 1 && dropped_count == 3 && heard == 1,
           "after 3 drops and a delivery: dropped handler ran %d times (count %lld), %d heard",
           dropped_calls, (long long)dropped_count, heard);
    CHECKF(dropped_reg == reg && dropped_safety == MPI_T_CB_REQUIRE_THREAD_SAFE &&
               dropped_user == &user_b,
           "dropped handler given another registration, safety %d or user data", dropped_safety);
    /* Nothing more was dropped: the next delivery does not call it again. */
    mf_t_event_raise(MF_T_EVENT_PEER_LOST, el);
    CHECKF(dropped_calls == 1 && heard == 2, "dropped handler ran %d times, %d heard",
           dropped_calls, heard);
    OK(MPI_T_event_handle_free(reg, NULL, NULL));
}

int main(void)
{
    int provided, count, ncat0, ncat1, npvar0, idx;
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_category_get_num(&ncat0));
    OK(MPI_T_pvar_get_num(&npvar0));
    int s0 = stamp();

    /* A category for one fabric instance, below "tcp". */
    int cat = mf_t_category("tcp0", "tcp fabric instance 0", "tcp");
    CHECKF(cat == ncat0, "new category index %d, want %d", cat, ncat0);
    CHECKF(mf_t_category("tcp0", "again", "tcp") == cat, "the same name made a second category");
    OK(MPI_T_category_get_num(&ncat1));
    CHECKF(ncat1 == ncat0 + 1, "%d categories, want %d", ncat1, ncat0 + 1);
    int s1 = stamp();
    CHECKF(s1 > s0, "category_changed did not advance: %d -> %d", s0, s1);
    int tcp = -1, subs[64], nsub = 0;
    OK(MPI_T_category_get_index("tcp", &tcp));
    OK(MPI_T_category_get_info(tcp, NULL, NULL, NULL, NULL, NULL, NULL, &nsub));
    OK(MPI_T_category_get_categories(tcp, 64, subs));
    CHECKF(nsub >= 1 && subs[nsub - 1] == cat, "tcp0 is not below tcp");

    /* A counter. */
    static mf_t_counter frames, frames2;
    mf_t_pvar_desc d = {.name = "tcp0_frames_sent",
                        .desc = "frames tcp instance 0 handed to the kernel",
                        .category = "tcp0",
                        .var_class = MPI_T_PVAR_CLASS_COUNTER,
                        .datatype = MPI_UNSIGNED_LONG_LONG,
                        .verbosity = MPI_T_VERBOSITY_TUNER_BASIC,
                        .counter = &frames};
    int pv = mf_t_pvar_register(&d);
    CHECKF(pv == npvar0, "counter index %d, want %d", pv, npvar0);
    CHECKF(stamp() > s1, "category_changed did not advance for a new pvar");
    OK(MPI_T_pvar_get_index("tcp0_frames_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECKF(idx == pv, "get_index %d", idx);
    int npv = 0, members[8];
    OK(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, NULL, &npv, NULL));
    OK(MPI_T_category_get_pvars(cat, 8, members));
    CHECKF(npv == 1 && members[0] == pv, "tcp0 lists %d pvars", npv);

    MPI_T_pvar_session s;
    MPI_T_pvar_handle h, ht, hq;
    OK(MPI_T_pvar_session_create(&s));
    mf_t_count(&frames, 3); /* before the handle: not seen */
    OK(MPI_T_pvar_handle_alloc(s, pv, NULL, &h, &count));
    OK(MPI_T_pvar_start(s, h));
    mf_t_count(&frames, 5);
    CHECKF(read_u(s, h) == 5, "counter read %llu, want 5", read_u(s, h));

    /* The instance closes and a new one registers the same name with a fresh counter. */
    mf_t_pvar_detach(pv);
    mf_t_count(&frames, 100);
    CHECKF(read_u(s, h) == 5, "detached counter moved: %llu", read_u(s, h));
    int st = stamp();
    CHECKF(mf_t_pvar_register(&(mf_t_pvar_desc){.name = "tcp0_frames_sent",
                                                .desc = "frames tcp instance 0 sent",
                                                .category = "tcp0",
                                                .var_class = MPI_T_PVAR_CLASS_COUNTER,
                                                .datatype = MPI_UNSIGNED_LONG_LONG,
                                                .counter = &frames2}) == pv,
           "registering again made a new variable");
    CHECKF(stamp() == st, "rebinding changed the categories");
    CHECKF(read_u(s, h) == 5, "rebound counter jumped: %llu", read_u(s, h));
    mf_t_count(&frames2, 2);
    CHECKF(read_u(s, h) == 7, "rebound counter read %llu, want 7", read_u(s, h));

    /* A timer through a callback, in seconds. */
    int pt = mf_t_pvar_register(&(mf_t_pvar_desc){.name = "tcp0_send_time",
                                                  .desc = "seconds spent in sendmsg",
                                                  .category = "tcp0",
                                                  .var_class = MPI_T_PVAR_CLASS_TIMER,
                                                  .datatype = MPI_DOUBLE,
                                                  .continuous = true,
                                                  .read = read_seconds,
                                                  .arg = &seconds});
    CHECKF(pt == pv + 1, "timer index %d", pt);
    seconds = 1.5;
    OK(MPI_T_pvar_handle_alloc(s, pt, NULL, &ht, &count));
    EXPECT(MPI_T_pvar_start(s, ht), MPI_T_ERR_PVAR_NO_STARTSTOP); /* continuous */
    seconds = 2.0;
    double t = -1;
    OK(MPI_T_pvar_read(s, ht, &t));
    CHECKF(t == 0.5, "timer read %g, want 0.5", t);
    OK(MPI_T_pvar_readreset(s, ht, &t));
    OK(MPI_T_pvar_read(s, ht, &t));
    CHECKF(t == 0.0, "timer after readreset %g", t);

    /* A level: the current value, read-only, continuous. */
    int pq = mf_t_pvar_register(&(mf_t_pvar_desc){.name = "tcp0_send_queue",
                                                  .desc = "frames waiting for the socket",
                                                  .category = "tcp0",
                                                  .var_class = MPI_T_PVAR_CLASS_LEVEL,
                                                  .datatype = MPI_UNSIGNED_LONG,
                                                  .read = read_queue});
    int ro = 0, cont = 0, atomic = 1;
    OK(MPI_T_pvar_get_info(pq, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &ro, &cont,
                           &atomic));
    CHECKF(ro && cont && !atomic, "level: readonly %d continuous %d atomic %d", ro, cont, atomic);
    OK(MPI_T_pvar_handle_alloc(s, pq, NULL, &hq, &count));
    queue_length = 42;
    unsigned long q = 0;
    OK(MPI_T_pvar_read(s, hq, &q));
    CHECKF(q == 42, "level read %lu", q);
    EXPECT(MPI_T_pvar_stop(s, hq), MPI_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT(MPI_T_pvar_reset(s, hq), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_readreset(s, hq, &q), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_write(s, hq, &q), MPI_T_ERR_PVAR_NO_WRITE);
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES)); /* skips the level */
    CHECKF(read_u(s, h) == 0, "reset of all handles left %llu", read_u(s, h));

    /* Refused descriptions. */
    npvar0 = 0;
    OK(MPI_T_pvar_get_num(&npvar0));
    d.name = "bad";
    d.category = "no_such_category";
    CHECKF(mf_t_pvar_register(&d) == -1, "unknown category accepted");
    d.category = "tcp0";
    d.read = read_queue; /* both sources */
    CHECKF(mf_t_pvar_register(&d) == -1, "two sources accepted");
    d.read = NULL;
    d.datatype = MPI_INT;
    CHECKF(mf_t_pvar_register(&d) == -1, "MPI_INT accepted");
    d.datatype = MPI_UNSIGNED_LONG_LONG;
    d.name = NULL;
    CHECKF(mf_t_pvar_register(&d) == -1, "no name accepted");
    CHECKF(mf_t_pvar_register(NULL) == -1, "NULL accepted");
    int npvar1 = 0;
    OK(MPI_T_pvar_get_num(&npvar1));
    CHECKF(npvar1 == npvar0, "a refused variable was counted");

    OK(MPI_T_pvar_session_free(&s));
    test_dropped_events();
    OK(MPI_T_finalize());
    if (unit_check_failures)
        fprintf(stderr, "%d failures\n", unit_check_failures);
    return unit_check_failures != 0;
}
