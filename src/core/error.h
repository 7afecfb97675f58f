/*
 * error.h — MPI error codes with messages, and error-handler dispatch.
 *
 * An error code returned by Manifold carries its class (MPI_ERR_*) and, where the failure has a
 * story, a message: code = class | (slot << MF_ERR_SLOT_SHIFT), where slot indexes a ring of
 * recent messages. MPI_Error_class(code) gives the class back; MPI_Error_string(code) gives the
 * message ("MPI_Send: count=-1 is negative"), or the class's generic text once the ring has
 * wrapped. Every such code is at most MPI_ERR_LASTCODE (the ABI's 0x3fffffff); classes and
 * codes added by MPI_Add_error_class/code start at MF_ERR_DYNAMIC_BASE, just above it, as the
 * standard asks of them and of the MPI_LASTUSEDCODE attribute.
 *
 * Inside the library every function that can fail returns an int: MPI_SUCCESS or such a code.
 * API entry points hand non-success codes to the error handler of the object involved
 * (mf_errhandler_comm etc., see errhandler.h), which aborts, returns, or calls the user's handler.
 */
#ifndef MF_CORE_ERROR_H
#define MF_CORE_ERROR_H

#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>

#define MF_ERR_CLASS_MASK 0x7f
#define MF_ERR_SLOT_SHIFT 7
#define MF_ERR_SLOTS 256
#define MF_ERR_DYNAMIC_BASE (MPI_ERR_LASTCODE + 1) /* user classes/codes, MPI_Add_error_* */

/* Builds an error code of class `err_class` whose message is the formatted text. By convention the
 * text starts with the MPI function and names the argument: "MPI_Recv: rank=9 is not in comm
 * (size 4)". Thread-safe. */
int mf_error(int err_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int mf_verror(int err_class, const char *fmt, va_list ap);

/* The class of any code (predefined, with message, or user-added). */
int mf_error_class(int code);
/* Writes the text of `code` into buf (at most MPI_MAX_ERROR_STRING bytes incl. NUL). Returns 0,
 * or MPI_ERR_ARG if the code is not one Manifold knows. */
int mf_error_string(int code, char *buf, int *len);
/* Generic text of a predefined class, or NULL. */
const char *mf_error_class_text(int err_class);

/* Raised by every exported function Manifold does not implement yet. */
int mf_unsupported(const char *function);

/* ---- Classes, codes and texts a program adds (MPI_Add_error_*, error_added.c) ------------- */
/* The largest error code or class in use (the MPI_LASTUSEDCODE attribute): MPI_ERR_LASTCODE
 * until the program adds one. */
int mf_error_last_used(void);
/* Class and text of a code added with MPI_Add_error_code/class: 0 if `code` is such a code
 * (text may be "" when none was set), MPI_ERR_ARG otherwise. */
int mf_error_dynamic(int code, int *err_class, const char **text);
/* Whether `c` is a predefined class or an added class (not an added code). */
bool mf_error_is_class(int c);
/* Adds a code of class `err_class`, or a new class when err_class < 0; *out = the value. */
int mf_error_add(int err_class, int *out);
/* Sets the text of an added code or class: MPI_ERR_ARG if `code` was not added, MPI_ERR_NO_MEM. */
int mf_error_add_text(int code, const char *text);
/* MPI-4.1 removal, for entry point `fn`: of the text of an added code or class, of an added
 * code (its text removed before) or of an added class (its codes and text removed before). An
 * MPI_ERR_ARG code naming what is wrong otherwise. */
typedef enum { MF_ERROR_REMOVE_TEXT, MF_ERROR_REMOVE_CODE, MF_ERROR_REMOVE_CLASS } mf_error_removal;
int mf_error_remove(int code, mf_error_removal what, const char *fn);

#endif
