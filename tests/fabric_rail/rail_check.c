/*
 * rail_check.c — traffic whose every byte is checked, for the multirail wrapper's tests
 * (src/fabric/rail): run over several rails, with rails broken or taken down under it.
 *
 * Each round, every rank exchanges with every other rank: messages of every size class (empty,
 * tiny, around the stripe and chunk sizes, odd sizes, several MiB), several in flight at once
 * with one tag so that MPI's non-overtaking order is checked, and a strided datatype both
 * ways (vector sent, contiguous received; contiguous sent, vector received). Contents are a
 * function of (sender, receiver, round, message), so a byte lost, duplicated or misplaced shows.
 *
 *   rail_check [SECONDS]   rounds until rank 0 says stop (default: 1 round); exits non-zero and
 *                          names the first bad byte on any difference
 *   rail_check SECONDS pvars   also reads the multirail wrapper's MPI_T counters over the run
 *                          and prints "rail_check: rank R NAME VALUE" for each (src/fabric/rail/rail.h),
 *                          and listens to the MPI_T events rail_failover and rail_revived:
 *                          "rail_check: rank R event NAME COUNT" (a count of -1: an event
 *                          named a peer that is not the other rank, or no rail)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mftest_event.h"

/* The wrapper's counters (src/fabric/rail/rail.h), read through MPI_T as a tool would. */
static const char *pvar_names[] = {"rail0_rail_failovers", "rail0_chunks_resent",
                                   "rail0_rails_revived"};
#define NPVARS 3
static MPI_T_pvar_session pvar_session;
static MPI_T_pvar_handle pvar_handle[NPVARS];

/* The events, heard by a thread-safe callback (user_data: which one). */
static const char *event_names[] = {"rail_failover", "rail_revived"};
static int event_count[2];
static MPI_T_event_registration event_reg[2];

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s,
                     void *ud)
{
    int *count = ud, peer = -1, rail = -1;
    if (MPI_T_event_read(ev, 0, &peer) != MPI_SUCCESS ||
        MPI_T_event_read(ev, 1, &rail) != MPI_SUCCESS || peer < 0 || rail < 0)
        *count = -1000000;
    (*count)++;
}

static int pvars_start(void)
{
    int provided, count;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        MPI_T_pvar_session_create(&pvar_session) != MPI_SUCCESS)
        return 1;
    for (int i = 0; i < 2; i++) {
        if (!(event_reg[i] = mftest_event_listen(event_names[i], MPI_T_CB_REQUIRE_THREAD_SAFE,
                                                 on_event, &event_count[i]))) {
            fprintf(stderr, "rail_check: cannot listen to the MPI_T event %s\n", event_names[i]);
            return 1;
        }
    }
    for (int i = 0; i < NPVARS; i++) {
        int idx;
        if (MPI_T_pvar_get_index(pvar_names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(pvar_session, idx, NULL, &pvar_handle[i], &count) !=
                MPI_SUCCESS ||
            MPI_T_pvar_start(pvar_session, pvar_handle[i]) != MPI_SUCCESS) {
            fprintf(stderr, "rail_check: no MPI_T counter %s\n", pvar_names[i]);
            return 1;
        }
    }
    return 0;
}

static int pvars_print(int rank)
{
    for (int i = 0; i < NPVARS; i++) {
        unsigned long long v = 0;
        if (MPI_T_pvar_read(pvar_session, pvar_handle[i], &v) != MPI_SUCCESS)
            return 1;
        printf("rail_check: rank %d %s %llu\n", rank, pvar_names[i], v);
        MPI_T_pvar_handle_free(pvar_session, &pvar_handle[i]);
    }
    for (int i = 0; i < 2; i++) {
        printf("rail_check: rank %d event %s %d\n", rank, event_names[i],
               event_count[i] < 0 ? -1 : event_count[i]);
        MPI_T_event_handle_free(event_reg[i], NULL, NULL);
    }
    MPI_T_pvar_session_free(&pvar_session);
    MPI_T_finalize();
    return 0;
}

static const size_t sizes[] = {0,          1,      7,       100,           4095,
                               4096,       65535,  65536,   65537,         131071,
                               131072 + 1, 300001, 1 << 20, (1 << 20) + 3, (4 << 20) + 17};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static unsigned char byte_at(int src, int dst, int round, int msg, size_t i)
{
    uint32_t x = (uint32_t)(src * 7919 + dst * 104729 + round * 31 + msg * 131) ^ (uint32_t)i;
    x *= 2654435761u;
    return (unsigned char)(x >> 24);
}

static int check(const unsigned char *buf, size_t len, int src, int dst, int round, int msg)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != byte_at(src, dst, round, msg, i)) {
            fprintf(stderr, "rank %d: round %d message %d (%zu bytes) from %d: byte %zu differs\n",
                    dst, round, msg, len, src, i);
            return 1;
        }
    return 0;
}

