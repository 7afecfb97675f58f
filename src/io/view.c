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
#define VIEW_ORIGIN_ADDR ((uintptr_t)1 << 46)
#define VIEW_ORIGIN ((const char *)VIEW_ORIGIN_ADDR)

/* Flattens one element of ft into v->pieces (adjacent pieces merged). */
static int view_flatten(mf_io_view *v, mf_datatype *ft, const char *fn)
{
    size_t size = mf_datatype_info(ft)->dt_size, at = 0;
    int cap = 0;
    v->npieces = 0;
    while (at < size) {
        struct iovec iov[64];
        size_t bytes = 0;
        int n = mf_datatype_iov(ft, VIEW_ORIGIN, 1, at, iov, 64, &bytes);
        if (n <= 0 || bytes == 0)
            return mf_error(MPI_ERR_INTERN, "%s: cannot describe the filetype", fn);
        for (int i = 0; i < n; i++) {
            MPI_Offset disp = (MPI_Offset)((uintptr_t)iov[i].iov_base - VIEW_ORIGIN_ADDR);
            MPI_Offset len = (MPI_Offset)iov[i].iov_len;
            mf_io_piece *last = v->npieces ? &v->pieces[v->npieces - 1] : NULL;
            if (disp < 0 || (last && disp < last->disp + last->len))
                return mf_error(MPI_ERR_TYPE,
                                "%s: the filetype's displacements are negative, go backwards or "
                                "overlap (a filetype's must be non-negative and increasing)",
                                fn);
            if (last && disp == last->disp + last->len) {
                last->len += len;
            } else {
                if (v->npieces == cap) {
                    cap = cap ? 2 * cap : 8;
                    mf_io_piece *p = realloc(v->pieces, (size_t)cap * sizeof *p);
                    if (!p)
                        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for the view", fn);
                    v->pieces = p;
                }
                v->pieces[v->npieces++] =
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
    if (disp < 0)
        return mf_error(MPI_ERR_ARG, "%s: disp=%lld is negative", fn, (long long)disp);
    /* In a representation that converts, the view is the types' layout in the file's bytes. */
    const mf_io_datarep *rep = NULL;
    mf_datatype *fe = NULL, *ft = NULL;
    int rc = mf_io_datarep_view(datarep, etype, filetype, &rep, &fe, &ft, fn);
    if (rc)
        return rc;
    const struct mf_datatype_public *e = mf_datatype_info(fe), *t = mf_datatype_info(ft);
    if (e->dt_size == 0)
        rc = mf_error(MPI_ERR_TYPE, "%s: etype holds no data", fn);
    else if (t->dt_size == 0 || t->dt_size % e->dt_size != 0)
        rc = mf_error(MPI_ERR_TYPE,
                      "%s: filetype holds %zu bytes, not a positive multiple of the etype's %zu",
                      fn, t->dt_size, e->dt_size);
    else if (t->dt_extent <= 0)
        rc = mf_error(MPI_ERR_TYPE, "%s: filetype has extent %ld", fn, (long)t->dt_extent);
    mf_io_view g = {.pieces = NULL};
    if (!rc)
        rc = view_flatten(&g, ft, fn);
    size_t etype_size = e->dt_size, ft_size = t->dt_size;
    MPI_Offset ft_extent = (MPI_Offset)t->dt_extent;
    if (rep) {
        mf_datatype_relayout_free(fe);
        mf_datatype_relayout_free(ft);
    }
    if (rc) {
        free(g.pieces);
        return rc;
    }
    free(f->view.pieces);
    f->view = g;
    const mf_io_piece *last = &g.pieces[g.npieces - 1];
    f->view.tiled = last->disp + last->len <= g.pieces[0].disp + ft_extent;
    mf_datatype_retain(etype);
    mf_datatype_retain(filetype);
    mf_datatype_release(f->etype);
    mf_datatype_release(f->filetype);
    f->etype = etype;
    f->filetype = filetype;
    f->rep = rep;
    f->etype_size = etype_size;
    f->view.ft_size = ft_size;
    f->view.ft_extent = ft_extent;
    f->view.disp = disp;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->pos = 0;
    return MPI_SUCCESS;
}

void mf_io_cursor_at(const mf_io_view *v, MPI_Offset s, mf_io_cursor *c)
{
    MPI_Offset r = s % (MPI_Offset)v->ft_size;
    int lo = 0, hi = v->npieces - 1;
    while (lo < hi) { /* the last piece that starts at or before r */
        int mid = (lo + hi + 1) / 2;
        if (v->pieces[mid].before <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    c->k = s / (MPI_Offset)v->ft_size;
    c->i = lo;
    c->in = r - v->pieces[lo].before;
}

static MPI_Offset view_cursor_pos(const mf_io_view *v, const mf_io_cursor *c)
{
    return v->disp + c->k * v->ft_extent + v->pieces[c->i].disp + c->in;
}

/* Moves the cursor n bytes on (n at most what is left of its piece). */
static void view_cursor_step(const mf_io_view *v, mf_io_cursor *c, size_t n)
{
    c->in += (MPI_Offset)n;
    if (c->in < v->pieces[c->i].len)
        return;
    c->in = 0;
    if (++c->i == v->npieces) {
        c->i = 0;
        c->k++;
    }
}

/* A view without holes (the default one, of bytes): its stream is the file from disp. */
static bool view_dense(const mf_io_view *v)
{
    return v->npieces == 1 && v->pieces[0].disp == 0 && v->pieces[0].len == v->ft_extent;
}

MPI_Offset mf_io_next_run(const mf_io_view *v, mf_io_cursor *c, size_t left, size_t *run)
{
    MPI_Offset at = view_cursor_pos(v, c);
    if (view_dense(v)) {
        *run = left; /* one run */
        c->k += (c->in + (MPI_Offset)left) / v->ft_extent;
        c->in = (c->in + (MPI_Offset)left) % v->ft_extent;
        return at;
    }
    *run = 0;
    do {
        size_t piece = (size_t)(v->pieces[c->i].len - c->in),
               take = piece < left - *run ? piece : left - *run;
        *run += take;
        view_cursor_step(v, c, take);
    } while (*run < left && view_cursor_pos(v, c) == at + (MPI_Offset)*run);
    return at;
}

MPI_Offset mf_io_view_pos(const mf_io_view *v, MPI_Offset s)
{
    mf_io_cursor c;
    mf_io_cursor_at(v, s, &c);
    return view_cursor_pos(v, &c);
}

MPI_Offset mf_io_view_span(const mf_io_view *v, MPI_Offset s, size_t len, size_t *span)
{
    if (!v->tiled) { /* instances out of order: everything from the view's start */
        *span = 0;
        return v->disp;
    }
    MPI_Offset first = mf_io_view_pos(v, s);
    *span = (size_t)(mf_io_view_pos(v, s + (MPI_Offset)len - 1) + 1 - first);
    return first;
}

MPI_Offset mf_io_view_before(const mf_io_view *v, MPI_Offset p)
{
    /* An instance's pieces lie in [base, base + ft_extent) from its start (v->tiled). */
    MPI_Offset base = v->pieces[0].disp;
    if (p <= v->disp + base)
        return 0;
    MPI_Offset k = (p - v->disp - base) / v->ft_extent,
               r = (p - v->disp - base) % v->ft_extent + base;
    int lo = 0, hi = v->npieces; /* the pieces that start before r: [0, lo) */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v->pieces[mid].disp < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) /* r is the instance's first byte */
        return k * (MPI_Offset)v->ft_size;
    const mf_io_piece *q = &v->pieces[lo - 1];
    return k * (MPI_Offset)v->ft_size + q->before + (r - q->disp < q->len ? r - q->disp : q->len);
}

void mf_io_view_copy(const mf_io_view *v, bool to_win, MPI_Offset s, size_t len, char *mem,
                     char *win, MPI_Offset base)
{
    mf_io_cursor c;
    mf_io_cursor_at(v, s, &c);
    size_t m = 0;
    while (m < len) {
        size_t run;
        char *w = win + (mf_io_next_run(v, &c, len - m, &run) - base);
        memcpy(to_win ? w : mem + m, to_win ? mem + m : w, run);
        m += run;
        if (v->npieces != 1 || c.in != 0)
            continue;
        /* One piece per instance (a vector's column, the ranks' interleaved records): a strided
         * copy of whole pieces, without the cursor's steps. */
        size_t piece = (size_t)v->pieces[0].len;
        char *at = win + (view_cursor_pos(v, &c) - base);
        for (; len - m >= piece; m += piece, at += v->ft_extent, c.k++)
            memcpy(to_win ? at : mem + m, to_win ? mem + m : at, piece);
    }
}

const char *mf_io_view_header_invalid(const MPI_Offset *h, MPI_Offset max_pieces)
{
    if (h[MF_IO_VH_DISP] < 0)
        return "a negative displacement";
    if (h[MF_IO_VH_SIZE] <= 0 || h[MF_IO_VH_EXTENT] <= 0)
        return "a filetype size or extent that is not positive";
    if (h[MF_IO_VH_NPIECES] < 1 || h[MF_IO_VH_NPIECES] > max_pieces ||
        h[MF_IO_VH_NPIECES] > h[MF_IO_VH_SIZE])
        return "a count of pieces out of range";
    if (h[MF_IO_VH_TILED] != 0 && h[MF_IO_VH_TILED] != 1)
        return "a flag that is neither 0 nor 1";
    if (h[MF_IO_VH_CB_BUF] <= 0 || h[MF_IO_VH_CB_NODES] < 0 || h[MF_IO_VH_CB_NODES] > INT32_MAX)
        return "a cb_buffer_size or cb_nodes hint out of range";
    for (int w = MF_IO_VH_CB_READ; w <= MF_IO_VH_CB_WRITE; w++)
        if (h[w] != MF_IO_CB_AUTO && h[w] != MF_IO_CB_ENABLE && h[w] != MF_IO_CB_DISABLE)
            return "an unknown collective buffering mode";
    return NULL;
}

const char *mf_io_view_invalid(const mf_io_view *v)
{
    if (v->disp < 0 || v->ft_extent <= 0 || v->ft_size == 0 || v->ft_size > INT64_MAX ||
        v->npieces < 1 || !v->tiled)
        return "a header out of range";
    const mf_io_piece *first = &v->pieces[0];
    MPI_Offset sum = 0, end = 0, limit;
    if (first->disp < 0 || __builtin_add_overflow(first->disp, v->ft_extent, &limit))
        return "a first piece out of range";
    for (int i = 0; i < v->npieces; i++) {
        const mf_io_piece *p = &v->pieces[i];
        if (p->len <= 0 || p->disp < end || p->before != sum)
            return "pieces out of order, empty or overlapping";
        if (__builtin_add_overflow(p->disp, p->len, &end) || end > limit)
            return "a piece beyond one extent of the first";
        sum += p->len; /* no overflow: end - first->disp bounds it */
    }
    if (sum != (MPI_Offset)v->ft_size)
        return "pieces that do not hold the filetype's size";
    return NULL;
}

MPI_Offset mf_io_byte_offset(const mf_file *f, MPI_Offset offset)
{
    return mf_io_view_pos(&f->view, offset * (MPI_Offset)f->etype_size);
}

MPI_Offset mf_io_view_end(const mf_file *f, MPI_Offset file_size)
{
    if (file_size <= f->view.disp)
        return 0;
    /* Each etype takes at least etype_size bytes of the file, so the answer is at most this. */
    MPI_Offset lo = 0, hi = (file_size - f->view.disp) / (MPI_Offset)f->etype_size + 1;
    while (lo < hi) { /* the first etype that starts at or after the end */
        MPI_Offset mid = lo + (hi - lo) / 2;
        if (mf_io_byte_offset(f, mid) >= file_size)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
