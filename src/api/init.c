/* MPI_Init and friends: bringing the library up and down (MPI-4.0 chapter 11), for the world
 * model and for sessions (src/api/session.c). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "api/runtime.h"
#include "api/world.h"
#include "coll/coll.h"
#include "comm/comm.h"
#include "core/bufcache.h"
#include "core/config.h"
#include "core/crash.h"
#include "core/error.h"
#include "core/errhandler.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "io/io.h"
#include "p2p/p2p.h"
#include "runtime/pm.h"

/* Core ends the job through the process manager's abort, which is above it: handed over when the
 * library is loaded, so every fatal path, before MPI_Init too, takes it (log.h). */
__attribute__((constructor)) static void mf_api_hand_abort_to_core(void)
{
    mf_job_abort_set(mf_pm_abort);
}

/* The runtime (process manager, fabrics, progress, the objects behind MPI_COMM_WORLD and
 * MPI_COMM_SELF) is shared by the world model and every session: see api/runtime.h.
 * mf_g.initialized says it is up; these say who uses it. */
static int mf_runtime_users;
static bool mf_runtime_idle;  /* up without users: the last was a session (see runtime.h) */
static bool mf_runtime_ended; /* closed by MPI_Finalize: it cannot be brought up again */
static bool mf_world_active;  /* between MPI_Init and MPI_Finalize */

/* Raises the thread level; the lock is set up before the first MPI_THREAD_MULTIPLE user can
 * start threads, and stays. */
static void mf_thread_level_raise(int required)
{
    if (mf_runtime_users == 0 || required > mf_g.thread_level)
        mf_g.thread_level = required;
    if (required == MPI_THREAD_MULTIPLE)
        mf_lock_enable();
}

static int mf_runtime_start(const char *function)
{
    mf_g.main_thread = pthread_self();
    /* Settings first: a bad value stops start-up before anything depends on it. */
    int rc = mf_config_check();
    if (rc)
        return rc;
    mf_verbose_level = (int)mf_config_long("MANIFOLD_VERBOSE");

    rc = mf_pm_init(&mf_g.pm);
    if (rc)
        return rc;
    mf_g.rank = mf_g.pm.rank;
    mf_g.size = mf_g.pm.size;
    mf_log_set_rank(mf_g.rank);
    mf_crash_report_install(mf_g.rank);
    if (mf_g.rank == 0) /* once per job: every rank has the same environment */
        mf_config_warn_unknown();

    if ((rc = mf_world_publish()) || (rc = mf_progress_init()) || (rc = mf_fabrics_open()) ||
        (rc = mf_pm_fence()) || (rc = mf_world_discover()) || (rc = mf_fabrics_start()) ||
        (rc = mf_p2p_offload_init()) || (rc = mf_comm_init_builtin()))
        return rc;
    /* Predefined datatypes are set up on first use; make that happen here, before any thread
     * of the program can race to it (their inline lookup reads the table without a lock). */
    if (!mf_datatype_get(MPI_BYTE))
        return mf_error(MPI_ERR_INTERN, "%s: the predefined datatypes failed to initialise",
                        function);
    mf_g.initialized = true;
    /* The progress thread (MANIFOLD_ASYNC_PROGRESS=1) shares the engine: the lock is needed
     * from now on, whatever the thread level. */
    if (mf_config_bool("MANIFOLD_ASYNC_PROGRESS"))
        mf_lock_enable();
    return mf_progress_thread_start();
}

/* The collective half of a teardown. First a barrier over the fabrics, during which every rank
 * still answers its peers (a rank whose MPI_Wait on a cancelled send needs our CANCEL_ACK
 * finishes it and only then reaches its own finalize). Then sends the program no longer waits
 * for (MPI_Request_free, buffered sends, the barrier's own last frames, perhaps queued behind a
 * connection still authenticating) leave this process: every frame of the barrier is needed
 * by its receiver, so each receiver is still progressing until it has it. Last the process
 * manager's fence, which moves no frames, after which no rank talks to another. */
static int mf_runtime_quiesce(const char *function)
{
    /* Nonblocking collective file accesses still queued need the other ranks: made now, while
     * every rank still talks (MPI_Finalize has done it already, with the lock held once). */
    mf_io_async_drain();
    mf_comm *world = mf_comm_world();
    if (world && mf_coll_barrier(world) != MPI_SUCCESS)
        mf_warn("%s: the closing barrier failed (a peer is gone?); finalizing anyway", function);
    if (mf_p2p_drain_sends(10.0))
        mf_warn("%s: sends still pending after 10 s (their receives were never posted?); "
                "finalizing anyway",
                function);
    return mf_pm_fence();
}

/* The local half: closes what mf_runtime_start opened, after a quiesce. */
static int mf_runtime_close(void)
{
    mf_io_async_stop();
    mf_comm_finalize_builtin();
    int rc = mf_fabrics_finalize();
    mf_p2p_finalize();
    mf_bufcache_trim(); /* the last unexpected payload and one-sided buffer went back above */
    mf_progress_finalize();
    int rc2 = mf_pm_finalize();
    mf_world_free();
    mf_g.initialized = false;
    mf_runtime_ended = true;
    return rc ? rc : rc2;
}

