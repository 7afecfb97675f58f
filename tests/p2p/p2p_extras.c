/*
 * The rest of MPI-4.0 point-to-point and its neighbours: MPI_Isendrecv(_replace), the large-
 * count buffer calls, generalized requests, MPI_Alloc_mem/Free_mem, MPI_Pcontrol and status
 * conversion.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

static int rank, size;
static int queries, frees, cancels;

static int query_fn(void *state, MPI_Status *status)
{
    queries++;
    MPI_Status_set_elements(status, MPI_INT, *(int *)state);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *state)
{
    frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *state, int complete)
{
    cancels++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* Isendrecv and Isendrecv_replace, small and rendezvous-sized. */
    static const int counts[] = {1, 100000};
    for (int k = 0; k < 2; k++) {
        int n = counts[k];
        int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            s[i] = rank * 1000000 + i;
        MPI_Request rq;
        MPI_Status st;
        MF_CHECK_MPI(
            MPI_Isendrecv(s, n, MPI_INT, next, 3, r, n, MPI_INT, prev, 3, MPI_COMM_WORLD, &rq));
        MF_CHECK_MPI(MPI_Wait(&rq, &st));
        int c;
        MPI_Get_count(&st, MPI_INT, &c);
        MF_CHECK(c == n && st.MPI_SOURCE == prev && st.MPI_TAG == 3, "isendrecv status");
        MF_CHECK(r[0] == prev * 1000000 && r[n - 1] == prev * 1000000 + n - 1, "isendrecv data");
        MF_CHECK_MPI(MPI_Isendrecv_replace(s, n, MPI_INT, next, 4, prev, 4, MPI_COMM_WORLD, &rq));
        MF_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MF_CHECK(s[0] == prev * 1000000 && s[n - 1] == prev * 1000000 + n - 1,
                 "isendrecv_replace data");
        free(s);
        free(r);
    }

    /* Large-count buffer attach/detach around a buffered send. */
    MPI_Count bsize = 1000 + MPI_BSEND_OVERHEAD, back_size = 0;
    void *buf = malloc((size_t)bsize), *back = NULL;
    MF_CHECK_MPI(MPI_Buffer_attach_c(buf, bsize));
    int v = rank, got = -1;
    MF_CHECK_MPI(MPI_Bsend(&v, 1, MPI_INT, next, 5, MPI_COMM_WORLD));
    MF_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MF_CHECK(got == prev, "bsend through the _c buffer");
    MF_CHECK_MPI(MPI_Buffer_detach_c(&back, &back_size));
    MF_CHECK(back == buf && back_size == bsize, "detach_c returned another buffer");
    free(buf);

    /* Generalized requests: query at completion, free after, cancel when asked. */
    int state = 7;
    MPI_Request g;
    MPI_Status st;
    MF_CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state, &g));
    int flag = 1;
    MF_CHECK_MPI(MPI_Test(&g, &flag, MPI_STATUS_IGNORE));
    MF_CHECK(!flag, "a generalized request completed by itself");
    MF_CHECK_MPI(MPI_Cancel(&g));
    MF_CHECK(cancels == 1, "cancel callback ran %d times", cancels);
    MF_CHECK_MPI(MPI_Grequest_complete(g));
    MF_CHECK_MPI(MPI_Wait(&g, &st));
    int c;
    MPI_Get_elements(&st, MPI_INT, &c);
    MF_CHECK(queries == 1 && frees == 1 && c == 7 && g == MPI_REQUEST_NULL,
             "generalized request: queries %d frees %d elements %d", queries, frees, c);
    /* Freed before it is complete: the free callback runs at completion. */
    MF_CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &state, &g));
    MPI_Request copy = g;
    MF_CHECK_MPI(MPI_Request_free(&g));
    MF_CHECK(frees == 1, "free callback ran before completion");
    MF_CHECK_MPI(MPI_Grequest_complete(copy));
    MF_CHECK(frees == 2, "free callback did not run at completion (%d)", frees);

    /* An empty message of no type (count 0, MPI_DATATYPE_NULL), as MPICH accepts and its own
     * tests send: to self, received by a plain and by a matched receive. */
    {
        int me;
        MPI_Request sq[2];
        MPI_Status est;
        MPI_Message msg;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MF_CHECK_MPI(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, me, 41, MPI_COMM_WORLD, &sq[0]));
        MF_CHECK_MPI(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, me, 42, MPI_COMM_WORLD, &sq[1]));
        MF_CHECK_MPI(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, me, 41, MPI_COMM_WORLD, &est));
        MF_CHECK(est.MPI_TAG == 41, "empty untyped receive: tag %d", est.MPI_TAG);
        MF_CHECK_MPI(MPI_Mprobe(me, 42, MPI_COMM_WORLD, &msg, &est));
        MF_CHECK_MPI(MPI_Mrecv(NULL, 0, MPI_DATATYPE_NULL, &msg, &est));
        MF_CHECK_MPI(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
    }

    /* Alloc_mem / Free_mem / Pcontrol. */
    double *mem = NULL;
    MF_CHECK_MPI(MPI_Alloc_mem(4096, MPI_INFO_NULL, &mem));
    MF_CHECK(mem && ((uintptr_t)mem % 64) == 0, "Alloc_mem gave %p", (void *)mem);
    mem[511] = 1.0;
    MF_CHECK_MPI(MPI_Free_mem(mem));
    /* mpi_minimum_memory_alignment (MPI-4.0): followed when a power of two, else ignored. */
    MPI_Info align;
    MPI_Info_create(&align);
    const struct {
        const char *value;
        uintptr_t want;
    } aligns[] = {{"4096", 4096}, {"1048576", 1048576}, {"8", 64}, {"3", 64}, {"x", 64}};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        char *m = NULL;
        MPI_Info_set(align, "mpi_minimum_memory_alignment", aligns[i].value);
        MF_CHECK_MPI(MPI_Alloc_mem(100, align, &m));
        MF_CHECK(m && (uintptr_t)m % aligns[i].want == 0,
                 "Alloc_mem with mpi_minimum_memory_alignment=%s gave %p", aligns[i].value,
                 (void *)m);
        if (m)
            m[99] = 1;
        MPI_Free_mem(m);
    }
    MPI_Info stale = align;
    MPI_Info_free(&align);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MF_CHECK_CLASS(MPI_Alloc_mem(100, stale, &mem), MPI_ERR_INFO, "Alloc_mem with a freed info");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MF_CHECK_MPI(MPI_Pcontrol(1));

    /* Status conversions round trip. */
    MPI_Status a = {0}, b;
    a.MPI_SOURCE = 3;
    a.MPI_TAG = 9;
    MPI_Status_set_elements(&a, MPI_BYTE, 12345);
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    MF_CHECK_MPI(MPI_Status_c2f(&a, f));
    MF_CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 9, "c2f fields");
    MF_CHECK_MPI(MPI_Status_f2f08(f, &f08));
    MF_CHECK_MPI(MPI_Status_f082c(&f08, &b));
    MF_CHECK(memcmp(&a, &b, sizeof a) == 0, "status round trip changed it");
    return mftest_finish();
}
