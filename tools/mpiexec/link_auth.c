/*
 * link_auth.c — authentication of an mpiexec <-> proxy link (contract in link_auth.h).
 */
#include "link_auth.h"

#include <stdio.h>
#include <string.h>

#include "link.h"

static void mx_auth_ids(mx_auth *a, int index, const char *name)
{
    a->a_index = index;
    snprintf(a->a_id_i, sizeof a->a_id_i, "host %d %s", index, name);
    snprintf(a->a_id_r, sizeof a->a_id_r, "mpiexec");
}

static mf_auth_transcript mx_auth_transcript(const mx_auth *a)
{
    return (mf_auth_transcript){.at_channel = MX_LINK_CHANNEL,
                                .at_nonce_i = a->a_ni,
                                .at_nonce_r = a->a_nr,
                                .at_id_i = a->a_id_i,
                                .at_id_i_len = strlen(a->a_id_i),
                                .at_id_r = a->a_id_r,
                                .at_id_r_len = strlen(a->a_id_r)};
}

void mx_auth_responder(mx_auth *a, const mf_auth_secret *key, const char *const *names, int nnames)
{
    memset(a, 0, sizeof *a);
    a->a_role = MF_AUTH_RESPONDER;
    a->a_key = key;
    a->a_names = names;
    a->a_nnames = nnames;
    a->a_index = -1;
}

void mx_auth_initiator(mx_auth *a, const mf_auth_secret *key, int index, const char *name,
                       mx_auth_out *out)
{
    memset(a, 0, sizeof *a);
    a->a_role = MF_AUTH_INITIATOR;
    a->a_key = key;
    mx_auth_ids(a, index, name);
    mf_auth_nonce(a->a_ni);
    *out = (mx_auth_out){.o_type = MX_M_HELLO, .o_arg = index, .o_len = MF_AUTH_NONCE_BYTES};
    memcpy(out->o_data, a->a_ni, MF_AUTH_NONCE_BYTES);
}

/* mpiexec: HELLO, then PROOF. */
static int mx_auth_respond(mx_auth *a, int type, int32_t arg, const void *data, size_t len,
                           mx_auth_out *out)
{
    if (a->a_step == 0) {
        if (type != MX_M_HELLO || len != MF_AUTH_NONCE_BYTES || arg < 0 || arg >= a->a_nnames)
            return MX_AUTH_FAIL;
        memcpy(a->a_ni, data, MF_AUTH_NONCE_BYTES);
        mx_auth_ids(a, (int)arg, a->a_names[arg]);
        mf_auth_nonce(a->a_nr);
        *out = (mx_auth_out){.o_type = MX_M_CHALLENGE, .o_len = MF_AUTH_NONCE_BYTES};
        memcpy(out->o_data, a->a_nr, MF_AUTH_NONCE_BYTES);
        a->a_step = 1;
        return MX_AUTH_MORE;
    }
    mf_auth_transcript t = mx_auth_transcript(a);
    if (a->a_step != 1 || type != MX_M_PROOF || len != MF_AUTH_MAC_BYTES ||
        !mf_auth_check(a->a_key, MF_AUTH_INITIATOR, &t, data))
        return MX_AUTH_FAIL;
    /* Only now, with the initiator's proof checked, anything derived from the secret. */
    *out = (mx_auth_out){.o_type = MX_M_ACCEPT, .o_len = MF_AUTH_MAC_BYTES};
    mf_auth_prove(a->a_key, MF_AUTH_RESPONDER, &t, out->o_data);
    a->a_step = 2;
    return MX_AUTH_DONE;
}

/* proxy: CHALLENGE, then ACCEPT. */
static int mx_auth_initiate(mx_auth *a, int type, const void *data, size_t len, mx_auth_out *out)
{
    if (a->a_step == 0) {
        if (type != MX_M_CHALLENGE || len != MF_AUTH_NONCE_BYTES)
            return MX_AUTH_FAIL;
        memcpy(a->a_nr, data, MF_AUTH_NONCE_BYTES);
        mf_auth_transcript t = mx_auth_transcript(a);
        *out = (mx_auth_out){.o_type = MX_M_PROOF, .o_len = MF_AUTH_MAC_BYTES};
        mf_auth_prove(a->a_key, MF_AUTH_INITIATOR, &t, out->o_data);
        a->a_step = 1;
        return MX_AUTH_MORE;
    }
    mf_auth_transcript t = mx_auth_transcript(a);
    if (a->a_step != 1 || type != MX_M_ACCEPT || len != MF_AUTH_MAC_BYTES ||
        !mf_auth_check(a->a_key, MF_AUTH_RESPONDER, &t, data))
        return MX_AUTH_FAIL;
    a->a_step = 2;
    return MX_AUTH_DONE;
}

int mx_auth_feed(mx_auth *a, int type, int32_t arg, const void *data, size_t len, mx_auth_out *out)
{
    out->o_type = 0;
    out->o_len = 0;
    if (a->a_step >= 2)
        return MX_AUTH_FAIL; /* the exchange is over: a caller bug or a confused peer */
    return a->a_role == MF_AUTH_RESPONDER ? mx_auth_respond(a, type, arg, data, len, out)
                                          : mx_auth_initiate(a, type, data, len, out);
}
