/*
 * copy.c — moving data between a typed buffer and its byte stream: pack, unpack, iovecs, and
 * counting elements in a number of stream bytes.
 *
 * A stream offset is located in O(log runs): element = offset / size, then a binary search of
 * dt_prefix for the run, then a division for the piece within the run. From there the walk is
 * sequential. Contiguous types are one memcpy; runs of small pieces use fixed-size copies the
 * compiler turns into single moves.
 */
#include <string.h>

#include "datatype/dt_internal.h"

/* Where a stream offset falls. */
struct mf_dt_cursor {
    size_t elem, run, piece, intra;
};

static void mf_dt_locate(const mf_datatype *dt, size_t offset, struct mf_dt_cursor *c)
{
    if (offset == 0) { /* a whole message: no divisions (tens of cycles each) */
        *c = (struct mf_dt_cursor){0};
        return;
    }
    size_t size = dt->pub.dt_size;
    c->elem = offset / size;
    size_t within = offset % size;
    size_t lo = 0, hi = dt->dt_nfast; /* find the last run with prefix <= within */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (dt->dt_prefix[mid] <= within)
            lo = mid;
        else
            hi = mid;
    }
    c->run = lo;
    size_t in_run = within - dt->dt_prefix[lo];
    c->piece = in_run / dt->dt_fast[lo].r_len;
    c->intra = in_run % dt->dt_fast[lo].r_len;
}

/* Copies n pieces of `len` bytes between a strided user region and the contiguous stream.
 * Unrolled: with pieces of a few bytes (a matrix column) the loop's own increments and branch
 * otherwise cost more than the moves, and a hand-written packing loop is what this competes
 * with. */
#define MF_DT_STRIDED(LEN)                                                                         \
    do {                                                                                           \
        if (pack) {                                                                                \
            _Pragma("GCC unroll 4") for (size_t i_ = 0; i_ < n; i_++)                              \
                memcpy(stream + i_ * (LEN), user + (MPI_Aint)i_ * stride, (LEN));                  \
        } else {                                                                                   \
            _Pragma("GCC unroll 4") for (size_t i_ = 0; i_ < n; i_++)                              \
                memcpy(user + (MPI_Aint)i_ * stride, stream + i_ * (LEN), (LEN));                  \
        }                                                                                          \
    } while (0)

static inline __attribute__((always_inline)) void
mf_dt_strided(char *user, MPI_Aint stride, char *stream, size_t len, size_t n, bool pack)
{
    switch (len) {
    case 1:
        MF_DT_STRIDED(1);
        break;
    case 2:
        MF_DT_STRIDED(2);
        break;
    case 4:
        MF_DT_STRIDED(4);
        break;
    case 8:
        MF_DT_STRIDED(8);
        break;
    case 12:
        MF_DT_STRIDED(12);
        break;
    case 16:
        MF_DT_STRIDED(16);
        break;
    case 24:
        MF_DT_STRIDED(24);
        break;
    case 32:
        MF_DT_STRIDED(32);
        break;
    default:
        MF_DT_STRIDED(len);
        break;
    }
}

/* mf_dt_move's general case: any offset and length, any number of runs. */
static __attribute__((noinline)) void mf_dt_move_runs(const mf_datatype *dt, const void *buf,
                                                      size_t offset, char *stream, size_t len,
                                                      bool pack)
{
    const struct mf_datatype_public *p = &dt->pub;
    struct mf_dt_cursor c;
    mf_dt_locate(dt, offset, &c);
    const struct mf_dt_run *runs = dt->dt_fast;
    char *elem = mf_dt_addr(buf, (MPI_Aint)c.elem * p->dt_extent);
    while (len) {
        const struct mf_dt_run *r = &runs[c.run];
        char *user = mf_dt_addr(elem, r->r_off + (MPI_Aint)c.piece * r->r_stride);
        if (c.intra || len < r->r_len) {
            /* partial piece at either end of the requested range */
            size_t chunk = r->r_len - c.intra < len ? r->r_len - c.intra : len;
            if (pack)
                memcpy(stream, user + c.intra, chunk);
            else
                memcpy(user + c.intra, stream, chunk);
            stream += chunk;
            len -= chunk;
            c.intra += chunk;
            if (c.intra < r->r_len)
                break; /* len is exhausted */
            c.intra = 0;
            c.piece++;
        } else {
            size_t n = r->r_n - c.piece;
            if (n * r->r_len > len) /* divides only when the range ends inside this run */
                n = len / r->r_len;
            mf_dt_strided(user, r->r_stride, stream, r->r_len, n, pack);
            stream += n * r->r_len;
            len -= n * r->r_len;
            c.piece += n;
        }
        if (c.piece == r->r_n) {
            c.piece = 0;
            if (++c.run == dt->dt_nfast) {
                c.run = 0;
                elem = mf_dt_addr(elem, p->dt_extent);
            }
        }
    }
}

/* Moves stream bytes [offset, offset + len) of count elements of dt at buf to or from stream.
 * Contiguous types are one memcpy; whole elements of a type with a single run (a vector, a
 * matrix column) are a strided copy per element, with no cursor to keep: the common strided
 * message, and the one a hand-written packing loop competes with. */
