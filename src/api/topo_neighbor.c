/*
 * Neighborhood collectives (MPI-4.0 sections 8.6-8.8): MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w), their nonblocking (MPI_Ineighbor_*) and persistent
 * (MPI_Neighbor_*_init) forms, each with its _c form. The three forms share one body per
 * operation, as coll_nb.c does: it checks the arguments, turns them into one block per
 * neighbour, and then runs the blocking exchange of src/coll/topo_neighbor.c (nb == NULL) or
 * hands the blocks to the schedule engine (MF_NBC_NEIGHBOR, src/coll/nbc.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "api/api.h"
#include "api/coll_check.h"
#include "api/coll_nb.h"
#include "api/topo_util.h"
#include "coll/comm_build.h"
#include "comm/topo.h"

/* Resolves comm (with a topology) and its degrees. */
static int mf_nb_degrees(MPI_Comm comm, mf_comm **c, int *indeg, int *outdeg, const char *fn)
{
    mf_topology *t;
    int rc = mf_topo_get(comm, 0, c, &t, fn);
    if (rc)
        return rc;
    int *s, *d;
    bool owned;
    if ((rc = mf_topo_neighbors(*c, indeg, &s, outdeg, &d, &owned)))
        return rc;
    if (owned) {
        free(s);
        free(d);
    }
    return MPI_SUCCESS;
}

static mf_nb_block *mf_nb_alloc(int n, int *rc, const char *fn)
{
    mf_nb_block *b = calloc((size_t)n + 1, sizeof *b);
    if (!b && !*rc)
        *rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    return b;
}

static const char *mf_nb_at(const void *buf, MPI_Aint disp, MPI_Count count, const mf_datatype *dt)
{
    return (const char *)buf + disp * (MPI_Aint)count * mf_datatype_info(dt)->dt_extent;
}

/* The blocking exchange, or the blocks as an MF_NBC_NEIGHBOR collective (absolute addresses as
 * byte displacements from MPI_BOTTOM). */
static int mf_nb_go(mf_comm *c, const mf_nb_block *sb, int outdeg, const mf_nb_block *rb, int indeg,
                    const mf_nbc_call *nb, const char *fn)
{
    if (!nb)
        return mf_topo_neighbor_exchange(c, sb, rb);
    size_t n = (size_t)outdeg + (size_t)indeg + 1;
    MPI_Count *counts = malloc(n * sizeof *counts);
    MPI_Aint *displs = malloc(n * sizeof *displs);
    mf_datatype **dts = malloc(n * sizeof *dts);
    int rc = MPI_SUCCESS;
    if (!counts || !displs || !dts) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    for (int k = 0; k < outdeg + indeg; k++) {
        const mf_nb_block *b = k < outdeg ? &sb[k] : &rb[k - outdeg];
        counts[k] = b->count;
        displs[k] = (MPI_Aint)(uintptr_t)b->buf;
        dts[k] = b->dt;
    }
    mf_nbc_args a = {.a_kind = MF_NBC_NEIGHBOR,
                     .a_sbuf = MPI_BOTTOM,
                     .a_scounts = counts,
                     .a_sdispls = displs,
                     .a_sdts = dts,
                     .a_rbuf = MPI_BOTTOM,
                     .a_rcounts = counts + outdeg,
                     .a_rdispls = displs + outdeg,
                     .a_rdts = dts + outdeg};
    rc = mf_nbc_post(nb, &a, c, fn);
out:
    free(counts);
    free(displs);
    free(dts);
    return rc;
}

