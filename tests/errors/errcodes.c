/*
 * Error classes and codes (MPI-4.0 9.4, 9.5): every predefined class has a text and is its own
 * class; the codes the library returns are at most MPI_ERR_LASTCODE; classes and codes a
 * program adds lie above it, and the MPI_LASTUSEDCODE attribute (never below MPI_ERR_LASTCODE)
 * follows them; added texts, empty until set, can be replaced; predefined ones cannot. MPI-4.1
 * removes them again (MPI_Remove_error_string/code/class: a value's text before the value, codes
 * before their class); a removed value is no class or code any more, and MPI_LASTUSEDCODE
 * comes back down.
 */
#include <string.h>

#include "mftest.h"

/* Every error class of MPI-4.0 in the ABI header. */
static const int classes[] = {
    MPI_SUCCESS,
    MPI_ERR_BUFFER,
    MPI_ERR_COUNT,
    MPI_ERR_TYPE,
    MPI_ERR_TAG,
    MPI_ERR_COMM,
    MPI_ERR_RANK,
    MPI_ERR_ROOT,
    MPI_ERR_GROUP,
    MPI_ERR_OP,
    MPI_ERR_TOPOLOGY,
    MPI_ERR_DIMS,
    MPI_ERR_ARG,
    MPI_ERR_UNKNOWN,
    MPI_ERR_TRUNCATE,
    MPI_ERR_OTHER,
    MPI_ERR_INTERN,
    MPI_ERR_IN_STATUS,
    MPI_ERR_PENDING,
    MPI_ERR_REQUEST,
    MPI_ERR_ACCESS,
    MPI_ERR_AMODE,
    MPI_ERR_BAD_FILE,
    MPI_ERR_CONVERSION,
    MPI_ERR_DUP_DATAREP,
    MPI_ERR_FILE_EXISTS,
    MPI_ERR_FILE_IN_USE,
    MPI_ERR_FILE,
    MPI_ERR_INFO,
    MPI_ERR_INFO_KEY,
    MPI_ERR_INFO_VALUE,
    MPI_ERR_INFO_NOKEY,
    MPI_ERR_IO,
    MPI_ERR_NAME,
    MPI_ERR_NO_MEM,
    MPI_ERR_NOT_SAME,
    MPI_ERR_NO_SPACE,
    MPI_ERR_NO_SUCH_FILE,
    MPI_ERR_PORT,
    MPI_ERR_QUOTA,
    MPI_ERR_READ_ONLY,
    MPI_ERR_SERVICE,
    MPI_ERR_SPAWN,
    MPI_ERR_UNSUPPORTED_DATAREP,
    MPI_ERR_UNSUPPORTED_OPERATION,
    MPI_ERR_WIN,
    MPI_ERR_BASE,
    MPI_ERR_LOCKTYPE,
    MPI_ERR_KEYVAL,
    MPI_ERR_RMA_CONFLICT,
    MPI_ERR_RMA_SYNC,
    MPI_ERR_SIZE,
    MPI_ERR_DISP,
    MPI_ERR_ASSERT,
    MPI_ERR_RMA_RANGE,
    MPI_ERR_RMA_ATTACH,
    MPI_ERR_RMA_SHARED,
    MPI_ERR_RMA_FLAVOR,
    MPI_T_ERR_MEMORY,
    MPI_T_ERR_NOT_INITIALIZED,
    MPI_T_ERR_CANNOT_INIT,
    MPI_T_ERR_INVALID_INDEX,
    MPI_T_ERR_INVALID_ITEM,
    MPI_T_ERR_INVALID_HANDLE,
    MPI_T_ERR_OUT_OF_HANDLES,
    MPI_T_ERR_OUT_OF_SESSIONS,
    MPI_T_ERR_INVALID_SESSION,
    MPI_T_ERR_CVAR_SET_NOT_NOW,
    MPI_T_ERR_CVAR_SET_NEVER,
    MPI_T_ERR_PVAR_NO_STARTSTOP,
    MPI_T_ERR_PVAR_NO_WRITE,
    MPI_T_ERR_PVAR_NO_ATOMIC,
    MPI_T_ERR_INVALID_NAME,
    MPI_T_ERR_INVALID,
    MPI_ERR_SESSION,
    MPI_ERR_PROC_ABORTED,
    MPI_ERR_VALUE_TOO_LARGE,
    MPI_T_ERR_NOT_SUPPORTED,
    MPI_T_ERR_NOT_ACCESSIBLE,
    MPI_ERR_ERRHANDLER,
};

static int lastused(void)
{
    void *v = NULL;
    int flag = 0;
    MF_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MF_CHECK(flag, "MPI_LASTUSEDCODE not set");
    return flag ? *(int *)v : -1;
}

