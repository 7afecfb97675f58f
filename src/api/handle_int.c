/*
 * handle_int.c — MPI-5.0's conversions between handles and integers (MPI_Comm_toint,
 * MPI_Comm_fromint and kin), which MPICH's libmpi.so.12 exports since 5.0, so that programs
 * built with it run here. In the MPICH ABI every handle type but MPI_File is an int already:
 * the conversion is the value itself, as MPI_Comm_c2f's macro is. A file's integer is its
 * Fortran handle (MPI_File_c2f). Like the Fortran conversions they check nothing: an invalid
 * handle converts to a value that is not a valid one either.
 */
#include "api/api.h"

#undef MPI_Comm_c2f
#undef MPI_Comm_f2c
#undef PMPI_Comm_c2f
#undef PMPI_Comm_f2c
#undef MPI_Errhandler_c2f
#undef MPI_Errhandler_f2c
#undef PMPI_Errhandler_c2f
#undef PMPI_Errhandler_f2c
#undef MPI_Group_c2f
#undef MPI_Group_f2c
#undef PMPI_Group_c2f
#undef PMPI_Group_f2c
#undef MPI_Info_c2f
#undef MPI_Info_f2c
#undef PMPI_Info_c2f
#undef PMPI_Info_f2c
#undef MPI_Message_c2f
#undef MPI_Message_f2c
#undef PMPI_Message_c2f
#undef PMPI_Message_f2c
#undef MPI_Op_c2f
#undef MPI_Op_f2c
#undef PMPI_Op_c2f
#undef PMPI_Op_f2c
#undef MPI_Request_c2f
#undef MPI_Request_f2c
#undef PMPI_Request_c2f
#undef PMPI_Request_f2c
#undef MPI_Session_c2f
#undef MPI_Session_f2c
#undef PMPI_Session_c2f
#undef PMPI_Session_f2c
#undef MPI_Type_c2f
#undef MPI_Type_f2c
#undef PMPI_Type_c2f
#undef PMPI_Type_f2c
#undef MPI_Win_c2f
#undef MPI_Win_f2c
#undef PMPI_Win_c2f
#undef PMPI_Win_f2c

#define HANDLE_INT(Name, Type)                                                                     \
    MPI_Fint PMPI_##Name##_c2f(Type handle); /* (mpi.h has the macro only) */                      \
    Type PMPI_##Name##_f2c(MPI_Fint value);                                                        \
    MPI_Fint PMPI_##Name##_c2f(Type handle)                                                        \
    {                                                                                              \
        return (MPI_Fint)handle;                                                                   \
    }                                                                                              \
    MF_API_ALIAS(Name##_c2f);                                                                      \
    Type PMPI_##Name##_f2c(MPI_Fint value)                                                         \
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
