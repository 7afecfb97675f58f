/*
 * async.c — nonblocking accesses that move their data while the program goes on: independent
 * ones (MPI_File_iread, _iwrite and their _at and _shared forms) and collective ones
 * (MPI_File_iread_all, _iwrite_all and their _at forms). One I/O thread per process, started by
 * the first of them, makes each access in the order they were started (mf_io_rw, or
 * mf_io_rw_all for a collective one), and the requests complete in the progress engine, through
 * a source whose eventfd the thread rings, so MPI_Test, MPI_Wait and the progress thread see
 * them as they see any request.
 *
 * Threads: for an independent access the I/O thread does not take the library lock. It reads
 * only what a file keeps fixed while accesses are pending (descriptor, view, etype, atomic mode,
 * amode, name, hints, views: mf_io_quiesce waits for them before anything changes those), the
 * user's buffer and the held datatype (pack and unpack only read it); error codes are made under
 * the error table's own mutex. A collective access talks to the other ranks, so the thread makes
 * it under the library lock, switched on by such an access while any is pending (its waits let
 * the program's threads in, as under MPI_THREAD_MULTIPLE; below that thread level the lock goes
 * off again once none is, see lock.h), on the file's async_comm, which only the
 * thread uses; the collective buffers (f->shares, f->scratch) are the thread's until the program
 * quiesces the file. Every rank's thread makes the collective accesses of a file in the order
 * its program started them, the same on every rank. The queue and the list of finished accesses
 * are under io_async.mu; requests, files and datatypes are touched only by the engine's pass
 * (library lock held where it is in use).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/error.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/progress.h"
#include "datatype/status.h"
#include "io/io.h"
#include "p2p/p2p.h"
#include "tool/mpit.h"

/* One access handed to the I/O thread. */
struct io_job {
    struct io_job *next;
    mf_file *f;
    bool write;
    MPI_Offset at; /* view offset, etypes */
    void *buf;
    MPI_Count count;
    mf_datatype *dt; /* held */
    mf_request *r;   /* NULL: a collective access this rank only takes part in (its call failed) */
    const char *fn;
    bool coll;
    int rc;           /* collective: the caller's error so far; then the access's outcome */
    size_t done;      /* the bytes it moved */
    mf_io_conv *conv; /* the data's conversion (a view whose representation converts), or NULL */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool running, stop;
    struct io_job *todo, **todo_tail; /* FIFO: the order the accesses were started in */
    struct io_job *finished, **finished_tail;
    atomic_int nfinished; /* read without mu by the engine's sleep question */
    int efd;              /* rung by the thread for each finished access */
    /* Collective accesses queued or being made: changed under mu, read without it by the lock's
     * question whether the thread may still need it (io_async_needs_lock). */
    atomic_int ncoll;
} io_async = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .efd = -1};

static mf_t_counter io_async_count, io_async_coll_count;
static const mf_t_counter_def io_async_def[] = {
    {"io_async_accesses",
     "nonblocking independent file accesses made by the I/O thread while the program went on",
     &io_async_count},
    {"io_async_collectives",
     "nonblocking collective file accesses (MPI_File_iread_all and kin) the I/O thread made "
     "with the other ranks while the program went on",
     &io_async_coll_count},
};

static void *io_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&io_async.mu);
    for (;;) {
        while (!io_async.todo && !io_async.stop)
            pthread_cond_wait(&io_async.cv, &io_async.mu);
        struct io_job *j = io_async.todo;
        if (!j)
            break; /* stopping, and nothing is left */
        if (!(io_async.todo = j->next))
            io_async.todo_tail = &io_async.todo;
        pthread_mutex_unlock(&io_async.mu);
        if (j->coll) {
            mf_lock();
            j->rc = mf_io_rw_all(j->f, j->f->async_comm, j->write, j->at, j->buf, j->count, j->dt,
                                 j->rc, &j->done, j->fn);
            mf_unlock();
            mf_t_count(&io_async_coll_count, 1);
        } else {
            j->rc = mf_io_rw(j->f, j->write, j->at, j->buf, j->count, j->dt, &j->done, j->fn);
            mf_t_count(&io_async_count, 1);
        }
        pthread_mutex_lock(&io_async.mu);
        atomic_fetch_sub(&io_async.ncoll, j->coll);
        j->next = NULL;
        *io_async.finished_tail = j;
        io_async.finished_tail = &j->next;
        atomic_fetch_add(&io_async.nfinished, 1);
        uint64_t one = 1;
        while (write(io_async.efd, &one, sizeof one) < 0 && errno == EINTR)
            ;
    }
    pthread_mutex_unlock(&io_async.mu);
    return NULL;
}

