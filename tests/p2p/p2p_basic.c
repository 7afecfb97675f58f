/*
 * Point-to-point semantics, at any process count: ring exchanges of many sizes (zero bytes,
 * eager, rendezvous), every send mode, derived datatypes, probes, matched probes, persistent
 * requests, cancel, truncation, MPI_PROC_NULL, wildcards and the completion family; and
 * messages to the own rank in every mode, whichever fabric carries them (with tag matching
 * offloaded to ofi, that fabric, whose control frames then come back to the sender itself).
 */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;

static void fill(unsigned char *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(i * 131 + (size_t)seed * 7 + 1);
}

static int check(const unsigned char *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (unsigned char)(i * 131 + (size_t)seed * 7 + 1))
            return 0;
    return 1;
}

/* Each rank sends `n` bytes to the next and receives from the previous, with each send mode. */
static void ring_sizes(void)
{
    static const size_t sizes[] = {0,     1,     7,     64,    1000,   4096,
                                   16384, 16385, 65536, 65537, 300000, 4 << 20};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *s = malloc(n + 1), *r = malloc(n + 1);
        for (int mode = 0; mode < 4; mode++) {
            fill(s, n, rank + mode);
            memset(r, 0, n + 1);
            MPI_Request rq;
            MPI_Status st;
            MF_CHECK_MPI(MPI_Irecv(r, (int)n, MPI_BYTE, prev, 10 + mode, MPI_COMM_WORLD, &rq));
            /* Ready sends need the receive posted everywhere first. */
            MPI_Barrier(MPI_COMM_WORLD);
            if (mode == 0)
                MF_CHECK_MPI(MPI_Send(s, (int)n, MPI_BYTE, next, 10, MPI_COMM_WORLD));
            else if (mode == 1)
                MF_CHECK_MPI(MPI_Ssend(s, (int)n, MPI_BYTE, next, 11, MPI_COMM_WORLD));
            else if (mode == 2)
                MF_CHECK_MPI(MPI_Rsend(s, (int)n, MPI_BYTE, next, 12, MPI_COMM_WORLD));
            else {
                MPI_Request sq;
                MF_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, next, 13, MPI_COMM_WORLD, &sq));
                MF_CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
                MF_CHECK(sq == MPI_REQUEST_NULL, "Wait did not null the request");
            }
            MF_CHECK_MPI(MPI_Wait(&rq, &st));
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            MF_CHECK(count == (int)n, "size %zu mode %d: count %d", n, mode, count);
            MF_CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 10 + mode,
                     "size %zu mode %d: source %d tag %d", n, mode, st.MPI_SOURCE, st.MPI_TAG);
            MF_CHECK(check(r, n, prev + mode), "size %zu mode %d: wrong data", n, mode);
        }
        free(s);
        free(r);
    }
}

