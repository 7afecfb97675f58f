/*
 * pack.c — MPI_Pack / MPI_Unpack / MPI_Pack_size and their external32 forms (MPI-4.0 §5.2,
 * §5.3), with the large-count variants.
 *
 * Manifold's native packed format is the type's byte stream itself (no header), so
 * MPI_Pack_size is exactly incount * size and a message packed here can be sent as MPI_PACKED
 * and unpacked by any rank of the same job. external32 converts every basic element
 * (src/datatype/external32.c). Running out of output room in a pack is MPI_ERR_ARG; asking an
 * unpack for more than the input holds is MPI_ERR_TRUNCATE.
 */
#include <limits.h>
#include <string.h>

#include "api/api.h"
#include "datatype/dt_internal.h"

/* Shared checks of pack/unpack: position, sizes, buffers. `buf` holds `count` elements of
 * `type` (inbuf of a pack, outbuf of an unpack), `packed` is the other one; neither may be
 * MPI_IN_PLACE. */
static int mf_pack_check(MPI_Count count, MPI_Datatype type, mf_datatype **dt, const void *buf,
                         const void *packed, bool unpack, MPI_Count size, const MPI_Count *position,
                         const char *fn)
{
    int rc = mf_check_data(buf, count, type, dt, fn, unpack ? "outbuf" : "inbuf",
                           unpack ? "outcount" : "incount");
    if (!rc)
        rc = mf_check_not_in_place(packed, fn, unpack ? "inbuf" : "outbuf");
    if (!rc && !position)
        rc = mf_error(MPI_ERR_ARG, "%s: position is NULL", fn);
    if (!rc && size < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: buffer size=%ld is negative", fn, (long)size);
    if (!rc && (*position < 0 || *position > size))
        rc = mf_error(MPI_ERR_ARG, "%s: position=%ld is outside the buffer of %ld bytes", fn,
                      (long)*position, (long)size);
    return rc;
}

static int mf_pack(const void *inbuf, MPI_Count incount, MPI_Datatype type, void *outbuf,
                   MPI_Count outsize, MPI_Count *position, MPI_Comm c, mf_comm **comm,
                   const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_comm(c, comm, fn);
    if (!rc)
        rc = mf_pack_check(incount, type, &dt, inbuf, outbuf, false, outsize, position, fn);
    if (rc)
        return rc;
    MPI_Count bytes = incount * (MPI_Count)dt->pub.dt_size;
    if (bytes > outsize - *position)
        return mf_error(MPI_ERR_ARG, "%s: %ld bytes do not fit in outsize=%ld at position=%ld", fn,
                        (long)bytes, (long)outsize, (long)*position);
    if (bytes && !outbuf)
        return mf_error(MPI_ERR_ARG, "%s: outbuf is NULL", fn);
    mf_datatype_pack(dt, inbuf, (size_t)incount, 0, (char *)outbuf + *position, (size_t)bytes);
    *position += bytes;
    return MPI_SUCCESS;
}

static int mf_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                     MPI_Count outcount, MPI_Datatype type, MPI_Comm c, mf_comm **comm,
                     const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_comm(c, comm, fn);
    if (!rc)
        rc = mf_pack_check(outcount, type, &dt, outbuf, inbuf, true, insize, position, fn);
    if (rc)
        return rc;
    MPI_Count bytes = outcount * (MPI_Count)dt->pub.dt_size;
    if (bytes > insize - *position)
        return mf_error(MPI_ERR_TRUNCATE,
                        "%s: %ld bytes asked but only %ld remain after "
                        "position=%ld",
                        fn, (long)bytes, (long)(insize - *position), (long)*position);
    if (bytes && !inbuf)
        return mf_error(MPI_ERR_ARG, "%s: inbuf is NULL", fn);
    mf_datatype_unpack(dt, outbuf, (size_t)outcount, 0, (const char *)inbuf + *position,
                       (size_t)bytes);
    *position += bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    MPI_Count pos = position ? *position : 0;
    int rc = mf_pack(inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL, comm, &cm,
                     "MPI_Pack");
    if (!rc)
        *position = (int)pos;
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Pack");
}
MF_API_ALIAS(Pack);

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    int rc = mf_pack(inbuf, incount, datatype, outbuf, outsize, position, comm, &cm, "MPI_Pack_c");
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Pack_c");
}
MF_API_ALIAS(Pack_c);

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    MPI_Count pos = position ? *position : 0;
    int rc = mf_unpack(inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype, comm, &cm,
                       "MPI_Unpack");
    if (!rc)
        *position = (int)pos;
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Unpack");
}
MF_API_ALIAS(Unpack);

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    int rc =
        mf_unpack(inbuf, insize, position, outbuf, outcount, datatype, comm, &cm, "MPI_Unpack_c");
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Unpack_c");
}
MF_API_ALIAS(Unpack_c);

