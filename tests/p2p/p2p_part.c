/*
 * Partitioned communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready*, MPI_Parrived):
 *   - a ring, every rank sending to the next and receiving from the previous, several rounds of
 *     one pair of requests, partitions made ready in reverse order, small (eager) and large
 *     (rendezvous) partitions, each round's data different;
 *   - partitions move as they become ready: the receiver sees partition 0 arrive while the
 *     sender still holds the others back (it readies them only when told partition 0 arrived);
 *   - the two sides with different partition counts, and with a strided datatype on the
 *     receiver, also both at once;
 *   - MPI_Pready_range and MPI_Pready_list; MPI_Startall of a send and a receive;
 *   - matching in init order: two channels on one tag match first to first, and channels on
 *     two tags match by tag whatever order the two sides initialise them in;
 *   - MPI_PROC_NULL and the own rank as peers;
 *   - errors, each with its class: partitions 0, wildcards, partitions out of range or readied
 *     twice, calls on an inactive request or the wrong side, sizes that differ (both sides).
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;

static int value(int round, int i)
{
    return round * 1000003 + i * 7 + 1;
}

/* One ring exchange: `parts` partitions of `count` ints each way, `rounds` rounds. */
static void ring(int parts, int count, int rounds, int tag)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    size_t n = (size_t)parts * (size_t)count;
    int *out = calloc(n + 1, sizeof *out), *in = calloc(n + 1, sizeof *in);
    MPI_Request rq[2];
    MF_CHECK_MPI(MPI_Psend_init(out, parts, count, MPI_INT, next, tag, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &rq[0]));
    MF_CHECK_MPI(MPI_Precv_init(in, parts, count, MPI_INT, prev, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &rq[1]));
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            out[i] = value(r + rank, (int)i);
            in[i] = -1;
        }
        MF_CHECK_MPI(MPI_Start(&rq[1]));
        MF_CHECK_MPI(MPI_Start(&rq[0]));
        for (int p = parts - 1; p >= 0; p--)
            MF_CHECK_MPI(MPI_Pready(p, rq[0]));
        /* Every partition is checked as soon as MPI_Parrived says it is in. */
        char *seen = calloc((size_t)parts, 1);
        for (int left = parts; left > 0;) {
            for (int p = 0; p < parts; p++) {
                int flag = 0;
                if (seen[p])
                    continue;
                MF_CHECK_MPI(MPI_Parrived(rq[1], p, &flag));
                if (!flag)
                    continue;
                seen[p] = 1;
                left--;
                for (int i = p * count; i < (p + 1) * count; i++)
                    if (in[i] != value(r + prev, i)) {
                        MF_CHECK(0, "ring %dx%d round %d: int %d from rank %d is %d, not %d", parts,
                                 count, r, i, prev, in[i], value(r + prev, i));
                        break;
                    }
            }
        }
        free(seen);
        MPI_Status st[2];
        MF_CHECK_MPI(MPI_Waitall(2, rq, st));
        int got = -1;
        MPI_Get_count(&st[1], MPI_INT, &got);
        MF_CHECK(st[1].MPI_SOURCE == prev && st[1].MPI_TAG == tag && got == (int)n,
                 "ring %dx%d: status source %d tag %d count %d, not %d %d %zu", parts, count,
                 st[1].MPI_SOURCE, st[1].MPI_TAG, got, prev, tag, n);
    }
    MF_CHECK_MPI(MPI_Request_free(&rq[0]));
    MF_CHECK_MPI(MPI_Request_free(&rq[1]));
    MF_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "free left a handle");
    free(out);
    free(in);
}

