/*
 * ofi_lib.c — libfabric, loaded when an ofi instance opens (dlopen), not linked into libmpi.
 *
 * Why: libfabric.so.1 pulls in the PSM libraries (libpsm_infinipath, libinfinipath), whose
 * constructor installs SIGSEGV/SIGBUS handlers that print a backtrace and exit with status 1:
 * linked in, every Manifold rank would stop dying of its signal (mpiexec reports a crashed rank
 * by its signal). Loaded on demand, only jobs that use ofi load it, and with IPATH_NO_BACKTRACE
 * set first (unless the user set it) the handlers stay out of those too.
 *
 * Only the functions below are real symbols of libfabric; everything else the fabric calls
 * (fi_domain, fi_send, fi_cq_read, fi_close, ...) is an inline wrapper around the objects'
 * operation tables, which need no symbol. The library stays loaded until the process ends
 * (providers may have registered their own destructors).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fabric/ofi/ofi.h"

static mf_ofi_lib mf_ofi_lib_table;
static const char *mf_ofi_lib_why; /* why loading failed; NULL: loaded */
static pthread_once_t mf_ofi_lib_once = PTHREAD_ONCE_INIT;
static char mf_ofi_lib_err[256];

static void mf_ofi_lib_open(void)
{
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(mf_ofi_lib_err, sizeof mf_ofi_lib_err, "cannot load libfabric.so.1: %s",
                 dlerror());
        mf_ofi_lib_why = mf_ofi_lib_err;
        return;
    }
    mf_ofi_lib *l = &mf_ofi_lib_table;
    /* POSIX: a function pointer may be converted from dlsym's void * this way. */
    *(void **)&l->getinfo = dlsym(h, "fi_getinfo");
    *(void **)&l->freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&l->dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&l->fabric = dlsym(h, "fi_fabric");
    *(void **)&l->strerror = dlsym(h, "fi_strerror");
    *(void **)&l->tostr = dlsym(h, "fi_tostr");
    if (!l->getinfo || !l->freeinfo || !l->dupinfo || !l->fabric || !l->strerror || !l->tostr) {
        snprintf(mf_ofi_lib_err, sizeof mf_ofi_lib_err,
                 "libfabric.so.1 lacks the functions of the 1.17 API");
        mf_ofi_lib_why = mf_ofi_lib_err;
    }
}

const mf_ofi_lib *mf_ofi_lib_load(const char **why)
{
    pthread_once(&mf_ofi_lib_once, mf_ofi_lib_open);
    *why = mf_ofi_lib_why;
    return mf_ofi_lib_why ? NULL : &mf_ofi_lib_table;
}
