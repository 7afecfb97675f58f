/*
 * The small functions that MPICH's libmpi.so.12 gained after 4.0 and that Manifold exports for
 * the programs built with it: MPI-4.1's status accessors (MPI_Status_get/set_source, _tag,
 * _error, MPI_Status_set_elements_c), MPI_Type_get_value_index, MPI_Get_hw_resource_info, and
 * MPI-5.0's handle conversions (MPI_Comm_toint, MPI_Comm_fromint and kin). Built both by
 * Manifold's mpicc (abi.newer_calls) and by the mpicc of the mpich 5.0.2 wheel from PyPI
 * (newer_mpich.sh: the same checks, through the MPICH-built binary, on Manifold's library).
 * Prints "newer calls: rank N ok" per rank and exits 0 when every check held.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int errors, rank;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("rank %d: line %d: ", rank, __LINE__);                                          \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            errors++;                                                                              \
        }                                                                                          \
    } while (0)

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void status_fields(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int v = -1;
    CHECK(MPI_Status_set_source(&st, 3) == MPI_SUCCESS && st.MPI_SOURCE == 3, "set_source");
    CHECK(MPI_Status_set_tag(&st, 77) == MPI_SUCCESS && st.MPI_TAG == 77, "set_tag");
    CHECK(MPI_Status_set_error(&st, MPI_ERR_TAG) == MPI_SUCCESS && st.MPI_ERROR == MPI_ERR_TAG,
          "set_error");
    CHECK(MPI_Status_get_source(&st, &v) == MPI_SUCCESS && v == 3, "get_source gave %d", v);
    CHECK(MPI_Status_get_tag(&st, &v) == MPI_SUCCESS && v == 77, "get_tag gave %d", v);
    CHECK(MPI_Status_get_error(&st, &v) == MPI_SUCCESS && v == MPI_ERR_TAG, "get_error gave %d", v);
    /* A received message's status, read through the calls. */
    int x = 5, y = 0;
    MPI_Sendrecv(&x, 1, MPI_INT, rank, 12, &y, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &st);
    CHECK(MPI_Status_get_source(&st, &v) == MPI_SUCCESS && v == rank, "received source %d", v);
    CHECK(MPI_Status_get_tag(&st, &v) == MPI_SUCCESS && v == 12, "received tag %d", v);
    /* Large-count elements. */
    MPI_Count big = (MPI_Count)1 << 33, got = 0;
    CHECK(MPI_Status_set_elements_c(&st, MPI_INT, big) == MPI_SUCCESS, "set_elements_c");
    CHECK(MPI_Get_elements_c(&st, MPI_INT, &got) == MPI_SUCCESS && got == big,
          "elements read back as %lld", (long long)got);
    CHECK(class_of(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v)) == MPI_ERR_ARG,
          "get_tag of MPI_STATUS_IGNORE");
    CHECK(class_of(MPI_Status_get_tag(&st, NULL)) == MPI_ERR_ARG, "get_tag into NULL");
}

static void value_index(void)
{
    static const struct {
        MPI_Datatype value, index, pair;
    } want[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_DOUBLE, MPI_LONG, MPI_DATATYPE_NULL},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        MPI_Datatype pair = (MPI_Datatype)-1;
        CHECK(MPI_Type_get_value_index(want[i].value, want[i].index, &pair) == MPI_SUCCESS &&
                  pair == want[i].pair,
              "value_index case %zu gave 0x%x", i, (unsigned)pair);
    }
    /* A pair from the call works with MPI_MINLOC. */
    MPI_Datatype pair;
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair);
    struct {
        double v;
        int i;
    } in = {1.0 + rank, rank}, out = {0, -1};
    MPI_Allreduce(&in, &out, 1, pair, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(out.v == 1.0 && out.i == 0, "MINLOC over the pair gave %g at %d", out.v, out.i);
    MPI_Datatype user;
    MPI_Type_contiguous(2, MPI_INT, &user);
    MPI_Type_commit(&user);
    CHECK(MPI_Type_get_value_index(user, MPI_INT, &pair) == MPI_SUCCESS &&
              pair == MPI_DATATYPE_NULL,
          "a user type has a pair type");
    MPI_Type_free(&user);
}

static void handle_ints(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup, "comm round trip");
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world round trip");
    CHECK(MPI_Comm_toint(MPI_COMM_NULL) == (int)MPI_Comm_c2f(MPI_COMM_NULL), "null comm's int");
    MPI_Comm_free(&dup);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    CHECK(MPI_Group_fromint(MPI_Group_toint(g)) == g, "group round trip");
    MPI_Group_free(&g);
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "datatype round trip");
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "op round trip");
    MPI_Info info;
    MPI_Info_create(&info);
    CHECK(MPI_Info_fromint(MPI_Info_toint(info)) == info, "info round trip");
    MPI_Info_free(&info);
    CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "errhandler round trip");
    MPI_Request rq;
    int x = 0;
    MPI_Irecv(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &rq);
    CHECK(MPI_Request_fromint(MPI_Request_toint(rq)) == rq, "request round trip");
    MPI_Send(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
          "message round trip");
    MPI_Win win;
    MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(MPI_Win_fromint(MPI_Win_toint(win)) == win, "window round trip");
    MPI_Win_free(&win);
    CHECK(MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL,
          "session round trip");
    MPI_File fh;
    char path[64];
    snprintf(path, sizeof path, "/tmp/newer_calls.%d.%d", (int)getpid(), rank);
    if (MPI_File_open(MPI_COMM_SELF, path,
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh) == MPI_SUCCESS) {
        CHECK(MPI_File_fromint(MPI_File_toint(fh)) == fh, "file round trip");
        MPI_File_close(&fh);
    }
    CHECK(MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL, "null file");
}

static void hw_resource_info(void)
{
    MPI_Info info = MPI_INFO_NULL;
    CHECK(MPI_Get_hw_resource_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL,
          "MPI_Get_hw_resource_info");
    if (info == MPI_INFO_NULL)
        return;
    char value[MPI_MAX_INFO_VAL + 1];
    int len = sizeof value, flag = 0;
    MPI_Info_get_string(info, "mpi_shared_memory", &len, value, &flag);
    CHECK(flag && strcmp(value, "true") == 0, "mpi_shared_memory is %s", flag ? value : "absent");
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    status_fields();
    value_index();
    handle_ints();
    hw_resource_info();
    if (!errors)
        printf("newer calls: rank %d ok\n", rank);
    MPI_Finalize();
    return errors != 0;
}
