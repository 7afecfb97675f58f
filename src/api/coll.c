/*
 * coll.c — MPI collective entry points that move data without reducing it (MPI-4.0 chapter 6):
 * Barrier, Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), each with its large-count
 * _c form. Every entry point checks the arguments significant at this process (see
 * coll_check.h), then calls the internal collective (src/coll/coll.h). The mf_api_* bodies are
 * shared with the nonblocking and persistent forms (coll_nb.h): with a non-NULL `nb` they start
 * the collective as a schedule (src/coll/nbc.h) instead of running it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/coll_check.h"
#include "api/coll_nb.h"

#define NOMEM(fn) mf_error(MPI_ERR_NO_MEM, "%s: out of memory widening count arrays", fn)

int PMPI_Barrier(MPI_Comm comm)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Barrier");
    if (!rc)
        rc = mf_coll_barrier(c);
    MF_API_EXIT();
    return mf_err_comm(c, rc, "MPI_Barrier");
}
MF_API_ALIAS(Barrier);

int mf_api_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                 const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_coll_check_root(c, root, fn);
    if (!rc && mf_coll_role(c, root) != MF_ROLE_NONE) {
        rc = mf_coll_check_data(buf, count, type, &dt, fn, "buffer", "count", "datatype");
        if (!rc && !nb)
            rc = mf_coll_bcast(buf, count, dt, root, c);
    }
    if (!rc && nb) {
        mf_nbc_args a = {
            .a_kind = MF_NBC_BCAST, .a_rbuf = buf, .a_rcount = count, .a_rdt = dt, .a_root = root};
        rc = mf_nbc_post(nb, &a, c, fn);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return mf_api_bcast(buf, count, type, root, comm, "MPI_Bcast", NULL);
}
MF_API_ALIAS(Bcast);

int PMPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return mf_api_bcast(buf, count, type, root, comm, "MPI_Bcast_c", NULL);
}
MF_API_ALIAS(Bcast_c);

/* ---- Gather(v) / Scatter(v) ------------------------------------------------------------------ */

/* One implementation for the four rooted "vector" operations: `gather` says which way data
 * flows; `counts`/`displs` NULL means the uniform form with `count_root`. The root-side buffer
 * is (rootbuf, counts or count_root, roottype); the per-process one (procbuf, count, type). */
struct rooted {
    bool gather;
    bool vec;
    const void *procbuf;
    MPI_Count count;
    MPI_Datatype type;
    const void *rootbuf;
    MPI_Count count_root;
    const MPI_Count *counts;
    const MPI_Aint *displs;
    MPI_Datatype roottype;
    int root;
};

