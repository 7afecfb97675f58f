/*
 * pmi_client.h — the client core shared by the PMI-1 (pmi1.c) and PMI-2 (pmi2.c) back ends of
 * pm.h: the connection to the process manager (PMI_FD, or PMI_PORT=host:port), one blocking
 * request-reply exchange with its error handling, the key-value put/get with their checks, abort
 * and finalize. A protocol supplies only its codec (mf_pmi_codec: how a request is encoded and a
 * reply read and decoded) and the order of its handshake.
 *
 * Contract:
 *   - Every failure is an MPI error code (mf_error) whose message starts with the codec's tag
 *     ("PMI:", "PMI-2:") and says what happened: a write or read error, the server closing the
 *     connection, a malformed reply (the decoder's reason), a reply with another command than the
 *     expected one, or a non-zero rc. A missing key is of class MPI_ERR_NAME, all else
 *     MPI_ERR_OTHER. Nothing here crashes or aborts on what the server sends.
 *   - The last reply stays in c->reply until the next exchange, for the caller to read its fields.
 *   - Blocking and not thread-safe, like pm.h.
 */
#ifndef MF_RUNTIME_PMI_CLIENT_H
#define MF_RUNTIME_PMI_CLIENT_H

#include <stddef.h>

#include "runtime/pm.h"
#include "runtime/pmi_wire.h"

typedef struct mf_pmi_client mf_pmi_client;

typedef struct mf_pmi_codec {
    const char *tag; /* "PMI" or "PMI-2": the prefix of every message */
    /* Encodes a request (as mf_pmi_format: -1 if a field is not wire-safe or too long). */
    int (*format)(char *buf, size_t cap, const char *cmd, const char *const *kv, int npairs);
    /* Reads one reply into c->reply with mf_pmi_client_read_line/_read_exact; an MPI error code
     * naming the fault if it is malformed. */
    int (*read)(mf_pmi_client *c);
    int (*key_ok)(const char *s);
    int (*value_ok)(const char *s);
    /* Whether the reply to get `cmd` in c->reply found its key (*found 1 or 0), or an error code if
     * the reply says neither. */
    int (*found)(mf_pmi_client *c, const char *cmd, int *found);
    const char *unsafe;     /* the bytes value_ok refuses, for messages */
    const char *errmsg_key; /* the field that explains a non-zero rc */
} mf_pmi_codec;

/* PMI-1's codec (pmi1.c); PMI-2 speaks it for its first exchange. */
extern const mf_pmi_codec mf_pmi1_codec;

struct mf_pmi_client {
    const mf_pmi_codec *codec;
    int fd;               /* -1 when not connected */
    int keymax, valmax;   /* what the server accepts (NUL included); at most MF_PM_*_MAX */
    int server_prints;    /* the server prints abort messages itself */
    mf_pmi_msg reply;     /* the last reply */
    mf_pmi_lines pending; /* bytes read from fd and not consumed yet */
};

/* Sets up c for `codec`, not connected. */
void mf_pmi_client_init(mf_pmi_client *c, const mf_pmi_codec *codec);
/* Environment variable `name` as a decimal int in [lo, hi]; an error naming it if unset or not. */
int mf_pmi_env_int(const mf_pmi_client *c, const char *name, long lo, long hi, int *out);
/* Adopts the inherited socket PMI_FD (checked to be open, made close-on-exec). */
int mf_pmi_client_adopt_fd(mf_pmi_client *c);
/* Connects to "host:port" over TCP. */
int mf_pmi_client_connect(mf_pmi_client *c, const char *hostport);
/* Closes the connection, if any. */
void mf_pmi_client_close(mf_pmi_client *c);

/* For codec->read: the next line (newline stripped, valid until the next read), or exactly `len`
 * bytes into buf. Both block until the bytes are there; a closed connection or a line longer than
 * MF_PMI_LINE_MAX is an error. */
int mf_pmi_client_read_line(mf_pmi_client *c, const char **line, size_t *len);
int mf_pmi_client_read_exact(mf_pmi_client *c, char *buf, size_t len);
/* For codec->read: the error for a reply the decoder refused (why: its reason; text: the reply,
 * NUL-terminated, quoted in part). */
int mf_pmi_malformed(const mf_pmi_client *c, const char *why, const char *text);

/* Sends `cmd` with npairs key/value pairs (kv: key, value, key, value...). Unless expect is NULL,
 * reads the reply into c->reply, whose command must be `expect`; with check_rc its rc= must also
 * be 0. */
int mf_pmi_call(mf_pmi_client *c, const char *cmd, const char *const *kv, int npairs,
                const char *expect, int check_rc);
/* The reply to `cmd` carries rc=0. */
int mf_pmi_check_rc(mf_pmi_client *c, const char *cmd);
/* Reads one more message (one the server sends unasked, as PMI_PORT's `set` lines), whose command
 * must be `expect`. */
int mf_pmi_expect(mf_pmi_client *c, const char *expect, const char *after);

/* The key-value store. Both check the key (and put the value) against the server's limits and
 * the wire's charset first, so that a bad one is refused with a clear error before anything is
 * sent; the request is `cmd` with the protocol's fields kv (which carry key and value), its reply
 * `expect`. A put's reply must carry rc=0; a get's reply says through codec->found whether the key
 * exists (MPI_ERR_NAME if not), and its value must fit in len bytes. */
int mf_pmi_kvs_put(mf_pmi_client *c, const char *key, const char *value, const char *cmd,
                   const char *const *kv, int npairs, const char *expect);
int mf_pmi_kvs_get(mf_pmi_client *c, const char *key, char *value, size_t len, const char *cmd,
                   const char *const *kv, int npairs, const char *expect);

/* Fills the identity from what the handshake learnt: appnum -1 (unknown) is 0, a universe
 * smaller than the job (unknown: -1) is the job, a jobid too long for id->jobid is cut. */
void mf_pmi_identity(mf_pm_identity *id, int rank, int size, int appnum, int universe,
                     const char *jobid);

/* Prints msg unless the server does, sends the abort request (kv: its fields) without waiting
 * for a reply, waits up to polls * 100 ms for the launcher to end the job (the connection
 * closes), then exits with `code`. */
void mf_pmi_abort(mf_pmi_client *c, int code, const char *msg, const char *const *kv, int npairs,
                  int polls) __attribute__((noreturn));
/* Sends `finalize`, expects `ack`, closes the connection. */
int mf_pmi_finalize(mf_pmi_client *c, const char *ack);

#endif
