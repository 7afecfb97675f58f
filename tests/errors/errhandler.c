/*
 * Error handlers and the error API: a user handler on a communicator is called with that
 * communicator and the error's code and the call then returns the code; handlers are inherited
 * by MPI_Comm_dup; MPI_Comm_call_errhandler; MPI_Comm_get_errhandler; user error classes,
 * codes and strings (MPI_Add_error_*) and MPI_LASTUSEDCODE; MPI_Error_string of predefined
 * classes; an error found when a request completes goes to its communicator's handler, from
 * MPI_Wait and MPI_Waitall, even when the program freed that communicator meanwhile (the
 * handler runs after the request, which held the last reference, is gone: an ASan build sees a
 * use after free unless the communicator is kept until then).
 */
#include <string.h>

#include "mftest.h"

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, cls;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Errhandler eh, got;
    MF_CHECK_MPI(MPI_Comm_create_errhandler(handler, &eh));
    MF_CHECK_MPI(MPI_Comm_set_errhandler(dup, eh));
    MF_CHECK_MPI(MPI_Comm_get_errhandler(dup, &got));
    MF_CHECK(got == eh, "Comm_get_errhandler gave 0x%x, expected 0x%x", (unsigned)got,
             (unsigned)eh);
    MF_CHECK_MPI(MPI_Errhandler_free(&got));

    /* An invalid rank on dup reaches the handler, then returns the code. */
    int buf = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, dup);
    MPI_Error_class(rc, &cls);
    MF_CHECK(calls == 1 && last_comm == dup && last_code == rc && cls == MPI_ERR_RANK,
             "handler: calls %d comm ok %d code %d class %d", calls, last_comm == dup, last_code,
             cls);
    /* Inherited by dup; freeing the user's handle keeps it alive on the communicators. */
    MF_CHECK_MPI(MPI_Errhandler_free(&eh));
    MF_CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not null the handle");
    MF_CHECK_MPI(MPI_Comm_dup(dup, &dup2));
    rc = MPI_Comm_rank(dup2, NULL);
    MF_CHECK(calls == 2 && last_comm == dup2, "inherited handler: calls %d", calls);

    /* User classes, codes, strings. */
    int myclass, mycode, mycode2;
    MF_CHECK_MPI(MPI_Add_error_class(&myclass));
    MF_CHECK_MPI(MPI_Add_error_code(myclass, &mycode));
    MF_CHECK_MPI(MPI_Add_error_code(MPI_ERR_ARG, &mycode2));
    MF_CHECK_MPI(MPI_Add_error_string(mycode, "my special failure"));
    MF_CHECK_MPI(MPI_Error_class(mycode, &cls));
    MF_CHECK(cls == myclass, "class of added code %d, expected %d", cls, myclass);
    MF_CHECK_MPI(MPI_Error_class(mycode2, &cls));
    MF_CHECK(cls == MPI_ERR_ARG, "class of code added to MPI_ERR_ARG: %d", cls);
    MF_CHECK_MPI(MPI_Error_class(myclass, &cls));
    MF_CHECK(cls == myclass, "an added class is its own class");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MF_CHECK_MPI(MPI_Error_string(mycode, text, &len));
    MF_CHECK(strcmp(text, "my special failure") == 0 && len == 18, "added string '%s'", text);
    void *v;
    int flag;
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MF_CHECK(flag && *(int *)v >= mycode2 && *(int *)v >= myclass, "MPI_LASTUSEDCODE %d",
             flag ? *(int *)v : -1);
    MF_CHECK_MPI(MPI_Comm_call_errhandler(dup, mycode));
    MF_CHECK(calls == 3 && last_code == mycode, "call_errhandler: calls %d code %d", calls,
             last_code);

    /* Predefined texts. */
    MF_CHECK_MPI(MPI_Error_string(MPI_ERR_TRUNCATE, text, &len));
    MF_CHECK(len > 0 && (int)strlen(text) == len, "Error_string(MPI_ERR_TRUNCATE) '%s'", text);
    MF_CHECK_MPI(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    MF_CHECK(cls == MPI_ERR_TRUNCATE, "class of a class");

    /* A truncated receive on a communicator freed before the wait (a message to self). */
    for (int all = 0; all < 2; all++) {
        MPI_Comm gone;
        MF_CHECK_MPI(MPI_Comm_dup(dup, &gone)); /* inherits the handler */
        int me, small = 0, big[4] = {1, 2, 3, 4};
        MPI_Comm_rank(gone, &me);
        MPI_Request req;
        MPI_Status st;
        MF_CHECK_MPI(MPI_Irecv(&small, 1, MPI_INT, me, 7, gone, &req));
        MF_CHECK_MPI(MPI_Send(big, 4, MPI_INT, me, 7, gone));
        MF_CHECK_MPI(MPI_Comm_free(&gone));
        int before = calls;
        rc = all ? MPI_Waitall(1, &req, &st) : MPI_Wait(&req, &st);
        MPI_Error_class(all ? st.MPI_ERROR : rc, &cls);
        MF_CHECK(calls == before + 1 && cls == MPI_ERR_TRUNCATE && req == MPI_REQUEST_NULL,
                 "%s on a freed communicator: %d handler calls, class %d", all ? "Waitall" : "Wait",
                 calls - before, cls);
    }

    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    return mftest_finish();
}
