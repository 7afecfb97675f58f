/* Error codes that carry messages: see error.h for the encoding. */
#include "core/error.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

static char mf_err_ring[MF_ERR_SLOTS][MPI_MAX_ERROR_STRING];
static unsigned mf_err_next = 1; /* slot 0 means "no message" */
static pthread_mutex_t mf_err_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const mf_class_text[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated on receive",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_AMODE] = "invalid file access mode",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_CONVERSION] = "data conversion error",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_IO] = "I/O error",
    [MPI_ERR_NAME] = "invalid service name",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_NOT_SAME] = "collective arguments differ between processes",
    [MPI_ERR_NO_SPACE] = "no space left",
    [MPI_ERR_NO_SUCH_FILE] = "no such file",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "file is read-only",
    [MPI_ERR_SERVICE] = "invalid service",
    [MPI_ERR_SPAWN] = "spawn failed",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_KEYVAL] = "invalid attribute key",
    [MPI_ERR_RMA_CONFLICT] = "conflicting one-sided accesses",
    [MPI_ERR_RMA_SYNC] = "wrong one-sided synchronisation",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_ASSERT] = "invalid assert",
    [MPI_ERR_RMA_RANGE] = "target memory out of window range",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_T_ERR_MEMORY] = "tool interface: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "tool interface not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "tool interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "tool interface: invalid index",
    [MPI_T_ERR_INVALID_ITEM] = "tool interface: invalid item",
    [MPI_T_ERR_INVALID_HANDLE] = "tool interface: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "tool interface: out of handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "tool interface: out of sessions",
    [MPI_T_ERR_INVALID_SESSION] = "tool interface: invalid session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "control variable cannot be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "performance variable cannot be written",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "performance variable cannot be accessed atomically",
    [MPI_T_ERR_INVALID_NAME] = "tool interface: invalid name",
    [MPI_T_ERR_INVALID] = "tool interface: invalid use",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_PROC_ABORTED] = "peer process aborted or failed",
    [MPI_ERR_VALUE_TOO_LARGE] = "value too large to store",
    [MPI_T_ERR_NOT_SUPPORTED] = "tool interface: not supported",
    [MPI_T_ERR_NOT_ACCESSIBLE] = "tool interface: not accessible",
    [MPI_ERR_ERRHANDLER] = "invalid error handler",
};

#define MF_NUM_CLASSES ((int)(sizeof mf_class_text / sizeof mf_class_text[0]))

const char *mf_error_class_text(int err_class)
{
    if (err_class < 0 || err_class >= MF_NUM_CLASSES)
        return NULL;
    return mf_class_text[err_class];
}

int mf_verror(int err_class, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&mf_err_lock);
    unsigned slot = mf_err_next;
    mf_err_next = mf_err_next % (MF_ERR_SLOTS - 1) + 1;
    vsnprintf(mf_err_ring[slot], MPI_MAX_ERROR_STRING, fmt, ap);
    pthread_mutex_unlock(&mf_err_lock);
    return err_class | (int)(slot << MF_ERR_SLOT_SHIFT);
}

int mf_error(int err_class, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = mf_verror(err_class, fmt, ap);
    va_end(ap);
    return code;
}

int mf_error_class(int code)
{
    if (code >= MF_ERR_DYNAMIC_BASE)
        return code; /* user-added codes are resolved by the api layer (MPI_Add_error_code) */
    return code & MF_ERR_CLASS_MASK;
}

int mf_error_string(int code, char *buf, int *len)
{
    if (code < 0)
        return MPI_ERR_ARG;
    int cls = code & MF_ERR_CLASS_MASK;
    unsigned slot = (unsigned)code >> MF_ERR_SLOT_SHIFT;
    const char *generic = mf_error_class_text(cls);
    if (!generic || slot >= MF_ERR_SLOTS)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&mf_err_lock);
    /* A long message is cut at MPI_MAX_ERROR_STRING, as the standard bounds the buffer; the
     * test of snprintf's result tells GCC (-Wformat-truncation) that the cut is meant. */
    if (slot != 0 && mf_err_ring[slot][0]) {
        if (snprintf(buf, MPI_MAX_ERROR_STRING, "%s (%s)", mf_err_ring[slot], generic) >=
            MPI_MAX_ERROR_STRING)
            buf[MPI_MAX_ERROR_STRING - 1] = '\0';
    } else
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", generic);
    pthread_mutex_unlock(&mf_err_lock);
    *len = (int)strlen(buf);
    return MPI_SUCCESS;
}

int mf_unsupported(const char *function)
{
    return mf_error(MPI_ERR_UNSUPPORTED_OPERATION,
                    "%s is not implemented by Manifold yet (see README, \"Not implemented\")",
                    function);
}
