/*
 * fault.h — the fault-injection wrapper (fault.c describes the faults and MANIFOLD_FAULT).
 * Used by the registry only; a class like the others otherwise (mf_fault_class).
 */
#ifndef MF_FABRIC_FAULT_FAULT_H
#define MF_FABRIC_FAULT_FAULT_H

#include <stddef.h>

#include "fabric/fabric.h"

/* Each -1 when not asked for. */
typedef struct mf_fault_settings {
    long long delay_us, break_after_bytes, break_after_ms, down_ms, up_ms;
} mf_fault_settings;

typedef struct mf_fault_entry {
    char instance[16]; /* the wrapped instance's name, "tcp0" */
    mf_fault_settings set;
} mf_fault_entry;

#define MF_FAULT_MAX 8

extern const mf_fabric_class mf_fault_class;

/* Parses MANIFOLD_FAULT: the number of entries, or -1 with `why` filled. */
int mf_fault_parse(const char *spec, mf_fault_entry *out, int max, char *why, size_t whylen);
/* Makes f (a new instance of mf_fault_class) wrap `inner` with `set`. */
void mf_fault_wrap(mf_fabric *f, mf_fabric *inner, const mf_fault_settings *set);

#endif
