/*
 * handle_int.c — MPI-5.0's conversions between handles and integers (MPI_Comm_toint,
 * MPI_Comm_fromint and kin), which MPICH's libmpi.so.12 exports since 5.0, so that programs
 * built with it run here. In the MPICH ABI every handle type but MPI_File is an int already:
 * the conversion is the value itself, as MPI_Comm_c2f's macro is. A file's integer is its
 * Fortran handle (MPI_File_c2f). Like the Fortran conversions they check nothing: an invalid
 * handle converts to a value that is not a valid one either.
 *
 * The Fortran conversions of those handles (MPI_Comm_c2f, MPI_Comm_f2c and kin) are macros in
 * mpi.h, as in MPICH's; MPICH 5.0's library exports them as functions as well, for bindings that
 * look symbols up instead of including the header. So does this file, under the macros' names:
 * written in parentheses, "(PMPI_Comm_c2f)(...)", a name is not taken for a call of its
 * function-like macro.
 */
#include "api/api.h"

#define HANDLE_INT(Name, Type)                                                                     \
    MPI_Fint(PMPI_##Name##_c2f)(Type handle); /* (mpi.h declares only the macro) */                \
    Type(PMPI_##Name##_f2c)(MPI_Fint value);                                                       \
    MPI_Fint(PMPI_##Name##_c2f)(Type handle)                                                       \
    {                                                                                              \
        return (MPI_Fint)handle;                                                                   \
    }                                                                                              \
    MF_API_ALIAS(Name##_c2f);                                                                      \
    Type(PMPI_##Name##_f2c)(MPI_Fint value)                                                        \
    {                                                                                              \
        return (Type)value;                                                                        \
    }                                                                                              \
    MF_API_ALIAS(Name##_f2c);                                                                      \
    int PMPI_##Name##_toint(Type handle)                                                           \
    {                                                                                              \
        return (int)handle;                                                                        \
    }                                                                                              \
    MF_API_ALIAS(Name##_toint);                                                                    \
    Type PMPI_##Name##_fromint(int value)                                                          \
    {                                                                                              \
        return (Type)value;                                                                        \
    }                                                                                              \
    MF_API_ALIAS(Name##_fromint)

HANDLE_INT(Comm, MPI_Comm);
HANDLE_INT(Errhandler, MPI_Errhandler);
HANDLE_INT(Group, MPI_Group);
HANDLE_INT(Info, MPI_Info);
HANDLE_INT(Message, MPI_Message);
HANDLE_INT(Op, MPI_Op);
HANDLE_INT(Request, MPI_Request);
HANDLE_INT(Session, MPI_Session);
HANDLE_INT(Type, MPI_Datatype);
HANDLE_INT(Win, MPI_Win);

int PMPI_File_toint(MPI_File file)
{
    return (int)PMPI_File_c2f(file);
}
MF_API_ALIAS(File_toint);

MPI_File PMPI_File_fromint(int file)
{
    return PMPI_File_f2c((MPI_Fint)file);
}
MF_API_ALIAS(File_fromint);
