/* Environmental queries: versions, processor name, timers (MPI-4.0 chapter 9). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "core/clock.h"

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Get_version: %s is NULL",
                                         !version ? "version" : "subversion"),
                                "MPI_Get_version");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
MF_API_ALIAS(Get_version);

/* The fabrics built in, from fabrics.def: "fabrics: self shm tcp ofi". */
#define MF_FABRIC(name) " " #name
static const char mf_fabrics_built_in[] = "fabrics:"
#include "fabric/fabrics.def"
    ;
#undef MF_FABRIC

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Get_library_version: %s is NULL",
                                         !version ? "version" : "resultlen"),
                                "MPI_Get_library_version");
    int n =
        snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Manifold %s (MPI %d.%d, MPICH ABI; %s)",
                 MANIFOLD_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, mf_fabrics_built_in);
    *resultlen = n;
    return MPI_SUCCESS;
}
MF_API_ALIAS(Get_library_version);

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "MPI_Get_processor_name: %s is NULL",
                                         !name ? "name" : "resultlen"),
                                "MPI_Get_processor_name");
    char host[sizeof mf_g.hostname] = "";
    if (mf_g.hostname[0])
        memcpy(host, mf_g.hostname, sizeof host);
    else if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    host[MPI_MAX_PROCESSOR_NAME - 1] = '\0'; /* the standard's bound on the name */
    memcpy(name, host, strlen(host) + 1);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
MF_API_ALIAS(Get_processor_name);

/* MPI_Wtime is CLOCK_MONOTONIC: never jumps; not synchronised across hosts
 * (MPI_WTIME_IS_GLOBAL is 0). */
double PMPI_Wtime(void)
{
    return mf_clock_s();
}
MF_API_ALIAS(Wtime);

double PMPI_Wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}
MF_API_ALIAS(Wtick);
