/*
 * The exported functions Manifold does not implement yet (rows of unimplemented.def). Each raises
 * MPI_ERR_UNSUPPORTED_OPERATION through the handler of errors of no object (mf_err_no_object) with a
 * message naming the function: fatal by default, returned under MPI_ERRORS_RETURN. Never a silent
 * success.
 */
#include "api/api.h"

#define MF_UNIMPLEMENTED(name, params)                                                             \
    int PMPI_##name params                                                                         \
    {                                                                                              \
        return mf_err_no_object(mf_unsupported("MPI_" #name), "MPI_" #name);                       \
    }                                                                                              \
    MF_API_ALIAS(name);

#include "api/unimplemented.def"
