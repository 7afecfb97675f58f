/*
 * The bad-argument suite: every row of badargs.def calls an MPI function with one invalid
 * argument under MPI_ERRORS_RETURN and checks the error class returned and that the error
 * string names the function. Table-driven so that each layer adds its own rows.
 */
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static int ival, ival2, ibuf[16], ibuf2[16], wsize, kv, type_kv;
static int dims2[2], periods2[2], too_big2[2], dims_4_0[2], zeros2[2];
static int range_stride0[1][3] = {{0, 0, 0}};
static void *vptr;
static char long_key[MPI_MAX_INFO_KEY + 10], long_key_out[MPI_MAX_INFO_KEY + 1];
static MPI_Comm comm_out, comm_world_copy;
static MPI_Group group_out, world_group;
static MPI_Info info_out;
static MPI_Request req;
static MPI_Message msg_noproc = MPI_MESSAGE_NO_PROC;
static int pos;
static char packed[64];

#define BADARG(name, cls, call)                                                                    \
    static int badarg_##name(void)                                                                 \
    {                                                                                              \
        return call;                                                                               \
    }
#define BADARG_NAMED(name, cls, arg, call) BADARG(name, cls, call)
#include "badargs.def"
#undef BADARG
#undef BADARG_NAMED

static const struct badarg_row {
    const char *name, *call;
    int expect;
    int (*run)(void);
    const char *arg; /* BADARG_NAMED: the argument the message must name */
} rows[] = {
#define BADARG(name, cls, call) {#name, #call, cls, badarg_##name, NULL},
#define BADARG_NAMED(name, cls, arg, call) {#name, #call, cls, badarg_##name, arg},
#include "badargs.def"
#undef BADARG
#undef BADARG_NAMED
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Info_create(&info_out);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_kv, NULL);
    memset(long_key, 'k', sizeof long_key - 1);
    dims2[0] = dims2[1] = 1;
    too_big2[0] = wsize + 1;
    too_big2[1] = 1;
    dims_4_0[0] = 4;
    comm_world_copy = MPI_COMM_WORLD;

    int nrows = (int)(sizeof rows / sizeof rows[0]);
    for (int i = 0; i < nrows; i++) {
        int rc = rows[i].run(), cls = -1;
        if (rc == MPI_SUCCESS) {
            MF_CHECK(0, "%s: %s succeeded, expected class %d", rows[i].name, rows[i].call,
                     rows[i].expect);
            continue;
        }
        MPI_Error_class(rc, &cls);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MF_CHECK(cls == rows[i].expect, "%s: %s gave class %d (%s), expected %d", rows[i].name,
                 rows[i].call, cls, text, rows[i].expect);
        /* The message names the function: the call text up to its '('. */
        char fn[64];
        size_t n = strcspn(rows[i].call, "(");
        snprintf(fn, sizeof fn, "%.*s", (int)(n < sizeof fn ? n : sizeof fn - 1), rows[i].call);
        MF_CHECK(strstr(text, fn) != NULL, "%s: error string '%s' does not name %s", rows[i].name,
                 text, fn);
        if (rows[i].arg) {
            char arg[64];
            snprintf(arg, sizeof arg, " %s ", rows[i].arg);
            MF_CHECK(strstr(text, arg) != NULL, "%s: error string '%s' does not name %s",
                     rows[i].name, text, rows[i].arg);
        }
    }
    MPI_Comm_free_keyval(&kv);
    MPI_Type_free_keyval(&type_kv);
    MPI_Info_free(&info_out);
    MPI_Group_free(&world_group);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mftest_finish();
}
