/*
 * coll_nb.c — nonblocking collectives (MPI_I<coll>, MPI-4.0 section 6.12) and persistent
 * collectives (MPI_<Coll>_init, section 6.13), each with its _c form.
 *
 * Every pair shares the blocking function's checks (coll_nb.h): the body is the blocking entry
 * point's, and with `nb` set it hands the checked arguments to the schedule engine
 * (src/coll/nbc.h) instead of running the collective. Hints passed to *_init are accepted and
 * not used. On intercommunicators Ibarrier, Ibcast, Iallreduce (and their *_init) work; the
 * others return MPI_ERR_COMM saying so.
 */
#include "api/coll_nb.h"

static int api_barrier(MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc) {
        mf_nbc_args a = {.a_kind = MF_NBC_BARRIER};
        rc = mf_nbc_post(nb, &a, c, fn);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

MF_NBC_PAIR(Ibarrier, Barrier_init, api_barrier(comm, fn, nb), MPI_Comm comm)

/* ---- Bcast, gather, scatter ---- */

MF_NBC_PAIR(Ibcast, Bcast_init, mf_api_bcast(buf, count, type, root, comm, fn, nb), void *buf,
            int count, MPI_Datatype type, int root, MPI_Comm comm)
MF_NBC_PAIR(Ibcast_c, Bcast_init_c, mf_api_bcast(buf, count, type, root, comm, fn, nb), void *buf,
            MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)

MF_NBC_PAIR(Igather, Gather_init,
            mf_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, fn, nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Igather_c, Gather_init_c,
            mf_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, fn, nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Igatherv, Gatherv_init,
            mf_api_gatherv_int(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, fn,
                               nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Igatherv_c, Gatherv_init_c,
            mf_api_gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, fn, nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
            const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
            MPI_Comm comm)

MF_NBC_PAIR(Iscatter, Scatter_init,
            mf_api_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, fn, nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Iscatter_c, Scatter_init_c,
            mf_api_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, fn, nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Iscatterv, Scatterv_init,
            mf_api_scatterv_int(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, fn,
                                nb),
            const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
            void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
MF_NBC_PAIR(Iscatterv_c, Scatterv_init_c,
            mf_api_scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, fn, nb),
            const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
            MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
            MPI_Comm comm)

/* ---- Allgather, alltoall ---- */

MF_NBC_PAIR(Iallgather, Allgather_init,
            mf_api_allgather(sbuf, scount, stype, rbuf, rcount, false, NULL, NULL, rtype, comm, fn,
                             nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
            MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Iallgather_c, Allgather_init_c,
            mf_api_allgather(sbuf, scount, stype, rbuf, rcount, false, NULL, NULL, rtype, comm, fn,
                             nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
            MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Iallgatherv, Allgatherv_init,
            mf_api_allgatherv_int(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, fn, nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Iallgatherv_c, Allgatherv_init_c,
            mf_api_allgather(sbuf, scount, stype, rbuf, 0, true, rcounts, displs, rtype, comm, fn,
                             nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
            const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)

MF_NBC_PAIR(Ialltoall, Alltoall_init,
            mf_api_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, fn, nb),
            const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
            MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Ialltoall_c, Alltoall_init_c,
            mf_api_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, fn, nb),
            const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
            MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Ialltoallv, Alltoallv_init,
            mf_api_alltoallvw_int(sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls, NULL,
                                  rtype, comm, false, fn, nb),
            const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
            void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Ialltoallv_c, Alltoallv_init_c,
            mf_api_alltoallvw(sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls, NULL,
                              rtype, comm, false, fn, nb),
            const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
            MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
            MPI_Datatype rtype, MPI_Comm comm)
MF_NBC_PAIR(Ialltoallw, Alltoallw_init,
            mf_api_alltoallvw_int(sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf, rcounts,
                                  rdispls, rtypes, MPI_DATATYPE_NULL, comm, true, fn, nb),
            const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
            void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
            MPI_Comm comm)
MF_NBC_PAIR(Ialltoallw_c, Alltoallw_init_c,
            mf_api_alltoallvw(sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf, rcounts,
                              rdispls, rtypes, MPI_DATATYPE_NULL, comm, true, fn, nb),
            const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
            const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
            const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)

/* ---- Reductions ---- */

#define MF_NBC_RED(IName, InitName, kind, count_t)                                                 \
    MF_NBC_PAIR(                                                                                   \
        IName, InitName, mf_api_reduce(kind, sbuf, rbuf, count, type, op, 0, comm, fn, nb),        \
        const void *sbuf, void *rbuf, count_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)

MF_NBC_RED(Iallreduce, Allreduce_init, RED_ALLREDUCE, int)
MF_NBC_RED(Iallreduce_c, Allreduce_init_c, RED_ALLREDUCE, MPI_Count)
MF_NBC_RED(Iscan, Scan_init, RED_SCAN, int)
MF_NBC_RED(Iscan_c, Scan_init_c, RED_SCAN, MPI_Count)
MF_NBC_RED(Iexscan, Exscan_init, RED_EXSCAN, int)
MF_NBC_RED(Iexscan_c, Exscan_init_c, RED_EXSCAN, MPI_Count)

MF_NBC_PAIR(Ireduce, Reduce_init,
            mf_api_reduce(RED_REDUCE, sbuf, rbuf, count, type, op, root, comm, fn, nb),
            const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
            MPI_Comm comm)
MF_NBC_PAIR(Ireduce_c, Reduce_init_c,
            mf_api_reduce(RED_REDUCE, sbuf, rbuf, count, type, op, root, comm, fn, nb),
            const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
            MPI_Comm comm)

MF_NBC_PAIR(Ireduce_scatter, Reduce_scatter_init,
            mf_api_reduce_scatter_int(sbuf, rbuf, rcounts, type, op, comm, fn, nb),
            const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
            MPI_Comm comm)
MF_NBC_PAIR(Ireduce_scatter_c, Reduce_scatter_init_c,
            mf_api_reduce_scatter(sbuf, rbuf, 0, rcounts, false, type, op, comm, fn, nb),
            const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype type, MPI_Op op,
            MPI_Comm comm)
MF_NBC_PAIR(Ireduce_scatter_block, Reduce_scatter_block_init,
            mf_api_reduce_scatter(sbuf, rbuf, rcount, NULL, true, type, op, comm, fn, nb),
            const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
MF_NBC_PAIR(Ireduce_scatter_block_c, Reduce_scatter_block_init_c,
            mf_api_reduce_scatter(sbuf, rbuf, rcount, NULL, true, type, op, comm, fn, nb),
            const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype type, MPI_Op op,
            MPI_Comm comm)
