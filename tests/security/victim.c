/*
 * victim.c — the job under attack in impostor.sh and flood.sh (tcp between all ranks).
 *
 *   victim DIR attack   connect every pair first; rank 0 writes DIR/port (its loopback listening
 *                       port, found in /proc) and DIR/secret (the test may know it), then DIR/ready;
 *                       the ranks pass checked messages around a ring, received with
 *                       MPI_ANY_SOURCE/MPI_ANY_TAG, until DIR/done appears
 *   victim DIR flood    rank 0 writes DIR/port and DIR/ready before any traffic; every rank waits
 *                       for DIR/flooded, then runs a ring and all-to-alls (new connections to
 *                       rank 0 amid the flood) for a few seconds
 *
 * Every message must come from the expected rank with the expected tag and content, and no
 * message may be left over at the end (an impostor's frame would be one). Prints "No Errors"
 * from rank 0 and exits 0 when all held. Rank 0 listens to the MPI_T event connection_refused,
 * as a monitoring tool would, and prints "victim: connection_refused N" (claims of a rank
 * outside the job count as -1000).
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mftest_event.h"

#define TAG 7
#define N 64

static const char *dir;
static int rank, size, errs, refused;

static void on_refused(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                       void *ud)
{
    int claim = -2;
    MPI_T_event_read(ev, 0, &claim);
    refused += claim >= -1 && claim < size ? 1 : -1000;
}

static MPI_T_event_registration listen_refused(void)
{
    int provided;
    MPI_T_event_registration reg = NULL;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        !(reg = mftest_event_listen("connection_refused", MPI_T_CB_REQUIRE_THREAD_SAFE, on_refused,
                                    NULL))) {
        fprintf(stderr, "victim: cannot listen to the MPI_T event connection_refused\n");
        errs++;
    }
    return reg;
}

static void touch(const char *name, const char *content)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.tmp", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs(content, f);
    fclose(f);
    char final[512];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    rename(path, final);
}

static int exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Our listening tcp port on 127.0.0.1: a LISTEN row of /proc/self/net/tcp whose socket inode is
 * one of our descriptors. 0 when none. */
static int listening_port(void)
{
    unsigned long inodes[1024];
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d)) && n < 1024;) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = '\0';
            if (sscanf(link, "socket:[%lu]", &inodes[n]) == 1)
                n++;
        }
    }
    if (d)
        closedir(d);
    FILE *f = fopen("/proc/self/net/tcp", "r");
    char line[512];
    int port = 0;
    while (f && !port && fgets(line, sizeof line, f)) {
        unsigned long addr, inode;
        unsigned p, st;
        if (sscanf(line, " %*d: %lx:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*d %*d %lu", &addr, &p, &st,
                   &inode) != 4 ||
            st != 0x0A || addr != 0x0100007FUL)
            continue;
        for (int i = 0; i < n; i++)
            if (inodes[i] == inode)
                port = (int)p;
    }
    if (f)
        fclose(f);
    return port;
}

static void publish_port(void)
{
    char buf[32];
    int port = listening_port();
    if (!port) {
        fprintf(stderr, "victim: no listening tcp port found\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    snprintf(buf, sizeof buf, "%d\n", port);
    touch("port", buf);
}

/* One step of the ring: send to the right, receive anything, which must be the left's. */
static void ring(int iter)
{
    int out[N], in[N] = {0};
    for (int i = 0; i < N; i++)
        out[i] = iter * 1000003 + rank * 101 + i;
    MPI_Status st;
    MPI_Request rq;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Isend(out, N, MPI_INT, right, TAG, MPI_COMM_WORLD, &rq);
    MPI_Recv(in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    int bad = st.MPI_SOURCE != left || st.MPI_TAG != TAG || count != N;
    for (int i = 0; i < N && !bad; i++)
        bad = in[i] != iter * 1000003 + left * 101 + i;
    if (bad) {
        fprintf(stderr, "victim %d: iteration %d: a message from %d tag %d (%d ints) is not ours\n",
                rank, iter, st.MPI_SOURCE, st.MPI_TAG, count);
        errs++;
    }
}

static void alltoall(int iter)
{
    int *out = malloc(sizeof(int) * (size_t)size), *in = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++)
        out[r] = iter * 7919 + rank * 31 + r;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (in[r] != iter * 7919 + r * 31 + rank)
            errs++;
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2) {
        fprintf(stderr, "usage: victim DIR attack|flood (2 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dir = argv[1];
    int flood = strcmp(argv[2], "flood") == 0;
    MPI_T_event_registration reg = rank == 0 && !flood ? listen_refused() : NULL;
    double t0 = now();
    if (flood) {
        if (rank == 0) {
            publish_port();
            touch("ready", "");
        }
        while (!exists("flooded") && now() - t0 < 60)
            usleep(10000);
        for (int iter = 0; now() - t0 < 120; iter++) {
            ring(iter);
            alltoall(iter);
            int stop = rank == 0 && iter >= 300;
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop)
                break;
        }
    } else {
        alltoall(-1); /* every pair connected: a proven impostor claiming a rank gets REJECT */
        if (rank == 0) {
            publish_port();
            const char *s = getenv("MANIFOLD_JOB_SECRET");
            touch("secret", s ? s : "");
            touch("ready", "");
        }
        for (int iter = 0;; iter++) {
            int stop = rank == 0 && (exists("done") || now() - t0 > 90);
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop)
                break;
            ring(iter);
            usleep(2000);
        }
    }
    /* Nothing else may have arrived. */
    MPI_Barrier(MPI_COMM_WORLD);
    int flag;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
        fprintf(stderr, "victim %d: a stray message from %d tag %d\n", rank, st.MPI_SOURCE,
                st.MPI_TAG);
        errs++;
    }
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf(" No Errors\n");
    if (reg) {
        printf("victim: connection_refused %d\n", refused);
        MPI_T_event_handle_free(reg, NULL, NULL);
        MPI_T_finalize();
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
