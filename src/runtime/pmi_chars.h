/*
 * pmi_chars.h — validation of PMI keys and values, shared by the PMI-1 and PMI-2 codecs, which
 * differ only in which bytes they allow (each passes its own predicate). Header-only so that each
 * codec still builds alone (mpiexec and the fuzz targets compile one codec file each).
 */
#ifndef MF_RUNTIME_PMI_CHARS_H
#define MF_RUNTIME_PMI_CHARS_H

/* 1 if s is non-NULL, non-empty when `nonempty`, and every byte satisfies ok(); else 0. */
static inline int mf_pmi_chars_ok(const char *s, int (*ok)(unsigned char c), int nonempty)
{
    if (!s || (nonempty && !*s))
        return 0;
    for (; *s; s++)
        if (!ok((unsigned char)*s))
            return 0;
    return 1;
}

#endif
