/*
 * info.h — info objects (MPI-4.0 section 10): ordered (key, value) string pairs.
 *
 * Layers that take hints (communicators, windows, files, spawn) resolve an MPI_Info with
 * mf_info_get and read keys with mf_info_lookup. Objects are reference counted so that a
 * communicator can keep its hints while the user frees the handle it passed.
 */
#ifndef MF_COMM_INFO_H
#define MF_COMM_INFO_H

#include <mpi.h>

typedef struct mf_info mf_info;

/* The object behind a handle (incl. MPI_INFO_ENV), or NULL if invalid or MPI_INFO_NULL. */
mf_info *mf_info_get(MPI_Info handle);
/* The value of key, or NULL. The pointer stays valid until the key is set or deleted. */
const char *mf_info_lookup(const mf_info *info, const char *key);
int mf_info_nkeys(const mf_info *info);
const char *mf_info_nthkey(const mf_info *info, int n);

int mf_info_new(mf_info **out); /* empty, one reference, no handle */
int mf_info_dup(const mf_info *src, mf_info **out);
int mf_info_set(mf_info *info, const char *key, const char *value); /* copies both */
int mf_info_remove(mf_info *info, const char *key);                 /* 1 if removed, 0 if absent */
/* Gives info a user handle if it has none and takes a reference for the user. */
int mf_info_to_handle(mf_info *info, MPI_Info *out);
void mf_info_retain(mf_info *info);
void mf_info_release(mf_info *info); /* NULL is fine */

/* The "thread_level" values (MPI_INFO_ENV, sessions): the name of a level (NULL if none), and
 * the level a name gives (case-insensitive; -1 if none). */
const char *mf_info_thread_level_name(int level);
int mf_info_thread_level_parse(const char *name);

#endif
