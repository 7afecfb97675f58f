/*
 * rma_win.c — window objects: the four flavors, their attributes, shared memory the ranks load
 * and store through, dynamic windows addressed by absolute address, names, hints, attributes
 * with callbacks, error handlers, and the error class of each kind of misuse.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;

static void check_attrs(MPI_Win win, MPI_Comm comm, void *base, MPI_Aint bytes, int unit,
                        int flavor)
{
    void *v;
    int flag = 0;
    MF_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    MF_CHECK(flag && v == base, "WIN_BASE %p, want %p", v, base);
    MF_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    MF_CHECK(flag && *(MPI_Aint *)v == bytes, "WIN_SIZE %ld, want %ld", (long)*(MPI_Aint *)v,
             (long)bytes);
    MF_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    MF_CHECK(flag && *(int *)v == unit, "WIN_DISP_UNIT %d, want %d", *(int *)v, unit);
    MF_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MF_CHECK(flag && *(int *)v == flavor, "WIN_CREATE_FLAVOR %d, want %d", *(int *)v, flavor);
    MF_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    MF_CHECK(flag && *(int *)v == MPI_WIN_UNIFIED, "WIN_MODEL %d", *(int *)v);
    MPI_Group g, wg;
    int cmp;
    MF_CHECK_MPI(MPI_Win_get_group(win, &g));
    MPI_Comm_group(comm, &wg);
    MPI_Group_compare(g, wg, &cmp);
    MF_CHECK(cmp == MPI_IDENT, "window group differs from the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

static int deleted;
static int del_fn(MPI_Win w, int keyval, void *val, void *extra)
{
    (void)w, (void)keyval, (void)extra;
    deleted += *(int *)val;
    return MPI_SUCCESS;
}

static int handled;
static void win_eh(MPI_Win *w, int *code, ...)
{
    (void)w;
    handled = *code;
}

static void shared(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    int *mine = NULL;
    MPI_Win win;
    /* rank 0 of the node contributes nothing: MPI_PROC_NULL must find rank 1 */
    MPI_Aint bytes = nr == 0 && ns > 1 ? 0 : (MPI_Aint)(4 * sizeof(int));
    MF_CHECK_MPI(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    check_attrs(win, node, mine, bytes, sizeof(int), MPI_WIN_FLAVOR_SHARED);
    for (int i = 0; i < (int)(bytes / sizeof(int)); i++)
        mine[i] = 100 * nr + i;
    MPI_Win_fence(0, win);
    MPI_Barrier(node);
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz;
        int unit;
        int *p;
        MF_CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &unit, &p));
        MF_CHECK(unit == sizeof(int), "shared_query disp_unit %d", unit);
        MF_CHECK(sz > 0 || !p, "shared_query of rank %d's empty part gave %p, not NULL", r,
                 (void *)p);
        for (int i = 0; i < (int)(sz / sizeof(int)); i++)
            MF_CHECK(p[i] == 100 * r + i, "shared load of rank %d [%d] = %d", r, i, p[i]);
    }
    MPI_Aint sz;
    MPI_Aint unit_c;
    int *p;
    MF_CHECK_MPI(MPI_Win_shared_query_c(win, MPI_PROC_NULL, &sz, &unit_c, &p));
    MF_CHECK(sz == 4 * (MPI_Aint)sizeof(int) && p[0] == (ns > 1 ? 100 : 0),
             "shared_query(MPI_PROC_NULL) size %ld first %d", (long)sz, p[0]);
    /* store into the next rank's part, load it there */
    MPI_Barrier(node);
    int nxt = (nr + 1) % ns;
    int *q;
    int u;
    MF_CHECK_MPI(MPI_Win_shared_query(win, nxt, &sz, &u, &q));
    if (sz)
        q[0] = -nr - 1;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int from = (nr + ns - 1) % ns;
    if (bytes)
        MF_CHECK(mine[0] == -from - 1, "store from rank %d not seen: %d", from, mine[0]);
    MPI_Win_fence(0, win);
    MF_CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);
}

/* MPI_Win_allocate_shared over MPI_COMM_WORLD: fine on one host, MPI_ERR_RMA_SHARED when the
 * world spans hosts (the twohosts tests), agreed by every rank. */
