/* Argument checks for point-to-point entry points: see p2p_args.h. */
#include "api/p2p_args.h"

#include <string.h>

int mf_p2p_check_empty(MPI_Count count, MPI_Datatype datatype, mf_datatype **dt, int rc)
{
    if (count != 0 || datatype != MPI_DATATYPE_NULL)
        return rc;
    *dt = mf_datatype_get(MPI_BYTE);
    return MPI_SUCCESS;
}

int mf_p2p_check_rest(const void *buf, const char *bufname, MPI_Count count, mf_datatype *dt,
                      int rank, int tag, mf_comm *c, bool is_recv, const char *fn)
{
    if (!buf || buf == MPI_IN_PLACE) { /* the rest never fail the buffer check */
        int rc = mf_check_buffer(buf, count, dt, fn, bufname,
                                 strcmp(bufname, "buf") == 0 ? "count"
                                 : is_recv                   ? "recvcount"
                                                             : "sendcount");
        if (rc)
            return rc;
    }
    int size = mf_comm_peer_size(c);
    if (!mf_p2p_rank_ok(rank, size, is_recv))
        return mf_error(MPI_ERR_RANK, "%s: %s=%d is not a rank of the communicator (size %d)", fn,
                        is_recv ? "source" : "dest", rank, size);
    if (!mf_p2p_tag_ok(tag, is_recv))
        return mf_error(MPI_ERR_TAG, "%s: tag=%d is outside 0..MPI_TAG_UB (%d)", fn, tag,
                        MF_TAG_UB);
    return MPI_SUCCESS;
}

int mf_p2p_bad_request(MPI_Request handle, const char *fn)
{
    return mf_error(MPI_ERR_REQUEST, "%s: request=0x%x is not a valid request", fn,
                    (unsigned)handle);
}

void mf_status_empty(MPI_Status *status)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return;
    *status = (MPI_Status){0};
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
}