/* Strided: BLOCKS blocks of BLEN bytes every STRIDE bytes (about 1.5 MiB of data). */
#define BLOCKS 3000
#define BLEN 500
#define STRIDE 777

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 0;
    int pvars = argc > 2 && strcmp(argv[2], "pvars") == 0;
    if (pvars && pvars_start())
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Datatype vec;
    MPI_Type_vector(BLOCKS, BLEN, STRIDE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    size_t total = 0;
    for (size_t k = 0; k < NSIZES; k++)
        total += sizes[k];
    size_t vext = (size_t)(BLOCKS - 1) * STRIDE + BLEN, vdata = (size_t)BLOCKS * BLEN;
    int np = size - 1;
    unsigned char *out = malloc(total * (size_t)size + 1), *in = malloc(total * (size_t)size + 1);
    unsigned char *vout = malloc(vext), *vin = malloc(vext * (size_t)size);
    unsigned char *cout = malloc(vdata), *cin = malloc(vdata * (size_t)size);
    MPI_Request *rq = malloc((NSIZES + 2) * 2 * (size_t)size * sizeof *rq);
    int bad = 0, rounds = 0;
    double end = MPI_Wtime() + seconds;
    for (int go = 1; go && !bad; rounds++) {
        int n = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            size_t off = 0;
            for (size_t k = 0; k < NSIZES; k++) {
                unsigned char *o = out + (size_t)p * total + off;
                for (size_t i = 0; i < sizes[k]; i++)
                    o[i] = byte_at(rank, p, rounds, (int)k, i);
                MPI_Irecv(in + (size_t)p * total + off, (int)sizes[k], MPI_BYTE, p, 5,
                          MPI_COMM_WORLD, &rq[n++]);
                MPI_Isend(o, (int)sizes[k], MPI_BYTE, p, 5, MPI_COMM_WORLD, &rq[n++]);
                off += sizes[k];
            }
            /* vector out, contiguous in (tag 6); contiguous out, vector in (tag 7) */
            MPI_Irecv(cin + (size_t)p * vdata, (int)vdata, MPI_BYTE, p, 6, MPI_COMM_WORLD,
                      &rq[n++]);
            MPI_Irecv(vin + (size_t)p * vext, 1, vec, p, 7, MPI_COMM_WORLD, &rq[n++]);
        }
        /* The strided sends go after the receives are posted, one peer at a time. */
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            for (size_t b = 0; b < BLOCKS; b++)
                for (size_t i = 0; i < BLEN; i++)
                    vout[b * STRIDE + i] = byte_at(rank, p, rounds, 100, b * BLEN + i);
            for (size_t i = 0; i < vdata; i++)
                cout[i] = byte_at(rank, p, rounds, 101, i);
            MPI_Request two[2];
            MPI_Isend(vout, 1, vec, p, 6, MPI_COMM_WORLD, &two[0]);
            MPI_Isend(cout, (int)vdata, MPI_BYTE, p, 7, MPI_COMM_WORLD, &two[1]);
            MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        }
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size && !bad; p++) {
            if (p == rank)
                continue;
            size_t off = 0;
            for (size_t k = 0; k < NSIZES && !bad; k++) {
                bad |= check(in + (size_t)p * total + off, sizes[k], p, rank, rounds, (int)k);
                off += sizes[k];
            }
            bad |= check(cin + (size_t)p * vdata, vdata, p, rank, rounds, 100);
            for (size_t b = 0; b < BLOCKS && !bad; b++)
                for (size_t i = 0; i < BLEN && !bad; i++)
                    if (vin[(size_t)p * vext + b * STRIDE + i] !=
                        byte_at(p, rank, rounds, 101, b * BLEN + i)) {
                        fprintf(stderr, "rank %d: round %d strided from %d: byte %zu differs\n",
                                rank, rounds, p, b * BLEN + i);
                        bad = 1;
                    }
        }
        go = MPI_Wtime() < end;
        MPI_Allreduce(MPI_IN_PLACE, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        int anybad = bad;
        MPI_Allreduce(MPI_IN_PLACE, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        go &= !anybad;
    }
    if (rank == 0 && !bad)
        printf("rail_check: %d rounds, %d peers each, every byte checked\n", rounds, np);
    if (pvars) {
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD); /* the rails' last work is in, both ranks' counts final */
        if (pvars_print(rank))
            bad = 1;
    }
    MPI_Type_free(&vec);
    free(out);
    free(in);
    free(vout);
    free(vin);
    free(cout);
    free(cin);
    free(rq);
    MPI_Finalize();
    return bad;
}
