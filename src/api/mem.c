/*
 * MPI_Alloc_mem / MPI_Free_mem: memory for communication. No fabric here needs registered or
 * specially placed memory yet, so it is ordinary heap memory aligned to a cache line (shm and CMA
 * copies like that), or to the info key mpi_minimum_memory_alignment (MPI-4.0 8.2) when that
 * asks for more; a fabric with registration (ofi) will hook in here. MPI_Pcontrol is the
 * profiling library's switch and does nothing in MPI itself, as the standard says.
 */
#include <stdlib.h>

#include "api/api.h"
#include "comm/info.h"

/* The alignment `info` asks for with mpi_minimum_memory_alignment, at least a cache line. A
 * value that is not a power of two (or above 1 GiB) is a hint this library cannot follow, and
 * is ignored as hints are. */
static size_t mf_mem_alignment(const mf_info *info)
{
    const char *v = info ? mf_info_lookup(info, "mpi_minimum_memory_alignment") : NULL;
    char *end = NULL;
    unsigned long long a = v ? strtoull(v, &end, 10) : 0;
    bool power_of_two = v && end != v && *end == '\0' && a && !(a & (a - 1));
    return power_of_two && a > 64 && a <= (1ull << 30) ? (size_t)a : 64;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *fn = "MPI_Alloc_mem";
    MF_API_ENTER();
    mf_info *hints = NULL;
    int rc = MPI_SUCCESS;
    if (size < 0)
        rc = mf_error(MPI_ERR_SIZE, "%s: size=%ld is negative", fn, (long)size);
    else if (!baseptr)
        rc = mf_error(MPI_ERR_ARG, "%s: baseptr is NULL", fn);
    else
        rc = mf_check_info_opt(info, &hints, fn);
    if (!rc) {
        void *p = NULL;
        size_t align = mf_mem_alignment(hints);
        if (posix_memalign(&p, align, size ? (size_t)size : 1) != 0)
            rc = mf_error(MPI_ERR_NO_MEM, "%s: cannot allocate %ld bytes aligned to %zu", fn,
                          (long)size, align);
        else
            *(void **)baseptr = p;
    }
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
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
