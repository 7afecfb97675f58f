/*
 * attr.h — attribute caching on communicators, datatypes and windows (MPI-4.0 section 7.7).
 *
 * A keyval is created for one kind of object with a copy and a delete callback. Attributes
 * attached to an object form a list owned by that object: communicators keep theirs in
 * c_attrs; datatypes and windows keep theirs in a side table here, keyed by handle, so the
 * datatype and RMA layers only have to call the hooks below at dup and free time:
 *   MPI_Type_dup:  mf_attr_type_copy(oldtype, newtype)   (runs the copy callbacks)
 *   MPI_Type_free: mf_attr_type_free(type)               (runs the delete callbacks; the
 *                  datatype layer, below this one, calls it as its free hook, which this file
 *                  sets when a type first gets attributes)
 *   MPI_Win_free:  mf_attr_win_free(win)
 * All three return an MPI error code (a callback's failure), MPI_SUCCESS otherwise.
 *
 * The callbacks of every kind have the same shape with an int handle (all handles are ints in
 * this ABI), so one implementation serves the three kinds.
 */
#ifndef MF_COMM_ATTR_H
#define MF_COMM_ATTR_H

#include <mpi.h>

typedef enum mf_attr_kind { MF_ATTR_COMM = 1, MF_ATTR_TYPE = 2, MF_ATTR_WIN = 3 } mf_attr_kind;

struct mf_attr_list; /* opaque list head; NULL is the empty list */

int mf_keyval_create(mf_attr_kind kind, void (*copy_fn)(void), void (*delete_fn)(void),
                     void *extra_state, int *keyval, const char *function);
int mf_keyval_free(mf_attr_kind kind, int *keyval, const char *function);

/* `obj` is the handle the callbacks receive. */
int mf_attr_set(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval, void *value,
                const char *function);
/* *(void **)value_out receives the value when *flag is set. Predefined communicator keyvals
 * (MPI_TAG_UB...) are answered here for every communicator. */
int mf_attr_get(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval, void *value_out,
                int *flag, const char *function);
int mf_attr_delete(mf_attr_kind kind, int obj, struct mf_attr_list **list, int keyval,
                   const char *function);
/* Runs the copy callbacks of src's attributes for a new object `newobj`. On failure *dst holds
 * what was copied so far (the caller deletes it with mf_attr_delete_all). */
int mf_attr_copy_all(mf_attr_kind kind, int oldobj, struct mf_attr_list *src, int newobj,
                     struct mf_attr_list **dst);
/* Deletes every attribute, calling delete callbacks, the last set first; the list ends empty.
 * Returns the first callback failure. */
int mf_attr_delete_all(mf_attr_kind kind, int obj, struct mf_attr_list **list);

/* The side-table list of a datatype or window (created on demand when `create`). */
struct mf_attr_list **mf_attr_side_list(mf_attr_kind kind, int obj, int create);
int mf_attr_type_copy(MPI_Datatype oldtype, MPI_Datatype newtype);
int mf_attr_type_free(MPI_Datatype type);
int mf_attr_win_free(MPI_Win win);

#endif
