/*
 * view.c — a file's view (MPI_File_set_view): the filetype flattened into byte pieces, and the
 * map from view offsets (etypes) to byte positions in the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/error.h"
#include "io/io.h"

/* Any address: mf_datatype_iov only computes with it, so each piece's distance from it is the
 * piece's displacement in the type. */
#define VIEW_ORIGIN ((const char *)0 + ((uintptr_t)1 << 46))

/* Flattens one element of ft into f->pieces (adjacent pieces merged). */
static int view_flatten(mf_file *f, mf_datatype *ft, const char *fn)
{
    size_t size = mf_datatype_info(ft)->dt_size, at = 0;
    int cap = 0;
    f->npieces = 0;
    while (at < size) {
        struct iovec iov[64];
        size_t bytes = 0;
        int n = mf_datatype_iov(ft, VIEW_ORIGIN, 1, at, iov, 64, &bytes);
        if (n <= 0 || bytes == 0)
            return mf_error(MPI_ERR_INTERN, "%s: cannot describe the filetype", fn);
        for (int i = 0; i < n; i++) {
            MPI_Offset disp = (MPI_Offset)((const char *)iov[i].iov_base - VIEW_ORIGIN);
            MPI_Offset len = (MPI_Offset)iov[i].iov_len;
            mf_io_piece *last = f->npieces ? &f->pieces[f->npieces - 1] : NULL;
            if (disp < 0 || (last && disp < last->disp + last->len))
                return mf_error(MPI_ERR_TYPE,
                                "%s: the filetype's displacements are negative, go backwards or "
                                "overlap (a filetype's must be non-negative and increasing)",
                                fn);
            if (last && disp == last->disp + last->len) {
                last->len += len;
            } else {
                if (f->npieces == cap) {
                    cap = cap ? 2 * cap : 8;
                    mf_io_piece *p = realloc(f->pieces, (size_t)cap * sizeof *p);
                    if (!p)
                        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for the view", fn);
                    f->pieces = p;
                }
                f->pieces[f->npieces++] =
                    (mf_io_piece){.disp = disp, .len = len, .before = (MPI_Offset)at};
            }
            at += iov[i].iov_len;
        }
    }
    return MPI_SUCCESS;
}

int mf_io_set_view(mf_file *f, MPI_Offset disp, mf_datatype *etype, mf_datatype *filetype,
                   const char *datarep, const char *fn)
{
    const struct mf_datatype_public *e = mf_datatype_info(etype), *t = mf_datatype_info(filetype);
    int drc = mf_io_datarep_check(datarep, etype, filetype, fn);
    if (drc)
        return drc;
    if (disp < 0)
        return mf_error(MPI_ERR_ARG, "%s: disp=%lld is negative", fn, (long long)disp);
    if (e->dt_size == 0)
        return mf_error(MPI_ERR_TYPE, "%s: etype holds no data", fn);
    if (t->dt_size == 0 || t->dt_size % e->dt_size != 0)
        return mf_error(MPI_ERR_TYPE,
                        "%s: filetype holds %zu bytes, not a positive multiple of the etype's %zu",
                        fn, t->dt_size, e->dt_size);
    if (t->dt_extent <= 0)
        return mf_error(MPI_ERR_TYPE, "%s: filetype has extent %ld", fn, (long)t->dt_extent);
    mf_file g = {.pieces = NULL};
    int rc = view_flatten(&g, filetype, fn);
    if (rc) {
        free(g.pieces);
        return rc;
    }
    free(f->pieces);
    f->pieces = g.pieces;
    f->npieces = g.npieces;
    mf_datatype_retain(etype);
    mf_datatype_retain(filetype);
    mf_datatype_release(f->etype);
    mf_datatype_release(f->filetype);
    f->etype = etype;
    f->filetype = filetype;
    f->etype_size = e->dt_size;
    f->ft_size = t->dt_size;
    f->ft_extent = (MPI_Offset)t->dt_extent;
    f->disp = disp;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->pos = 0;
    return MPI_SUCCESS;
}

void mf_io_view_locate(const mf_file *f, MPI_Offset s, MPI_Offset *k, int *i, MPI_Offset *in)
{
    MPI_Offset r = s % (MPI_Offset)f->ft_size;
    int lo = 0, hi = f->npieces - 1;
    while (lo < hi) { /* the last piece that starts at or before r */
        int mid = (lo + hi + 1) / 2;
        if (f->pieces[mid].before <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    *k = s / (MPI_Offset)f->ft_size;
    *i = lo;
    *in = r - f->pieces[lo].before;
}

MPI_Offset mf_io_view_piece(const mf_file *f, MPI_Offset s, MPI_Offset *avail)
{
    MPI_Offset k, in;
    int i;
    mf_io_view_locate(f, s, &k, &i, &in);
    *avail = f->pieces[i].len - in;
    return f->disp + k * f->ft_extent + f->pieces[i].disp + in;
}

MPI_Offset mf_io_byte_offset(const mf_file *f, MPI_Offset offset)
{
    MPI_Offset avail;
    return mf_io_view_piece(f, offset * (MPI_Offset)f->etype_size, &avail);
}

MPI_Offset mf_io_view_end(const mf_file *f, MPI_Offset file_size)
{
    if (file_size <= f->disp)
        return 0;
    /* Each etype takes at least etype_size bytes of the file, so the answer is at most this. */
    MPI_Offset lo = 0, hi = (file_size - f->disp) / (MPI_Offset)f->etype_size + 1;
    while (lo < hi) { /* the first etype that starts at or after the end */
        MPI_Offset mid = lo + (hi - lo) / 2;
        if (mf_io_byte_offset(f, mid) >= file_size)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
