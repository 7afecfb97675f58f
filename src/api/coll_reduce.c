/*
 * coll_reduce.c — MPI collective entry points that reduce (MPI-4.0 sections 6.9-6.11): Reduce,
 * Allreduce, Reduce_scatter(_block), Scan, Exscan, each with its _c form. Checks: communicator,
 * root, count, datatype, op (and that the op is defined on the type), buffers with the
 * MPI_IN_PLACE rules of each operation; then the internal collective (src/coll/coll.h), or with
 * a non-NULL `nb` (the nonblocking and persistent forms, coll_nb.h) a schedule (src/coll/nbc.h).
 */
#include <stdlib.h>

#include "api/coll_check.h"
#include "api/coll_nb.h"

int mf_api_reduce(enum mf_red_kind kind, const void *sbuf, void *rbuf, MPI_Count count,
                  MPI_Datatype type, MPI_Op oph, int root, MPI_Comm comm, const char *fn,
                  const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_op *op = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && (kind == RED_SCAN || kind == RED_EXSCAN) && c->c_is_inter)
        rc = mf_error(MPI_ERR_COMM,
                      "%s: comm is an intercommunicator (scans need an "
                      "intracommunicator)",
                      fn);
    if (!rc && kind == RED_REDUCE)
        rc = mf_coll_check_root(c, root, fn);
    enum mf_coll_role role = kind == RED_REDUCE && !rc ? mf_coll_role(c, root) : MF_ROLE_ROOT;
    if (!rc && role != MF_ROLE_NONE) {
        bool in_place = sbuf == MPI_IN_PLACE;
        /* who has a receive buffer: everyone except the non-roots of a reduce */
        bool receives = kind != RED_REDUCE || role == MF_ROLE_ROOT;
        /* who has a send buffer: everyone except an intercommunicator root */
        bool sends = !(kind == RED_REDUCE && role == MF_ROLE_ROOT && c->c_is_inter);
        if (in_place && (!receives || c->c_is_inter))
            rc = c->c_is_inter ? mf_coll_check_in_place_intra(c, fn, "sendbuf")
                               : mf_error(MPI_ERR_BUFFER,
                                          "%s: sendbuf is MPI_IN_PLACE on a non-root process", fn);
        if (!rc && sends && !in_place)
            rc = mf_coll_check_data(sbuf, count, type, &dt, fn, "sendbuf", "count", "datatype");
        if (!rc && receives)
            rc = mf_coll_check_data(rbuf, count, type, &dt, fn, "recvbuf", "count", "datatype");
        if (!rc && receives && sends)
            rc = mf_coll_check_alias(sbuf, rbuf, count > 0, fn);
        if (!rc)
            rc = mf_coll_check_op(oph, dt, &op, fn);
        if (!rc && nb) {
            static const mf_nbc_kind kinds[] = {[RED_REDUCE] = MF_NBC_REDUCE,
                                                [RED_ALLREDUCE] = MF_NBC_ALLREDUCE,
                                                [RED_SCAN] = MF_NBC_SCAN,
                                                [RED_EXSCAN] = MF_NBC_EXSCAN};
            mf_nbc_args a = {.a_kind = kinds[kind],
                             .a_sbuf = sbuf,
                             .a_sdt = dt,
                             .a_rbuf = rbuf,
                             .a_rcount = count,
                             .a_rdt = dt,
                             .a_op = op,
                             .a_root = root};
            rc = mf_nbc_post(nb, &a, c, fn);
        } else if (!rc) {
            switch (kind) {
            case RED_REDUCE:
                rc = mf_coll_reduce(sbuf, rbuf, count, dt, op, root, c);
                break;
            case RED_ALLREDUCE:
                rc = mf_coll_allreduce(sbuf, rbuf, count, dt, op, c);
                break;
            case RED_SCAN:
                rc = mf_coll_scan(sbuf, rbuf, count, dt, op, c);
                break;
            case RED_EXSCAN:
                rc = mf_coll_exscan(sbuf, rbuf, count, dt, op, c);
                break;
            }
        }
    }
    if (!rc && nb && role == MF_ROLE_NONE) {
        mf_nbc_args a = {.a_kind = MF_NBC_REDUCE, .a_root = root};
        rc = mf_nbc_post(nb, &a, c, fn); /* intercomm: not offered, says so */
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm)
{
    return mf_api_reduce(RED_REDUCE, sbuf, rbuf, count, type, op, root, comm, "MPI_Reduce", NULL);
}
MF_API_ALIAS(Reduce);

int PMPI_Reduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                  int root, MPI_Comm comm)
{
    return mf_api_reduce(RED_REDUCE, sbuf, rbuf, count, type, op, root, comm, "MPI_Reduce_c", NULL);
}
MF_API_ALIAS(Reduce_c);

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    return mf_api_reduce(RED_ALLREDUCE, sbuf, rbuf, count, type, op, 0, comm, "MPI_Allreduce",
                         NULL);
}
MF_API_ALIAS(Allreduce);

