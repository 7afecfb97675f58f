/*
 * singleton.c — the process manager of a program started without a launcher: rank 0 of 1, with a
 * private key-value store so that fabrics publish and look up their own address the same way as
 * in a real job. Fence is a no-op; abort prints the message and exits with the code.
 */
#include "runtime/pm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

typedef struct singleton_kv {
    char key[MF_PM_KEY_MAX];
    char val[MF_PM_VAL_MAX];
} singleton_kv;

static singleton_kv *singleton_store;
static size_t singleton_count, singleton_cap;

static int singleton_init(mf_pm_identity *id)
{
    char host[64];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    id->rank = 0;
    id->size = 1;
    id->appnum = 0;
    id->universe_size = 1;
    snprintf(id->jobid, sizeof id->jobid, "mf-single-%.24s-%ld", host, (long)getpid());
    return MPI_SUCCESS;
}

static int singleton_put(const char *key, const char *value)
{
    if (strlen(key) >= MF_PM_KEY_MAX || strlen(value) >= MF_PM_VAL_MAX)
        return mf_error(MPI_ERR_OTHER, "PMI: key or value for '%.40s' too long", key);
    for (size_t i = 0; i < singleton_count; i++) {
        if (strcmp(singleton_store[i].key, key) == 0) {
            strcpy(singleton_store[i].val, value);
            return MPI_SUCCESS;
        }
    }
    if (singleton_count == singleton_cap) {
        size_t ncap = singleton_cap ? 2 * singleton_cap : 8;
        singleton_kv *n = realloc(singleton_store, ncap * sizeof *n);
        if (!n)
            return mf_error(MPI_ERR_OTHER, "PMI: out of memory for the key-value store");
        singleton_store = n;
        singleton_cap = ncap;
    }
    strcpy(singleton_store[singleton_count].key, key);
    strcpy(singleton_store[singleton_count].val, value);
    singleton_count++;
    return MPI_SUCCESS;
}

static int singleton_fence(void)
{
    return MPI_SUCCESS;
}

static int singleton_get(const char *key, char *value, size_t len)
{
    for (size_t i = 0; i < singleton_count; i++) {
        if (strcmp(singleton_store[i].key, key) == 0) {
            if (strlen(singleton_store[i].val) >= len)
                return mf_error(MPI_ERR_OTHER, "PMI: value of '%.40s' does not fit in %zu bytes",
                                key, len);
            strcpy(value, singleton_store[i].val);
            return MPI_SUCCESS;
        }
    }
    return mf_error(MPI_ERR_NAME, "PMI: key '%.40s' not found", key);
}

static void singleton_abort(int code, const char *msg)
{
    if (msg && *msg)
        fprintf(stderr, "%s\n", msg);
    fflush(NULL);
    _exit(code);
}

static int singleton_finalize(void)
{
    free(singleton_store);
    singleton_store = NULL;
    singleton_count = singleton_cap = 0;
    return MPI_SUCCESS;
}

const mf_pm_ops mf_pm_singleton_ops = {
    .name = "singleton",
    .init = singleton_init,
    .put = singleton_put,
    .fence = singleton_fence,
    .get = singleton_get,
    .abort = singleton_abort,
    .finalize = singleton_finalize,
};