static int api_rooted(const struct rooted *a, MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *pdt = NULL, *rdt = NULL;
    const char *pbuf = a->gather ? "sendbuf" : "recvbuf", *rbuf = a->gather ? "recvbuf" : "sendbuf";
    const char *pcnt = a->gather ? "sendcount" : "recvcount";
    const char *rcnt = a->gather ? (a->counts ? "recvcounts" : "recvcount")
                                 : (a->counts ? "sendcounts" : "sendcount");
    const char *ptype = a->gather ? "sendtype" : "recvtype",
               *rtype = a->gather ? "recvtype" : "sendtype";
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_coll_check_root(c, a->root, fn);
    enum mf_coll_role role = rc ? MF_ROLE_NONE : mf_coll_role(c, a->root);
    bool vec = a->vec;
    bool in_place = role == MF_ROLE_ROOT && a->procbuf == MPI_IN_PLACE;
    if (!rc && role == MF_ROLE_ROOT) {
        int n = mf_comm_peer_size(c);
        if (in_place)
            rc = mf_coll_check_in_place_intra(c, fn, pbuf);
        if (!rc && vec) {
            rc = mf_coll_check_counts(a->counts, n, fn, rcnt);
            if (!rc)
                rc = mf_coll_check_displs(a->displs, n, fn, "displs");
            if (!rc)
                rc = mf_coll_check_type(a->roottype, &rdt, fn, rtype);
            for (int i = 0; i < n && !rc; i++)
                if (a->counts[i] > 0 && !a->rootbuf)
                    rc = mf_error(MPI_ERR_BUFFER, "%s: %s is NULL but %s[%d]=%lld", fn, rbuf, rcnt,
                                  i, (long long)a->counts[i]);
            if (!rc && a->rootbuf == MPI_IN_PLACE)
                rc = mf_error(MPI_ERR_BUFFER, "%s: %s is MPI_IN_PLACE, which is not allowed here",
                              fn, rbuf);
        } else if (!rc) {
            rc = mf_coll_check_data(a->rootbuf, a->count_root, a->roottype, &rdt, fn, rbuf, rcnt,
                                    rtype);
        }
    } else if (!rc && !vec) {
        /* the root-side count is significant only at the root; others pass anything */
        rdt = NULL;
    }
    if (!rc && role != MF_ROLE_NONE && !in_place && !(role == MF_ROLE_ROOT && c->c_is_inter))
        rc = mf_coll_check_data(a->procbuf, a->count, a->type, &pdt, fn, pbuf, pcnt, ptype);
    if (!rc && role == MF_ROLE_ROOT && !in_place && !c->c_is_inter) {
        mf_coll_blocks blocks = {.buf = a->rootbuf,
                                 .dt = rdt,
                                 .n = c->c_size,
                                 .count = a->count_root,
                                 .counts = a->counts,
                                 .displs = a->displs};
        rc = mf_coll_check_alias_one(a->procbuf, a->count, pdt, &blocks, c->c_rank, fn);
    }
    if (!rc && nb) {
        void *pb = (void *)(in_place ? MPI_IN_PLACE : a->procbuf);
        void *rb = (void *)a->rootbuf;
        mf_nbc_args g = {.a_kind = vec ? MF_NBC_GATHERV : MF_NBC_GATHER,
                         .a_sbuf = pb,
                         .a_scount = a->count,
                         .a_sdt = pdt,
                         .a_rbuf = rb,
                         .a_rcount = a->count_root,
                         .a_rcounts = a->counts,
                         .a_rdispls = a->displs,
                         .a_rdt = rdt,
                         .a_root = a->root};
        mf_nbc_args s = {.a_kind = vec ? MF_NBC_SCATTERV : MF_NBC_SCATTER,
                         .a_sbuf = rb,
                         .a_scount = a->count_root,
                         .a_scounts = a->counts,
                         .a_sdispls = a->displs,
                         .a_sdt = rdt,
                         .a_rbuf = pb,
                         .a_rcount = a->count,
                         .a_rdt = pdt,
                         .a_root = a->root};
        rc = mf_nbc_post(nb, a->gather ? &g : &s, c, fn);
    } else if (!rc && role != MF_ROLE_NONE) {
        void *pb = (void *)(in_place ? MPI_IN_PLACE : a->procbuf);
        void *rb = (void *)a->rootbuf;
        if (a->gather && vec)
            rc = mf_coll_gatherv(pb, a->count, pdt, rb, a->counts, a->displs, rdt, a->root, c);
        else if (a->gather)
            rc = mf_coll_gather(pb, a->count, pdt, rb, a->count_root, rdt, a->root, c);
        else if (vec)
            rc = mf_coll_scatterv(rb, a->counts, a->displs, rdt, pb, a->count, pdt, a->root, c);
        else
            rc = mf_coll_scatter(rb, a->count_root, rdt, pb, a->count, pdt, a->root, c);
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int mf_api_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *fn,
                  const mf_nbc_call *nb)
{
    struct rooted a = {true, false, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root};
    return api_rooted(&a, comm, fn, nb);
}

int mf_api_scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *fn,
                   const mf_nbc_call *nb)
{
    struct rooted a = {false, false, rbuf, rcount, rtype, sbuf, scount, NULL, NULL, stype, root};
    return api_rooted(&a, comm, fn, nb);
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Gather", NULL);
}
MF_API_ALIAS(Gather);

int PMPI_Gather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Gather_c",
                         NULL);
}
MF_API_ALIAS(Gather_c);

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Scatter",
                          NULL);
}
MF_API_ALIAS(Scatter);

int PMPI_Scatter_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Scatter_c",
                          NULL);
}
MF_API_ALIAS(Scatter_c);

/* At the root the v-forms' arrays are significant; elsewhere they are not even read. Called
 * before the entry point's own MF_API_ENTER, so it takes the lock for its look-up: the progress
 * thread retains and releases communicators under it. */
static bool is_vec_root(MPI_Comm comm, int root)
{
    MF_API_ENTER();
    mf_comm *c = mf_g.initialized ? mf_comm_get(comm) : NULL;
    bool at_root = c && (c->c_is_inter ? root == MPI_ROOT : c->c_rank == root);
    MF_API_EXIT();
    return at_root;
}

/* Placeholders standing for "not significant here" in the v-forms' non-root calls. */
static const MPI_Count no_counts[1];
static const MPI_Aint no_displs[1];

