/*
 * rma_win.c — window objects: creation for the four flavors, the node-wide mapping of shared
 * windows, hints, and freeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll/coll.h"
#include "coll/comm_build.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/state.h"
#include "comm/info.h"
#include "comm/memkind.h"
#include "fabric/fabric.h"
#include "rma/rma.h"

mf_handle_table mf_win_table = MF_HANDLE_TABLE_INIT(MF_CLASS_WIN);

/* The hints MPI_Win_get_info reports, with the value used when the creator gave none. */
static const char *const mf_win_hints[][2] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"alloc_shared_noncontig", "false"},
};
#define MF_WIN_NHINTS ((int)(sizeof mf_win_hints / sizeof mf_win_hints[0]))

int mf_win_set_info(mf_win *w, const mf_info *info)
{
    int rc = MPI_SUCCESS;
    if (!w->w_info) {
        if ((rc = mf_info_new(&w->w_info)))
            return rc;
        for (int i = 0; i < MF_WIN_NHINTS && !rc; i++)
            rc = mf_info_set(w->w_info, mf_win_hints[i][0], mf_win_hints[i][1]);
    }
    for (int i = 0; i < MF_WIN_NHINTS && info && !rc; i++) {
        const char *v = mf_info_lookup(info, mf_win_hints[i][0]);
        if (v)
            rc = mf_info_set(w->w_info, mf_win_hints[i][0], v);
    }
    return rc;
}

/* The info key that chooses the fabric instance of a window's one-sided traffic (at creation
 * only: its private communicator's messages must keep to one instance per peer). */
#define MF_WIN_FABRIC_KEY "manifold_fabric"

/* The table of instances the window's private communicator sends over (comm.h: c_fabrics), from
 * info key manifold_fabric: "rma" (the default: MANIFOLD_RMA_FABRIC's route), "p2p" (the
 * point-to-point route), or the name of an instance in use ("tcp1"), which then carries the
 * window's traffic to every peer it is a rail of in either route (the others: as "rma"). */
static int mf_win_fabrics(const mf_info *info, mf_fabric *const **out, const char *fn)
{
    const char *v = info ? mf_info_lookup(info, MF_WIN_FABRIC_KEY) : NULL;
    if (!v || strcmp(v, "rma") == 0) {
        *out = mf_fabric_picks(MF_ROUTE_RMA);
        return MPI_SUCCESS;
    }
    if (strcmp(v, "p2p") == 0) {
        *out = mf_fabric_picks(MF_ROUTE_P2P);
        return MPI_SUCCESS;
    }
    if ((*out = mf_fabric_picks_via(v)))
        return MPI_SUCCESS;
    mf_fabric **used;
    int n = mf_fabrics_active(&used);
    char names[256] = "";
    for (int i = 0, len = 0; i < n && len < (int)sizeof names; i++)
        len += snprintf(names + len, sizeof names - (size_t)len, " %s", used[i]->name);
    return mf_error(MPI_ERR_INFO_VALUE,
                    "%s: info key " MF_WIN_FABRIC_KEY "='%s' is neither p2p, rma nor a fabric "
                    "instance in use here (instances:%s)",
                    fn, v, names);
}

/* Whether every rank of comm lives on this host. */
static bool mf_win_one_host(const mf_comm *comm)
{
    for (int i = 0; i < comm->c_size; i++)
        if (mf_g.node_of && mf_g.node_of[mf_comm_peer(comm, i)] != mf_g.node)
            return false;
    return true;
}

/* Maps one segment per host for the window's ranks there (coll.h: mf_host_segment_map, which
 * unlinks the name once the host's ranks have it mapped, so nothing stays in /dev/shm even if
 * the job dies later). Collective over the window; the outcome is agreed by all its ranks. */
