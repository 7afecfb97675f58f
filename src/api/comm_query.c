/* MPI_Comm_rank and MPI_Comm_size. */
#include "api/api.h"

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_rank");
    if (!rc && !rank)
        rc = mf_error(MPI_ERR_ARG, "MPI_Comm_rank: rank is NULL");
    if (!rc)
        *rank = c->c_rank;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_rank"));
}
MF_API_ALIAS(Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_size");
    if (!rc && !size)
        rc = mf_error(MPI_ERR_ARG, "MPI_Comm_size: size is NULL");
    if (!rc)
        *size = c->c_size;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_size"));
}
MF_API_ALIAS(Comm_size);