/* At exit, an idle runtime is closed (its quiesce ran when it went idle): the launcher then sees
 * a proper end. A runtime still in use at exit is left alone, as a missing MPI_Finalize. */
static void mf_runtime_at_exit(void)
{
    if (mf_runtime_idle && mf_runtime_users == 0)
        (void)mf_runtime_close();
}

int mf_runtime_acquire(int required, int *provided, const char *function)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return mf_error(MPI_ERR_ARG, "%s: required=%d is not a thread level", function, required);
    if (mf_runtime_ended)
        return mf_error(MPI_ERR_OTHER,
                        "%s: MPI_Finalize ended MPI in this process (it was the last user: no "
                        "session was open); it cannot be started again",
                        function);
    /* Under MPI_THREAD_MULTIPLE another thread may be in MPI (a second session, the world). */
    bool locked = mf_lock_enabled();
    if (locked)
        mf_lock();
    mf_thread_level_raise(required);
    int rc = MPI_SUCCESS;
    if (mf_runtime_users == 0 && mf_runtime_idle) {
        mf_runtime_idle = false; /* still up: only the progress thread to restart */
        rc = mf_progress_thread_start();
    } else if (mf_runtime_users == 0)
        rc = mf_runtime_start(function);
    if (!rc)
        mf_runtime_users++;
    if (!rc && provided)
        *provided = mf_g.thread_level;
    if (locked)
        mf_unlock();
    return rc;
}

int mf_runtime_release(bool world, const char *function)
{
    static bool at_exit_set;
    mf_lock();
    int rc = MPI_SUCCESS;
    if (--mf_runtime_users == 0) {
        rc = mf_runtime_quiesce(function);
        mf_progress_thread_stop(); /* idle or closing: nothing moves from here without a call */
        if (world) {
            int rc2 = mf_runtime_close();
            rc = rc ? rc : rc2;
        } else {
            mf_runtime_idle = true;
            if (!at_exit_set)
                at_exit_set = atexit(mf_runtime_at_exit) == 0;
        }
    }
    mf_unlock();
    return rc;
}

static int mf_init(int required, int *provided, const char *function)
{
    if (mf_world_active)
        return mf_error(MPI_ERR_OTHER, "%s: MPI is already initialized", function);
    if (mf_g.finalized)
        return mf_error(MPI_ERR_OTHER, "%s: MPI cannot be initialized again after MPI_Finalize",
                        function);
    int rc = mf_runtime_acquire(required, provided, function);
    if (!rc) {
        mf_world_active = true;
        mf_g.main_thread = pthread_self(); /* the thread of MPI_Init, even after a session */
    }
    return rc;
}

int PMPI_Init(int *argc, char ***argv)
{
    return mf_err_no_object(mf_init(MPI_THREAD_SINGLE, NULL, "MPI_Init"), "MPI_Init");
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Init_thread: provided is NULL"),
                                "MPI_Init_thread");
    return mf_err_no_object(mf_init(required, provided, "MPI_Init_thread"), "MPI_Init_thread");
}

int PMPI_Finalize(void)
{
    if (!mf_world_active)
        return mf_err_no_object(mf_error(MPI_ERR_OTHER, "MPI_Finalize: MPI is not initialized"),
                                "MPI_Finalize");
    mf_lock();
    /* Nonblocking collective file accesses still queued (requests freed, files left open): the
     * I/O thread makes them with the other ranks' while this one waits, the lock held once so
     * that the engine's sleeps hand it over. */
    mf_io_async_drain();
    /* MPI_COMM_SELF's attributes are deleted first, while callbacks may still communicate. */
    mf_comm_finalize_attrs();
    mf_world_active = false;
    mf_g.finalized = true;
    /* Sessions still open keep the runtime up; the last user tears it down. */
    int rc = mf_runtime_release(true, "MPI_Finalize");
    mf_unlock();
    return mf_err_no_object(rc, "MPI_Finalize");
}

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Initialized: flag is NULL"),
                                "MPI_Initialized");
    *flag = mf_world_active || mf_g.finalized; /* the world model only: sessions do not count */
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Finalized: flag is NULL"),
                                "MPI_Finalized");
    *flag = mf_g.finalized;
    return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided)
{
    if (!provided)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Query_thread: provided is NULL"),
                                "MPI_Query_thread");
    *provided = mf_g.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    if (!flag)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Is_thread_main: flag is NULL"),
                                "MPI_Is_thread_main");
    *flag = pthread_equal(pthread_self(), mf_g.main_thread);
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort(errorcode=%d) called by rank %d", errorcode, mf_g.rank);
    mf_pm_abort(errorcode, msg);
}

MF_API_ALIAS(Init);
MF_API_ALIAS(Init_thread);
MF_API_ALIAS(Finalize);
MF_API_ALIAS(Initialized);
MF_API_ALIAS(Finalized);
MF_API_ALIAS(Query_thread);
MF_API_ALIAS(Is_thread_main);
MF_API_ALIAS(Abort);
