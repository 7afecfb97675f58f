#include "mftest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mftest_errors;

void mftest_fail(const char *file, int line, const char *fmt, ...)
{
    int rank = -1, initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", rank, file, line, msg);
    fflush(stderr);
    mftest_errors++;
}

const char *mftest_error_text(int code)
{
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error code %d", code);
    return text;
}

void mftest_shared_path(char *path, size_t len, const char *stem)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, len, "%s/mf_%s.%d", dir, stem, (int)getpid());
    }
    MPI_Bcast(path, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

int mftest_finish(void)
{
    /* Each rank reports its own verdict through its exit code; mpiexec fails the job when any
     * rank exits non-zero, so no collective is needed (and none is trusted by this helper). */
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (mftest_errors == 0 && rank == 0)
        printf(" No Errors\n");
    else if (mftest_errors != 0)
        printf(" Found %d errors on rank %d\n", mftest_errors, rank);
    fflush(stdout);
    MPI_Finalize();
    return mftest_errors == 0 ? 0 : 1;
}

void mftest_init_tools(int *argc, char ***argv, int *rank, int *size)
{
    int provided;
    MF_CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

int mftest_finish_tools(void)
{
    int errs = mftest_finish();
    MPI_T_finalize();
    return errs;
}

void mftest_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {(a[0] * b[0] + a[1] * b[2]) % 9973, (a[0] * b[1] + a[1] * b[3]) % 9973,
                    (a[2] * b[0] + a[3] * b[2]) % 9973, (a[2] * b[1] + a[3] * b[3]) % 9973};
        memcpy(b, c, sizeof c);
    }
}

void mftest_fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31 + i * 7);
}

int mftest_filled(const unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 31 + i * 7))
            return 0;
    return 1;
}

void mftest_counter_open(mftest_counter *c, const char *name)
{
    int idx = -1, count = 0;
    c->ok = 0;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS) {
        mftest_fail(__FILE__, __LINE__, "no MPI_T counter named %s", name);
        return;
    }
    if (MPI_T_pvar_session_create(&c->session) != MPI_SUCCESS) {
        mftest_fail(__FILE__, __LINE__, "MPI_T_pvar_session_create failed for %s", name);
        return;
    }
    if (MPI_T_pvar_handle_alloc(c->session, idx, NULL, &c->handle, &count) != MPI_SUCCESS ||
        MPI_T_pvar_start(c->session, c->handle) != MPI_SUCCESS) {
        mftest_fail(__FILE__, __LINE__, "cannot start MPI_T counter %s", name);
        MPI_T_pvar_session_free(&c->session);
        return;
    }
    c->ok = 1;
}

unsigned long long mftest_counter_read(const mftest_counter *c)
{
    unsigned long long v = 0;
    if (c->ok && MPI_T_pvar_read(c->session, c->handle, &v) != MPI_SUCCESS)
        mftest_fail(__FILE__, __LINE__, "MPI_T_pvar_read failed");
    return v;
}

void mftest_counter_close(mftest_counter *c)
{
    if (!c->ok)
        return;
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
    c->ok = 0;
}

static atomic_bool mftest_spin_stop;
static pthread_t mftest_spinner;

static void *mftest_spin(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&mftest_spin_stop, memory_order_relaxed))
        ;
    return NULL;
}

void mftest_share_core(void)
{
    int cpu = sched_getcpu();
    MF_CHECK(cpu >= 0, "sched_getcpu failed");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    MF_CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0, "cannot pin to cpu %d",
             cpu);
    pthread_attr_t attr;
    atomic_store(&mftest_spin_stop, false);
    MF_CHECK(pthread_attr_init(&attr) == 0 &&
                 pthread_attr_setaffinity_np(&attr, sizeof one, &one) == 0 &&
                 pthread_create(&mftest_spinner, &attr, mftest_spin, NULL) == 0,
             "cannot start a spinning thread on cpu %d", cpu);
    pthread_attr_destroy(&attr);
}

void mftest_share_core_end(void)
{
    atomic_store(&mftest_spin_stop, true);
    pthread_join(mftest_spinner, NULL);
}

int mftest_oversubscribed(int ranks, long *cores)
{
    const char *env = getenv("MANIFOLD_OVERSUBSCRIBED");
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores)
        *cores = online;
    return (env && strcmp(env, "1") == 0) || (online > 0 && ranks > online);
}
