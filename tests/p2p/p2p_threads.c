/* MPI_THREAD_MULTIPLE: several threads per rank exchange messages at once, each on its own tag,
 * with blocking and nonblocking calls; every message must arrive intact. */
#include <pthread.h>
#include <stdlib.h>

#include "mftest.h"

#define THREADS 4
#define ROUNDS 300

static int rank, size;

static void *worker(void *arg)
{
    int id = (int)(long)arg, peer = rank ^ 1;
    int buf[256];
    for (int round = 0; round < ROUNDS; round++) {
        int n = 1 + (round * 37 + id) % 256;
        if (rank % 2 == 0) {
            for (int i = 0; i < n; i++)
                buf[i] = id * 100000 + round * 100 + i;
            MF_CHECK_MPI(MPI_Send(buf, n, MPI_INT, peer, id, MPI_COMM_WORLD));
            MF_CHECK_MPI(MPI_Recv(buf, 256, MPI_INT, peer, id, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MF_CHECK(buf[0] == -(id * 100000 + round), "thread %d round %d: reply %d", id, round,
                     buf[0]);
        } else {
            MPI_Request rq;
            MPI_Status st;
            MF_CHECK_MPI(MPI_Irecv(buf, 256, MPI_INT, peer, id, MPI_COMM_WORLD, &rq));
            MF_CHECK_MPI(MPI_Wait(&rq, &st));
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            MF_CHECK(count == n && buf[n - 1] == id * 100000 + round * 100 + n - 1,
                     "thread %d round %d: count %d", id, round, count);
            buf[0] = -(id * 100000 + round);
            MF_CHECK_MPI(MPI_Send(buf, 1, MPI_INT, peer, id, MPI_COMM_WORLD));
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MF_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int main_flag = 0;
    MPI_Is_thread_main(&main_flag);
    MF_CHECK(main_flag, "MPI_Is_thread_main is false on the main thread");
    if (size % 2 == 0) {
        pthread_t t[THREADS];
        for (long i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
    }
    return mftest_finish();
}
