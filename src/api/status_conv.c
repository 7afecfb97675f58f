/*
 * Status conversion between C (MPI_Status), Fortran (MPI_Fint[MPI_F_STATUS_SIZE]) and Fortran
 * 2008 (MPI_F08_status). In the MPICH ABI all three hold the same five ints in the same order,
 * so each conversion is a copy of those fields. MPI_F_STATUS(ES)_IGNORE are not valid arguments.
 */
#include "api/api.h"

static int mf_status_ints(const void *from, void *to, const char *fn)
{
    if (!from || !to)
        return mf_err_no_object(
            mf_error(MPI_ERR_ARG, "%s: %s status is NULL", fn, !from ? "input" : "output"), fn);
    if (from == (const void *)MPI_STATUS_IGNORE || to == (void *)MPI_STATUS_IGNORE)
        return mf_err_no_object(mf_error(MPI_ERR_ARG, "%s: MPI_STATUS_IGNORE is not a status", fn),
                                fn);
    const int *f = from;
    int *t = to;
    for (int i = 0; i < MPI_F_STATUS_SIZE; i++)
        t[i] = f[i];
    return MPI_SUCCESS;
}

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "MPI_Status must be five ints, as MPI_Fint[MPI_F_STATUS_SIZE]");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPI_F08_status mirrors MPI_Status");

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return mf_status_ints(c_status, f_status, "MPI_Status_c2f");
}
MF_API_ALIAS(Status_c2f);

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return mf_status_ints(f_status, c_status, "MPI_Status_f2c");
}
MF_API_ALIAS(Status_f2c);

int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return mf_status_ints(c_status, f08_status, "MPI_Status_c2f08");
}
MF_API_ALIAS(Status_c2f08);

int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return mf_status_ints(f08_status, c_status, "MPI_Status_f082c");
}
MF_API_ALIAS(Status_f082c);

int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return mf_status_ints(f08_status, f_status, "MPI_Status_f082f");
}
MF_API_ALIAS(Status_f082f);

int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return mf_status_ints(f_status, f08_status, "MPI_Status_f2f08");
}
MF_API_ALIAS(Status_f2f08);
