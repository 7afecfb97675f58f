/*
 * coll_nb.h — the collective entry-point bodies that the blocking (coll.c, coll_reduce.c),
 * nonblocking and persistent (coll_nb.c, coll_nb_init.c) forms share.
 *
 * Each takes the MPI arguments with MPI_Count / MPI_Aint arrays (the *_int variants take the
 * int arrays of the non-_c forms and widen them), checks what is significant at this process
 * exactly as the blocking function does, and then runs the blocking collective (nb == NULL) or
 * hands the checked arguments to mf_nbc_post(nb), which starts a schedule or makes a
 * persistent request. Each takes the library lock itself and returns through the
 * communicator's error handler, so a PMPI_ function is one call.
 */
#ifndef MF_API_COLL_NB_H
#define MF_API_COLL_NB_H

#include <stdbool.h>

#include "api/coll_check.h"
#include "coll/nbc.h"

/* One row per collective: the nonblocking name, the persistent name, the shared body's call
 * (which sees `fn` and `nb`) and the parameters before the request. */
#define MF_NBC_PAIR(IName, InitName, call, ...)                                                    \
    int PMPI_##IName(__VA_ARGS__, MPI_Request *request)                                            \
    {                                                                                              \
        const char *fn = "MPI_" #IName;                                                            \
        mf_nbc_call nbv = {request, false}, *nb = &nbv;                                            \
        return call;                                                                               \
    }                                                                                              \
    MF_API_ALIAS(IName);                                                                           \
    int PMPI_##InitName(__VA_ARGS__, MPI_Info info, MPI_Request *request)                          \
    {                                                                                              \
        const char *fn = "MPI_" #InitName;                                                         \
        mf_nbc_call nbv = {request, true}, *nb = &nbv;                                             \
        (void)info;                                                                                \
        return call;                                                                               \
    }                                                                                              \
    MF_API_ALIAS(InitName);

int mf_api_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                 const char *fn, const mf_nbc_call *nb);

int mf_api_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *fn,
                  const mf_nbc_call *nb);
int mf_api_gatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
                   MPI_Comm comm, const char *fn, const mf_nbc_call *nb);
int mf_api_gatherv_int(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm, const char *fn, const mf_nbc_call *nb);
int mf_api_scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *fn,
                   const mf_nbc_call *nb);
int mf_api_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                    MPI_Comm comm, const char *fn, const mf_nbc_call *nb);
int mf_api_scatterv_int(const void *sbuf, const int scounts[], const int displs[],
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm, const char *fn, const mf_nbc_call *nb);

/* vec: the v-form (rcounts/displs), else rcount. */
int mf_api_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, bool vec, const MPI_Count *rcounts, const MPI_Aint *displs,
                     MPI_Datatype rtype, MPI_Comm comm, const char *fn, const mf_nbc_call *nb);
int mf_api_allgatherv_int(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype,
                          MPI_Comm comm, const char *fn, const mf_nbc_call *nb);

int mf_api_alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, const char *fn,
                    const mf_nbc_call *nb);
/* w: the w-form (stypes/rtypes, byte displacements), else the v-form (stype/rtype). */
int mf_api_alltoallvw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                      const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                      const MPI_Count *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
                      MPI_Datatype rtype, MPI_Comm comm, bool w, const char *fn,
                      const mf_nbc_call *nb);
int mf_api_alltoallvw_int(const void *sbuf, const int scounts[], const int sdispls[],
                          const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int rdispls[], const MPI_Datatype *rtypes,
                          MPI_Datatype rtype, MPI_Comm comm, bool w, const char *fn,
                          const mf_nbc_call *nb);

enum mf_red_kind { RED_REDUCE, RED_ALLREDUCE, RED_SCAN, RED_EXSCAN };
/* root is used by RED_REDUCE only. */
int mf_api_reduce(enum mf_red_kind kind, const void *sbuf, void *rbuf, MPI_Count count,
                  MPI_Datatype type, MPI_Op oph, int root, MPI_Comm comm, const char *fn,
                  const mf_nbc_call *nb);
/* block: Reduce_scatter_block with `count` each, else Reduce_scatter with `counts`. */
int mf_api_reduce_scatter(const void *sbuf, void *rbuf, MPI_Count count, const MPI_Count *counts,
                          bool block, MPI_Datatype type, MPI_Op oph, MPI_Comm comm, const char *fn,
                          const mf_nbc_call *nb);
int mf_api_reduce_scatter_int(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, const char *fn, const mf_nbc_call *nb);

#endif