/* Partition 0 arrives while the sender still holds partitions 1.. back. */
static void early(void)
{
    enum { PARTS = 4, COUNT = 1000 };
    static int buf[PARTS * COUNT];
    if (size < 2 || rank > 1)
        return;
    MPI_Request rq;
    if (rank == 0) {
        for (int i = 0; i < PARTS * COUNT; i++)
            buf[i] = value(5, i);
        MF_CHECK_MPI(
            MPI_Psend_init(buf, PARTS, COUNT, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
        MF_CHECK_MPI(MPI_Start(&rq));
        MF_CHECK_MPI(MPI_Pready(0, rq));
        int note = 0;
        MF_CHECK_MPI(MPI_Recv(&note, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(note == 1, "early: the note says %d", note);
        MF_CHECK_MPI(MPI_Pready_range(1, PARTS - 1, rq));
    } else {
        memset(buf, 0, sizeof buf);
        MF_CHECK_MPI(
            MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
        MF_CHECK_MPI(MPI_Start(&rq));
        int flag = 0, later = 1;
        while (!flag)
            MF_CHECK_MPI(MPI_Parrived(rq, 0, &flag));
        for (int p = 1; p < PARTS; p++) {
            MF_CHECK_MPI(MPI_Parrived(rq, p, &flag));
            later &= !flag;
        }
        MF_CHECK(later, "early: a partition not ready yet arrived");
        MF_CHECK(buf[0] == value(5, 0) && buf[COUNT - 1] == value(5, COUNT - 1),
                 "early: partition 0 arrived with other data");
        int note = 1;
        MF_CHECK_MPI(MPI_Send(&note, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
    }
    MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < PARTS * COUNT; i++)
        if (buf[i] != value(5, i)) {
            MF_CHECK(0, "early: int %d is %d", i, buf[i]);
            break;
        }
    MF_CHECK_MPI(MPI_Request_free(&rq));
}

/* Rank 0 sends 8 partitions of 6 ints to rank 1, which takes them as rparts partitions, either
 * of plain ints or of a strided type (every other int of a twice as long buffer). */
static void shapes(int rparts, int strided)
{
    enum { SPARTS = 8, SCOUNT = 6, TOTAL = SPARTS * SCOUNT };
    if (size < 2 || rank > 1)
        return;
    int rcount = TOTAL / rparts;
    MPI_Request rq;
    int buf[2 * TOTAL];
    if (rank == 0) {
        for (int i = 0; i < TOTAL; i++)
            buf[i] = value(9, i);
        MF_CHECK_MPI(MPI_Psend_init(buf, SPARTS, SCOUNT, MPI_INT, 1, 11, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &rq));
        for (int round = 0; round < 2; round++) {
            MF_CHECK_MPI(MPI_Start(&rq));
            int list[SPARTS];
            for (int p = 0; p < SPARTS; p++)
                list[p] = (p * 3) % SPARTS; /* 0 3 6 1 4 7 2 5 */
            MF_CHECK_MPI(MPI_Pready_list(SPARTS / 2, list, rq));
            MF_CHECK_MPI(MPI_Pready_list(SPARTS / 2, list + SPARTS / 2, rq));
            MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
    } else {
        MPI_Datatype t = MPI_INT, vec;
        if (strided) {
            MPI_Type_vector(rcount, 1, 2, MPI_INT, &vec);
            MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * rcount * sizeof(int)), &t);
            MPI_Type_free(&vec);
            MPI_Type_commit(&t);
        }
        MF_CHECK_MPI(MPI_Precv_init(buf, rparts, strided ? 1 : rcount, t, 0, 11, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &rq));
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 2 * TOTAL; i++)
                buf[i] = -5;
            MF_CHECK_MPI(MPI_Start(&rq));
            for (int q = 0; q < rparts; q++) {
                int flag = 0;
                while (!flag)
                    MF_CHECK_MPI(MPI_Parrived(rq, q, &flag));
                for (int k = q * rcount; k < (q + 1) * rcount; k++) {
                    int at = strided ? 2 * k : k;
                    if (buf[at] != value(9, k)) {
                        MF_CHECK(0, "shapes %d/%s: partition %d arrived, int %d is %d", rparts,
                                 strided ? "strided" : "ints", q, k, buf[at]);
                        break;
                    }
                }
            }
            MPI_Status st;
            MF_CHECK_MPI(MPI_Wait(&rq, &st));
            int got = -1;
            MPI_Get_count(&st, MPI_INT, &got);
            MF_CHECK(got == TOTAL, "shapes: count %d", got);
            for (int k = 0; strided && k < TOTAL; k++)
                MF_CHECK(buf[2 * k + 1] == -5, "shapes: a gap of the strided type was written");
        }
        if (strided)
            MPI_Type_free(&t);
    }
    MF_CHECK_MPI(MPI_Request_free(&rq));
}

/* Channels match in init order per tag: on tag 21 the first receive gets the first send; tags 22
 * and 23 are initialised in opposite orders by the two sides. */
static void order(void)
{
    if (size < 2 || rank > 1)
        return;
    int a = 0, b = 0, c = 0, d = 0;
    MPI_Request rq[4];
    if (rank == 0) {
        int v[4] = {1, 2, 3, 4};
        MF_CHECK_MPI(
            MPI_Psend_init(&v[0], 1, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
        MF_CHECK_MPI(
            MPI_Psend_init(&v[1], 1, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        MF_CHECK_MPI(
            MPI_Psend_init(&v[2], 1, 1, MPI_INT, 1, 22, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
        MF_CHECK_MPI(
            MPI_Psend_init(&v[3], 1, 1, MPI_INT, 1, 23, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
        MF_CHECK_MPI(MPI_Startall(4, rq));
        for (int i = 3; i >= 0; i--)
            MF_CHECK_MPI(MPI_Pready(0, rq[i]));
        MF_CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    } else {
        MF_CHECK_MPI(
            MPI_Precv_init(&d, 1, 1, MPI_INT, 0, 23, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
        MF_CHECK_MPI(
            MPI_Precv_init(&a, 1, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
        MF_CHECK_MPI(
            MPI_Precv_init(&c, 1, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
        MF_CHECK_MPI(
            MPI_Precv_init(&b, 1, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        MF_CHECK_MPI(MPI_Startall(4, rq));
        MF_CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        MF_CHECK(a == 1 && b == 2 && c == 3 && d == 4, "order: got %d %d %d %d, not 1 2 3 4", a, b,
                 c, d);
    }
    for (int i = 0; i < 4; i++)
        MF_CHECK_MPI(MPI_Request_free(&rq[i]));
}

/* Requests freed without ever being started (MPI allows freeing an inactive request): the
 * pair still matches, in the order of initialisation, so the next pair on the same tag (of
 * another size, which a wrong match would refuse) gets its own partner, and no setup message is
 * left unreceived at MPI_Finalize (which would warn). */
static void unstarted(void)
{
    if (size < 2 || rank > 1)
        return;
    MPI_Request first, second;
    int one = 7, four[4] = {0};
    if (rank == 0) {
        int v[4] = {11, 12, 13, 14};
        MF_CHECK_MPI(
            MPI_Psend_init(&one, 1, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &first));
        MF_CHECK_MPI(MPI_Request_free(&first));
        MF_CHECK_MPI(
            MPI_Psend_init(v, 2, 2, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &second));
        MF_CHECK_MPI(MPI_Start(&second));
        MF_CHECK_MPI(MPI_Pready_range(0, 1, second));
        MF_CHECK_MPI(MPI_Wait(&second, MPI_STATUS_IGNORE));
    } else {
        MF_CHECK_MPI(
            MPI_Precv_init(&one, 1, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &first));
        MF_CHECK_MPI(MPI_Request_free(&first));
        MF_CHECK_MPI(
            MPI_Precv_init(four, 1, 4, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &second));
        MF_CHECK_MPI(MPI_Start(&second));
        MF_CHECK_MPI(MPI_Wait(&second, MPI_STATUS_IGNORE));
        MF_CHECK(four[0] == 11 && four[1] == 12 && four[2] == 13 && four[3] == 14,
                 "unstarted: the second pair got %d %d %d %d, not 11 12 13 14", four[0], four[1],
                 four[2], four[3]);
    }
    MF_CHECK_MPI(MPI_Request_free(&second));
}

/* MPI_PROC_NULL as the peer, and the own rank. */
static void peers(void)
{
    int out[6] = {1, 2, 3, 4, 5, 6}, in[6] = {0};
    MPI_Request rq[2];
    MPI_Status st;
    MF_CHECK_MPI(MPI_Psend_init(out, 3, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &rq[0]));
    MF_CHECK_MPI(
        MPI_Precv_init(in, 3, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    MF_CHECK_MPI(MPI_Startall(2, rq));
    MF_CHECK_MPI(MPI_Pready_range(0, 2, rq[0]));
    int flag = 0;
    MF_CHECK_MPI(MPI_Parrived(rq[1], 2, &flag));
    MF_CHECK(flag, "MPI_PROC_NULL: partition 2 not arrived");
    MF_CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Wait(&rq[1], &st));
    MF_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
             "MPI_PROC_NULL: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MF_CHECK(in[0] == 0, "MPI_PROC_NULL: data landed");
    MF_CHECK_MPI(MPI_Request_free(&rq[0]));
    MF_CHECK_MPI(MPI_Request_free(&rq[1]));

    /* To self: 2 send partitions into 3 receive partitions. */
    MF_CHECK_MPI(MPI_Precv_init(in, 3, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    MF_CHECK_MPI(
        MPI_Psend_init(out, 2, 3, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    for (int round = 0; round < 3; round++) {
        memset(in, 0, sizeof in);
        out[0] = round;
        MF_CHECK_MPI(MPI_Startall(2, rq));
        MF_CHECK_MPI(MPI_Pready(1, rq[0]));
        MF_CHECK_MPI(MPI_Pready(0, rq[0]));
        MF_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        MF_CHECK(in[0] == round && in[5] == 6, "self round %d: got %d .. %d", round, in[0], in[5]);
    }
    MF_CHECK_MPI(MPI_Request_free(&rq[0]));
    MF_CHECK_MPI(MPI_Request_free(&rq[1]));
}

static void errors(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int buf[8] = {0};
    MPI_Request rq = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
    MF_CHECK_CLASS(MPI_Psend_init(buf, 0, 1, MPI_INT, rank, 0, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_ARG, "partitions 0");
    MF_CHECK_CLASS(MPI_Psend_init(buf, 2, -1, MPI_INT, rank, 0, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_COUNT, "count -1");
    MF_CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_INT, size, 0, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_RANK, "dest out of range");
    MF_CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_RANK, "MPI_ANY_SOURCE");
    MF_CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, rank, MPI_ANY_TAG, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_TAG, "MPI_ANY_TAG");
    MF_CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_DATATYPE_NULL, rank, 0, comm, MPI_INFO_NULL, &rq),
                   MPI_ERR_TYPE, "datatype null");

    /* A pair to self, for the calls on requests. */
    MF_CHECK_MPI(MPI_Psend_init(buf, 4, 1, MPI_INT, rank, 1, comm, MPI_INFO_NULL, &rq));
    MF_CHECK_MPI(MPI_Precv_init(buf + 4, 4, 1, MPI_INT, rank, 1, comm, MPI_INFO_NULL, &rr));
    int flag;
    MF_CHECK_CLASS(MPI_Pready(0, rq), MPI_ERR_REQUEST, "MPI_Pready before MPI_Start");
    MF_CHECK_CLASS(MPI_Parrived(rr, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived before MPI_Start");
    MF_CHECK_MPI(MPI_Start(&rq));
    MF_CHECK_MPI(MPI_Start(&rr));
    MF_CHECK_CLASS(MPI_Start(&rq), MPI_ERR_REQUEST, "MPI_Start of an active request");
    MF_CHECK_CLASS(MPI_Pready(4, rq), MPI_ERR_ARG, "partition 4 of 4");
    MF_CHECK_CLASS(MPI_Pready(-1, rq), MPI_ERR_ARG, "partition -1");
    MF_CHECK_CLASS(MPI_Pready_range(2, 1, rq), MPI_ERR_ARG, "range 2..1");
    MF_CHECK_CLASS(MPI_Pready_list(1, NULL, rq), MPI_ERR_ARG, "list NULL");
    MF_CHECK_CLASS(MPI_Pready(0, rr), MPI_ERR_REQUEST, "MPI_Pready on a receive");
    MF_CHECK_CLASS(MPI_Parrived(rq, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a send");
    MF_CHECK_CLASS(MPI_Parrived(rr, 9, &flag), MPI_ERR_ARG, "MPI_Parrived partition 9");
    /* No request, no communicator: MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MF_CHECK_CLASS(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_Pready null request");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MF_CHECK_MPI(MPI_Pready(0, rq));
    MF_CHECK_CLASS(MPI_Pready(0, rq), MPI_ERR_ARG, "partition 0 twice");
    MF_CHECK_MPI(MPI_Pready_range(1, 3, rq));
    MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    MF_CHECK_MPI(MPI_Request_free(&rq));
    MF_CHECK_MPI(MPI_Request_free(&rr));

    /* Sizes that differ: both sides' rounds end with MPI_ERR_TRUNCATE. */
    MF_CHECK_MPI(MPI_Psend_init(buf, 2, 2, MPI_INT, rank, 2, comm, MPI_INFO_NULL, &rq));
    MF_CHECK_MPI(MPI_Precv_init(buf + 4, 2, 1, MPI_INT, rank, 2, comm, MPI_INFO_NULL, &rr));
    MF_CHECK_MPI(MPI_Start(&rq));
    MF_CHECK_MPI(MPI_Start(&rr));
    MF_CHECK_MPI(MPI_Pready_range(0, 1, rq));
    MF_CHECK_CLASS(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "receive of the wrong size");
    MF_CHECK_CLASS(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "send of the wrong size");
    MF_CHECK_MPI(MPI_Request_free(&rq));
    MF_CHECK_MPI(MPI_Request_free(&rr));
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring(1, 1, 3, 1);
    ring(16, 3, 4, 2);        /* small partitions: eager */
    ring(4, 64 * 1024, 3, 3); /* 256 KiB partitions: rendezvous */
    ring(3, 0, 2, 4);         /* empty partitions */
    early();
    shapes(8, 0);
    shapes(12, 0);
    shapes(4, 0);
    shapes(8, 1);
    shapes(6, 1);
    order();
    unstarted();
    peers();
    errors();
    MPI_Barrier(MPI_COMM_WORLD);
    return mftest_finish();
}
