/*
 * config.h — typed access to the environment variables listed in config_vars.def.
 *
 * Contract: a name not in config_vars.def is a programming error (asserted). Unset or empty
 * variables give the default from the table. MPI_Init calls mf_config_check first, so that a
 * value its variable's check refuses stops start-up with a message; the accessors never see
 * one then (called without that check, the typed ones warn and use the default, mf_config_str
 * returns the text as it is).
 */
#ifndef MF_CORE_CONFIG_H
#define MF_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Checks every variable that is set against its accepted values: MPI_SUCCESS, or an
 * MPI_ERR_ARG code whose message names the first bad variable, its value and what is accepted. */
int mf_config_check(void);
/* Warns once about each MANIFOLD_* name in the environment that is not Manifold's, naming the
 * closest known one (a typo silently does nothing otherwise). Returns how many there were. */
int mf_config_warn_unknown(void);

const char *mf_config_str(const char *name);
long mf_config_long(const char *name);
/* A byte count: digits with an optional K, M or G suffix (powers of 1024). */
size_t mf_config_size(const char *name);
/* The same for a variable whose default the caller computes (listed with an empty default). */
size_t mf_config_size_or(const char *name, size_t def);
bool mf_config_bool(const char *name);

#endif
