/*
 * Blocking neighborhood collectives (MPI-4.0 section 8.6): MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w) and their _c forms. Each entry point checks its arguments, turns
 * them into one block per neighbour and runs the exchange of src/comm/topo_neighbor.c.
 */
#include <stdlib.h>

#include "api/api.h"
#include "api/coll_check.h"
#include "api/topo_util.h"
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

/* Everything but alltoallw: uniform or per-neighbour counts/displacements (in elements). */
static int mf_nb_run(MPI_Comm comm, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                     const MPI_Aint *sdispls, MPI_Datatype stype, bool same_send, void *rbuf,
                     MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                     MPI_Datatype rtype, const char *fn)
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
                    : (mf_nb_block){same_send ? sbuf : mf_nb_at(sbuf, j, scount, sdt), scount,
                                    sdt};
        for (int i = 0; i < indeg; i++)
            rb[i] = rcounts ? (mf_nb_block){mf_nb_at(rbuf, rdispls[i], 1, rdt), rcounts[i], rdt}
                            : (mf_nb_block){mf_nb_at(rbuf, i, rcount, rdt), rcount, rdt};
        rc = mf_topo_neighbor_exchange(c, sb, rb);
    }
    free(sb);
    free(rb);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, true, recvbuf, recvcount,
                     NULL, NULL, recvtype, "MPI_Neighbor_allgather_c");
}
MF_API_ALIAS(Neighbor_allgather_c);

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, true, recvbuf, recvcount,
                     NULL, NULL, recvtype, "MPI_Neighbor_allgather");
}
MF_API_ALIAS(Neighbor_allgather);

int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, false, recvbuf, recvcount,
                     NULL, NULL, recvtype, "MPI_Neighbor_alltoall_c");
}
MF_API_ALIAS(Neighbor_alltoall_c);

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, false, recvbuf, recvcount,
                     NULL, NULL, recvtype, "MPI_Neighbor_alltoall");
}
MF_API_ALIAS(Neighbor_alltoall);

int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, true, recvbuf, 0, recvcounts,
                     displs, recvtype, "MPI_Neighbor_allgatherv_c");
}
MF_API_ALIAS(Neighbor_allgatherv_c);

int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    return mf_nb_run(comm, sendbuf, 0, sendcounts, sdispls, sendtype, false, recvbuf, 0,
                     recvcounts, rdispls, recvtype, "MPI_Neighbor_alltoallv_c");
}
MF_API_ALIAS(Neighbor_alltoallv_c);

/* The int-array forms widen their arrays to the _c forms' types first. */
static int mf_nb_len(MPI_Comm comm, bool in)
{
    mf_comm *c = mf_comm_get(comm);
    int indeg = 0, outdeg = 0, *s, *d;
    bool owned = false;
    if (!c || !c->c_topo || mf_topo_neighbors(c, &indeg, &s, &outdeg, &d, &owned))
        return 0;
    if (owned) {
        free(s);
        free(d);
    }
    return in ? indeg : outdeg;
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    bool failed = false;
    int n = mf_nb_len(comm, true);
    MPI_Count *rc = mf_coll_widen_counts(recvcounts, n, &failed);
    MPI_Aint *rd = mf_coll_widen_displs(displs, n, &failed);
    int r = failed ? mf_err_world(mf_error(MPI_ERR_NO_MEM, "MPI_Neighbor_allgatherv: out of "
                                           "memory"), "MPI_Neighbor_allgatherv")
                   : mf_nb_run(comm, sendbuf, sendcount, NULL, NULL, sendtype, true, recvbuf, 0,
                               rc, rd, recvtype, "MPI_Neighbor_allgatherv");
    free(rc);
    free(rd);
    return r;
}
MF_API_ALIAS(Neighbor_allgatherv);

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    bool failed = false;
    int nin = mf_nb_len(comm, true), nout = mf_nb_len(comm, false);
    MPI_Count *sc = mf_coll_widen_counts(sendcounts, nout, &failed);
    MPI_Aint *sd = mf_coll_widen_displs(sdispls, nout, &failed);
    MPI_Count *rc = mf_coll_widen_counts(recvcounts, nin, &failed);
    MPI_Aint *rd = mf_coll_widen_displs(rdispls, nin, &failed);
    int r = failed ? mf_err_world(mf_error(MPI_ERR_NO_MEM, "MPI_Neighbor_alltoallv: out of "
                                           "memory"), "MPI_Neighbor_alltoallv")
                   : mf_nb_run(comm, sendbuf, 0, sc, sd, sendtype, false, recvbuf, 0, rc, rd,
                               recvtype, "MPI_Neighbor_alltoallv");
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return r;
}
MF_API_ALIAS(Neighbor_alltoallv);

/* alltoallw: a datatype per neighbour and displacements in bytes. */
static int mf_nb_w(MPI_Comm comm, const void *sbuf, const MPI_Count *scounts,
                   const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                   const MPI_Count *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
                   const char *fn)
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
        rc = mf_topo_neighbor_exchange(c, sb, rb);
    free(sb);
    free(rb);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                              MPI_Comm comm)
{
    return mf_nb_w(comm, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, "MPI_Neighbor_alltoallw_c");
}
MF_API_ALIAS(Neighbor_alltoallw_c);

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm)
{
    bool failed = false;
    MPI_Count *sc = mf_coll_widen_counts(sendcounts, mf_nb_len(comm, false), &failed);
    MPI_Count *rc = mf_coll_widen_counts(recvcounts, mf_nb_len(comm, true), &failed);
    int r = failed ? mf_err_world(mf_error(MPI_ERR_NO_MEM, "MPI_Neighbor_alltoallw: out of "
                                           "memory"), "MPI_Neighbor_alltoallw")
                   : mf_nb_w(comm, sendbuf, sc, sdispls, sendtypes, recvbuf, rc, rdispls,
                             recvtypes, "MPI_Neighbor_alltoallw");
    free(sc);
    free(rc);
    return r;
}
MF_API_ALIAS(Neighbor_alltoallw);