static void mf_dt_move(const mf_datatype *dt, const void *buf, size_t count, size_t offset,
                       char *stream, size_t len, bool pack)
{
    if (!len)
        return;
    const struct mf_datatype_public *p = &dt->pub;
    if (p->dt_contig) {
        char *user = mf_dt_addr(buf, p->dt_true_lb + (MPI_Aint)offset);
        if (pack)
            memcpy(stream, user, len);
        else
            memcpy(user, stream, len);
        return;
    }
    if (offset == 0 && dt->dt_nfast == 1 && len == count * p->dt_size) {
        const struct mf_dt_run *r = dt->dt_fast;
        char *elem = mf_dt_addr(buf, r->r_off);
        for (size_t e = 0; e < count; e++) {
            mf_dt_strided(elem, r->r_stride, stream, r->r_len, r->r_n, pack);
            stream += r->r_n * r->r_len;
            elem = mf_dt_addr(elem, p->dt_extent);
        }
        return;
    }
    mf_dt_move_runs(dt, buf, offset, stream, len, pack);
}

/* mf_dt_move of the commonest strided message, one whole element of a single run of 8-byte
 * pieces (a matrix column of doubles), in a loop that needs no stack frame: a few doubles
 * otherwise cost more in mf_dt_move's dispatch than in their moves. False if not that case. */
static inline __attribute__((always_inline)) bool mf_dt_move_column(const mf_datatype *dt,
                                                                    const void *buf, size_t count,
                                                                    size_t offset, char *stream,
                                                                    size_t len, bool pack)
{
    const struct mf_dt_run *r = dt->dt_fast;
    if (count != 1 || offset != 0 || dt->dt_nfast != 1 || r->r_len != 8 || len != r->r_n * 8)
        return false;
    mf_dt_strided(mf_dt_addr(buf, r->r_off), r->r_stride, stream, 8, r->r_n, pack);
    return true;
}

void mf_datatype_pack(const mf_datatype *dt, const void *buf, size_t count, size_t offset,
                      void *out, size_t len)
{
    if (!mf_dt_move_column(dt, buf, count, offset, out, len, true))
        mf_dt_move(dt, buf, count, offset, out, len, true);
}

void mf_datatype_unpack(const mf_datatype *dt, void *buf, size_t count, size_t offset,
                        const void *in, size_t len)
{
    if (!mf_dt_move_column(dt, buf, count, offset, (char *)(uintptr_t)in, len, false))
        mf_dt_move(dt, buf, count, offset, (char *)(uintptr_t)in, len, false);
}

int mf_datatype_iov(const mf_datatype *dt, const void *buf, size_t count, size_t offset,
                    struct iovec *iov, int max_iov, size_t *bytes)
{
    const struct mf_datatype_public *p = &dt->pub;
    size_t total = count * p->dt_size;
    *bytes = 0;
    if (offset >= total || max_iov <= 0)
        return 0;
    size_t left = total - offset;
    if (p->dt_contig) {
        iov[0].iov_base = mf_dt_addr(buf, p->dt_true_lb + (MPI_Aint)offset);
        iov[0].iov_len = left;
        *bytes = left;
        return 1;
    }
    struct mf_dt_cursor c;
    mf_dt_locate(dt, offset, &c);
    char *elem = mf_dt_addr(buf, (MPI_Aint)c.elem * p->dt_extent);
    int used = 0;
    while (left) {
        const struct mf_dt_run *r = &dt->dt_fast[c.run];
        char *base = mf_dt_addr(elem, r->r_off + (MPI_Aint)c.piece * r->r_stride) + c.intra;
        size_t chunk = r->r_len - c.intra < left ? r->r_len - c.intra : left;
        if (used && (char *)iov[used - 1].iov_base + iov[used - 1].iov_len == base) {
            iov[used - 1].iov_len += chunk; /* pieces that touch across runs or elements */
        } else {
            if (used == max_iov)
                break;
            iov[used].iov_base = base;
            iov[used].iov_len = chunk;
            used++;
        }
        *bytes += chunk;
        left -= chunk;
        c.intra = 0;
        if (++c.piece == r->r_n) {
            c.piece = 0;
            if (++c.run == dt->dt_nfast) {
                c.run = 0;
                elem = mf_dt_addr(elem, p->dt_extent);
            }
        }
    }
    return used;
}

/* Basic elements in the first `bytes` bytes of one element's stream, or -1 when `bytes` ends
 * inside a basic element. */
static MPI_Count mf_dt_basic_in(const mf_datatype *dt, size_t bytes)
{
    MPI_Count n = 0;
    for (size_t i = 0; i < dt->dt_nruns && bytes; i++) {
        const struct mf_dt_run *r = &dt->dt_runs[i];
        const struct mf_dt_builtin_info *bi = mf_dt_builtin_info(r->r_tag);
        size_t rb = r->r_len * r->r_n;
        size_t take = rb < bytes ? rb : bytes;
        if (!bi || !bi->bi_size || take % bi->bi_size)
            return -1;
        n += (MPI_Count)(take / bi->bi_size);
        bytes -= take;
    }
    return n;
}

void mf_datatype_count(const mf_datatype *dt, size_t bytes, MPI_Count *whole, MPI_Count *basic)
{
    size_t size = dt->pub.dt_size;
    if (!size) {
        /* nothing to receive: zero elements (MPI_Get_count of an empty type is 0) */
        if (whole)
            *whole = 0;
        if (basic)
            *basic = 0;
        return;
    }
    if (whole)
        *whole = bytes % size ? MPI_UNDEFINED : (MPI_Count)(bytes / size);
    if (basic) {
        MPI_Count part = mf_dt_basic_in(dt, bytes % size);
        *basic = part < 0 ? MPI_UNDEFINED : (MPI_Count)(bytes / size) * dt->dt_nbasic + part;
    }
}