static int mf_win_map_shared(mf_win *w, const char *fn)
{
    mf_comm *c = w->w_comm, *node = NULL;
    int n = c->c_size;
    if (!(w->w_seg_off = calloc((size_t)n, sizeof *w->w_seg_off)) ||
        !(w->w_slot_of = malloc((size_t)n * sizeof *w->w_slot_of)))
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory", fn);
    int rc = mf_comm_split(c, mf_g.node, c->c_rank, &node);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        w->w_slot_of[i] = -1;
    /* the slots first, a page for alignment of the first part */
    size_t slots = ((size_t)node->c_size * sizeof(struct mf_rma_slot) + 4095) & ~(size_t)4095;
    size_t total = slots;
    for (int i = 0; i < node->c_size; i++) {
        int r = mf_group_rank_of(c->c_group, node->c_group->g_world_ranks[i]);
        w->w_slot_of[r] = i;
        w->w_seg_off[r] = total;
        total += (size_t)w->w_sizes[r];
    }
    w->w_seg_len = total;
    void *seg = NULL;
    int err = mf_host_segment_map(node, w->w_seg_len, "rma", &seg) != MPI_SUCCESS;
    w->w_seg = seg;
    /* agreed over the whole window: a host that failed must not leave the others in it */
    int any = 1;
    rc = mf_coll_allreduce(&err, &any, 1, mf_datatype_get(MPI_INT), mf_op_get(MPI_MAX), c);
    mf_comm_release(node);
    if (!rc && any)
        rc = mf_error(MPI_ERR_NO_MEM, "%s: cannot map a shared segment of %zu bytes", fn,
                      w->w_seg_len);
    if (!rc) {
        w->w_base = w->w_seg + w->w_seg_off[c->c_rank];
        w->w_slots = (struct mf_rma_slot *)(void *)w->w_seg;
    }
    return rc;
}

static void mf_win_destroy(mf_win *w)
{
    mf_rma_native_free(w);
    if (w->w_seg)
        munmap(w->w_seg, w->w_seg_len);
    if (w->w_comm)
        mf_comm_release(w->w_comm);
    if (w->w_errhandler)
        mf_errhandler_release(w->w_errhandler);
    mf_info_release(w->w_info);
    free(w->w_sizes);
    free(w->w_units);
    free(w->w_seg_off);
    free(w->w_slot_of);
    free(w->w_pending);
    free(w->w_locked);
    free(w->w_start_ranks);
    free(w->w_done_reqs);
    free(w->w_hdr_in);
    if (w->w_handle)
        mf_handle_free(&mf_win_table, w->w_handle);
    free(w);
}

