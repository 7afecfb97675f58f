/*
 * MPI_Alloc_mem / MPI_Free_mem: memory for communication. No fabric here needs registered or
 * specially placed memory yet, so it is ordinary heap memory aligned to a cache line (shm and CMA
 * copies like that); a fabric with registration (ofi) will hook in here. MPI_Pcontrol is the
 * profiling library's switch and does nothing in MPI itself, as the standard says.
 */
#include <stdlib.h>

#include "api/api.h"

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    int rc = MPI_SUCCESS;
    if (size < 0)
        rc = mf_error(MPI_ERR_SIZE, "MPI_Alloc_mem: size=%ld is negative", (long)size);
    else if (!baseptr)
        rc = mf_error(MPI_ERR_ARG, "MPI_Alloc_mem: baseptr is NULL");
    if (!rc) {
        void *p = NULL;
        if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
            rc = mf_error(MPI_ERR_NO_MEM, "MPI_Alloc_mem: cannot allocate %ld bytes", (long)size);
        else
            *(void **)baseptr = p;
    }
    return mf_err_no_object(rc, "MPI_Alloc_mem");
}
MF_API_ALIAS(Alloc_mem);

int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Free_mem);

int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
MF_API_ALIAS(Pcontrol);
