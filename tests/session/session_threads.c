/*
 * A session that asks for MPI_THREAD_MULTIPLE (info key "thread_level") without MPI_Init gets it:
 * MPI_Session_get_info reports it and four threads exchange messages on the session's
 * communicator at once.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mftest.h"

static MPI_Comm comm;

static void *worker(void *arg)
{
    int rank, size, tag = 100 + (int)(long)arg;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < 200; i++) {
        int got = -1, left = (rank + size - 1) % size;
        MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, tag, &got, 1, MPI_INT, left, tag, comm,
                     MPI_STATUS_IGNORE);
        MF_CHECK(got == left, "thread %ld: got %d, want %d", (long)arg, got, left);
    }
    return NULL;
}

int main(void)
{
    MPI_Info info, used;
    MPI_Session session;
    MPI_Group group;
    char level[64] = "";
    int flag = 0;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MF_CHECK_MPI(MPI_Session_init(info, MPI_ERRORS_RETURN, &session));
    MPI_Info_free(&info);
    MPI_Session_get_info(session, &used);
    MPI_Info_get(used, "thread_level", sizeof level - 1, level, &flag);
    MF_CHECK(flag && !strcmp(level, "MPI_THREAD_MULTIPLE"), "thread_level '%s'", level);
    MPI_Info_free(&used);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    MF_CHECK_MPI(
        MPI_Comm_create_from_group(group, "threads", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    int rank, all = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&mftest_errors, &all, 1, MPI_INT, MPI_SUM, comm);
    MPI_Comm_free(&comm);
    MPI_Group_free(&group);
    MF_CHECK_MPI(MPI_Session_finalize(&session));
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    return all != 0 || mftest_errors != 0;
}
