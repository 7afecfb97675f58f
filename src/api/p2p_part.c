/*
 * Partitioned communication (MPI-4.0 chapter 4): MPI_Psend_init, MPI_Precv_init, MPI_Pready,
 * MPI_Pready_range, MPI_Pready_list, MPI_Parrived. Argument checks here; the channels and their
 * protocol in src/p2p/partitioned.c. MPI_Start, the Wait/Test family and MPI_Request_free treat
 * partitioned requests as the persistent requests they are (p2p_persist.c, p2p_complete.c).
 */
#include "api/p2p_args.h"
#include "comm/info.h"
#include "p2p/partitioned.h"

static int mf_api_part_init(bool is_send, const void *buf, int partitions, MPI_Count count,
                            MPI_Datatype datatype, int rank, int tag, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_datatype *dt = NULL;
    mf_request *r = NULL;
    int rc = request
                 ? mf_p2p_check(buf, "buf", count, datatype, rank, tag, comm, !is_send, fn, &c, &dt)
                 : mf_error(MPI_ERR_ARG, "%s: request is NULL", fn);
    /* The standard allows no wildcard here: a partitioned receive is matched once, at init. */
    if (!rc && rank == MPI_ANY_SOURCE)
        rc = mf_error(MPI_ERR_RANK, "%s: source=MPI_ANY_SOURCE is not allowed", fn);
    if (!rc && tag == MPI_ANY_TAG)
        rc = mf_error(MPI_ERR_TAG, "%s: tag=MPI_ANY_TAG is not allowed", fn);
    mf_info *hints = NULL; /* none changes what a partitioned request does */
    if (!rc)
        rc = mf_check_info_opt(info, &hints, fn);
    if (!rc)
        rc = mf_part_init(is_send, (void *)buf, partitions, count, dt, rank, tag, c, fn, &r);
    if (!rc)
        rc = mf_request_give(r, request);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return mf_api_part_init(true, buf, partitions, count, datatype, dest, tag, comm, info, request,
                            "MPI_Psend_init");
}
MF_API_ALIAS(Psend_init);

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return mf_api_part_init(false, buf, partitions, count, datatype, source, tag, comm, info,
                            request, "MPI_Precv_init");
}
MF_API_ALIAS(Precv_init);

/* The request behind a handle given to MPI_Pready* or MPI_Parrived (never MPI_REQUEST_NULL). */
static int mf_api_part_request(MPI_Request handle, mf_request **r, const char *fn)
{
    int rc = mf_p2p_check_request(handle, r, fn);
    if (!rc && !*r)
        rc = mf_error(MPI_ERR_REQUEST, "%s: request is MPI_REQUEST_NULL", fn);
    return rc;
}

/* The list form when is_list (list[0..n)), else the partitions low..high. */
static int mf_api_pready(int low, int high, bool is_list, const int *list, int n,
                         MPI_Request request, const char *fn)
{
    static const int none[1];
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = mf_api_part_request(request, &r, fn);
    if (!rc && is_list && n > 0 && !list)
        rc = mf_error(MPI_ERR_ARG, "%s: array_of_partitions is NULL", fn);
    if (is_list && !list)
        list = none; /* length 0: nothing is ready, and the form stays the list's */
    if (!rc)
        rc = mf_part_ready(r, low, high, list, n, fn);
    mf_comm *c = r ? mf_request_info(r)->r_comm : NULL;
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Pready(int partition, MPI_Request request)
{
    return mf_api_pready(partition, partition, false, NULL, 0, request, "MPI_Pready");
}
MF_API_ALIAS(Pready);

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    return mf_api_pready(partition_low, partition_high, false, NULL, 0, request,
                         "MPI_Pready_range");
}
MF_API_ALIAS(Pready_range);

int PMPI_Pready_list(int length, int array_of_partitions[], MPI_Request request)
{
    return mf_api_pready(0, -1, true, array_of_partitions, length, request, "MPI_Pready_list");
}
MF_API_ALIAS(Pready_list);

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    MF_API_ENTER();
    mf_request *r = NULL;
    int rc = flag ? mf_api_part_request(request, &r, "MPI_Parrived")
                  : mf_error(MPI_ERR_ARG, "MPI_Parrived: flag is NULL");
    bool arrived = false;
    if (!rc)
        rc = mf_part_arrived(r, partition, &arrived, "MPI_Parrived");
    if (!rc)
        *flag = arrived;
    mf_comm *c = r ? mf_request_info(r)->r_comm : NULL;
    MF_API_EXIT();
    return mf_err_comm(c, rc, "MPI_Parrived");
}
MF_API_ALIAS(Parrived);