int mf_win_create(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, mf_info *info,
                  mf_comm *comm, void **base_out, mf_win **out, const char *fn)
{
    if (comm->c_is_inter)
        return mf_error(MPI_ERR_COMM, "%s: comm is an intercommunicator", fn);
    if (size < 0)
        return mf_error(MPI_ERR_SIZE, "%s: size=%ld is negative", fn, (long)size);
    if (disp_unit <= 0)
        return mf_error(MPI_ERR_DISP, "%s: disp_unit=%ld is not positive", fn, (long)disp_unit);
    if (flavor == MPI_WIN_FLAVOR_SHARED && !mf_win_one_host(comm))
        return mf_error(MPI_ERR_RMA_SHARED, "%s: the ranks of comm do not all share this host (%s)",
                        fn, mf_g.hostname);
    mf_fabric *const *fabrics;
    int rc = mf_win_fabrics(info, &fabrics, fn);
    if (rc)
        return rc;
    mf_win *w = calloc(1, sizeof *w);
    if (!w)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a window", fn);
    w->w_flavor = flavor;
    w->w_size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    w->w_disp_unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : disp_unit;
    rc = mf_comm_dup_internal(comm, &w->w_comm);
    if (rc) {
        w->w_comm = NULL;
        goto fail;
    }
    w->w_comm->c_fabrics = fabrics; /* before its first message */
    int n = comm->c_size;
    w->w_sizes = calloc((size_t)n, sizeof *w->w_sizes);
    w->w_units = calloc((size_t)n, sizeof *w->w_units);
    w->w_pending = calloc((size_t)n, sizeof *w->w_pending);
    w->w_locked = calloc((size_t)n, sizeof *w->w_locked);
    MPI_Aint *both = calloc(2 * (size_t)n, sizeof *both);
    if (!w->w_sizes || !w->w_units || !w->w_pending || !w->w_locked || !both) {
        free(both);
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a window", fn);
        goto fail;
    }
    MPI_Aint mine[2] = {w->w_size, w->w_disp_unit};
    rc = mf_coll_allgather(mine, 2, mf_datatype_get(MPI_AINT), both, 2, mf_datatype_get(MPI_AINT),
                           w->w_comm);
    for (int i = 0; i < n; i++) {
        w->w_sizes[i] = both[2 * i];
        w->w_units[i] = both[2 * i + 1];
    }
    free(both);
    if (rc)
        goto fail;
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        w->w_base = base;
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
    case MPI_WIN_FLAVOR_SHARED:
        rc = mf_win_map_shared(w, fn);
        break;
    default: /* dynamic */
        w->w_base = MPI_BOTTOM;
        break;
    }
    if (rc)
        goto fail;
    if ((rc = mf_win_set_info(w, info)))
        goto fail;
    /* Creation-only keys, kept to be read back: the fabric, and the kinds of memory the program
     * promised to use with the window (MPI_Win_get_info narrows the reported kinds by it). */
    static const char *const creation_keys[] = {MF_WIN_FABRIC_KEY, MF_MEMKIND_ASSERT_KEY};
    for (size_t k = 0; k < sizeof creation_keys / sizeof creation_keys[0]; k++) {
        const char *v = info ? mf_info_lookup(info, creation_keys[k]) : NULL;
        if (v && (rc = mf_info_set(w->w_info, creation_keys[k], v)))
            goto fail;
    }
    w->w_a_size = w->w_size;
    w->w_a_unit = (int)w->w_disp_unit;
    w->w_a_flavor = flavor;
    w->w_a_model = MPI_WIN_UNIFIED;
    w->w_errhandler = mf_errhandler_get(MPI_ERRORS_ARE_FATAL);
    mf_errhandler_retain(w->w_errhandler);
    if (!(w->w_handle = mf_handle_alloc(&mf_win_table, w))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a window handle", fn);
        goto fail;
    }
    /* native descriptors first: a failure then leaves nothing served */
    if ((rc = mf_rma_native_open(w)) || (rc = mf_rma_window_open(w)))
        goto fail;
    if (base_out)
        *base_out = w->w_base;
    *out = w;
    return MPI_SUCCESS;
fail:
    mf_win_destroy(w);
    return rc;
}

int mf_win_free(mf_win *w, const char *fn)
{
    (void)fn;
    /* every rank's operations are complete at their targets before anyone stops serving */
    int rc = mf_rma_flush(w, -1);
    if (!rc)
        rc = mf_coll_barrier(w->w_comm);
    int rc2 = mf_rma_window_close(w);
    mf_win_destroy(w);
    return rc ? rc : rc2;
}

/* Where rank's part of the window is in this process's address space, or NULL when this
 * process cannot load and store it: its own memory, and in windows that allocated their
 * memory, that of every rank on this host (one segment per host, mf_win_map_shared). */
static char *mf_win_local_base(const mf_win *w, int rank)
{
    if (w->w_flavor == MPI_WIN_FLAVOR_CREATE)
        return rank == w->w_comm->c_rank ? (char *)w->w_base : NULL;
    return w->w_slot_of[rank] >= 0 ? w->w_seg + w->w_seg_off[rank] : NULL;
}

int mf_win_shared_query(mf_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base,
                        const char *fn)
{
    int n = w->w_comm->c_size;
    if (w->w_flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return mf_error(MPI_ERR_RMA_FLAVOR,
                        "%s: win was created by MPI_Win_create_dynamic (its memory is attached "
                        "piece by piece, not one part per rank)",
                        fn);
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= n))
        return mf_error(MPI_ERR_RANK, "%s: rank=%d is not in the window's group of %d", fn, rank,
                        n);
    if (rank == MPI_PROC_NULL) { /* the lowest rank with memory, reachable from here or not */
        for (int i = 0; i < n && rank == MPI_PROC_NULL; i++)
            if (w->w_sizes[i] > 0)
                rank = i;
    }
    char *at = rank == MPI_PROC_NULL ? NULL : mf_win_local_base(w, rank);
    *size = at ? w->w_sizes[rank] : 0;
    *disp_unit = at ? w->w_units[rank] : 0;
    *base = *size > 0 ? at : NULL; /* an empty part has no address (MPICH: the same) */
    return MPI_SUCCESS;
}
