/*
 * auth.h — mutual challenge–response authentication with the job secret.
 *
 * Every connection a job accepts (rank listeners of the network fabrics, mpiexec's links to its
 * proxies, any PMI port reachable over a network) runs the same three-step exchange before
 * either side believes anything the other says. The transport and the framing belong to the
 * caller; this module only makes and checks the proofs.
 *
 *   initiator -> responder   HELLO     claimed identities, N_i (32 fresh random bytes)
 *   responder -> initiator   CHALLENGE N_r (32 fresh random bytes)          -- nothing secret
 *   initiator -> responder   PROOF     MAC(K, 'I', channel, N_i, N_r, id_i, id_r)
 *   responder -> initiator   ACCEPT    MAC(K, 'R', channel, N_i, N_r, id_i, id_r)
 *
 * K is the job's 256-bit secret; MAC is HMAC-SHA-256 (libsodium's crypto_auth_hmacsha256).
 * Every field of the transcript is length-prefixed, so no two transcripts hash alike.
 *
 * Why this order: the responder is the side that anyone on the network can reach. It sends
 * nothing derived from K until the initiator has proved it holds K over a nonce the responder
 * just drew, so a stranger learns nothing from probing, and a recorded PROOF is useless against
 * the next CHALLENGE (replay). The initiator only ever connects to an address it learned from
 * its own, already trusted, process manager; its PROOF binds its own fresh nonce and both
 * identities, so a rogue responder cannot relay it elsewhere. The role byte keeps the
 * responder's ACCEPT from ever serving as an initiator's PROOF. The channel string keeps a proof
 * made for one protocol (say the tcp fabric) from being accepted by another (the mpiexec link).
 *
 * A failed check gets a fixed refusal from the caller (or just a closed connection), never a
 * reason that helps an attacker; callers log the attempt through a mf_ratelimit (ratelimit.h).
 *
 * Thread safety: every function is safe to call from any thread after mf_auth_init().
 */
#ifndef MF_CORE_AUTH_H
#define MF_CORE_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define MF_AUTH_SECRET_BYTES 32
#define MF_AUTH_SECRET_HEX (2 * MF_AUTH_SECRET_BYTES) /* digits in the printed form */
#define MF_AUTH_NONCE_BYTES 32
#define MF_AUTH_MAC_BYTES 32

/* The job secret. Kept in memory only; printed form is MF_AUTH_SECRET_HEX hex digits. */
typedef struct mf_auth_secret {
    unsigned char as_key[MF_AUTH_SECRET_BYTES];
} mf_auth_secret;

typedef enum mf_auth_role {
    MF_AUTH_INITIATOR = 'I', /* the side that connected */
    MF_AUTH_RESPONDER = 'R', /* the side that accepted */
} mf_auth_role;

/* What both proofs bind. Identities are opaque byte strings chosen by the protocol (a rank and
 * the job size, a host index, ...), the same bytes on both sides. */
typedef struct mf_auth_transcript {
    const char *at_channel;                       /* names the protocol, e.g. "manifold-tcp-1" */
    const unsigned char *at_nonce_i, *at_nonce_r; /* MF_AUTH_NONCE_BYTES each */
    const void *at_id_i;
    size_t at_id_i_len;
    const void *at_id_r;
    size_t at_id_r_len;
} mf_auth_transcript;

/* Initialises libsodium (idempotent, thread-safe). 0, or -1 when the library cannot start
 * (no entropy source): the caller must refuse to run a job then. */
int mf_auth_init(void);

/* Parses exactly MF_AUTH_SECRET_HEX hex digits (either case, nothing else) into *out.
 * 0, or -1 with *why saying what is wrong (length or a non-hex character). */
int mf_auth_secret_parse(const char *hex, mf_auth_secret *out, const char **why);
/* Writes the MF_AUTH_SECRET_HEX lowercase digits and a NUL. */
void mf_auth_secret_format(const mf_auth_secret *s, char out[MF_AUTH_SECRET_HEX + 1]);
/* Draws a fresh secret from the system's random source. */
void mf_auth_secret_generate(mf_auth_secret *out);
/* Overwrites a secret (or a printed one) so that it does not linger in freed memory. */
void mf_auth_wipe(void *p, size_t n);

/* Fills a fresh nonce. */
void mf_auth_nonce(unsigned char out[MF_AUTH_NONCE_BYTES]);

/* The proof that the side in `role` holds `s`, over transcript `t`. */
void mf_auth_prove(const mf_auth_secret *s, mf_auth_role role, const mf_auth_transcript *t,
                   unsigned char mac[MF_AUTH_MAC_BYTES]);
/* True when `mac` is the proof of `role` over `t` (compared in constant time). */
bool mf_auth_check(const mf_auth_secret *s, mf_auth_role role, const mf_auth_transcript *t,
                   const unsigned char mac[MF_AUTH_MAC_BYTES]);

#endif