/* The engine's pass: completes the finished accesses' requests, in the order they finished. */
static int io_async_poll(void *arg)
{
    (void)arg;
    if (atomic_load(&io_async.nfinished) == 0)
        return 0;
    /* The thread rings while it holds mu: emptied under mu, the eventfd stays in step with the
     * list (no ring is left for an access already taken, which would wake every sleep). */
    uint64_t rung;
    pthread_mutex_lock(&io_async.mu);
    while (read(io_async.efd, &rung, sizeof rung) < 0 && errno == EINTR)
        ;
    struct io_job *j = io_async.finished;
    io_async.finished = NULL;
    io_async.finished_tail = &io_async.finished;
    atomic_store(&io_async.nfinished, 0);
    pthread_mutex_unlock(&io_async.mu);
    int events = 0;
    while (j) {
        struct io_job *next = j->next;
        j->f->async_pending--;
        /* A read's data converted into the user's buffer here, in the engine's pass, so that a
         * registered representation's functions run on a thread of the program's MPI calls. */
        j->rc = mf_io_conv_end(j->conv, j->rc, &j->done);
        if (j->r) {
            MPI_Status *st = &mf_request_info(j->r)->r_status;
            st->MPI_SOURCE = MPI_ANY_SOURCE;
            st->MPI_TAG = MPI_ANY_TAG;
            mf_status_set_bytes(st, (MPI_Count)j->done);
            mf_request_end(j->r, j->rc);
        }
        mf_datatype_release(j->dt);
        free(j);
        j = next;
        events++;
    }
    return events;
}

/* Finished accesses whose requests the pass has not completed: no sleep. */
static long long io_async_sleep_ns(void *arg)
{
    (void)arg;
    return atomic_load(&io_async.nfinished) ? 0 : -1;
}

static mf_progress_source io_async_source = {
    .fd = -1, .poll = io_async_poll, .sleep_ns = io_async_sleep_ns};