int PMPI_Allreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm)
{
    return mf_api_reduce(RED_ALLREDUCE, sbuf, rbuf, count, type, op, 0, comm, "MPI_Allreduce_c",
                         NULL);
}
MF_API_ALIAS(Allreduce_c);

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return mf_api_reduce(RED_SCAN, sbuf, rbuf, count, type, op, 0, comm, "MPI_Scan", NULL);
}
MF_API_ALIAS(Scan);

int PMPI_Scan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    return mf_api_reduce(RED_SCAN, sbuf, rbuf, count, type, op, 0, comm, "MPI_Scan_c", NULL);
}
MF_API_ALIAS(Scan_c);

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    return mf_api_reduce(RED_EXSCAN, sbuf, rbuf, count, type, op, 0, comm, "MPI_Exscan", NULL);
}
MF_API_ALIAS(Exscan);

int PMPI_Exscan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    return mf_api_reduce(RED_EXSCAN, sbuf, rbuf, count, type, op, 0, comm, "MPI_Exscan_c", NULL);
}
MF_API_ALIAS(Exscan_c);

/* Reduce_scatter (counts given) and Reduce_scatter_block (counts NULL, `count` each). */
int mf_api_reduce_scatter(const void *sbuf, void *rbuf, MPI_Count count, const MPI_Count *counts,
                          bool block, MPI_Datatype type, MPI_Op oph, MPI_Comm comm, const char *fn,
                          const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_op *op = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    MPI_Count mine = 0, total = 0;
    if (!rc && block) {
        if (count < 0)
            rc = mf_error(MPI_ERR_COUNT, "%s: recvcount=%lld is negative", fn, (long long)count);
        mine = count;
        total = count * c->c_size;
    } else if (!rc) {
        rc = mf_coll_check_counts(counts, c->c_size, fn, "recvcounts");
        for (int i = 0; !rc && i < c->c_size; i++)
            total += counts[i];
        if (!rc)
            mine = counts[c->c_rank];
    }
    bool in_place = sbuf == MPI_IN_PLACE;
    if (!rc && in_place)
        rc = mf_coll_check_in_place_intra(c, fn, "sendbuf");
    if (!rc && !in_place)
        rc = mf_coll_check_data(sbuf, total, type, &dt, fn, "sendbuf", "the total count",
                                "datatype");
    if (!rc)
        rc = mf_coll_check_data(rbuf, in_place ? total : mine, type, &dt, fn, "recvbuf",
                                block ? "recvcount" : "recvcounts[rank]", "datatype");
    if (!rc)
        rc = mf_coll_check_alias(sbuf, rbuf, mine > 0, fn);
    if (!rc)
        rc = mf_coll_check_op(oph, dt, &op, fn);
    if (!rc && nb) {
        mf_nbc_args a = {.a_kind = block ? MF_NBC_REDUCE_SCATTER_BLOCK : MF_NBC_REDUCE_SCATTER,
                         .a_sbuf = sbuf,
                         .a_sdt = dt,
                         .a_rbuf = rbuf,
                         .a_rcount = count,
                         .a_rcounts = counts,
                         .a_rdt = dt,
                         .a_op = op};
        rc = mf_nbc_post(nb, &a, c, fn);
    } else if (!rc && block)
        rc = mf_coll_reduce_scatter_block(sbuf, rbuf, count, dt, op, c);
    else if (!rc)
        rc = mf_coll_reduce_scatter(sbuf, rbuf, counts, dt, op, c);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int mf_api_reduce_scatter_int(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool failed = false;
    MPI_Count *wc = mf_coll_widen_counts(rcounts, mf_coll_local_len(comm), &failed);
    int rc = failed ? mf_err_no_object(mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn), fn)
                    : mf_api_reduce_scatter(sbuf, rbuf, 0, wc, false, type, op, comm, fn, nb);
    free(wc);
    return rc;
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm)
{
    return mf_api_reduce_scatter_int(sbuf, rbuf, rcounts, type, op, comm, "MPI_Reduce_scatter",
                                     NULL);
}
MF_API_ALIAS(Reduce_scatter);

int PMPI_Reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return mf_api_reduce_scatter(sbuf, rbuf, 0, rcounts, false, type, op, comm,
                                 "MPI_Reduce_scatter_c", NULL);
}
MF_API_ALIAS(Reduce_scatter_c);

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    return mf_api_reduce_scatter(sbuf, rbuf, rcount, NULL, true, type, op, comm,
                                 "MPI_Reduce_scatter_block", NULL);
}
MF_API_ALIAS(Reduce_scatter_block);

int PMPI_Reduce_scatter_block_c(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype type,
                                MPI_Op op, MPI_Comm comm)
{
    return mf_api_reduce_scatter(sbuf, rbuf, rcount, NULL, true, type, op, comm,
                                 "MPI_Reduce_scatter_block_c", NULL);
}
MF_API_ALIAS(Reduce_scatter_block_c);
