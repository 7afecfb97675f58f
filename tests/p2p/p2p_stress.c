/*
 * Randomized point-to-point stress, checked against a model of MPI matching.
 *
 * Every rank derives the whole job's send plan from one seed (destinations, tags, sizes across
 * the eager/rendezvous boundaries), so each receiver knows what will arrive without any
 * collective. Senders start every send at once; receivers post receives one by one with specs
 * chosen at random among (source or MPI_ANY_SOURCE) x (tag or MPI_ANY_TAG) of a message still
 * due. The model: a receive from source s with tag spec t must get the earliest message s sent
 * to this rank that fits t and was not received yet (non-overtaking), with exactly its size,
 * tag and contents.
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

#define MSGS_PER_RANK 160
#define NTAGS 4

typedef struct msg {
    int src, dst, tag, seq;
    int len;
    int received;
} msg;

static unsigned long long rng_state;

static unsigned rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng_state >> 33);
}

static int pick_len(void)
{
    static const int edges[] = {0, 1, 8, 64, 4095, 16384, 16385, 65536, 65537, 200000};
    unsigned r = rnd() % 10;
    if (r < 7)
        return edges[rnd() % 10];
    return (int)(rnd() % 150000);
}

static unsigned char byte_of(const msg *m, int i)
{
    return (unsigned char)(m->src * 31 + m->seq * 17 + i * 7 + m->tag);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 12345;
    rng_state = seed;
    int total = MSGS_PER_RANK * size;
    msg *plan = calloc((size_t)total, sizeof *plan);
    for (int s = 0; s < size; s++) {
        for (int k = 0; k < MSGS_PER_RANK; k++) {
            msg *m = &plan[s * MSGS_PER_RANK + k];
            m->src = s;
            m->seq = k;
            m->dst = (int)(rnd() % (unsigned)size);
            m->tag = (int)(rnd() % NTAGS);
            m->len = pick_len();
        }
    }
    /* Send everything this rank owns, nonblocking, in plan order. */
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * MSGS_PER_RANK);
    unsigned char **sbuf = calloc(MSGS_PER_RANK, sizeof *sbuf);
    for (int k = 0; k < MSGS_PER_RANK; k++) {
        msg *m = &plan[rank * MSGS_PER_RANK + k];
        sbuf[k] = malloc((size_t)m->len + 1);
        for (int i = 0; i < m->len; i++)
            sbuf[k][i] = byte_of(m, i);
        MF_CHECK_MPI(
            MPI_Isend(sbuf[k], m->len, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD, &sreq[k]));
    }
    /* Receive what is due here, with random wildcard specs. */
    int due = 0;
    for (int i = 0; i < total; i++)
        due += plan[i].dst == rank;
    unsigned char *rbuf = malloc(200001);
    rng_state = seed ^ (0x9e3779b97f4a7c15ull * (unsigned long long)(rank + 1));
    for (int got = 0; got < due; got++) {
        int pick = (int)(rnd() % (unsigned)total);
        while (plan[pick].dst != rank || plan[pick].received)
            pick = (pick + 1) % total;
        int spec_src = rnd() % 2 ? plan[pick].src : MPI_ANY_SOURCE;
        int spec_tag = rnd() % 2 ? plan[pick].tag : MPI_ANY_TAG;
        MPI_Status st;
        MF_CHECK_MPI(MPI_Recv(rbuf, 200001, MPI_BYTE, spec_src, spec_tag, MPI_COMM_WORLD, &st));
        /* Model: earliest unreceived message from st.MPI_SOURCE to me fitting spec_tag. */
        msg *expect = NULL;
        for (int k = 0; k < MSGS_PER_RANK && !expect; k++) {
            msg *m = &plan[st.MPI_SOURCE * MSGS_PER_RANK + k];
            if (m->dst == rank && !m->received && (spec_tag == MPI_ANY_TAG || m->tag == spec_tag))
                expect = m;
        }
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (!expect) {
            MF_CHECK(0, "received a message from %d that the plan does not have", st.MPI_SOURCE);
            break;
        }
        expect->received = 1;
        MF_CHECK(spec_src == MPI_ANY_SOURCE || st.MPI_SOURCE == spec_src, "wrong source");
        MF_CHECK(st.MPI_TAG == expect->tag && count == expect->len,
                 "from %d: got tag %d len %d, model says seq %d tag %d len %d", st.MPI_SOURCE,
                 st.MPI_TAG, count, expect->seq, expect->tag, expect->len);
        for (int i = 0; i < count && i < expect->len; i++) {
            if (rbuf[i] != byte_of(expect, i)) {
                MF_CHECK(0, "from %d seq %d: byte %d differs", st.MPI_SOURCE, expect->seq, i);
                break;
            }
        }
        if (mftest_errors > 10)
            break;
    }
    MF_CHECK_MPI(MPI_Waitall(MSGS_PER_RANK, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < MSGS_PER_RANK; k++)
        free(sbuf[k]);
    free(sbuf);
    free(sreq);
    free(rbuf);
    free(plan);
    return mftest_finish();
}