int mf_api_gatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
                   MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool at_root = is_vec_root(comm, root);
    struct rooted a = {true,
                       true,
                       sbuf,
                       scount,
                       stype,
                       rbuf,
                       0,
                       at_root ? rcounts : no_counts,
                       at_root ? displs : no_displs,
                       rtype,
                       root};
    return api_rooted(&a, comm, fn, nb);
}

int mf_api_gatherv_int(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool failed = false, at_root = is_vec_root(comm, root);
    int n = at_root ? mf_coll_vec_len(comm) : 0;
    MPI_Count *wc = at_root ? mf_coll_widen_counts(rcounts, n, &failed) : NULL;
    MPI_Aint *wd = at_root ? mf_coll_widen_displs(displs, n, &failed) : NULL;
    int rc = failed ? mf_err_no_object(NOMEM(fn), fn)
                    : mf_api_gatherv(sbuf, scount, stype, rbuf, wc, wd, rtype, root, comm, fn, nb);
    free(wc);
    free(wd);
    return rc;
}

int mf_api_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                    MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool at_root = is_vec_root(comm, root);
    struct rooted a = {false,
                       true,
                       rbuf,
                       rcount,
                       rtype,
                       sbuf,
                       0,
                       at_root ? scounts : no_counts,
                       at_root ? displs : no_displs,
                       stype,
                       root};
    return api_rooted(&a, comm, fn, nb);
}

int mf_api_scatterv_int(const void *sbuf, const int scounts[], const int displs[],
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool failed = false, at_root = is_vec_root(comm, root);
    int n = at_root ? mf_coll_vec_len(comm) : 0;
    MPI_Count *wc = at_root ? mf_coll_widen_counts(scounts, n, &failed) : NULL;
    MPI_Aint *wd = at_root ? mf_coll_widen_displs(displs, n, &failed) : NULL;
    int rc = failed ? mf_err_no_object(NOMEM(fn), fn)
                    : mf_api_scatterv(sbuf, wc, wd, stype, rbuf, rcount, rtype, root, comm, fn, nb);
    free(wc);
    free(wd);
    return rc;
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_gatherv_int(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                              "MPI_Gatherv", NULL);
}
MF_API_ALIAS(Gatherv);

int PMPI_Gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
                   MPI_Comm comm)
{
    return mf_api_gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                          "MPI_Gatherv_c", NULL);
}
MF_API_ALIAS(Gatherv_c);

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return mf_api_scatterv_int(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                               "MPI_Scatterv", NULL);
}
MF_API_ALIAS(Scatterv);

int PMPI_Scatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                    MPI_Comm comm)
{
    return mf_api_scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                           "MPI_Scatterv_c", NULL);
}
MF_API_ALIAS(Scatterv_c);

/* ---- Allgather(v) ---------------------------------------------------------------------------- */

int mf_api_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, bool vec, const MPI_Count *rcounts, const MPI_Aint *displs,
                     MPI_Datatype rtype, MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && sbuf == MPI_IN_PLACE)
        rc = mf_coll_check_in_place_intra(c, fn, "sendbuf");
    else if (!rc)
        rc = mf_coll_check_data(sbuf, scount, stype, &sdt, fn, "sendbuf", "sendcount", "sendtype");
    if (!rc && vec) {
        int n = mf_comm_peer_size(c);
        rc = mf_coll_check_counts(rcounts, n, fn, "recvcounts");
        if (!rc)
            rc = mf_coll_check_displs(displs, n, fn, "displs");
        if (!rc)
            rc = mf_coll_check_type(rtype, &rdt, fn, "recvtype");
        if (!rc && rbuf == MPI_IN_PLACE)
            rc = mf_error(MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    } else if (!rc) {
        rc = mf_coll_check_data(rbuf, rcount, rtype, &rdt, fn, "recvbuf", "recvcount", "recvtype");
    }
    if (!rc) {
        mf_coll_blocks blocks = {.buf = rbuf,
                                 .dt = rdt,
                                 .n = mf_comm_peer_size(c),
                                 .count = rcount,
                                 .counts = vec ? rcounts : NULL,
                                 .displs = vec ? displs : NULL};
        rc =
            mf_coll_check_alias_one(sbuf, scount, sdt, &blocks, c->c_is_inter ? -1 : c->c_rank, fn);
    }
    if (!rc && nb) {
        mf_nbc_args a = {.a_kind = vec ? MF_NBC_ALLGATHERV : MF_NBC_ALLGATHER,
                         .a_sbuf = sbuf,
                         .a_scount = scount,
                         .a_sdt = sdt,
                         .a_rbuf = rbuf,
                         .a_rcount = rcount,
                         .a_rcounts = rcounts,
                         .a_rdispls = displs,
                         .a_rdt = rdt};
        rc = mf_nbc_post(nb, &a, c, fn);
    } else if (!rc && vec)
        rc = mf_coll_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    else if (!rc)
        rc = mf_coll_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_allgather(sbuf, scount, stype, rbuf, rcount, false, NULL, NULL, rtype, comm,
                            "MPI_Allgather", NULL);
}
MF_API_ALIAS(Allgather);