/* Buffered sends through an attached buffer. */
static void buffered(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int bufsize = 3 * (100000 + MPI_BSEND_OVERHEAD);
    char *attached = malloc((size_t)bufsize);
    MF_CHECK_MPI(MPI_Buffer_attach(attached, bufsize));
    unsigned char *s = malloc(100000), *r = malloc(100000);
    for (int i = 0; i < 3; i++) {
        fill(s, 100000, i + rank);
        MF_CHECK_MPI(MPI_Bsend(s, 100000, MPI_BYTE, next, 20 + i, MPI_COMM_WORLD));
    }
    memset(s, 0, 100000); /* the data is already copied */
    for (int i = 0; i < 3; i++) {
        MF_CHECK_MPI(
            MPI_Recv(r, 100000, MPI_BYTE, prev, 20 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MF_CHECK(check(r, 100000, i + prev), "bsend %d: wrong data", i);
    }
    void *back;
    int backsize;
    MF_CHECK_MPI(MPI_Buffer_detach(&back, &backsize));
    MF_CHECK(back == attached && backsize == bufsize, "detach returned another buffer");
    free(attached);
    free(s);
    free(r);
}

/* A strided column (vector type) and a struct type travel correctly. */
static void derived(void)
{
    enum { N = 300 };
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *m = malloc(sizeof(double) * N * N), *col = malloc(sizeof(double) * N);
    for (int i = 0; i < N * N; i++)
        m[i] = rank * 1e6 + i;
    MPI_Datatype column;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MF_CHECK_MPI(MPI_Sendrecv(m + 5, 1, column, next, 30, col, N, MPI_DOUBLE, prev, 30,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        MF_CHECK(col[i] == prev * 1e6 + i * N + 5, "column[%d] = %g", i, col[i]);
    /* And back into a strided destination. */
    for (int i = 0; i < N; i++)
        col[i] = rank + i * 0.5;
    MF_CHECK_MPI(MPI_Sendrecv(col, N, MPI_DOUBLE, next, 31, m + 7, 1, column, prev, 31,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        MF_CHECK(m[i * N + 7] == prev + i * 0.5, "strided receive [%d] = %g", i, m[i * N + 7]);
    MPI_Type_free(&column);
    free(m);
    free(col);
}

/* Strided types with large pieces travel as iovecs (no pack copy), small pieces are packed:
 * both, in eager and rendezvous sizes, posted before and after the send, into contiguous and
 * differently strided buffers, and truncated. */
static void strided_large(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* (blocks, blocklen, stride) in doubles: 4 KiB pieces, 64-byte pieces. */
    static const int shapes[2][3] = {{8, 512, 1024}, {64, 8, 20}};
    for (int sh = 0; sh < 2; sh++) {
        int nb = shapes[sh][0], bl = shapes[sh][1], st = shapes[sh][2];
        MPI_Datatype vec, other;
        MPI_Type_vector(nb, bl, st, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        /* The receive side: same data, another layout (blocks of half the length). */
        MPI_Type_vector(2 * nb, bl / 2, bl / 2 + 3, MPI_DOUBLE, &other);
        MPI_Type_commit(&other);
        for (int count = 1; count <= 3; count += 2) {
            MPI_Aint lb, ext;
            MPI_Type_get_extent(vec, &lb, &ext);
            size_t span = (size_t)ext * (size_t)count / sizeof(double) + (size_t)st;
            int n = nb * bl * count;
            double *sb = calloc(span, sizeof(double)),
                   *rb = calloc(span + (size_t)n, sizeof(double));
            double *cb = calloc((size_t)n, sizeof(double));
            for (int e = 0, k = 0; e < count; e++)
                for (int b = 0; b < nb; b++)
                    for (int i = 0; i < bl; i++, k++)
                        sb[(size_t)e * (size_t)ext / sizeof(double) + (size_t)b * (size_t)st +
                           (size_t)i] = rank * 1e6 + k;
            for (int late = 0; late < 2; late++) {
                MPI_Request rq, sq;
                /* Contiguous receive. */
                memset(cb, 0, sizeof(double) * (size_t)n);
                if (!late)
                    MPI_Irecv(cb, n, MPI_DOUBLE, prev, 90, MPI_COMM_WORLD, &rq);
                MF_CHECK_MPI(MPI_Isend(sb, count, vec, next, 90, MPI_COMM_WORLD, &sq));
                if (late) /* after the message arrived, if it was eager: the unexpected path */
                    MPI_Irecv(cb, n, MPI_DOUBLE, prev, 90, MPI_COMM_WORLD, &rq);
                MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                MF_CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
                for (int k = 0; k < n; k++)
                    if (cb[k] != prev * 1e6 + k) {
                        MF_CHECK(0, "shape %d count %d late %d: contiguous[%d] = %g", sh, count,
                                 late, k, cb[k]);
                        break;
                    }
                /* Strided receive into the other layout. */
                memset(rb, 0, sizeof(double) * (span + (size_t)n));
                if (!late)
                    MPI_Irecv(rb, count, other, prev, 91, MPI_COMM_WORLD, &rq);
                MF_CHECK_MPI(MPI_Isend(sb, count, vec, next, 91, MPI_COMM_WORLD, &sq));
                if (late) /* after the message arrived, if it was eager: the unexpected path */
                    MPI_Irecv(rb, count, other, prev, 91, MPI_COMM_WORLD, &rq);
                MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                MF_CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
                MPI_Aint olb, oext;
                MPI_Type_get_extent(other, &olb, &oext);
                for (int e = 0, k = 0; e < count; e++)
                    for (int b = 0; b < 2 * nb; b++)
                        for (int i = 0; i < bl / 2; i++, k++) {
                            double v = rb[(size_t)e * (size_t)oext / sizeof(double) +
                                          (size_t)b * (size_t)(bl / 2 + 3) + (size_t)i];
                            if (v != prev * 1e6 + k) {
                                MF_CHECK(0, "shape %d count %d late %d: strided[%d] = %g", sh,
                                         count, late, k, v);
                                e = count, b = 2 * nb, i = bl;
                            }
                        }
            }
            /* Truncation into a strided buffer: the fitting part arrives. */
            if (count == 3) {
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                MPI_Request rq;
                memset(rb, 0, sizeof(double) * (span + (size_t)n));
                MPI_Irecv(rb, 1, other, prev, 92, MPI_COMM_WORLD, &rq);
                MPI_Barrier(MPI_COMM_WORLD); /* everyone's receive is posted */
                MF_CHECK_MPI(MPI_Send(sb, count, vec, next, 92, MPI_COMM_WORLD));
                MPI_Status stt;
                int rc = MPI_Wait(&rq, &stt), cls = -1;
                MPI_Error_class(rc, &cls);
                MF_CHECK(cls == MPI_ERR_TRUNCATE, "shape %d: strided truncation class %d", sh, cls);
                MF_CHECK(rb[0] == prev * 1e6 && rb[bl / 2 + 3] == prev * 1e6 + bl / 2,
                         "shape %d: truncated strided data %g %g", sh, rb[0], rb[bl / 2 + 3]);
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            }
            free(sb);
            free(rb);
            free(cb);
        }
        MPI_Type_free(&vec);
        MPI_Type_free(&other);
    }
}

/* Non-overtaking: small and large messages with one tag arrive in send order, also when the
 * receiver posts late (unexpected queue) and uses wildcards. */
static void ordering(void)
{
    enum { K = 24 };
    static const int lens[K] = {1, 100000, 8, 0, 70000, 3, 1 << 20, 5, 16384, 16385, 2, 65537,
                                1, 100000, 8, 0, 70000, 3, 1 << 19, 5, 16384, 16385, 2, 65537};
    if (size < 2)
        return;
    if (rank == 0) {
        unsigned char *b = malloc(1 << 20);
        MPI_Request rq[K];
        for (int i = 0; i < K; i++) {
            fill(b, 0, 0);
            MF_CHECK_MPI(MPI_Isend(b, lens[i], MPI_BYTE, 1, 40, MPI_COMM_WORLD, &rq[i]));
        }
        MF_CHECK_MPI(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        free(b);
    } else if (rank == 1) {
        unsigned char *b = malloc(1 << 20);
        for (int i = 0; i < K; i++) {
            MPI_Status st;
            MF_CHECK_MPI(
                MPI_Recv(b, 1 << 20, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int c;
            MPI_Get_count(&st, MPI_BYTE, &c);
            MF_CHECK(c == lens[i], "message %d overtaken: got %d bytes, expected %d", i, c,
                     lens[i]);
        }
        free(b);
    }
}

/* Probes, matched probes, PROC_NULL, truncation, cancel, persistent requests. */
static void probes_and_more(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = rank * 10, got = -1, flag = 0;
    MPI_Status st;
    MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, next, 50, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Probe(prev, 50, MPI_COMM_WORLD, &st));
    MF_CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 50, "probe status");
    MF_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &flag, &st));
    MF_CHECK(flag, "iprobe did not see a probed message");
    MPI_Message msg;
    MF_CHECK_MPI(MPI_Mprobe(prev, 50, MPI_COMM_WORLD, &msg, &st));
    MF_CHECK_MPI(MPI_Iprobe(prev, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    MF_CHECK(!flag, "a matched-probed message is still visible");
    MF_CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
    MF_CHECK(got == prev * 10 && msg == MPI_MESSAGE_NULL, "mrecv got %d", got);

    /* PROC_NULL: immediate, empty status. */
    MF_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    int c;
    MPI_Get_count(&st, MPI_INT, &c);
    MF_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0,
             "PROC_NULL status");

    /* Truncation: the fitting part arrives, the error class is MPI_ERR_TRUNCATE. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int big[4] = {rank, rank + 1, rank + 2, rank + 3}, small[2] = {-1, -1};
    MPI_Request rq;
    MF_CHECK_MPI(MPI_Isend(big, 4, MPI_INT, next, 60, MPI_COMM_WORLD, &rq));
    int rc = MPI_Recv(small, 2, MPI_INT, prev, 60, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MF_CHECK(cls == MPI_ERR_TRUNCATE, "truncation gave class %d", cls);
    MF_CHECK(small[0] == prev && small[1] == prev + 1, "truncated data %d %d", small[0], small[1]);
    MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Cancel an unmatched receive. */
    MF_CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, prev, 999, MPI_COMM_WORLD, &rq));
    MF_CHECK_MPI(MPI_Cancel(&rq));
    MF_CHECK_MPI(MPI_Wait(&rq, &st));
    MPI_Test_cancelled(&st, &flag);
    MF_CHECK(flag, "receive was not cancelled");

    /* Persistent requests, started several times. */
    int sv, rv;
    MPI_Request pr[2];
    MF_CHECK_MPI(MPI_Send_init(&sv, 1, MPI_INT, next, 70, MPI_COMM_WORLD, &pr[0]));
    MF_CHECK_MPI(MPI_Recv_init(&rv, 1, MPI_INT, prev, 70, MPI_COMM_WORLD, &pr[1]));
    for (int it = 0; it < 5; it++) {
        sv = rank * 100 + it;
        MF_CHECK_MPI(MPI_Startall(2, pr));
        MF_CHECK_MPI(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
        MF_CHECK(rv == prev * 100 + it, "persistent round %d got %d", it, rv);
        MF_CHECK(pr[0] != MPI_REQUEST_NULL, "persistent request was freed by Waitall");
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
}

/* Waitany / Waitsome / Testany / Testsome over a batch from every rank. */
static void completion_family(void)
{
    int n = size, *in = calloc((size_t)n, sizeof(int)), out = rank;
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)n);
    for (int p = 0; p < n; p++)
        MF_CHECK_MPI(MPI_Irecv(&in[p], 1, MPI_INT, p, 80, MPI_COMM_WORLD, &rq[p]));
    for (int p = 0; p < n; p++)
        MF_CHECK_MPI(MPI_Send(&out, 1, MPI_INT, p, 80, MPI_COMM_WORLD));
    int done = 0, idx[64], outcount;
    while (done < n) {
        if (done % 2 == 0) {
            int i;
            MF_CHECK_MPI(MPI_Waitany(n, rq, &i, MPI_STATUS_IGNORE));
            MF_CHECK(i >= 0 && i < n && in[i] == i, "waitany index %d", i);
            done++;
        } else {
            MF_CHECK_MPI(MPI_Waitsome(n, rq, &outcount, idx, MPI_STATUSES_IGNORE));
            for (int k = 0; k < outcount; k++)
                MF_CHECK(in[idx[k]] == idx[k], "waitsome index %d", idx[k]);
            done += outcount;
        }
    }
    int i, flag;
    MF_CHECK_MPI(MPI_Testany(n, rq, &i, &flag, MPI_STATUS_IGNORE));
    MF_CHECK(flag && i == MPI_UNDEFINED, "testany on null requests");
    MF_CHECK_MPI(MPI_Testsome(n, rq, &outcount, idx, MPI_STATUSES_IGNORE));
    MF_CHECK(outcount == MPI_UNDEFINED, "testsome on null requests");
    free(in);
    free(rq);
}

/* Sends to the own rank in each mode, the receive posted first (a synchronous send to self
 * waits for its match); and the other way round for the nonblocking synchronous send. */
static void to_self(void)
{
    static const size_t sizes[] = {0, 1000, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *out = malloc(n + 1), *in = malloc(n + 1);
        for (int mode = 0; mode < 4; mode++) {
            fill(out, n, mode + 40);
            memset(in, 0, n + 1);
            MPI_Request r;
            MPI_Status st;
            if (mode == 3) { /* Issend first, then the receive */
                MF_CHECK_MPI(MPI_Issend(out, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD, &r));
                MF_CHECK_MPI(MPI_Recv(in, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD, &st));
                MF_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                MF_CHECK_MPI(MPI_Irecv(in, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD, &r));
                if (mode == 0)
                    MF_CHECK_MPI(MPI_Send(out, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD));
                else if (mode == 1)
                    MF_CHECK_MPI(MPI_Ssend(out, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD));
                else
                    MF_CHECK_MPI(MPI_Rsend(out, (int)n, MPI_BYTE, rank, 30, MPI_COMM_WORLD));
                MF_CHECK_MPI(MPI_Wait(&r, &st));
            }
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            MF_CHECK(count == (int)n && st.MPI_SOURCE == rank && check(in, n, mode + 40),
                     "send to self, %zu bytes, mode %d: count %d, source %d", n, mode, count,
                     st.MPI_SOURCE);
        }
        free(out);
        free(in);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring_sizes();
    buffered();
    derived();
    strided_large();
    ordering();
    probes_and_more();
    completion_family();
    to_self();
    return mftest_finish();
}
