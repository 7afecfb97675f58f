/*
 * pmi2_wire.h — the PMI-2 wire format (what Slurm's `srun --mpi=pmi2` and MPICH's Hydra serve to
 * a client that asked for version 2): framing, parsing and formatting of messages.
 *
 * A message is a 6-byte ASCII length header, the decimal byte count of the body left-justified
 * and padded with spaces (printf "%-6d"), followed by that many bytes of body:
 *     `cmd=NAME;key=value;key=value;`
 * Fields are separated by ';'; the last ';' may be missing. The first field must be `cmd=`.
 * Keys are one or more bytes other than '=', ';' and control bytes (< 0x20, DEL); values are the
 * same but may contain '=' and may be empty. Neither Slurm nor current MPICH escapes ';' inside a
 * value (older MPICH doubled it), so the formatter refuses a value containing ';' and the parser
 * treats every ';' as a separator. Binary data travels hex-encoded (pmi_wire.h).
 *
 * Before the first PMI-2 message the client sends one PMI-1 line, `cmd=init pmi_version=2
 * pmi_subversion=0\n`, in a single write (Slurm reads it with one read() of at most 64 bytes), and
 * reads the PMI-1 line `cmd=response_to_init ... rc=0` back: pmi_wire.h parses that.
 *
 * Contract: nothing here allocates, prints or depends on the rest of the library; every function
 * validates its input and reports errors by return value (fuzzed: pmi2_wire_fuzz.c).
 */
#ifndef MF_RUNTIME_PMI2_WIRE_H
#define MF_RUNTIME_PMI2_WIRE_H

#include <stddef.h>

#include "runtime/pmi_wire.h"

#define MF_PMI2_HDR_LEN 6
/* Longest body accepted or produced. Our requests carry at most a 64-byte key and a 1024-byte
 * value; servers answer in kind. (The header could express up to 999999.) */
#define MF_PMI2_BODY_MAX 4096

/* Decodes a 6-byte header into the body length: optional leading spaces, 1-6 digits, trailing
 * spaces only, value in [1, MF_PMI2_BODY_MAX]. Returns 0, or -1 with *why set (why may be NULL). */
int mf_pmi2_parse_header(const char *hdr, size_t *body_len, const char **why);

/* Parses a body of `len` bytes (no header) into *msg, copying it. Returns 0, or -1 with *why set
 * to a static English reason (why may be NULL). The fields are read with pmi_wire.h's accessors
 * (mf_pmi_cmd, mf_pmi_get, mf_pmi_get_int, mf_pmi_get_bool). */
int mf_pmi2_parse(mf_pmi_msg *msg, const char *body, size_t len, const char **why);

/* Formats header + `cmd=<cmd>;k1=v1;...;` into buf (NUL-terminated, not counted). `kv` holds
 * 2*npairs strings. Returns the total length (header included), or -1 if a key or value is not
 * wire-safe, or the body exceeds MF_PMI2_BODY_MAX or the message does not fit in `cap`. */
int mf_pmi2_format(char *buf, size_t cap, const char *cmd, const char *const *kv, int npairs);

int mf_pmi2_key_ok(const char *s);
int mf_pmi2_value_ok(const char *s);

#endif