int PMPI_Allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_allgather(sbuf, scount, stype, rbuf, rcount, false, NULL, NULL, rtype, comm,
                            "MPI_Allgather_c", NULL);
}
MF_API_ALIAS(Allgather_c);

int mf_api_allgatherv_int(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype,
                          MPI_Comm comm, const char *fn, const mf_nbc_call *nb)
{
    bool failed = false;
    int n = mf_coll_vec_len(comm);
    MPI_Count *wc = mf_coll_widen_counts(rcounts, n, &failed);
    MPI_Aint *wd = mf_coll_widen_displs(displs, n, &failed);
    int rc =
        failed ? mf_err_no_object(NOMEM(fn), fn)
               : mf_api_allgather(sbuf, scount, stype, rbuf, 0, true, wc, wd, rtype, comm, fn, nb);
    free(wc);
    free(wd);
    return rc;
}

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_allgatherv_int(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                 "MPI_Allgatherv", NULL);
}
MF_API_ALIAS(Allgatherv);

int PMPI_Allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                      const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                      MPI_Comm comm)
{
    return mf_api_allgather(sbuf, scount, stype, rbuf, 0, true, rcounts, displs, rtype, comm,
                            "MPI_Allgatherv_c", NULL);
}
MF_API_ALIAS(Allgatherv_c);

/* ---- Alltoall(v,w) --------------------------------------------------------------------------- */

int mf_api_alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, const char *fn,
                    const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && sbuf == MPI_IN_PLACE)
        rc = mf_coll_check_in_place_intra(c, fn, "sendbuf");
    else if (!rc)
        rc = mf_coll_check_data(sbuf, scount, stype, &sdt, fn, "sendbuf", "sendcount", "sendtype");
    if (!rc)
        rc = mf_coll_check_data(rbuf, rcount, rtype, &rdt, fn, "recvbuf", "recvcount", "recvtype");
    if (!rc) {
        int n = mf_comm_peer_size(c);
        mf_coll_blocks s = {.buf = sbuf, .dt = sdt, .n = n, .count = scount},
                       r = {.buf = rbuf, .dt = rdt, .n = n, .count = rcount};
        rc = mf_coll_check_alias_pairs(&s, &r, fn);
    }
    if (!rc && nb) {
        mf_nbc_args a = {.a_kind = MF_NBC_ALLTOALL,
                         .a_sbuf = sbuf,
                         .a_scount = scount,
                         .a_sdt = sdt,
                         .a_rbuf = rbuf,
                         .a_rcount = rcount,
                         .a_rdt = rdt};
        rc = mf_nbc_post(nb, &a, c, fn);
    } else if (!rc)
        rc = mf_coll_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Alltoall", NULL);
}
MF_API_ALIAS(Alltoall);

int PMPI_Alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Alltoall_c", NULL);
}
MF_API_ALIAS(Alltoall_c);

/* Alltoallv and Alltoallw: `types` NULL means the v-form (one type each side, displacements in
 * elements); otherwise per-peer types and byte displacements. */
