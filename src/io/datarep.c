/*
 * datarep.c — data representations (MPI-4.0 section 14.5): "native" and "internal" (the bytes
 * as memory holds them), "external32" (big-endian, fixed sizes: src/datatype/external32.c), and
 * those the program registers (MPI_Register_datarep).
 *
 * A registered representation whose conversion functions are both MPI_CONVERSION_FN_NULL keeps
 * the data as it is in memory, so a view may use it wherever its extent function gives the
 * etype and filetype their native extents, and it is then "native" here. The others convert:
 *   - the view's etype and filetype are relaid in the representation (mf_datatype_relayout:
 *     every basic type takes its size there), and the view is flattened from those, so offsets,
 *     file pointers and the collective accesses all count the file's bytes;
 *   - an access converts the whole of the user's data at once, between the user's buffer and a
 *     buffer of the file's bytes (mf_io_conv_begin), and moves that buffer as bytes through the
 *     view; a read converts back what it read, whole basic elements, when it completes
 *     (mf_io_conv_end: at once for a blocking access, in the progress engine for a nonblocking
 *     one), and the status counts the bytes in memory;
 *   - a registered representation's conversion functions are called with the user's datatype,
 *     the number of basic items, and their position in the datatype tiled over the buffer
 *     (whole elements at a time, so that the int form's count never overflows); a direction
 *     whose function is MPI_CONVERSION_FN_NULL copies the bytes, which needs the representation
 *     to give the types their native sizes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"

struct mf_io_datarep {
    struct mf_io_datarep *next;
    char name[MPI_MAX_DATAREP_STRING];
    bool external32;
    /* Registered: the conversion functions (either form, or none) and the extent function. */
    MPI_Datarep_conversion_function *read, *write;
    MPI_Datarep_conversion_function_c *read_c, *write_c;
    MPI_Datarep_extent_function *extent;
    void *state;
};

static mf_io_datarep io_external32 = {.name = "external32", .external32 = true};
static mf_io_datarep *datareps;

static mf_io_datarep *io_datarep_find(const char *name)
{
    if (strcmp(name, io_external32.name) == 0)
        return &io_external32;
    for (mf_io_datarep *d = datareps; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

static bool io_datarep_native(const char *name)
{
    return strcmp(name, "native") == 0 || strcmp(name, "internal") == 0;
}

static bool io_datarep_converts(const mf_io_datarep *d)
{
    return d->external32 || d->read || d->write || d->read_c || d->write_c;
}

int mf_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read,
                           MPI_Datarep_conversion_function *write,
                           MPI_Datarep_conversion_function_c *read_c,
                           MPI_Datarep_conversion_function_c *write_c,
                           MPI_Datarep_extent_function *extent, void *state, const char *fn)
{
    if (strlen(name) >= MPI_MAX_DATAREP_STRING)
        return mf_error(MPI_ERR_ARG, "%s: datarep is longer than MPI_MAX_DATAREP_STRING - 1 (%d)",
                        fn, MPI_MAX_DATAREP_STRING - 1);
    if (io_datarep_native(name) || io_datarep_find(name))
        return mf_error(MPI_ERR_DUP_DATAREP, "%s: datarep \"%s\" is already defined", fn, name);
    mf_io_datarep *d = calloc(1, sizeof *d);
    if (!d)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a datarep", fn);
    memcpy(d->name, name, strlen(name) + 1);
    d->read = read;
    d->write = write;
    d->read_c = read_c;
    d->write_c = write_c;
    d->extent = extent;
    d->state = state;
    d->next = datareps;
    datareps = d;
    return MPI_SUCCESS;
}

/* mf_datatype_rep_fn of a representation: a basic type's size in it. */
static int io_datarep_size(MPI_Datatype basic, MPI_Aint *size, void *ctx)
{
    const mf_io_datarep *d = ctx;
    if (d->external32)
        return mf_datatype_external32_size(basic, size, NULL);
    *size = 0;
    int rc = d->extent(basic, size, d->state);
    if (rc == MPI_SUCCESS && *size < 0)
        rc = mf_error(MPI_ERR_CONVERSION,
                      "datarep \"%s\": the extent function gave a type a negative extent (%ld)",
                      d->name, (long)*size);
    return rc;
}

/* A representation without conversion functions: whether it gives dt's basic types their
 * native sizes (its extent function is asked about predefined types only). */
static int io_datarep_extent_ok(mf_io_datarep *d, const mf_datatype *dt, const char *fn)
{
    size_t rs = 0, ns = mf_datatype_info(dt)->dt_size;
    int rc = mf_datatype_rep_size(dt, io_datarep_size, d, &rs);
    if (rc)
        return rc;
    if (rs != ns)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP,
                        "%s: datarep \"%s\" has no conversion functions but gives a type %zu "
                        "bytes in the file against %zu in memory",
                        fn, d->name, rs, ns);
    return MPI_SUCCESS;
}

