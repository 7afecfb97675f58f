/*
 * MPI_File handle conversion. MPI-IO is not implemented yet (every MPI_File_* function raises
 * MPI_ERR_UNSUPPORTED_OPERATION), so the only file handle that exists is MPI_FILE_NULL, which
 * converts to and from 0.
 */
#include "api/api.h"

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return file == MPI_FILE_NULL ? 0 : -1;
}
MF_API_ALIAS(File_c2f);

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    (void)file;
    return MPI_FILE_NULL;
}
MF_API_ALIAS(File_f2c);
