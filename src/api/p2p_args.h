/*
 * p2p_args.h — argument checks and request plumbing shared by the point-to-point entry points.
 */
#ifndef MF_API_P2P_ARGS_H
#define MF_API_P2P_ARGS_H

#include "api/api.h"
#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"

#ifndef MF_TAG_UB
#define MF_TAG_UB 2147483647
#endif

/* Checks comm, count, datatype, buffer (named `bufname` in messages: "buf", or "sendbuf" and
 * "recvbuf" with their counts; never MPI_IN_PLACE), and the peer rank (dest or source) and
 * tag; `is_recv` allows MPI_ANY_SOURCE / MPI_ANY_TAG. */
int mf_p2p_check(const void *buf, const char *bufname, MPI_Count count, MPI_Datatype datatype,
                 int rank, int tag, MPI_Comm comm, bool is_recv, const char *fn, mf_comm **c,
                 mf_datatype **dt);
/* Checks a request handle and resolves it (NULL for MPI_REQUEST_NULL). */
int mf_p2p_check_request(MPI_Request handle, mf_request **out, const char *fn);
/* A status with the values the standard gives for null or inactive requests. */
void mf_status_empty(MPI_Status *status);
/* Starts a buffered send through the attached buffer (bsend.c). */
int mf_bsend_start(const void *buf, MPI_Count count, mf_datatype *dt, int dest, int tag,
                   mf_comm *comm, mf_request **out);

#endif