/* Everything but alltoallw: uniform or per-neighbour counts/displacements (in elements). */
static int mf_nb_run(MPI_Comm comm, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                     const MPI_Aint *sdispls, MPI_Datatype stype, bool same_send, void *rbuf,
                     MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                     MPI_Datatype rtype, const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL;
    mf_nb_block *sb = NULL, *rb = NULL;
    int indeg = 0, outdeg = 0;
    int rc = mf_nb_degrees(comm, &c, &indeg, &outdeg, fn);
    if (!rc && !scounts)
        rc = mf_coll_check_data(sbuf, scount, stype, &sdt, fn, "sendbuf", "sendcount", "sendtype");
    if (!rc && scounts) {
        rc = mf_coll_check_type(stype, &sdt, fn, "sendtype");
        if (!rc)
            rc = mf_coll_check_counts(scounts, outdeg, fn, "sendcounts");
        if (!rc && outdeg > 0 && !sdispls)
            rc = mf_error(MPI_ERR_ARG, "%s: sdispls is NULL", fn);
    }
    if (!rc && !rcounts)
        rc = mf_coll_check_data(rbuf, rcount, rtype, &rdt, fn, "recvbuf", "recvcount", "recvtype");
    if (!rc && rcounts) {
        rc = mf_coll_check_type(rtype, &rdt, fn, "recvtype");
        if (!rc)
            rc = mf_coll_check_counts(rcounts, indeg, fn, "recvcounts");
        if (!rc && indeg > 0 && !rdispls)
            rc = mf_error(MPI_ERR_ARG, "%s: displs is NULL", fn);
    }
    if (!rc) {
        sb = mf_nb_alloc(outdeg, &rc, fn);
        rb = mf_nb_alloc(indeg, &rc, fn);
    }
    if (!rc) {
        for (int j = 0; j < outdeg; j++)
            sb[j] = scounts ? (mf_nb_block){mf_nb_at(sbuf, sdispls[j], 1, sdt), scounts[j], sdt}
                            : (mf_nb_block){same_send ? sbuf : mf_nb_at(sbuf, j, scount, sdt),
                                            scount, sdt};
        for (int i = 0; i < indeg; i++)
            rb[i] = rcounts ? (mf_nb_block){mf_nb_at(rbuf, rdispls[i], 1, rdt), rcounts[i], rdt}
                            : (mf_nb_block){mf_nb_at(rbuf, i, rcount, rdt), rcount, rdt};
        rc = mf_nb_go(c, sb, outdeg, rb, indeg, nb, fn);
    }
    free(sb);
    free(rb);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

/* The int-array forms widen their arrays to the _c forms' types first. Called before the entry
 * point's MF_API_ENTER, so it takes the lock for the look-up (the progress thread retains and
 * releases communicators under it). */
static int mf_nb_len(MPI_Comm comm, bool in)
{
    MF_API_ENTER();
    mf_comm *c = mf_g.initialized ? mf_comm_get(comm) : NULL;
    int indeg = 0, outdeg = 0, *s, *d, n = 0;
    bool owned = false;
    if (c && c->c_topo && !mf_topo_neighbors(c, &indeg, &s, &outdeg, &d, &owned)) {
        n = in ? indeg : outdeg;
        if (owned) {
            free(s);
            free(d);
        }
    }
    MF_API_EXIT();
    return n;
}

/* alltoallw: a datatype per neighbour and displacements in bytes. */
static int mf_nb_w(MPI_Comm comm, const void *sbuf, const MPI_Count *scounts,
                   const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                   const MPI_Count *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
                   const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_nb_block *sb = NULL, *rb = NULL;
    int indeg = 0, outdeg = 0;
    int rc = mf_nb_degrees(comm, &c, &indeg, &outdeg, fn);
    if (!rc)
        rc = mf_coll_check_counts(scounts, outdeg, fn, "sendcounts");
    if (!rc)
        rc = mf_coll_check_counts(rcounts, indeg, fn, "recvcounts");
    if (!rc && ((outdeg > 0 && (!sdispls || !stypes)) || (indeg > 0 && (!rdispls || !rtypes))))
        rc = mf_error(MPI_ERR_ARG, "%s: a displacement or datatype array is NULL", fn);
    if (!rc) {
        sb = mf_nb_alloc(outdeg, &rc, fn);
        rb = mf_nb_alloc(indeg, &rc, fn);
    }
    for (int j = 0; !rc && j < outdeg; j++) {
        mf_datatype *dt;
        if (!(rc = mf_coll_check_type(stypes[j], &dt, fn, "sendtypes")))
            sb[j] = (mf_nb_block){(const char *)sbuf + sdispls[j], scounts[j], dt};
    }
    for (int i = 0; !rc && i < indeg; i++) {
        mf_datatype *dt;
        if (!(rc = mf_coll_check_type(rtypes[i], &dt, fn, "recvtypes")))
            rb[i] = (mf_nb_block){(char *)rbuf + rdispls[i], rcounts[i], dt};
    }
    if (!rc)
        rc = mf_nb_go(c, sb, outdeg, rb, indeg, nb, fn);
    free(sb);
    free(rb);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

static int mf_nb_allgatherv_int(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                const int rcounts[], const int displs[], MPI_Datatype rtype,
                                MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool failed = false;
    int n = mf_nb_len(comm, true);
    MPI_Count *rc = mf_coll_widen_counts(rcounts, n, &failed);
    MPI_Aint *rd = mf_coll_widen_displs(displs, n, &failed);
    int r = failed ? mf_err_no_object(mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn), fn)
                   : mf_nb_run(comm, sbuf, scount, NULL, NULL, stype, true, rbuf, 0, rc, rd, rtype,
                               fn, nb);
    free(rc);
    free(rd);
    return r;
}

static int mf_nb_alltoallv_int(const void *sbuf, const int scounts[], const int sdispls[],
                               MPI_Datatype stype, void *rbuf, const int rcounts[],
                               const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                               const char *fn, const mf_nbc_call *nb)
{
    bool failed = false;
    int nin = mf_nb_len(comm, true), nout = mf_nb_len(comm, false);
    MPI_Count *sc = mf_coll_widen_counts(scounts, nout, &failed);
    MPI_Aint *sd = mf_coll_widen_displs(sdispls, nout, &failed);
    MPI_Count *rc = mf_coll_widen_counts(rcounts, nin, &failed);
    MPI_Aint *rd = mf_coll_widen_displs(rdispls, nin, &failed);
    int r = failed ? mf_err_no_object(mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn), fn)
                   : mf_nb_run(comm, sbuf, 0, sc, sd, stype, false, rbuf, 0, rc, rd, rtype, fn, nb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return r;
}

static int mf_nb_alltoallw_int(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                               const char *fn, const mf_nbc_call *nb)
{
    bool failed = false;
    MPI_Count *sc = mf_coll_widen_counts(scounts, mf_nb_len(comm, false), &failed);
    MPI_Count *rc = mf_coll_widen_counts(rcounts, mf_nb_len(comm, true), &failed);
    int r = failed ? mf_err_no_object(mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn), fn)
                   : mf_nb_w(comm, sbuf, sc, sdispls, stypes, rbuf, rc, rdispls, rtypes, fn, nb);
    free(sc);
    free(rc);
    return r;
}

