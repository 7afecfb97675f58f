/*
 * config.h — typed access to the environment variables listed in config_vars.def.
 *
 * Contract: a name not in config_vars.def is a programming error (asserted). Unset or empty
 * variables give the default from the table. Malformed values (a size with junk after it) are
 * reported once with mf_warn and the default is used, so a typo never silently changes behaviour.
 */
#ifndef MF_CORE_CONFIG_H
#define MF_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

const char *mf_config_str(const char *name);
long mf_config_long(const char *name);
/* A byte count: digits with an optional K, M or G suffix (powers of 1024). */
size_t mf_config_size(const char *name);
/* The same for a variable whose default the caller computes (listed with an empty default). */
size_t mf_config_size_or(const char *name, size_t def);
bool mf_config_bool(const char *name);

#endif