static int mf_pack_size(MPI_Count incount, MPI_Datatype type, MPI_Comm c, mf_comm **comm,
                        MPI_Count *size, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_comm(c, comm, fn);
    if (!rc)
        rc = mf_check_count(incount, fn);
    if (!rc)
        rc = mf_check_datatype(type, &dt, fn);
    if (!rc && !size)
        rc = mf_error(MPI_ERR_ARG, "%s: size is NULL", fn);
    if (!rc)
        *size = incount * (MPI_Count)dt->pub.dt_size;
    return rc;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    MPI_Count s = 0;
    int rc = mf_pack_size(incount, datatype, comm, &cm, size ? &s : NULL, "MPI_Pack_size");
    if (!rc && s > INT_MAX)
        rc = mf_error(MPI_ERR_VALUE_TOO_LARGE,
                      "MPI_Pack_size: %ld bytes do not fit an int; "
                      "use MPI_Pack_size_c",
                      (long)s);
    if (!rc)
        *size = (int)s;
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Pack_size");
}
MF_API_ALIAS(Pack_size);

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    MF_API_ENTER();
    mf_comm *cm = NULL;
    int rc = mf_pack_size(incount, datatype, comm, &cm, size, "MPI_Pack_size_c");
    MF_API_EXIT();
    return mf_err_comm(cm, rc, "MPI_Pack_size_c");
}
MF_API_ALIAS(Pack_size_c);

/* ---- external32 ---- */
static int mf_check_datarep(const char *datarep, const char *fn)
{
    if (!datarep)
        return mf_error(MPI_ERR_ARG, "%s: datarep is NULL", fn);
    if (strcmp(datarep, "external32") != 0)
        return mf_error(MPI_ERR_UNSUPPORTED_DATAREP, "%s: datarep=\"%s\" is not \"external32\"", fn,
                        datarep);
    return MPI_SUCCESS;
}

static int mf_pack_ext(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype type,
                       void *outbuf, MPI_Count outsize, MPI_Count *position, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_datarep(datarep, fn);
    if (!rc)
        rc = mf_pack_check(incount, type, &dt, inbuf, outbuf, false, outsize, position, fn);
    if (rc)
        return rc;
    MPI_Count bytes = incount * (MPI_Count)dt->dt_ext32_size;
    if (bytes > outsize - *position)
        return mf_error(MPI_ERR_ARG, "%s: %ld bytes do not fit in outsize=%ld at position=%ld", fn,
                        (long)bytes, (long)outsize, (long)*position);
    if (bytes && !outbuf)
        return mf_error(MPI_ERR_ARG, "%s: outbuf is NULL", fn);
    rc = mf_datatype_pack_external(dt, inbuf, (size_t)incount, (char *)outbuf + *position);
    if (!rc)
        *position += bytes;
    return rc;
}

static int mf_unpack_ext(const char *datarep, const void *inbuf, MPI_Count insize,
                         MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype type,
                         const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_datarep(datarep, fn);
    if (!rc)
        rc = mf_pack_check(outcount, type, &dt, outbuf, inbuf, true, insize, position, fn);
    if (rc)
        return rc;
    MPI_Count bytes = outcount * (MPI_Count)dt->dt_ext32_size;
    if (bytes > insize - *position)
        return mf_error(MPI_ERR_TRUNCATE,
                        "%s: %ld bytes asked but only %ld remain after "
                        "position=%ld",
                        fn, (long)bytes, (long)(insize - *position), (long)*position);
    if (bytes && !inbuf)
        return mf_error(MPI_ERR_ARG, "%s: inbuf is NULL", fn);
    rc = mf_datatype_unpack_external(dt, (const char *)inbuf + *position, outbuf, (size_t)outcount);
    if (!rc)
        *position += bytes;
    return rc;
}

int PMPI_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    MF_API_ENTER();
    int rc = mf_pack_ext(datarep, inbuf, incount, datatype, outbuf, outsize, position,
                         "MPI_Pack_external");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Pack_external");
}
MF_API_ALIAS(Pack_external);

int PMPI_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    MF_API_ENTER();
    int rc = mf_pack_ext(datarep, inbuf, incount, datatype, outbuf, outsize, position,
                         "MPI_Pack_external_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Pack_external_c");
}
MF_API_ALIAS(Pack_external_c);

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    MF_API_ENTER();
    int rc = mf_unpack_ext(datarep, inbuf, insize, position, outbuf, outcount, datatype,
                           "MPI_Unpack_external");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Unpack_external");
}
MF_API_ALIAS(Unpack_external);

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    MF_API_ENTER();
    int rc = mf_unpack_ext(datarep, inbuf, insize, position, outbuf, outcount, datatype,
                           "MPI_Unpack_external_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Unpack_external_c");
}
MF_API_ALIAS(Unpack_external_c);

static int mf_pack_ext_size(const char *datarep, MPI_Count incount, MPI_Datatype type,
                            MPI_Count *size, const char *fn)
{
    mf_datatype *dt = NULL;
    int rc = mf_check_datarep(datarep, fn);
    if (!rc)
        rc = mf_check_count(incount, fn);
    if (!rc)
        rc = mf_check_datatype(type, &dt, fn);
    if (!rc && !size)
        rc = mf_error(MPI_ERR_ARG, "%s: size is NULL", fn);
    if (!rc)
        *size = incount * (MPI_Count)dt->dt_ext32_size;
    return rc;
}

int PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    MF_API_ENTER();
    int rc = mf_pack_ext_size(datarep, incount, datatype, size, "MPI_Pack_external_size");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Pack_external_size");
}
MF_API_ALIAS(Pack_external_size);

int PMPI_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    MF_API_ENTER();
    int rc = mf_pack_ext_size(datarep, incount, datatype, size, "MPI_Pack_external_size_c");
    MF_API_EXIT();
    return mf_err_no_object(rc, "MPI_Pack_external_size_c");
}
MF_API_ALIAS(Pack_external_size_c);
