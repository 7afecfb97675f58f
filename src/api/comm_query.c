/* MPI_Comm_rank and MPI_Comm_size. */
#include "api/api.h"

/* MPI_COMM_WORLD or MPI_COMM_SELF when MPI_Comm_rank or MPI_Comm_size may answer for it without
 * the library lock: the same test as mf_check_comm's valid case, for the two communicators that
 * live from MPI_Init to MPI_Finalize in static objects (no handle table to look in, which
 * another thread may be growing) and whose rank and size never change. Threaded codes ask for
 * these in their loops; under MPI_THREAD_MULTIPLE every other call takes the lock. NULL: take
 * the locked path, which also reports any error. */
static inline const mf_comm *mf_comm_predefined_unlocked(MPI_Comm comm)
{
    if (comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF)
        return NULL;
    return mf_g.initialized ? mf_comm_get(comm) : NULL;
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    const mf_comm *p = mf_comm_predefined_unlocked(comm);
    if (p && rank) {
        *rank = p->c_rank;
        return MPI_SUCCESS;
    }
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
    const mf_comm *p = mf_comm_predefined_unlocked(comm);
    if (p && size) {
        *size = p->c_size;
        return MPI_SUCCESS;
    }
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