int mf_api_alltoallvw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                      const MPI_Count *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
                      MPI_Datatype rtype, MPI_Comm comm, bool w, const char *fn,
                      const mf_nbc_call *nb)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *sdt = NULL, *rdt = NULL, **sdts = NULL, **rdts = NULL;
    bool in_place = sbuf == MPI_IN_PLACE;
    int rc = mf_check_comm(comm, &c, fn), n = c ? mf_comm_peer_size(c) : 0;
    if (!rc && in_place)
        rc = mf_coll_check_in_place_intra(c, fn, "sendbuf");
    if (!rc && !in_place) {
        rc = mf_coll_check_counts(scounts, n, fn, "sendcounts");
        if (!rc)
            rc = mf_coll_check_displs(sdispls, n, fn, "sdispls");
    }
    if (!rc)
        rc = mf_coll_check_counts(rcounts, n, fn, "recvcounts");
    if (!rc)
        rc = mf_coll_check_displs(rdispls, n, fn, "rdispls");
    if (!rc && rbuf == MPI_IN_PLACE)
        rc = mf_error(MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    if (!rc && w) {
        sdts = calloc((size_t)n + 1, sizeof *sdts);
        rdts = calloc((size_t)n + 1, sizeof *rdts);
        if (!sdts || !rdts)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        if (!rc && ((!in_place && !stypes) || !rtypes))
            rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, rtypes ? "sendtypes" : "recvtypes");
        for (int i = 0; i < n && !rc; i++) {
            char name[32];
            snprintf(name, sizeof name, "recvtypes[%d]", i);
            rc = mf_coll_check_type(rtypes[i], &rdts[i], fn, name);
            if (!rc && !in_place) {
                snprintf(name, sizeof name, "sendtypes[%d]", i);
                rc = mf_coll_check_type(stypes[i], &sdts[i], fn, name);
            }
        }
    } else if (!rc) {
        if (!in_place)
            rc = mf_coll_check_type(stype, &sdt, fn, "sendtype");
        if (!rc)
            rc = mf_coll_check_type(rtype, &rdt, fn, "recvtype");
    }
    if (!rc) {
        mf_coll_blocks s = {.buf = sbuf,
                            .dt = sdt,
                            .dts = (const mf_datatype *const *)sdts,
                            .n = n,
                            .counts = scounts,
                            .displs = sdispls},
                       r = {.buf = rbuf,
                            .dt = rdt,
                            .dts = (const mf_datatype *const *)rdts,
                            .n = n,
                            .counts = rcounts,
                            .displs = rdispls};
        rc = mf_coll_check_alias_pairs(&s, &r, fn);
    }
    if (!rc && nb) {
        mf_nbc_args a = {.a_kind = w ? MF_NBC_ALLTOALLW : MF_NBC_ALLTOALLV,
                         .a_sbuf = sbuf,
                         .a_scounts = scounts,
                         .a_sdispls = sdispls,
                         .a_sdt = sdt,
                         .a_sdts = sdts,
                         .a_rbuf = rbuf,
                         .a_rcounts = rcounts,
                         .a_rdispls = rdispls,
                         .a_rdt = rdt,
                         .a_rdts = rdts};
        rc = mf_nbc_post(nb, &a, c, fn);
    } else if (!rc && w)
        rc = mf_coll_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c);
    else if (!rc)
        rc = mf_coll_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c);
    free(sdts);
    free(rdts);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int mf_api_alltoallvw_int(const void *sbuf, const int scounts[], const int sdispls[],
                          const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int rdispls[], const MPI_Datatype *rtypes,
                          MPI_Datatype rtype, MPI_Comm comm, bool w, const char *fn,
                          const mf_nbc_call *nb)
{
    bool failed = false;
    int n = mf_coll_vec_len(comm);
    MPI_Count *sc = mf_coll_widen_counts(sbuf == MPI_IN_PLACE ? NULL : scounts, n, &failed);
    MPI_Aint *sd = mf_coll_widen_displs(sbuf == MPI_IN_PLACE ? NULL : sdispls, n, &failed);
    MPI_Count *rc_ = mf_coll_widen_counts(rcounts, n, &failed);
    MPI_Aint *rd = mf_coll_widen_displs(rdispls, n, &failed);
    int rc = failed ? mf_err_no_object(NOMEM(fn), fn)
                    : mf_api_alltoallvw(sbuf, sc, sd, stypes, stype, rbuf, rc_, rd, rtypes, rtype,
                                        comm, w, fn, nb);
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm)
{
    return mf_api_alltoallvw_int(sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls, NULL,
                                 rtype, comm, false, "MPI_Alltoallv", NULL);
}
MF_API_ALIAS(Alltoallv);

int PMPI_Alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                     MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    return mf_api_alltoallvw(sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls, NULL,
                             rtype, comm, false, "MPI_Alltoallv_c", NULL);
}
MF_API_ALIAS(Alltoallv_c);

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return mf_api_alltoallvw_int(sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf, rcounts,
                                 rdispls, rtypes, MPI_DATATYPE_NULL, comm, true, "MPI_Alltoallw",
                                 NULL);
}
MF_API_ALIAS(Alltoallw);

int PMPI_Alltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return mf_api_alltoallvw(sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf, rcounts,
                             rdispls, rtypes, MPI_DATATYPE_NULL, comm, true, "MPI_Alltoallw_c",
                             NULL);
}
MF_API_ALIAS(Alltoallw_c);
