/*
 * launcher_rank.c — the MPI program the launcher tests run. argv[1] picks a behaviour; every
 * mode calls MPI_Init and checks that MPI_Comm_rank/size agree with what mpiexec told PMI.
 *
 *   hello                   print "hello <rank> of <size> on <host>"; rank 0 also "job ok"
 *   exit R CODE             rank R exits with CODE right after MPI_Init; the others wait
 *   signal R SIG            rank R raises SIG; the others wait
 *   fault R                 rank R writes to address 0x8 (a real SIGSEGV); the others wait
 *   ownsegv R               installs a SIGSEGV handler before MPI_Init that prints "own handler"
 *                           and exits 7; then rank R raises SIGSEGV; the others wait
 *   abort R CODE            rank R calls MPI_Abort(MPI_COMM_WORLD, CODE); the others wait
 *   nofinalize R            rank R exits 0 without MPI_Finalize; the others wait
 *   peerdie R HOW           after a barrier, rank R dies while the others wait for a message
 *                           from it (so on tcp they see its connection break): HOW > 0 raises
 *                           that signal, HOW < 0 exits with code -HOW, 0 exits 0 without
 *                           MPI_Finalize
 *   lines N                 each rank prints N numbered lines to stdout and N/10 to stderr, the
 *                           last stdout line without a newline
 *   stdin                   rank 0 prints the byte count and a checksum of its stdin; the
 *                           others print whether their stdin is at EOF at once
 *   env VAR...              print "<rank> VAR=<value or (unset)>" for each VAR
 *   pids                    print "pid <rank> <pid>", then wait to be killed
 *   ring                    pass a token around the ranks (fabric addresses went through PMI);
 *                           rank 0 prints "ring ok <size>"
 *   stuck                   a hang: rank 0 waits in MPI_Barrier, the others in MPI_Recv from
 *                           rank 0, which sends nothing (mpiexec --timeout ends it)
 * "Wait" means sleeping up to 60 s and then failing: a test that passes did not wait for that.
 */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static void wait_to_be_killed(void)
{
    for (int i = 0; i < 600; i++)
        usleep(100000);
    fprintf(stderr, "rank %d: was not killed within 60 s\n", rank);
    exit(99);
}

/* The program's own handler (ownsegv): the library must leave it in charge. */
static void own_segv(int sig)
{
    (void)sig;
    static const char msg[] = "own handler\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(7);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "ownsegv"))
        signal(SIGSEGV, own_segv);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 50;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "hello";
    int target = argc > 2 ? atoi(argv[2]) : 0;
    int value = argc > 3 ? atoi(argv[3]) : 0;

    if (!strcmp(mode, "hello")) {
        char host[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_processor_name(host, &len);
        printf("hello %d of %d on %s\n", rank, size, host);
        if (rank == 0)
            printf("job ok\n");
    } else if (!strcmp(mode, "exit") || !strcmp(mode, "signal") || !strcmp(mode, "abort") ||
               !strcmp(mode, "nofinalize") || !strcmp(mode, "fault") || !strcmp(mode, "ownsegv")) {
        if (rank != target)
            wait_to_be_killed();
        if (!strcmp(mode, "exit"))
            exit(value);
        if (!strcmp(mode, "signal"))
            raise(value);
        if (!strcmp(mode, "fault")) {
            volatile uintptr_t where = 8; /* (volatile: the compiler must not see the address) */
            *(volatile int *)where = 1;
        }
        if (!strcmp(mode, "ownsegv"))
            raise(SIGSEGV);
        if (!strcmp(mode, "abort"))
            MPI_Abort(MPI_COMM_WORLD, value);
        exit(0); /* nofinalize */
    } else if (!strcmp(mode, "peerdie")) {
        int all = 1, got = 0;
        MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank != target) {
            MPI_Recv(&got, 1, MPI_INT, target, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wait_to_be_killed();
        }
        if (value > 0)
            raise(value);
        exit(value < 0 ? -value : 0);
    } else if (!strcmp(mode, "lines")) {
        int n = target;
        for (int i = 0; i < n; i++) {
            printf("rank %d line %d of %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx%s",
                   rank, i, n, i == n - 1 ? "" : "\n");
            if (i % 10 == 0)
                fprintf(stderr, "rank %d err %d\n", rank, i);
        }
    } else if (!strcmp(mode, "stdin")) {
        if (rank == 0) {
            unsigned long count = 0, sum = 0;
            int c;
            while ((c = getchar()) != EOF) {
                count++;
                sum = (sum * 31 + (unsigned)c) % 1000000007UL;
            }
            printf("stdin bytes %lu sum %lu\n", count, sum);
        } else {
            char b;
            printf("rank %d stdin %s\n", rank, read(0, &b, 1) == 0 ? "eof" : "not-eof");
        }
    } else if (!strcmp(mode, "env")) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("%d %s=%s\n", rank, argv[i], v ? v : "(unset)");
        }
    } else if (!strcmp(mode, "pids")) {
        printf("pid %d %ld\n", rank, (long)getpid());
        fflush(stdout);
        wait_to_be_killed();
    } else if (!strcmp(mode, "stuck")) {
        int x;
        if (rank == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        else
            MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fprintf(stderr, "rank %d: stuck mode was not stuck\n", rank);
        return 98;
    } else if (!strcmp(mode, "ring")) {
        int token = rank == 0 ? 1000 : -1, got = -1;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (got != 1000 + size - 1) {
                fprintf(stderr, "ring: token %d, expected %d\n", got, 1000 + size - 1);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            printf("ring ok %d\n", size);
        } else {
            MPI_Recv(&got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            got++;
            MPI_Send(&got, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
    } else {
        fprintf(stderr, "launcher_rank: unknown mode '%s'\n", mode);
        MPI_Finalize();
        return 2;
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