/* ---- Entry points: blocking, then the nonblocking / persistent pairs ---- */

/* One row per operation: names of the three forms, the shared body's call (which sees `fn` and
 * `nb`) and the parameters. */
#define MF_NB_ALL(Name, IName, InitName, call, ...)                                                \
    int PMPI_##Name(__VA_ARGS__)                                                                   \
    {                                                                                              \
        const char *fn = "MPI_" #Name;                                                             \
        const mf_nbc_call *nb = NULL;                                                              \
        return call;                                                                               \
    }                                                                                              \
    MF_API_ALIAS(Name);                                                                            \
    MF_NBC_PAIR(IName, InitName, call, __VA_ARGS__)

#define MF_NB_GATHER(sfx, count_t)                                                                 \
    MF_NB_ALL(Neighbor_allgather##sfx, Ineighbor_allgather##sfx, Neighbor_allgather_init##sfx,     \
              mf_nb_run(comm, sbuf, scount, NULL, NULL, stype, true, rbuf, rcount, NULL, NULL,     \
                        rtype, fn, nb),                                                            \
              const void *sbuf, count_t scount, MPI_Datatype stype, void *rbuf, count_t rcount,    \
              MPI_Datatype rtype, MPI_Comm comm)                                                   \
    MF_NB_ALL(Neighbor_alltoall##sfx, Ineighbor_alltoall##sfx, Neighbor_alltoall_init##sfx,        \
              mf_nb_run(comm, sbuf, scount, NULL, NULL, stype, false, rbuf, rcount, NULL, NULL,    \
                        rtype, fn, nb),                                                            \
              const void *sbuf, count_t scount, MPI_Datatype stype, void *rbuf, count_t rcount,    \
              MPI_Datatype rtype, MPI_Comm comm)

MF_NB_GATHER(, int)
MF_NB_GATHER(_c, MPI_Count)

MF_NB_ALL(Neighbor_allgatherv, Ineighbor_allgatherv, Neighbor_allgatherv_init,
          mf_nb_allgatherv_int(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, fn, nb),
          const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
          const int displs[], MPI_Datatype rtype, MPI_Comm comm)
MF_NB_ALL(Neighbor_allgatherv_c, Ineighbor_allgatherv_c, Neighbor_allgatherv_init_c,
          mf_nb_run(comm, sbuf, scount, NULL, NULL, stype, true, rbuf, 0, rcounts, displs, rtype,
                    fn, nb),
          const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
          const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)

MF_NB_ALL(Neighbor_alltoallv, Ineighbor_alltoallv, Neighbor_alltoallv_init,
          mf_nb_alltoallv_int(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                              fn, nb),
          const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
          void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
MF_NB_ALL(Neighbor_alltoallv_c, Ineighbor_alltoallv_c, Neighbor_alltoallv_init_c,
          mf_nb_run(comm, sbuf, 0, scounts, sdispls, stype, false, rbuf, 0, rcounts, rdispls, rtype,
                    fn, nb),
          const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype,
          void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype,
          MPI_Comm comm)

MF_NB_ALL(Neighbor_alltoallw, Ineighbor_alltoallw, Neighbor_alltoallw_init,
          mf_nb_alltoallw_int(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                              fn, nb),
          const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
          const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
          const MPI_Datatype rtypes[], MPI_Comm comm)
MF_NB_ALL(Neighbor_alltoallw_c, Ineighbor_alltoallw_c, Neighbor_alltoallw_init_c,
          mf_nb_w(comm, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, fn, nb),
          const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
          const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
          const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
