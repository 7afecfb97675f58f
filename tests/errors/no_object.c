/*
 * Errors of calls that involve no object (MPI-4.0 9.3): while the World Model is up they go to
 * MPI_COMM_SELF's handler once the program has set one, and until then to MPI_COMM_WORLD's, as
 * MPI-3.1 programs expect and MPICH 4.2+ does; before MPI_Init and after MPI_Finalize the initial
 * error handler applies, which MPI_COMM_WORLD and MPI_COMM_SELF also start with and which
 * MPI_INFO_ENV names (mpi_initial_errhandler; mpiexec --initial-errhandler).
 *
 * argv[1]: the initial handler the run was started with, "mpi_errors_are_fatal" (the default)
 * or "mpi_errors_return"; with the latter, the errors before MPI_Init and after MPI_Finalize
 * are checked too.
 */
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static int self_calls, world_calls, last_code;
static MPI_Comm last_comm;

static void on_self(MPI_Comm *comm, int *code, ...)
{
    self_calls++;
    last_comm = *comm;
    last_code = *code;
}

static void on_world(MPI_Comm *comm, int *code, ...)
{
    world_calls++;
    last_comm = *comm;
    last_code = *code;
}

/* A call with no object that fails: setting a key in the null info object. */
static int fail_without_object(void)
{
    return MPI_Info_set(MPI_INFO_NULL, "key", "value");
}

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void check_starting_handler(MPI_Comm c, const char *name, MPI_Errhandler want)
{
    MPI_Errhandler got;
    MF_CHECK_MPI(MPI_Comm_get_errhandler(c, &got));
    MF_CHECK(got == want, "%s starts with handler 0x%x, want the initial one 0x%x", name,
             (unsigned)got, (unsigned)want);
    MPI_Errhandler_free(&got);
}

int main(int argc, char **argv)
{
    const char *initial = argc > 1 ? argv[1] : "mpi_errors_are_fatal";
    int returns = !strcmp(initial, "mpi_errors_return");
    if (returns) { /* before MPI_Init: the initial handler returns the code */
        int cls = class_of(fail_without_object());
        if (cls != MPI_ERR_INFO) {
            fprintf(stderr, "before MPI_Init: class %d, want MPI_ERR_INFO\n", cls);
            return 1;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Errhandler want = returns ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
    check_starting_handler(MPI_COMM_WORLD, "MPI_COMM_WORLD", want);
    check_starting_handler(MPI_COMM_SELF, "MPI_COMM_SELF", want);
    char v[MPI_MAX_INFO_VAL + 1];
    int len = sizeof v, flag = 0;
    MPI_Info_get_string(MPI_INFO_ENV, "mpi_initial_errhandler", &len, v, &flag);
    MF_CHECK(flag && !strcmp(v, initial), "MPI_INFO_ENV mpi_initial_errhandler: %s",
             flag ? v : "(unset)");

    /* Until the program sets MPI_COMM_SELF's handler, MPI_COMM_WORLD's hears the error of no
     * object, given MPI_COMM_WORLD; the call returns the code the handler saw. */
    MPI_Errhandler self_eh, world_eh;
    MF_CHECK_MPI(MPI_Comm_create_errhandler(on_self, &self_eh));
    MF_CHECK_MPI(MPI_Comm_create_errhandler(on_world, &world_eh));
    MF_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh));
    int rc = fail_without_object();
    MF_CHECK(world_calls == 1 && self_calls == 0 && last_comm == MPI_COMM_WORLD &&
                 rc == last_code && class_of(rc) == MPI_ERR_INFO,
             "info error, MPI_COMM_SELF's handler unset: MPI_COMM_WORLD's handler %d calls, "
             "MPI_COMM_SELF's %d, class %d",
             world_calls, self_calls, class_of(rc));
    /* Once it is set, only MPI_COMM_SELF's hears them, given MPI_COMM_SELF. */
    MF_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh));
    rc = fail_without_object();
    MF_CHECK(self_calls == 1 && world_calls == 1 && last_comm == MPI_COMM_SELF && rc == last_code &&
                 class_of(rc) == MPI_ERR_INFO,
             "info error: MPI_COMM_SELF's handler %d calls, MPI_COMM_WORLD's %d, class %d",
             self_calls, world_calls - 1, class_of(rc));
    MPI_Datatype t;
    rc = MPI_Type_contiguous(-1, MPI_INT, &t);
    MF_CHECK(self_calls == 2 && world_calls == 1 && class_of(rc) == MPI_ERR_COUNT,
             "datatype error: MPI_COMM_SELF's handler %d calls, MPI_COMM_WORLD's %d, class %d",
             self_calls, world_calls - 1, class_of(rc));
    /* An error on MPI_COMM_WORLD stays its own. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = MPI_Send(&size, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MF_CHECK(self_calls == 2 && world_calls == 2 && class_of(rc) == MPI_ERR_RANK,
             "rank error on MPI_COMM_WORLD: its handler %d calls, MPI_COMM_SELF's %d, class %d",
             world_calls - 1, self_calls - 2, class_of(rc));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&self_eh);
    MPI_Errhandler_free(&world_eh);

    int errors = mftest_finish();
    if (returns && class_of(fail_without_object()) != MPI_ERR_INFO) {
        fprintf(stderr, "after MPI_Finalize: the initial handler did not return the code\n");
        return 1;
    }
    return errors;
}
