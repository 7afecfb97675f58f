/*
 * mpit_fabric.c — each fabric instance's counters are MPI_T performance variables
 * (src/fabric/fabric_mpit.h) that count exactly what the program moved.
 *
 * Rank 0 sends rank 1 N eager messages of S bytes and one rendezvous-size message; the counters
 * of the instance that carries that pair (shm0 between ranks of one host, tcp0 with
 * MANIFOLD_SHM=0) must grow on rank 0 by N+1 messages and N*S + BIG payload bytes sent, N eager
 * and 1 rendezvous, and on rank 1 by as much received (bytes, N eager, 1 rendezvous; at least
 * N+1 frames).
 * Their category is the instance's, under its class's. After MPI_Finalize they still read their
 * last values.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

enum { N = 10, S = 100, BIG = 1 << 20 };

static int pvar(const char *inst, const char *what)
{
    char name[64];
    int idx = -1;
    snprintf(name, sizeof name, "%s_%s", inst, what);
    int rc = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx);
    MF_CHECK(rc == MPI_SUCCESS, "no counter %s (rc %d)", name, rc);
    return idx;
}

static unsigned long long readp(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    MF_CHECK_MPI(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int rank, size;
    mftest_init_tools(&argc, &argv, &rank, &size);
    const char *shm = getenv("MANIFOLD_SHM");
    const char *inst = shm && strcmp(shm, "0") == 0 ? "tcp0" : "shm0";
    const char *what[] = {"frames_sent",         "bytes_sent",     "eager_sent",
                          "rendezvous_sent",     "bytes_received", "frames_received",
                          "rendezvous_received", "eager_received"};
    enum { NV = sizeof what / sizeof *what };
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NV];
    unsigned long long before[NV], after[NV];
    MF_CHECK_MPI(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < NV; i++) {
        int count, idx = pvar(inst, what[i]);
        MF_CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx, NULL, &h[i], &count));
        MF_CHECK(count == 1, "%s: count %d", what[i], count);
        MF_CHECK_MPI(MPI_T_pvar_start(s, h[i]));
    }
    /* The category of the instance, inside its class's. */
    int cat = -1, ncvars = 0, npvars = 0, nsub = 0;
    char cname[64], cdesc[256];
    int clen = sizeof cname, dlen = sizeof cdesc;
    MF_CHECK_MPI(MPI_T_category_get_index(inst, &cat));
    MF_CHECK_MPI(MPI_T_category_get_info(cat, cname, &clen, cdesc, &dlen, &ncvars, &npvars, &nsub));
    MF_CHECK(npvars >= NV, "category %s lists %d variables", inst, npvars);

    char *buf = calloc(1, BIG);
    if (size >= 2 && rank >= 2) {
        /* Quiet while rank 1 measures: what MPI_Init left in flight to rank 1 is taken before
         * its first reading (the exchange), and nothing else is sent until its last (done). */
        MF_CHECK_MPI(
            MPI_Sendrecv_replace(buf, 1, MPI_BYTE, 1, 9, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (size >= 2) {
        /* Only differences are compared, taken where no frame of the measured kind can slip
         * in unseen: rank 1 reads its counters before it lets rank 0 start (a frame rank 0
         * sent earlier could otherwise be taken up while rank 1 still waits in some call, and
         * counted before its first reading); rank 0 reads before it sends anything. The "go"
         * message moves the other way, where it touches none of the compared counters. The
         * exchange first makes rank 1 take every frame rank 0 (and any other rank) sent before
         * (frames from one peer arrive in order), such as what MPI_Init left in flight. */
        for (int peer = 0; peer < size; peer++)
            if (peer != rank && (rank == 1 || peer == 1))
                MF_CHECK_MPI(MPI_Sendrecv_replace(buf, 1, MPI_BYTE, peer, 9, peer, 9,
                                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < NV; i++)
            before[i] = readp(s, h[i]);
        if (rank == 1)
            MF_CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD));
        else
            MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (rank == 0) {
            for (int i = 0; i < N; i++)
                MF_CHECK_MPI(MPI_Send(buf, S, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Send(buf, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        } else {
            for (int i = 0; i < N; i++)
                MF_CHECK_MPI(MPI_Recv(buf, S, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < NV; i++)
            after[i] = readp(s, h[i]);
        /* The closing fence: nobody sends rank 1 anything until it has read. A rendezvous send
         * completes at the sender before the receive returns (on FIN, or once the last DATA
         * frame is written), so rank 0's next frame (MPI_Finalize's first) could otherwise
         * reach rank 1 in the very progress pass that completes its receive: rank 1 rightly
         * counts it received, rank 0 counts it sent after its own last reading. */
        if (rank == 1) {
            for (int peer = 0; peer < size; peer++)
                if (peer != 1)
                    MF_CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
        } else {
            MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        unsigned long long d[NV];
        for (int i = 0; i < NV; i++)
            d[i] = after[i] - before[i];
        if (rank == 0) {
            MF_CHECK(d[1] == (unsigned long long)N * S + BIG, "bytes_sent grew by %llu", d[1]);
            MF_CHECK(d[2] == N, "eager_sent grew by %llu", d[2]);
            MF_CHECK(d[3] == 1, "rendezvous_sent grew by %llu", d[3]);
            MF_CHECK(d[0] >= N + 1, "frames_sent grew by %llu", d[0]);
        } else {
            MF_CHECK(d[4] == (unsigned long long)N * S + BIG, "bytes_received grew by %llu", d[4]);
            MF_CHECK(d[5] >= N + 1, "frames_received grew by %llu", d[5]);
            MF_CHECK(d[6] == 1, "rendezvous_received grew by %llu", d[6]);
            MF_CHECK(d[7] == N, "eager_received grew by %llu", d[7]);
            MF_CHECK(d[7] == N, "eager_received grew by %llu", d[7]);
        }
    }
    free(buf);
    int errs = mftest_finish(); /* MPI_Finalize: the instances close, the counters freeze */
    if (size >= 2 && rank == 0) {
        unsigned long long v = readp(s, h[2]), w = readp(s, h[2]);
        if (v != w || v < N) {
            fprintf(stderr, "eager_sent after MPI_Finalize: %llu then %llu\n", v, w);
            errs = 1;
        }
    }
    for (int i = 0; i < NV; i++)
        MPI_T_pvar_handle_free(s, &h[i]);
    MPI_T_pvar_session_free(&s);
    MPI_T_finalize();
    return errs;
}