/* The I/O thread and the engine's source, once per MPI session. */
static int io_async_start(const char *fn)
{
    if (io_async.running)
        return MPI_SUCCESS;
    static bool published;
    if (!published)
        mf_io_publish(io_async_def, sizeof io_async_def / sizeof io_async_def[0]);
    published = true;
    io_async.todo_tail = &io_async.todo;
    io_async.finished_tail = &io_async.finished;
    io_async.stop = false;
    if (io_async.efd < 0 && (io_async.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return mf_error(MPI_ERR_INTERN, "%s: no eventfd for the I/O thread: %s", fn,
                        strerror(errno));
    io_async_source.fd = io_async.efd;
    int rc = io_async_source.added ? MPI_SUCCESS : mf_progress_source_add(&io_async_source);
    if (rc)
        return rc;
    int err = pthread_create(&io_async.thread, NULL, io_thread, NULL);
    if (err)
        return mf_error(MPI_ERR_INTERN, "%s: cannot start the I/O thread: %s", fn, strerror(err));
    io_async.running = true;
    return MPI_SUCCESS;
}

/* Hands a job to the thread (the datatype held until the engine's pass frees the job). */
static void io_async_queue(struct io_job *j)
{
    mf_datatype_retain(j->dt);
    j->f->async_pending++;
    pthread_mutex_lock(&io_async.mu);
    atomic_fetch_add(&io_async.ncoll, j->coll);
    *io_async.todo_tail = j;
    io_async.todo_tail = &j->next;
    pthread_cond_signal(&io_async.cv);
    pthread_mutex_unlock(&io_async.mu);
}

/* Whether the thread may still take the library lock: while a collective access is queued or
 * being made (the count drops after the thread's last release for it). */
static bool io_async_needs_lock(void)
{
    return atomic_load(&io_async.ncoll) != 0;
}

mf_request *mf_io_request_new(mf_file *f)
{
    mf_request *r = mf_request_new(MF_REQ_COLL, f->comm);
    if (r) {
        mf_request_hold(r);
        mf_request_set_owner(r, MF_REQ_OWNER_FILE, (intptr_t)f);
    }
    return r;
}

int mf_io_start(mf_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count, mf_datatype *dt,
                mf_io_conv *conv, mf_request **out, const char *fn)
{
    size_t bytes = (size_t)count * mf_datatype_info(dt)->dt_size;
    int rc = mf_io_rw_check(f, write, at, bytes, fn);
    if (rc)
        return rc;
    if ((rc = io_async_start(fn)))
        return rc;
    struct io_job *j = calloc(1, sizeof *j);
    mf_request *r = j ? mf_io_request_new(f) : NULL;
    if (!r) {
        free(j);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a request", fn);
    }
    *j = (struct io_job){.f = f,
                         .write = write,
                         .at = at,
                         .buf = buf,
                         .count = count,
                         .dt = dt,
                         .r = r,
                         .fn = fn,
                         .conv = conv};
    io_async_queue(j);
    *out = r;
    return MPI_SUCCESS;
}

int mf_io_start_all(mf_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count,
                    mf_datatype *dt, mf_io_conv *conv, int rc, mf_request **out, const char *fn)
{
    /* Every rank comes here with the same file, in the same order, whatever its rc: what is
     * collective (the communicator) is made by all or fails for all. */
    int crc = io_async_start(fn);
    if (!crc && !f->async_comm)
        crc = mf_io_comm_dup(f->comm, &f->async_comm);
    if (crc)
        return rc ? rc : crc;
    struct io_job *j = calloc(1, sizeof *j);
    mf_request *r = j && !rc ? mf_io_request_new(f) : NULL;
    if (!j || (!rc && !r)) {
        /* Cannot take part: the others would wait for this rank; nothing better is left. */
        free(j);
        mf_fatal("%s: no memory for a nonblocking collective access", fn);
    }
    if (!mf_lock_enabled()) { /* while collectives are pending; this entry point's exit
                               * releases it once */
        mf_lock_enable_while(io_async_needs_lock);
        mf_lock();
    }
    *j = (struct io_job){.f = f,
                         .write = write,
                         .at = at,
                         .buf = buf,
                         .count = rc ? 0 : count,
                         .dt = dt ? dt : mf_datatype_get(MPI_BYTE), /* a bad datatype: none */
                         .r = r,
                         .fn = fn,
                         .coll = true,
                         .rc = rc,
                         .conv = rc ? NULL : conv};
    io_async_queue(j);
    *out = r;
    return rc;
}

static bool io_quiet(void *arg)
{
    return ((mf_file *)arg)->async_pending == 0;
}

int mf_io_quiesce(mf_file *f)
{
    return f->async_pending ? mf_progress_wait(io_quiet, f) : MPI_SUCCESS;
}

static bool io_no_collective(void *arg)
{
    (void)arg;
    return !io_async_needs_lock(); /* the count is atomic: no need for mu */
}

void mf_io_async_drain(void)
{
    /* Made while this caller waits in the engine, whose waits let the thread have the lock. */
    if (io_async.running)
        (void)mf_progress_wait(io_no_collective, NULL);
}

void mf_io_async_stop(void)
{
    if (!io_async.running)
        return;
    /* No collective access is left: the runtime's quiesce drained them, and none can start
     * after it. The join waits for independent ones only, which need no lock. */
    pthread_mutex_lock(&io_async.mu);
    io_async.stop = true;
    pthread_cond_signal(&io_async.cv);
    pthread_mutex_unlock(&io_async.mu);
    pthread_join(io_async.thread, NULL); /* after the accesses still queued */
    io_async.running = false;
    io_async_poll(NULL); /* their requests, for a program that frees them late */
    mf_progress_source_remove(&io_async_source);
    close(io_async.efd);
    io_async.efd = -1;
}
