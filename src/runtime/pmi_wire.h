/*
 * pmi_wire.h — the PMI-1 "simple PMI" wire format: parsing and formatting of command lines, and a
 * line assembler for byte streams. Shared, as the same source file, by the library's PMI-1 client
 * (pmi1.c) and by mpiexec's PMI server (tools/mpiexec/pmi_server.c).
 *
 * A message is one line: `cmd=NAME key=value key=value...\n`. Tokens are separated by one or more
 * spaces; the first token must be `cmd=`. Keys are one or more bytes other than space, '=',
 * control bytes and DEL; values are the same except that '=' is allowed (only the first '=' of a
 * token splits it), and may be empty. Bytes >= 0x80 pass through untouched. No value may contain a space, a newline, a NUL or another control byte, so binary data
 * (fabric addresses) travels hex-encoded: see mf_pmi_hex_encode().
 *
 * Contract: nothing here allocates, prints or depends on the rest of the library; every function
 * validates its input and reports errors by return value (never crashes on hostile bytes: the
 * decoder is fuzzed by tests/fuzz). Not thread-safe per object; separate objects are independent.
 */
#ifndef MF_RUNTIME_PMI_WIRE_H
#define MF_RUNTIME_PMI_WIRE_H

#include <stddef.h>

/* Longest line accepted or produced, newline excluded. A value of MF_PM_VAL_MAX (1024) plus a
 * kvsname, a key and the command fit with room to spare. */
#define MF_PMI_LINE_MAX 4096
/* Most key=value tokens in one message (cmd included); Slurm's PMI-2 fullinit response has nine. */
#define MF_PMI_FIELDS_MAX 32

/* A parsed message, of either protocol: pmi2_wire.h parses PMI-2 bodies into the same structure,
 * so that the accessors below and the client core (pmi_client.h) serve both. */
typedef struct mf_pmi_msg {
    int nfields;                         /* fields[0] is always "cmd" */
    const char *keys[MF_PMI_FIELDS_MAX]; /* NUL-terminated, pointing into `storage` */
    const char *vals[MF_PMI_FIELDS_MAX];
    char storage[MF_PMI_LINE_MAX + 1];
} mf_pmi_msg;

/* Parses one line (without its newline; a trailing '\r' or '\n' is tolerated) of `len` bytes into
 * *msg, copying it so `line` may be reused. Returns 0, or -1 with *why set to a static English
 * reason ("line too long", "first field is not cmd=", "bad character in key", ...). */
int mf_pmi_parse(mf_pmi_msg *msg, const char *line, size_t len, const char **why);

/* The command name (value of cmd=). */
const char *mf_pmi_cmd(const mf_pmi_msg *msg);
/* The value of `key` among the fields after cmd=, or NULL if absent (the first occurrence wins). */
const char *mf_pmi_get(const mf_pmi_msg *msg, const char *key);
/* Parses the value of `key` as a decimal int in [lo, hi]. Returns 0, or -1 if absent/malformed. */
int mf_pmi_get_int(const mf_pmi_msg *msg, const char *key, long lo, long hi, int *out);
/* TRUE/FALSE (any case; PMI-2 uses them): 1 or 0, or -1 if absent or neither. */
int mf_pmi_get_bool(const mf_pmi_msg *msg, const char *key);

/* Formats `cmd=<cmd> k1=v1 ... \n` into buf (NUL-terminated). `kv` holds 2*npairs strings:
 * key, value, key, value... Returns the line length including the newline, or -1 if a key or value
 * is not wire-safe (see above) or the line would not fit in `cap` or MF_PMI_LINE_MAX. */
int mf_pmi_format(char *buf, size_t cap, const char *cmd, const char *const *kv, int npairs);

/* True if `s` may be sent as a value, or as a key (see the charset above). */
int mf_pmi_value_ok(const char *s);
int mf_pmi_key_ok(const char *s);

/* Hex encoding for binary values: out receives 2*len lowercase hex digits and a NUL; returns
 * the string length, or -1 if outcap is too small. Decoding returns the byte count, or -1 on an
 * odd length, a non-hex digit or a too small buffer. */
int mf_pmi_hex_encode(const void *data, size_t len, char *out, size_t outcap);
int mf_pmi_hex_decode(const char *hex, void *out, size_t outcap);

/* Text that may contain spaces (an abort message) travels percent-escaped: '%', and every byte
 * that is not a value byte, becomes %XX. mf_pmi_escape returns the length or -1 if outcap is too
 * small (the output is then truncated at a character boundary and still valid); mf_pmi_unescape
 * decodes in place-compatible fashion (out may equal in) and turns control bytes into '?', so the
 * result is safe to print. */
int mf_pmi_escape(const char *in, char *out, size_t outcap);
void mf_pmi_unescape(const char *in, char *out, size_t outcap);

/*
 * Line assembler: feed it the bytes read from a stream, take complete lines out.
 * mf_pmi_lines_next() returns 1 and sets *line and *len (newline stripped, pointer valid until the
 * next call on this object) when a line is complete, 0 when more bytes are needed, and -1 when a
 * line exceeds MF_PMI_LINE_MAX (the stream is then unusable: treat as a protocol error).
 */
typedef struct mf_pmi_lines {
    char buf[MF_PMI_LINE_MAX + 1];
    size_t used;  /* bytes held */
    size_t start; /* start of the first unconsumed byte */
} mf_pmi_lines;

void mf_pmi_lines_init(mf_pmi_lines *lb);
/* Where to read into, and how much room is left (compacts first). 0 room means overflow. */
char *mf_pmi_lines_space(mf_pmi_lines *lb, size_t *room);
void mf_pmi_lines_commit(mf_pmi_lines *lb, size_t n);
int mf_pmi_lines_next(mf_pmi_lines *lb, const char **line, size_t *len);

#endif
