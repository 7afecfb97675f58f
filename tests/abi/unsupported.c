/*
 * ABI check (d): a function Manifold does not implement fails loudly, never silently.
 *   unsupported fatal   — under the default handler, MPI_Comm_spawn ends the job with a message
 *                         naming the function (the driver script checks the output and status);
 *   unsupported return  — under MPI_ERRORS_RETURN it returns MPI_ERR_UNSUPPORTED_OPERATION.
 * MPI_Comm_spawn is used because Manifold has no plan to support dynamic processes soon.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Comm child = MPI_COMM_NULL;
    int errcodes[1];
    const char *mode = argc > 1 ? argv[1] : "fatal";

    MPI_Init(&argc, &argv);
    if (strcmp(mode, "return") == 0)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int rc =
        MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, errcodes);
    if (strcmp(mode, "fatal") == 0) {
        printf("FAIL: MPI_Comm_spawn returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
        MPI_Finalize();
        return 1;
    }
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    printf("MPI_Comm_spawn returned class %d: %s\n", cls, text);
    int ok = cls == MPI_ERR_UNSUPPORTED_OPERATION && strstr(text, "MPI_Comm_spawn") != NULL;
    if (!ok)
        printf("FAIL: expected class MPI_ERR_UNSUPPORTED_OPERATION (%d) and a message naming "
               "MPI_Comm_spawn\n",
               MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_Finalize();
    return ok ? 0 : 1;
}
