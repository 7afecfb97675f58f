/*
 * link_auth.h — the authentication of an mpiexec <-> proxy link (core/auth.h's exchange in
 * link.h frames), before either side believes anything else the other sends.
 *
 *   proxy -> mpiexec   MX_M_HELLO      arg: host index; payload: N_i (32 bytes)
 *   mpiexec -> proxy   MX_M_CHALLENGE  payload: N_r (32 bytes)      -- nothing secret-derived
 *   proxy -> mpiexec   MX_M_PROOF      payload: MAC_I (32 bytes)
 *   mpiexec -> proxy   MX_M_ACCEPT     payload: MAC_R (32 bytes), then MX_M_JOB
 *
 * Channel MX_LINK_CHANNEL. Identities: the proxy's is "host <index> <name>" with the name from
 * mpiexec's own host table (so a proxy told another name than mpiexec meant fails), mpiexec's is
 * "mpiexec" (not its address or port: a tunnel or port forward between them must keep working,
 * and the fresh nonces already tie the proofs to this one exchange). mpiexec is the responder:
 * it answers a HELLO with a fresh nonce only, and closes the connection without a word on any
 * other frame, a wrong size, an index it does not expect or a wrong proof. The proxy trusts
 * nothing (the job description included) before ACCEPT checked.
 *
 * mx_auth_feed is a pure state machine over decoded frames (fuzzed in link_auth_fuzz.c); the
 * caller owns the sockets, the deadline and the logging.
 */
#ifndef MX_LINK_AUTH_H
#define MX_LINK_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "core/auth.h"

#define MX_LINK_CHANNEL "manifold-link-1"
/* Largest payload an unauthenticated peer may send (a nonce or a MAC). */
#define MX_AUTH_FRAME_MAX 32

enum mx_auth_result {
    MX_AUTH_FAIL = -1, /* close the connection (responder: silently) */
    MX_AUTH_MORE = 0,  /* send *out if out->o_type != 0, wait for the next frame */
    MX_AUTH_DONE = 1,  /* the peer proved itself; send *out if out->o_type != 0 */
};

typedef struct mx_auth {
    int a_role; /* MF_AUTH_INITIATOR (proxy) or MF_AUTH_RESPONDER (mpiexec) */
    int a_step;
    const mf_auth_secret *a_key;
    const char *const *a_names; /* responder: host name of every index */
    int a_nnames;
    int a_index; /* the proxy's host index (claimed, until DONE) */
    unsigned char a_ni[MF_AUTH_NONCE_BYTES], a_nr[MF_AUTH_NONCE_BYTES];
    char a_id_i[300], a_id_r[32];
} mx_auth;

/* A frame to send. */
typedef struct mx_auth_out {
    int o_type; /* 0: nothing */
    int32_t o_arg;
    unsigned char o_data[MF_AUTH_MAC_BYTES];
    size_t o_len;
} mx_auth_out;

/* mpiexec's side of a new connection; names[i] is host i's name. */
void mx_auth_responder(mx_auth *a, const mf_auth_secret *key, const char *const *names, int nnames);
/* The proxy of host `index` named `name`: fills *out with its HELLO. */
void mx_auth_initiator(mx_auth *a, const mf_auth_secret *key, int index, const char *name,
                       mx_auth_out *out);
/* Takes one frame from the peer. */
int mx_auth_feed(mx_auth *a, int type, int32_t arg, const void *data, size_t len, mx_auth_out *out);

#endif