int mf_io_datarep_view(const char *name, mf_datatype *etype, mf_datatype *filetype,
                       const mf_io_datarep **rep, mf_datatype **fetype, mf_datatype **ffiletype,
                       const char *fn)
{
    *rep = NULL;
    *fetype = etype;
    *ffiletype = filetype;
    if (io_datarep_native(name))
        return MPI_SUCCESS;
    mf_io_datarep *d = io_datarep_find(name);
    if (!d)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP,
                        "%s: datarep=\"%s\" is neither \"native\", \"internal\", \"external32\" "
                        "nor registered with MPI_Register_datarep",
                        fn, name);
    if (!io_datarep_converts(d)) {
        int rc = io_datarep_extent_ok(d, etype, fn);
        return rc ? rc : io_datarep_extent_ok(d, filetype, fn);
    }
    int rc = mf_datatype_relayout(etype, io_datarep_size, d, fetype);
    if (!rc)
        rc = mf_datatype_relayout(filetype, io_datarep_size, d, ffiletype);
    if (rc) {
        if (*fetype != etype)
            mf_datatype_relayout_free(*fetype);
        *fetype = etype;
        *ffiletype = filetype;
        return rc;
    }
    *rep = d;
    return MPI_SUCCESS;
}

int mf_io_datarep_extent(const mf_io_datarep *rep, const mf_datatype *dt, MPI_Count *extent)
{
    if (!rep) {
        *extent = mf_datatype_info(dt)->dt_extent;
        return MPI_SUCCESS;
    }
    mf_datatype *r = NULL;
    int rc = mf_datatype_relayout(dt, io_datarep_size, (void *)rep, &r);
    if (!rc)
        *extent = mf_datatype_info(r)->dt_extent;
    mf_datatype_relayout_free(r);
    return rc;
}

/* ---- Conversions ---- */

/* Basic items in one element of dt. */
static MPI_Count io_basic_per(const mf_datatype *dt)
{
    MPI_Count whole = 0, basic = 0;
    mf_datatype_count(dt, mf_datatype_info(dt)->dt_size, &whole, &basic);
    return basic;
}

struct mf_io_conv {
    const mf_io_datarep *rep;
    bool write;
    void *buf;
    MPI_Count count;
    mf_datatype *dt; /* held */
    size_t rsize;    /* bytes of one element of dt in the representation */
    char *filebuf;   /* count * rsize bytes */
    const char *fn;
};

void *mf_io_conv_buf(const mf_io_conv *c)
{
    return c->filebuf;
}

size_t mf_io_conv_bytes(const mf_io_conv *c)
{
    return (size_t)c->count * c->rsize;
}

/* Calls a registered conversion function over the user's elements and their place in filebuf,
 * whole elements at a time, as many basic items as the int form can count at once, `items` in
 * all (fewer than the elements hold after a read that ended early). */
static int io_conv_call(const mf_io_conv *c, bool to_file, MPI_Count items)
{
    const mf_io_datarep *d = c->rep;
    MPI_Datarep_conversion_function *fi = to_file ? d->write : d->read;
    MPI_Datarep_conversion_function_c *fc = to_file ? d->write_c : d->read_c;
    MPI_Count per = io_basic_per(c->dt), n = c->count;
    MPI_Datatype h = mf_datatype_info(c->dt)->dt_handle;
    MPI_Count step = fc || per == 0 ? n : (INT_MAX / per > 0 ? INT_MAX / per : 1);
    for (MPI_Count e = 0; e < n && items > 0; e += step) {
        MPI_Count k = n - e < step ? n - e : step;
        MPI_Count m = k * per < items ? k * per : items;
        char *fb = c->filebuf + (size_t)e * c->rsize;
        int rc = fc ? fc(c->buf, h, m, fb, (MPI_Offset)(e * per), d->state)
                    : fi(c->buf, h, (int)m, fb, (MPI_Offset)(e * per), d->state);
        if (rc != MPI_SUCCESS)
            return mf_error(MPI_ERR_CONVERSION,
                            "%s: the %s conversion function of datarep \"%s\" returned %d", c->fn,
                            to_file ? "write" : "read", d->name, rc);
        items -= m;
    }
    return MPI_SUCCESS;
}