static void across_hosts(void)
{
    MPI_Comm node;
    int ns;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &ns);
    MPI_Comm_free(&node);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *p, cls;
    MPI_Win win;
    int rc =
        MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win);
    MPI_Error_class(rc, &cls);
    if (ns == size)
        MF_CHECK(rc == MPI_SUCCESS && MPI_Win_free(&win) == MPI_SUCCESS,
                 "allocate_shared on one host failed");
    else
        MF_CHECK(cls == MPI_ERR_RMA_SHARED, "allocate_shared across hosts: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void dynamic(void)
{
    MPI_Win win;
    MF_CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_COMM_WORLD, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    long *buf = calloc(4, sizeof(long));
    MF_CHECK_MPI(MPI_Win_attach(win, buf, 4 * sizeof(long)));
    MPI_Aint addr, *all = malloc((size_t)size * sizeof *all);
    MPI_Get_address(buf, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    int t = (rank + 1) % size;
    long v = 1000 + rank;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    MF_CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, t, MPI_Aint_add(all[t], sizeof(long)), 1, MPI_LONG, win));
    MPI_Win_unlock(t, win);
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (rank + size - 1) % size;
    MF_CHECK(buf[1] == 1000 + from, "dynamic put landed %ld, want %d", buf[1], 1000 + from);
    /* MPI_PROC_NULL in passive-target synchronisation: no-ops around an operation to it (as
     * MPICH's rma/rmanull does); a bad lock type is still refused. */
    MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    MF_CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, win));
    MF_CHECK_MPI(MPI_Win_flush(MPI_PROC_NULL, win));
    MF_CHECK_MPI(MPI_Win_unlock(MPI_PROC_NULL, win));
    MF_CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int cls, rc = MPI_Win_lock(77, MPI_PROC_NULL, 0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_LOCKTYPE, "lock type 77 of MPI_PROC_NULL: class %d", cls);
    rc = MPI_Win_shared_query(win, rank, &(MPI_Aint){0}, &(int){0}, &(long *){0});
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_FLAVOR, "shared_query on a dynamic window: class %d", cls);
    MF_CHECK_MPI(MPI_Win_detach(win, buf));
    MF_CHECK_MPI(MPI_Win_free(&win));
    free(buf);
    free(all);
}

/* MPI-4.1: an allocated window's parts on this host are reachable by load and store (Manifold
 * maps one segment per host), those on other hosts are not (size 0, NULL). Each rank's part
 * (64 bytes, unit 8) holds its rank in mem[0]. */
static void allocated_query(MPI_Win win, double *mem)
{
    MPI_Comm node;
    MPI_Group wg, ng;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    mem[0] = rank;
    MPI_Win_fence(0, win); /* the stores are done everywhere */
    for (int r = 0; r < size; r++) {
        int on_host;
        MPI_Group_translate_ranks(wg, 1, &r, ng, &on_host);
        MPI_Aint qsize = -1, qunit = -1;
        double *q = NULL;
        MF_CHECK_MPI(MPI_Win_shared_query_c(win, r, &qsize, &qunit, &q));
        if (on_host != MPI_UNDEFINED)
            MF_CHECK(q && qsize == 64 && qunit == 8 && q[0] == r && (r != rank || q == mem),
                     "shared_query of rank %d's part on this host: %p %ld %ld", r, (void *)q,
                     (long)qsize, (long)qunit);
        else
            MF_CHECK(!q && qsize == 0 && qunit == 0,
                     "shared_query of rank %d's part on another host: %p %ld %ld", r, (void *)q,
                     (long)qsize, (long)qunit);
    }
    MPI_Win_fence(0, win);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
}

/* A window over a subcommunicator (the odd and the even world ranks), two of them in flight
 * at once: ranks of the window are the subcommunicator's; PSCW groups are translated. */
