/*
 * external32.c — MPI_Pack_external / MPI_Unpack_external data representation (MPI-4.0 §13.5.2):
 * big-endian, IEEE floating point, and fixed sizes per type (MPI_LONG and MPI_UNSIGNED_LONG are
 * 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE an IEEE binary128 of 16 bytes, bools 1).
 *
 * The walk goes over the typed runs (one basic type each). A run whose values keep their size
 * (raw bytes, most integers and reals) is converted a piece at a time by reversing each value's
 * bytes; the others element by element, component by component (a complex is two reals).
 * Integers that do not fit their external size fail with MPI_ERR_CONVERSION instead of being
 * truncated silently.
 */
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "datatype/dt_internal.h"

static bool mf_dt_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static void mf_dt_put_be(unsigned char *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[n - 1 - i] = (unsigned char)(v >> (8 * i));
}

static uint64_t mf_dt_get_be(const unsigned char *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | in[i];
    return v;
}

static uint64_t mf_dt_load(const void *p, size_t n)
{
    switch (n) {
    case 1: {
        uint8_t v;
        memcpy(&v, p, 1);
        return v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void mf_dt_store(void *p, uint64_t v, size_t n)
{
    switch (n) {
    case 1: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static int64_t mf_dt_sign_extend(uint64_t v, size_t n)
{
    if (n >= 8)
        return (int64_t)v;
    uint64_t m = (uint64_t)1 << (8 * n - 1);
    v &= ((uint64_t)1 << (8 * n)) - 1;
    return (int64_t)((v ^ m) - m);
}

/* Converts one component: native `nat` bytes at u <-> external `ext` bytes at x. */
static int mf_dt_conv(int conv, bool pack, unsigned char *u, size_t nat, unsigned char *x,
                      size_t ext)
{
    switch (conv) {
    case MF_DT_CONV_INT:
    case MF_DT_CONV_UINT:
        if (pack) {
            uint64_t v = mf_dt_load(u, nat);
            if (ext < nat) {
                bool fits = conv == MF_DT_CONV_INT
                                ? mf_dt_sign_extend(v, ext) == mf_dt_sign_extend(v, nat)
                                : (v >> (8 * ext)) == 0;
                if (!fits)
                    return mf_error(MPI_ERR_CONVERSION,
                                    "external32: a %zu-byte integer does not fit its "
                                    "%zu-byte external32 size",
                                    nat, ext);
            }
            if (conv == MF_DT_CONV_INT)
                v = (uint64_t)mf_dt_sign_extend(v, nat);
            mf_dt_put_be(x, v, ext);
        } else {
            uint64_t v = mf_dt_get_be(x, ext);
            if (conv == MF_DT_CONV_INT)
                v = (uint64_t)mf_dt_sign_extend(v, ext);
            mf_dt_store(u, v, nat);
        }
        return MPI_SUCCESS;
    case MF_DT_CONV_FLOAT:
        for (size_t i = 0; i < nat; i++) {
            size_t j = mf_dt_little_endian() ? nat - 1 - i : i;
            if (pack)
                x[j] = u[i];
            else
                u[i] = x[j];
        }
        return MPI_SUCCESS;
    case MF_DT_CONV_X87:
        /* x87 extended (64-bit mantissa with explicit integer bit, 15-bit exponent) <->
         * binary128 (112-bit fraction, same exponent bias) */
        if (pack) {
            uint64_t mant;
            uint16_t se;
            memcpy(&mant, u, 8);
            memcpy(&se, u + 8, 2);
            uint64_t frac = mant & 0x7fffffffffffffffull;
            uint64_t hi = (uint64_t)se << 48 | frac >> 15, lo = frac << 49;
            mf_dt_put_be(x, hi, 8);
            mf_dt_put_be(x + 8, lo, 8);
        } else {
            uint64_t hi = mf_dt_get_be(x, 8), lo = mf_dt_get_be(x + 8, 8);
            uint16_t se = (uint16_t)(hi >> 48);
            uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49;
            uint64_t mant = frac | ((se & 0x7fff) ? 0x8000000000000000ull : 0);
            memset(u, 0, nat);
            memcpy(u, &mant, 8);
            memcpy(u + 8, &se, 2);
        }
        return MPI_SUCCESS;
    default:
        if (pack)
            memcpy(x, u, ext);
        else
            memcpy(u, x, nat);
        return MPI_SUCCESS;
    }
}

/* The width of the values a basic type converts by reversing their bytes, or 0 when they
 * convert otherwise: raw bytes are copied (width 1); integers and reals whose external32 size
 * is their native one reverse their own size; MPI_LONG's 8 bytes to 4 and the x87 long double
 * do not convert by bytes. */
static size_t mf_dt_swap_width(const struct mf_dt_builtin_info *bi)
{
    size_t ext = bi->bi_ext32 / (bi->bi_size / bi->bi_unit);
    if (ext != bi->bi_unit || bi->bi_conv == MF_DT_CONV_X87)
        return 0;
    return bi->bi_conv == MF_DT_CONV_RAW ? 1 : bi->bi_unit;
}

/* n bytes of w-byte values, each one's bytes reversed (w a constant where it is inlined, so
 * that the loads, stores and shift become one swap each). */
static inline __attribute__((always_inline)) void
mf_dt_reverse_values(unsigned char *dst, const unsigned char *src, size_t n, size_t w)
{
    for (size_t i = 0; i + w <= n; i += w)
        mf_dt_store(dst + i, __builtin_bswap64(mf_dt_load(src + i, w)) >> (64 - 8 * w), w);
}

/* n bytes of w-byte values between memory at u and external32 at x (to x when packing): big
 * endian there, so reversed on a little-endian host and copied as they are otherwise. */
static void mf_dt_swap_block(bool pack, unsigned char *u, unsigned char *x, size_t n, size_t w)
{
    unsigned char *dst = pack ? x : u;
    const unsigned char *src = pack ? u : x;
    if (w == 1 || !mf_dt_little_endian()) {
        memcpy(dst, src, n);
        return;
    }
    switch (w) {
    case 2:
        mf_dt_reverse_values(dst, src, n, 2);
        return;
    case 4:
        mf_dt_reverse_values(dst, src, n, 4);
        return;
    case 8:
        mf_dt_reverse_values(dst, src, n, 8);
        return;
    default: /* 16-byte reals */
        for (size_t i = 0; i + w <= n; i += w)
            for (size_t b = 0; b < w; b++)
                dst[i + b] = src[i + w - 1 - b];
        return;
    }
}

static int mf_dt_external(const mf_datatype *dt, void *buf, size_t count, unsigned char *x,
                          bool pack)
{
    /* One basic type whose elements abut (a predefined type, a contiguous one): the whole
     * buffer in one block when its values convert by their bytes alone. */
    if (dt->dt_nruns == 1 && count > 0) {
        const struct mf_dt_run *r = &dt->dt_runs[0];
        size_t w = mf_dt_swap_width(mf_dt_builtin_info(r->r_tag));
        if (w && (MPI_Aint)(r->r_n * r->r_len) == dt->pub.dt_extent &&
            (r->r_n == 1 || r->r_stride == (MPI_Aint)r->r_len)) {
            mf_dt_swap_block(pack, (unsigned char *)mf_dt_addr(buf, r->r_off), x,
                             count * r->r_n * r->r_len, w);
            return MPI_SUCCESS;
        }
    }
    for (size_t e = 0; e < count; e++) {
        char *elem = mf_dt_addr(buf, (MPI_Aint)e * dt->pub.dt_extent);
        for (size_t ri = 0; ri < dt->dt_nruns; ri++) {
            const struct mf_dt_run *r = &dt->dt_runs[ri];
            const struct mf_dt_builtin_info *bi = mf_dt_builtin_info(r->r_tag);
            size_t ncomp = bi->bi_size / bi->bi_unit, ext = bi->bi_ext32 / ncomp;
            size_t w = mf_dt_swap_width(bi);
            for (size_t k = 0; k < r->r_n; k++) {
                unsigned char *u =
                    (unsigned char *)mf_dt_addr(elem, r->r_off + (MPI_Aint)k * r->r_stride);
                if (w) { /* the whole piece at once */
                    mf_dt_swap_block(pack, u, x, r->r_len, w);
                    x += r->r_len;
                    continue;
                }
                for (size_t b = 0; b < r->r_len; b += bi->bi_unit) {
                    int rc = mf_dt_conv(bi->bi_conv, pack, u + b, bi->bi_unit, x, ext);
                    if (rc)
                        return rc;
                    x += ext;
                }
            }
        }
    }
    return MPI_SUCCESS;
}

int mf_datatype_pack_external(const mf_datatype *dt, const void *buf, size_t count, void *out)
{
    return mf_dt_external(dt, (void *)(uintptr_t)buf, count, out, true);
}

int mf_datatype_unpack_external(const mf_datatype *dt, const void *in, void *buf, size_t count)
{
    return mf_dt_external(dt, buf, count, (unsigned char *)(uintptr_t)in, false);
}

int mf_datatype_external32_size(MPI_Datatype basic, MPI_Aint *size, void *ctx)
{
    (void)ctx;
    const mf_datatype *dt = mf_datatype_get(basic);
    *size = dt ? (MPI_Aint)dt->dt_ext32_size : 0;
    return MPI_SUCCESS;
}