/* No function for this direction: the bytes are copied, which the sizes must allow. */
static int io_conv_copy(const mf_io_conv *c, bool to_file, size_t mem_bytes)
{
    if (c->rsize != mf_datatype_info(c->dt)->dt_size)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP,
                        "%s: datarep \"%s\" has no %s conversion function, and its extent "
                        "function gives the data %zu bytes per element against %zu in memory",
                        c->fn, c->rep->name, to_file ? "write" : "read", c->rsize,
                        mf_datatype_info(c->dt)->dt_size);
    if (to_file)
        mf_datatype_pack(c->dt, c->buf, (size_t)c->count, 0, c->filebuf, mem_bytes);
    else
        mf_datatype_unpack(c->dt, c->buf, (size_t)c->count, 0, c->filebuf, mem_bytes);
    return MPI_SUCCESS;
}

/* external32, back to memory: `whole` elements, then the first `mem_tail` bytes of the next
 * one (a read that ended inside it), unpacked whole into scratch and copied from there. */
static int io_conv_external32_in(const mf_io_conv *c, size_t whole, size_t mem_tail)
{
    int rc = mf_datatype_unpack_external(c->dt, c->filebuf, c->buf, whole);
    if (rc || !mem_tail)
        return rc;
    const struct mf_datatype_public *t = mf_datatype_info(c->dt);
    char *scratch = calloc(1, (size_t)t->dt_true_extent + 1);
    char *packed = malloc(mem_tail);
    if (!scratch || !packed) {
        free(scratch);
        free(packed);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory to convert a partial element", c->fn);
    }
    char *base = scratch - t->dt_true_lb; /* element 0 of scratch, at its lb */
    rc = mf_datatype_unpack_external(c->dt, c->filebuf + whole * c->rsize, base, 1);
    if (!rc) {
        mf_datatype_pack(c->dt, base, 1, 0, packed, mem_tail);
        mf_datatype_unpack(c->dt, c->buf, (size_t)c->count, whole * t->dt_size, packed, mem_tail);
    }
    free(scratch);
    free(packed);
    return rc;
}

/* Converts the first mem bytes of the user's data (items basic items): into filebuf (to_file)
 * or out of it, by the representation's own means. */
static int io_conv_move(const mf_io_conv *c, bool to_file, size_t mem, MPI_Count items)
{
    const mf_io_datarep *d = c->rep;
    if (d->external32 && to_file)
        return mf_datatype_pack_external(c->dt, c->buf, (size_t)c->count, c->filebuf);
    if (d->external32) {
        size_t esize = mf_datatype_info(c->dt)->dt_size, whole = esize ? mem / esize : 0;
        return io_conv_external32_in(c, whole, mem - whole * esize);
    }
    if (to_file ? d->write || d->write_c : d->read || d->read_c)
        return io_conv_call(c, to_file, items);
    return io_conv_copy(c, to_file, mem);
}

int mf_io_conv_begin(const mf_io_datarep *rep, bool write, void *buf, MPI_Count count,
                     mf_datatype *dt, mf_io_conv **out, const char *fn)
{
    *out = NULL;
    size_t rsize = 0;
    int rc = mf_datatype_rep_size(dt, io_datarep_size, (void *)rep, &rsize);
    if (rc)
        return rc;
    mf_io_conv *c = calloc(1, sizeof *c);
    size_t bytes = (size_t)count * rsize;
    char *fb = c ? malloc(bytes ? bytes : 1) : NULL;
    if (!fb) {
        free(c);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of data in datarep \"%s\"", fn,
                        bytes, rep->name);
    }
    *c = (mf_io_conv){.rep = rep,
                      .write = write,
                      .buf = buf,
                      .count = count,
                      .dt = dt,
                      .rsize = rsize,
                      .filebuf = fb,
                      .fn = fn};
    mf_datatype_retain(dt);
    if (write)
        rc = io_conv_move(c, true, (size_t)count * mf_datatype_info(dt)->dt_size,
                          count * io_basic_per(dt));
    if (rc) {
        mf_io_conv_end(c, rc, NULL);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

int mf_io_conv_end(mf_io_conv *c, int rc, size_t *done)
{
    if (!c)
        return rc;
    if (done) {
        /* What moved, in the file's bytes: the whole basic elements it holds, in memory's. */
        size_t mem = 0;
        MPI_Count items = 0;
        int prc =
            mf_datatype_rep_prefix(c->dt, io_datarep_size, (void *)c->rep, *done, &mem, &items);
        if (!prc && !c->write && mem)
            prc = io_conv_move(c, false, mem, items);
        rc = rc ? rc : prc;
        *done = mem;
    }
    mf_datatype_release(c->dt);
    free(c->filebuf);
    free(c);
    return rc;
}
