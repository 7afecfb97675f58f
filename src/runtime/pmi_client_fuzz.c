/*
 * pmi_client_fuzz.c — libFuzzer target for the PMI client core as a whole (pmi_client.c with the
 * PMI-1 and PMI-2 back ends): the input is everything a hostile process manager says on PMI_FD,
 * read by the client through its buffering (lines, then length-framed PMI-2 messages after the
 * PMI-1 handshake line) during init, put, fence, get and finalize. Every step may fail, but only
 * with an error code; any crash or sanitizer report is a bug.
 *
 * The protocol code outside pmi_client.c is not instrumented, so the fuzzer could not learn a
 * valid handshake by itself: the first input byte picks how many well-formed replies of a
 * normal conversation come before the rest of the input, to reach every stage.
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/pm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Well-formed replies, in the order of a conversation; "2:" marks a PMI-2 body (a header is
 * added). */
static const char *const pmi1_replies[] = {
    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n",
    "cmd=appnum appnum=0\n",
    "cmd=my_kvsname kvsname=kvs_1 rc=0\n",
    "cmd=universe_size size=2\n",
    "cmd=put_result rc=0\n",
    "cmd=barrier_out\n",
    "cmd=get_result rc=0 value=0123abcd\n",
    NULL};
static const char *const pmi2_replies[] = {
    "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
    "2:cmd=fullinit-response;rank=0;size=2;appnum=-1;rc=0;",
    "2:cmd=job-getid-response;jobid=1.0;rc=0;",
    "2:cmd=info-getjobattr-response;found=TRUE;value=4;rc=0;",
    "2:cmd=kvs-put-response;rc=0;",
    "2:cmd=kvs-fence-response;rc=0;",
    "2:cmd=kvs-get-response;found=TRUE;value=0123abcd;rc=0;",
    NULL};

static void fuzz_conversation(const mf_pm_ops *ops, const char *const *replies, const uint8_t *data,
                              size_t size)
{
    static char stream[16384];
    size_t len = 0;
    int prefix = size > 0 ? data[0] % 10 : 0;
    for (int i = 0; i < prefix && replies[i]; i++) {
        const char *r = replies[i];
        len += (size_t)(strncmp(r, "2:", 2) == 0
                            ? snprintf(stream + len, sizeof stream - len, "%-6zu%s", strlen(r + 2),
                                       r + 2)
                            : snprintf(stream + len, sizeof stream - len, "%s", r));
    }
    if (size > 1) {
        size_t n = size - 1 < sizeof stream - len ? size - 1 : sizeof stream - len;
        memcpy(stream + len, data + 1, n);
        len += n;
    }

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        abort();
    /* The server's whole say is buffered before the client starts (what does not fit in the
     * socket buffer is dropped: the write does not block); shutting down its write side turns the
     * end of the input into EOF while the client's requests can still be written. */
    (void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
    if (len > 0 && write(sv[1], stream, len) < 0)
        abort();
    shutdown(sv[1], SHUT_WR);
    char fd[16], value[MF_PM_VAL_MAX];
    snprintf(fd, sizeof fd, "%d", sv[0]);
    setenv("PMI_FD", fd, 1);
    mf_pm_identity id;
    if (ops->init(&id) == MPI_SUCCESS) {
        if (id.rank < 0 || id.rank >= id.size || id.universe_size < id.size)
            abort();
        (void)ops->put("mf.key", "0123abcd");
        (void)ops->fence();
        (void)ops->get("mf.key", value, sizeof value);
        (void)ops->get("mf.key", value, 4);
        (void)ops->finalize(); /* closes sv[0] */
    }
    /* A failed init closed sv[0] already. */
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    setenv("PMI_JOBID", "1.0", 1);
    fuzz_conversation(&mf_pm_pmi1_ops, pmi1_replies, data, size);
    fuzz_conversation(&mf_pm_pmi2_ops, pmi2_replies, data, size);
    return 0;
}