static void split(void)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sub); /* reversed order inside */
    int sr, ss;
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &ss);
    int a[2] = {-1, -1}, b[2] = {-1, -1};
    MPI_Win wa, wb;
    MF_CHECK_MPI(MPI_Win_create(a, sizeof a, sizeof(int), MPI_INFO_NULL, sub, &wa));
    MF_CHECK_MPI(MPI_Win_create(b, sizeof b, sizeof(int), MPI_INFO_NULL, sub, &wb));
    MPI_Group g, pg, ng;
    MPI_Win_get_group(wa, &g);
    int p = (sr + ss - 1) % ss, n = (sr + 1) % ss;
    MPI_Group_incl(g, 1, &p, &pg);
    MPI_Group_incl(g, 1, &n, &ng);
    MF_CHECK_MPI(MPI_Win_post(pg, 0, wa));
    MF_CHECK_MPI(MPI_Win_start(ng, 0, wa));
    MF_CHECK_MPI(MPI_Win_lock_all(0, wb));
    int va = 10 + sr, vb = 20 + sr;
    MF_CHECK_MPI(MPI_Put(&va, 1, MPI_INT, n, 1, 1, MPI_INT, wa));
    MF_CHECK_MPI(MPI_Accumulate(&vb, 1, MPI_INT, n, 0, 1, MPI_INT, MPI_REPLACE, wb));
    MF_CHECK_MPI(MPI_Win_unlock_all(wb));
    MF_CHECK_MPI(MPI_Win_complete(wa));
    MF_CHECK_MPI(MPI_Win_wait(wa));
    MPI_Barrier(sub);
    MF_CHECK(a[1] == 10 + p && b[0] == 20 + p, "split windows: a[1]=%d b[0]=%d from %d", a[1], b[0],
             p);
    MPI_Group_free(&g);
    MPI_Group_free(&pg);
    MPI_Group_free(&ng);
    MF_CHECK_MPI(MPI_Win_free(&wb));
    MF_CHECK_MPI(MPI_Win_free(&wa));
    MPI_Comm_free(&sub);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win win;
    int buf[4], cls, rc;
    rc = MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_DISP, "disp_unit 0: class %d", cls);
    rc = MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_SIZE, "size -1: class %d", cls);
    rc = MPI_Win_free(&(MPI_Win){(MPI_Win)0xa4000123});
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_WIN, "bad handle: class %d", cls);

    MF_CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MF_CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "put outside an epoch: class %d", cls);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    rc = MPI_Put(buf, 1, MPI_INT, 0, 4, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_RANGE, "put past the end: class %d", cls);
    rc = MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_TYPE, "accumulate int onto float: class %d", cls);
    /* ...but with nothing to combine, any types pass (MPICH's rma/badrma): no elements, or
     * elements of no bytes. */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MF_CHECK_MPI(MPI_Accumulate(buf, 0, MPI_INT, 0, 0, 0, MPI_FLOAT, MPI_SUM, win));
    MF_CHECK_MPI(MPI_Accumulate(buf, 1, empty, 0, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MF_CHECK_MPI(MPI_Get_accumulate(buf, 0, MPI_INT, buf, 1, empty, 0, 0, 2, empty, MPI_SUM, win));
    MPI_Type_free(&empty);
    /* no elements: nothing to combine, accepted whatever the op (MPICH does; mpi4py relies on
     * it); one element of MPI_BYTE with MPI_SUM is MPI_ERR_OP */
    char c0 = 0, r0 = 0;
    MF_CHECK_MPI(
        MPI_Get_accumulate(&c0, 0, MPI_BYTE, &r0, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, MPI_SUM, win));
    rc = MPI_Get_accumulate(&c0, 1, MPI_BYTE, &r0, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_SUM, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_BYTE: class %d", cls);
    rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "second lock: class %d", cls);
    /* the atomics take one element of a predefined type; compare-and-swap an integer, logical or
     * byte one (MPI_CHAR too, as MPICH allows) */
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_BYTE, &four);
    MPI_Type_commit(&four);
    int cmp = 0, res = 0;
    float fval = 0, fres = 0;
    struct {
        const char *what;
        int rc;
    } atomics[] = {
        {"CAS of a derived type", MPI_Compare_and_swap(buf, &cmp, &res, four, 0, 0, win)},
        {"CAS of MPI_FLOAT", MPI_Compare_and_swap(&fval, &fval, &fres, MPI_FLOAT, 0, 0, win)},
        {"fetch_and_op of a derived type",
         MPI_Fetch_and_op(buf, &res, four, 0, 0, MPI_REPLACE, win)},
    };
    for (size_t i = 0; i < sizeof atomics / sizeof atomics[0]; i++) {
        MPI_Error_class(atomics[i].rc, &cls);
        MF_CHECK(cls == MPI_ERR_TYPE, "%s: class %d, want MPI_ERR_TYPE", atomics[i].what, cls);
    }
    MPI_Type_free(&four);
    char ccmp = 0, cres = 1;
    MF_CHECK_MPI(MPI_Compare_and_swap(&ccmp, &ccmp, &cres, MPI_CHAR, 0, 0, win));
    MF_CHECK_MPI(MPI_Fetch_and_op(&fval, &fres, MPI_FLOAT, 0, 0, MPI_SUM, win));
    MPI_Win_unlock(0, win);

    /* A fence followed by a lock opened no epoch: once the lock ends, operations are refused
     * again. A fence followed by operations did, and a lock inside it is refused. */
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
    MF_CHECK_MPI(MPI_Get(&res, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MF_CHECK_MPI(MPI_Win_unlock(0, win));
    rc = MPI_Get(&res, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "get after fence, lock, unlock: class %d", cls);
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Get(&res, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "lock inside a fence epoch with operations: class %d", cls);
    rc = MPI_Win_lock_all(0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "lock_all inside a fence epoch with operations: class %d",
             cls);
    MF_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    rc = MPI_Win_lock(77, 0, 0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_LOCKTYPE, "lock type 77: class %d", cls);
    /* MPI-4.1: a created window answers for the memory this process can load and store: its
     * own part only. */
    for (int r = 0; r < size; r++) {
        MPI_Aint qsize = -1;
        int qunit = -1, *qbase = NULL;
        MF_CHECK_MPI(MPI_Win_shared_query(win, r, &qsize, &qunit, &qbase));
        if (r == rank)
            MF_CHECK(qbase == buf && qsize == (MPI_Aint)sizeof buf && qunit == sizeof(int),
                     "shared_query of the own part of a created window: %p %ld %d", (void *)qbase,
                     (long)qsize, qunit);
        else
            MF_CHECK(!qbase && qsize == 0 && qunit == 0,
                     "shared_query of rank %d's part of a created window: %p %ld %d", r,
                     (void *)qbase, (long)qsize, qunit);
    }
    rc = MPI_Win_attach(win, buf, 4);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_FLAVOR, "attach to a created window: class %d", cls);

    /* user handler, called by the library and by MPI_Win_call_errhandler */
    MPI_Errhandler eh, got;
    MF_CHECK_MPI(MPI_Win_create_errhandler(win_eh, &eh));
    MF_CHECK_MPI(MPI_Win_set_errhandler(win, eh));
    MF_CHECK_MPI(MPI_Win_get_errhandler(win, &got));
    MF_CHECK(got == eh, "get_errhandler returned another handler");
    MPI_Errhandler_free(&got);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    MF_CHECK(handled == MPI_ERR_OTHER, "user handler saw %d", handled);
    handled = 0;
    MPI_Win_unlock(0, win);
    MPI_Error_class(handled, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "user handler on unlock without lock saw class %d", cls);
    MPI_Errhandler_free(&eh);
    MF_CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The same checks where put and get take the same-host one-copy path (an allocated window):
 * each bad argument must still be reported, with its class, and nothing written. */
static void errors_direct(void)
{
    MPI_Win win;
    int *base, buf[4] = {1, 2, 3, 4}, cls, rc;
    MF_CHECK_MPI(
        MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MF_CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 4; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Put(buf, 1, MPI_INT, rank, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "direct put outside an epoch: class %d", cls);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    struct {
        const char *what;
        int count, tcount, rank, want;
        MPI_Aint disp;
    } bad[] = {
        {"past the end", 2, 2, rank, MPI_ERR_RMA_RANGE, 3},
        {"negative disp", 1, 1, rank, MPI_ERR_RMA_RANGE, -1},
        {"disp overflowing", 1, 1, rank, MPI_ERR_RMA_RANGE, (MPI_Aint)1 << 62},
        {"sizes differ", 2, 1, rank, MPI_ERR_TYPE, 0},
        {"negative count", -1, -1, rank, MPI_ERR_COUNT, 0},
        {"rank outside", 1, 1, size, MPI_ERR_RANK, 0},
        {"rank unlocked", 1, 1, (rank + 1) % size, MPI_ERR_RMA_SYNC, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i].want == MPI_ERR_RMA_SYNC && size == 1)
            continue;
        rc = MPI_Put(buf, bad[i].count, MPI_INT, bad[i].rank, bad[i].disp, bad[i].tcount, MPI_INT,
                     win);
        MPI_Error_class(rc, &cls);
        MF_CHECK(cls == bad[i].want, "direct put %s: class %d, want %d", bad[i].what, cls,
                 bad[i].want);
        rc = MPI_Get(buf, bad[i].count, MPI_INT, bad[i].rank, bad[i].disp, bad[i].tcount, MPI_INT,
                     win);
        MPI_Error_class(rc, &cls);
        MF_CHECK(cls == bad[i].want, "direct get %s: class %d, want %d", bad[i].what, cls,
                 bad[i].want);
    }
    MPI_Datatype unc;
    MPI_Type_contiguous(1, MPI_INT, &unc);
    rc = MPI_Put(buf, 1, unc, rank, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_TYPE, "direct put of an uncommitted type: class %d", cls);
    MPI_Type_free(&unc);
    MF_CHECK_MPI(MPI_Put(buf, 2, MPI_INT, rank, 2, 2, MPI_INT, win));
    MPI_Win_unlock(rank, win);
    MF_CHECK(base[0] == -1 && base[1] == -1 && base[2] == 1 && base[3] == 2,
             "direct puts: window %d %d %d %d, want -1 -1 1 2", base[0], base[1], base[2], base[3]);
    /* the one-copy path counts as an operation of the fence epoch too */
    MF_CHECK_MPI(MPI_Win_fence(0, win));
    MF_CHECK_MPI(MPI_Put(buf, 1, MPI_INT, rank, 0, 1, MPI_INT, win));
    rc = MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_RMA_SYNC, "lock after a direct put in a fence epoch: class %d", cls);
    MF_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MF_CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* create: attributes, name, hints, a user attribute deleted at free */
    double buf[8];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win win;
    MF_CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(double), info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    check_attrs(win, MPI_COMM_WORLD, buf, sizeof buf, sizeof(double), MPI_WIN_FLAVOR_CREATE);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MF_CHECK_MPI(MPI_Win_get_name(win, name, &len));
    MF_CHECK(len == 0, "unnamed window has name '%s'", name);
    MF_CHECK_MPI(MPI_Win_set_name(win, "halo"));
    MF_CHECK_MPI(MPI_Win_get_name(win, name, &len));
    MF_CHECK(len == 4 && !strcmp(name, "halo"), "name '%s'", name);
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag;
    MF_CHECK_MPI(MPI_Win_get_info(win, &used));
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, val, &flag);
    MF_CHECK(flag && !strcmp(val, "true"), "no_locks '%s'", flag ? val : "(absent)");
    MPI_Info_get(used, "accumulate_ops", MPI_MAX_INFO_VAL, val, &flag);
    MF_CHECK(flag && !strcmp(val, "same_op_no_op"), "accumulate_ops default '%s'",
             flag ? val : "(absent)");
    MPI_Info_free(&used);
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    MF_CHECK_MPI(MPI_Win_set_info(win, info));
    MPI_Info_free(&info);
    MF_CHECK_MPI(MPI_Win_get_info(win, &used));
    MPI_Info_get(used, "same_size", MPI_MAX_INFO_VAL, val, &flag);
    MF_CHECK(flag && !strcmp(val, "true"), "same_size after set_info '%s'", flag ? val : "-");
    MPI_Info_free(&used);
    int key, seven = 7;
    MF_CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL));
    MF_CHECK_MPI(MPI_Win_set_attr(win, key, &seven));
    int *gotp;
    MF_CHECK_MPI(MPI_Win_get_attr(win, key, &gotp, &flag));
    MF_CHECK(flag && gotp == &seven, "user attribute not returned");
    MF_CHECK_MPI(MPI_Win_free(&win));
    MF_CHECK(deleted == 7, "delete callback not run at MPI_Win_free (%d)", deleted);
    MF_CHECK_MPI(MPI_Win_free_keyval(&key));

    /* allocate, with the large-count form */
    double *mem;
    MF_CHECK_MPI(MPI_Win_allocate_c(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MF_CHECK(mem != NULL && ((size_t)mem % 8) == 0, "allocate returned %p", (void *)mem);
    check_attrs(win, MPI_COMM_WORLD, mem, 64, 8, MPI_WIN_FLAVOR_ALLOCATE);
    mem[7] = 1.5;
    allocated_query(win, mem);
    MF_CHECK_MPI(MPI_Win_free(&win));

    shared();
    across_hosts();
    dynamic();
    split();
    errors();
    errors_direct();
    return mftest_finish();
}
