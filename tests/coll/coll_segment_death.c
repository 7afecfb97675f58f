/*
 * coll_segment_death.c — a job killed while a communicator's shared segment is half made must
 * leave nothing in /dev/shm.
 *
 * The segment is mapped at the communicator's second eligible collective (coll_shm.c). Its
 * rank 0 creates the name, then waits in the agreement that every rank has it mapped, and only
 * after that unlinks it. Rank 1 never joins that collective: it waits until the name appears
 * (a file with rank 0's pid, named as fabric/shm/shm_name.h says), prints it and kills itself.
 * The job then ends with rank 0 still holding the name, and mpiexec must remove it
 * (coll_segment_death.sh checks).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

/* Looks in /dev/shm for a communicator segment of this uid created by `pid`; fills `found`. */
static int find_segment(int pid, char *found, size_t len)
{
    char prefix[64], mark[64];
    snprintf(prefix, sizeof prefix, "manifold-%u-", (unsigned)getuid());
    snprintf(mark, sizeof mark, "-coll-%d-", pid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    struct dirent *e;
    int hit = 0;
    while (!hit && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, mark)) {
            snprintf(found, len, "/dev/shm/%s", e->d_name);
            hit = 1;
        }
    closedir(d);
    return hit;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid0 = (int)getpid();
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Send(&pid0, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&pid0, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the first eligible collective: no segment yet */
    if (rank != 1) {
        MPI_Barrier(MPI_COMM_WORLD); /* the second: maps the segment, never returns */
        fprintf(stderr, "rank %d: the barrier returned without rank 1\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    char name[320];
    struct timespec nap = {0, 1000000};
    for (int i = 0; i < 20000 && !find_segment(pid0, name, sizeof name); i++)
        nanosleep(&nap, NULL);
    if (!find_segment(pid0, name, sizeof name)) {
        fprintf(stderr, "rank 1: no segment of rank 0 (pid %d) appeared in /dev/shm\n", pid0);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    printf("segment %s\n", name);
    fflush(stdout);
    raise(SIGKILL);
    return 0;
}