static int class_of(int code)
{
    int cls = -1;
    MF_CHECK_MPI(MPI_Error_class(code, &cls));
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;

    for (size_t i = 0; i < sizeof classes / sizeof *classes; i++) {
        int c = classes[i];
        MF_CHECK(c <= MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", c);
        MF_CHECK(class_of(c) == c, "class %d is not its own class", c);
        text[0] = 0;
        MF_CHECK_MPI(MPI_Error_string(c, text, &len));
        MF_CHECK(len > 0 && (int)strlen(text) == len, "class %d has no text ('%s')", c, text);
    }

    /* A code the library returned, with its message. */
    int rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MF_CHECK(rc != MPI_SUCCESS && rc <= MPI_ERR_LASTCODE, "library code 0x%x", (unsigned)rc);
    MF_CHECK(class_of(rc) == MPI_ERR_COUNT, "library code's class %d", class_of(rc));

    MF_CHECK(lastused() >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d is below MPI_ERR_LASTCODE",
             lastused());

    int cls1, cls2, code1, code2, code3;
    MF_CHECK_MPI(MPI_Add_error_class(&cls1));
    MF_CHECK(cls1 > MPI_ERR_LASTCODE, "added class 0x%x is not above MPI_ERR_LASTCODE",
             (unsigned)cls1);
    MF_CHECK(lastused() >= cls1, "MPI_LASTUSEDCODE %d below added class %d", lastused(), cls1);
    MF_CHECK_MPI(MPI_Add_error_code(cls1, &code1));
    MF_CHECK_MPI(MPI_Add_error_class(&cls2));
    MF_CHECK_MPI(MPI_Add_error_code(cls2, &code2));
    MF_CHECK_MPI(MPI_Add_error_code(MPI_ERR_TAG, &code3));
    int added[] = {cls1, code1, cls2, code2, code3};
    for (int i = 0; i < 5; i++) {
        MF_CHECK(added[i] > MPI_ERR_LASTCODE, "added value 0x%x", (unsigned)added[i]);
        MF_CHECK(lastused() >= added[i], "MPI_LASTUSEDCODE %d below %d", lastused(), added[i]);
        for (int j = 0; j < i; j++)
            MF_CHECK(added[i] != added[j], "added values %d and %d are equal", i, j);
    }
    MF_CHECK(class_of(cls1) == cls1 && class_of(cls2) == cls2, "added classes");
    MF_CHECK(class_of(code1) == cls1 && class_of(code2) == cls2, "classes of added codes");
    MF_CHECK(class_of(code3) == MPI_ERR_TAG, "class of a code added to MPI_ERR_TAG");

    /* Texts: empty until set, then replaceable; predefined ones are fixed. */
    MF_CHECK_MPI(MPI_Error_string(code2, text, &len));
    MF_CHECK(len == 0 && text[0] == 0, "unset text of an added code: '%s'", text);
    MF_CHECK_MPI(MPI_Add_error_string(cls1, "first class"));
    MF_CHECK_MPI(MPI_Add_error_string(code1, "first code"));
    MF_CHECK_MPI(MPI_Add_error_string(code1, "first code, again"));
    MF_CHECK_MPI(MPI_Error_string(cls1, text, &len));
    MF_CHECK(strcmp(text, "first class") == 0, "class text '%s'", text);
    MF_CHECK_MPI(MPI_Error_string(code1, text, &len));
    MF_CHECK(strcmp(text, "first code, again") == 0 && len == 17, "code text '%s'", text);
    int cls = MPI_SUCCESS;
    rc = MPI_Add_error_string(MPI_ERR_LASTCODE, "x");
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "Add_error_string(MPI_ERR_LASTCODE) gave class %d", cls);
    rc = MPI_Error_string(MPI_ERR_LASTCODE + 1000, text, &len);
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_ARG, "Error_string of a code never added gave class %d", cls);

    /* An added code through an error handler. */
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, code1);
    MF_CHECK(rc == MPI_SUCCESS, "Comm_call_errhandler returned %d", rc);

    /* Removal, in the order MPI-4.1 requires; each misuse is an MPI_ERR_ARG. */
    int before = lastused();
    MF_CHECK_CLASS(MPI_Remove_error_code(code1), MPI_ERR_ARG, "a code whose string is set");
    MF_CHECK_CLASS(MPI_Remove_error_class(cls2), MPI_ERR_ARG, "a class that has a code");
    MF_CHECK_CLASS(MPI_Remove_error_class(code2), MPI_ERR_ARG, "a code given as a class");
    MF_CHECK_CLASS(MPI_Remove_error_code(cls2), MPI_ERR_ARG, "a class given as a code");
    MF_CHECK_CLASS(MPI_Remove_error_string(code2), MPI_ERR_ARG, "a code without a string");
    MF_CHECK_CLASS(MPI_Remove_error_class(MPI_ERR_TAG), MPI_ERR_ARG, "a predefined class");
    MF_CHECK_CLASS(MPI_Remove_error_string(MPI_ERR_OTHER), MPI_ERR_ARG, "a predefined string");
    MF_CHECK_MPI(MPI_Remove_error_string(code1));
    MF_CHECK_MPI(MPI_Error_string(code1, text, &len));
    MF_CHECK(len == 0, "the removed string is still '%s'", text);
    MF_CHECK_MPI(MPI_Remove_error_code(code1));
    MF_CHECK_CLASS(MPI_Error_class(code1, &cls), MPI_ERR_ARG, "the class of a removed code");
    MF_CHECK_CLASS(MPI_Remove_error_code(code1), MPI_ERR_ARG, "a code removed twice");
    MF_CHECK_CLASS(MPI_Remove_error_class(cls1), MPI_ERR_ARG, "a class whose string is set");
    MF_CHECK_MPI(MPI_Remove_error_string(cls1));
    MF_CHECK_MPI(MPI_Remove_error_class(cls1));
    MF_CHECK_CLASS(MPI_Add_error_code(cls1, &code1), MPI_ERR_ARG, "a code of a removed class");
    /* The slot is used again; the last values in use set MPI_LASTUSEDCODE. */
    int again;
    MF_CHECK_MPI(MPI_Add_error_class(&again));
    MF_CHECK(again == cls1 || again == code1, "a new class took 0x%x, not a freed value",
             (unsigned)again);
    MF_CHECK_MPI(MPI_Remove_error_class(again));
    MF_CHECK_MPI(MPI_Remove_error_code(code3));
    MF_CHECK_MPI(MPI_Remove_error_code(code2));
    MF_CHECK_MPI(MPI_Remove_error_class(cls2));
    MF_CHECK(lastused() < before, "MPI_LASTUSEDCODE %d stayed at %d with every value removed",
             lastused(), before);
    return mftest_finish();
}
