/*
 * aggregate.c — collective accesses (MPI_File_*_all, _ordered and the split collectives): the
 * ranks agree on the outcome, then move the data each on its own or by two-phase collective
 * buffering, as ROMIO's "collective buffering" does, in this shape:
 *
 *   - When the view is set (a collective call), every rank's view is shared with the others
 *     (mf_io_views_share). An access then needs only its place in its view's stream: one
 *     allgather of (start, length, error so far) per access, which is also the agreement that a
 *     rank's bad argument fails every rank instead of leaving the others waiting.
 *   - The accesses interleave when the file spans of two ranks overlap (hint "automatic"; the
 *     hints romio_cb_read / romio_cb_write "enable" and "disable" force the choice). Then the span
 *     of them all, [lo, hi), is cut into one contiguous domain per aggregator (cb_nodes of them,
 *     spread evenly over the ranks; every rank by default), moved in rounds of at most
 *     cb_buffer_size bytes (16 MiB by default) per aggregator.
 *   - A tiled view maps its stream onto the file in order, so the bytes of one rank that fall in
 *     one aggregator's window are one range of that rank's stream, which both sides find with
 *     mf_io_view_before: the exchange (an alltoallv per round) carries data only, no offset
 *     lists, and a rank with a contiguous buffer type sends from it and receives into it.
 *   - A read: each aggregator reads the part of its window that any rank asked for with one
 *     pread; the ranks agree where the file ends (the first short read, mf_io_agree_min); each
 *     aggregator copies every rank's bytes out of the window through that rank's view.
 *   - A write: each aggregator copies the ranks' bytes into its window through their views and
 *     writes it with one pwrite under a record lock. The window first gets what the file holds
 *     there unless the bytes written are sure to cover it: as many bytes as the window has, and
 *     views that never overlap (views_disjoint: same filetype extent, pieces apart modulo it).
 *
 * Hints (MPI_File_open, _set_view, _set_info; rank 0's hold for all): cb_buffer_size, cb_nodes,
 * romio_cb_read and romio_cb_write ("automatic", "enable", "disable"), and the standard's
 * collective_buffering ("false" disables both); MPI_File_get_info reports the values in effect.
 *
 * Atomic mode, views that are not tiled (or too many pieces in all to share: IO_VIEWS_MAX),
 * a write where a rank cannot read its file (no holes could be filled) and a communicator of one
 * rank take the independent path (mf_io_rw on every rank).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/op.h"
#include "comm/info.h"
#include "core/error.h"
#include "io/io.h"
#include "tool/mpit.h"

#define IO_CB_BUFFER_DEFAULT ((MPI_Offset)16 << 20)
/* The most pieces the views of all ranks may hold together to be shared (24 bytes each). */
#define IO_VIEWS_MAX (1 << 20)

/* One rank's access, as every rank sees it (MPI_OFFSET words, gathered). */
struct mf_io_share {
    MPI_Offset s, len;   /* stream bytes [s, s + len) of the rank's view */
    MPI_Offset cls;      /* the error class of its failure so far, 0 if none */
    MPI_Offset readable; /* its descriptor can read (a write's holes can be filled) */
};
#define SHARE_WORDS ((int)(sizeof(struct mf_io_share) / sizeof(MPI_Offset)))

/* Per-rank scratch of a collective access, allocated with the shares (so that no access fails
 * for memory after some ranks have gone into a collective). */
struct io_scratch {
    MPI_Offset *first, *end; /* each rank's file span, [first, end) (end 0: no data) */
    MPI_Offset (*sorted)[2]; /* the spans, sorted */
    /* Round by round, per peer: what this rank's access has in the peer's window (when the peer
     * is an aggregator): mcount bytes from stream offset mat of the access (from its start);
     * what an aggregator has from the peer: acount bytes from the peer's stream byte afrom. */
    MPI_Count *mcount, *acount;
    MPI_Aint *mat;
    MPI_Offset *afrom;
    MPI_Aint *mdispl, *adispl; /* the exchange's displacements on each side */
    /* The buffers of the rounds, kept from one access to the next (fresh pages for every
     * access cost a fault each, a quarter of an 8 MiB access's time): an aggregator's window
     * (at most cb_buffer_size), the data it exchanges, this rank's packed data. */
    struct io_buffer {
        char *p;
        size_t cap;
    } win, abuf, mbuf;
};

/* b with room for `need` bytes (at least 1), or NULL; what it held is not kept. */
static char *io_buffer(struct io_buffer *b, size_t need)
{
    need = need ? need : 1;
    if (b->cap < need) {
        free(b->p);
        b->cap = (b->p = malloc(need)) ? need : 0;
    }
    return b->p;
}

/* MPI_T counters (category "io"): how each collective access moved its data. */
enum { IO_TWO_PHASE, IO_ON_ITS_OWN, IO_ROUNDS, IO_N };
static mf_t_counter io_count[IO_N];
static const mf_t_counter_def io_def[IO_N] = {
    [IO_TWO_PHASE] = {"io_two_phase_accesses",
                      "collective file accesses this rank took part in that moved their data by "
                      "two-phase collective buffering (aggregators and an exchange)",
                      &io_count[IO_TWO_PHASE]},
    [IO_ON_ITS_OWN] = {"io_independent_collectives",
                       "collective file accesses in which every rank moved its own data (no "
                       "interleaving, a hint, atomic mode, or one rank)",
                       &io_count[IO_ON_ITS_OWN]},
    [IO_ROUNDS] = {"io_two_phase_rounds",
                   "rounds of two-phase accesses (each one window per aggregator, at most "
                   "cb_buffer_size bytes, and one exchange)",
                   &io_count[IO_ROUNDS]},
};

void mf_io_publish(const mf_t_counter_def *defs, size_t n)
{
    if (mf_t_category("io", "MPI-IO: file access", NULL) >= 0)
        mf_t_counters_register("io", MPI_T_VERBOSITY_USER_DETAIL, defs, n);
}

static void io_publish(void)
{
    static bool done;
    if (!done)
        mf_io_publish(io_def, IO_N);
    done = true;
}

void mf_io_views_free(mf_file *f)
{
    free(f->views);
    free(f->views_pieces);
    f->views = NULL;
    f->views_pieces = NULL;
}

/* A hint's value as a positive number, or 0 if it is not one. */
static MPI_Offset io_hint_number(const char *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return errno || end == v || *end || n <= 0 ? 0 : (MPI_Offset)n;
}

static void io_hint_mode(const char *v, mf_io_cb_mode *mode)
{
    if (!strcmp(v, "enable"))
        *mode = MF_IO_CB_ENABLE;
    else if (!strcmp(v, "disable"))
        *mode = MF_IO_CB_DISABLE;
    else if (!strcmp(v, "automatic"))
        *mode = MF_IO_CB_AUTO;
}

void mf_io_hints_read(mf_file *f, const struct mf_info *info)
{
    if (f->hints.cb_buffer_size == 0)
        f->hints = (mf_io_hints){.cb_buffer_size = IO_CB_BUFFER_DEFAULT};
    if (!info)
        return;
    /* Values that do not parse are ignored, as hints an implementation does not know are. */
    const char *v;
    MPI_Offset n;
    if ((v = mf_info_lookup(info, "cb_buffer_size")) && (n = io_hint_number(v)))
        f->hints.cb_buffer_size = n;
    if ((v = mf_info_lookup(info, "cb_nodes")) && (n = io_hint_number(v)))
        f->hints.cb_nodes = n > INT32_MAX ? INT32_MAX : (int)n;
    /* The standard's collective_buffering: "false" turns it off both ways, "true" leaves it to
     * the choice by interleaving; the ROMIO names, read after it, choose per direction. */
    if ((v = mf_info_lookup(info, "collective_buffering")) && !strcmp(v, "false"))
        f->hints.cb_read = f->hints.cb_write = MF_IO_CB_DISABLE;
    else if (v && !strcmp(v, "true"))
        f->hints.cb_read = f->hints.cb_write = MF_IO_CB_AUTO;
    if ((v = mf_info_lookup(info, "romio_cb_read")))
        io_hint_mode(v, &f->hints.cb_read);
    if ((v = mf_info_lookup(info, "romio_cb_write")))
        io_hint_mode(v, &f->hints.cb_write);
}

/* The aggregators of a two-phase access: cb_nodes of the ranks, or all of them. */
static int io_aggregators(const mf_file *f)
{
    int P = f->comm->c_size;
    return f->hints.cb_nodes > 0 && f->hints.cb_nodes < P ? f->hints.cb_nodes : P;
}

int mf_io_hints_report(const mf_file *f, struct mf_info *info)
{
    static const char *const mode[] = {[MF_IO_CB_AUTO] = "automatic",
                                       [MF_IO_CB_ENABLE] = "enable",
                                       [MF_IO_CB_DISABLE] = "disable"};
    const mf_io_hints *h = &f->hints;
    char size[24], nodes[16];
    int naggr = io_aggregators(f);
    snprintf(size, sizeof size, "%lld", (long long)h->cb_buffer_size);
    snprintf(nodes, sizeof nodes, "%d", naggr);
    int rc = mf_info_set(info, "cb_buffer_size", size);
    if (!rc)
        rc = mf_info_set(info, "cb_nodes", nodes);
    if (!rc)
        rc = mf_info_set(info, "romio_cb_read", mode[h->cb_read]);
    if (!rc)
        rc = mf_info_set(info, "romio_cb_write", mode[h->cb_write]);
    if (!rc)
        rc = mf_info_set(
            info, "collective_buffering",
            h->cb_read == MF_IO_CB_DISABLE && h->cb_write == MF_IO_CB_DISABLE ? "false" : "true");
    return rc;
}

static int io_interval_cmp(const void *a, const void *b)
{
    const MPI_Offset *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Whether no byte of the file lies in two ranks' views: every view has the same filetype
 * extent E and their pieces, taken modulo E, do not overlap. False where it cannot tell. */
static bool io_views_disjoint(const mf_io_view *views, int nviews, int npieces)
{
    MPI_Offset e = views[0].ft_extent;
    for (int j = 1; j < nviews; j++)
        if (views[j].ft_extent != e)
            return false;
    MPI_Offset(*iv)[2] = malloc(2 * (size_t)npieces * sizeof *iv); /* a piece may wrap: two */
    if (!iv)
        return false;
    size_t n = 0;
    for (int j = 0; j < nviews; j++)
        for (int i = 0; i < views[j].npieces; i++) {
            const mf_io_piece *p = &views[j].pieces[i];
            if (p->len > e) {
                free(iv);
                return false;
            }
            MPI_Offset at = (views[j].disp + p->disp) % e, over = at + p->len - e;
            iv[n][0] = at;
            iv[n++][1] = over > 0 ? e : at + p->len;
            if (over > 0) {
                iv[n][0] = 0;
                iv[n++][1] = over;
            }
        }
    qsort(iv, n, sizeof *iv, io_interval_cmp);
    bool apart = true;
    for (size_t i = 1; i < n && apart; i++)
        apart = iv[i][0] >= iv[i - 1][1];
    free(iv);
    return apart;
}

/* Allocates the per-access scratch for a communicator of P ranks (once per file). */
static int io_scratch_alloc(mf_file *f, int P)
{
    if (f->shares)
        return 0;
    f->shares = calloc((size_t)P, sizeof *f->shares);
    struct io_scratch *x = f->scratch = calloc(1, sizeof *x);
    if (!f->shares || !x)
        return -1;
    x->first = calloc((size_t)P, sizeof *x->first);
    x->end = calloc((size_t)P, sizeof *x->end);
    x->sorted = calloc((size_t)P, sizeof *x->sorted);
    x->mcount = calloc((size_t)P, sizeof *x->mcount);
    x->acount = calloc((size_t)P, sizeof *x->acount);
    x->mat = calloc((size_t)P, sizeof *x->mat);
    x->afrom = calloc((size_t)P, sizeof *x->afrom);
    x->mdispl = calloc((size_t)P, sizeof *x->mdispl);
    x->adispl = calloc((size_t)P, sizeof *x->adispl);
    return x->first && x->end && x->sorted && x->mcount && x->acount && x->mat && x->afrom &&
                   x->mdispl && x->adispl
               ? 0
               : -1;
}

void mf_io_scratch_free(mf_file *f)
{
    struct io_scratch *x = f->scratch;
    if (x) {
        free(x->first);
        free(x->end);
        free(x->sorted);
        free(x->mcount);
        free(x->acount);
        free(x->mat);
        free(x->afrom);
        free(x->mdispl);
        free(x->adispl);
        free(x->win.p);
        free(x->abuf.p);
        free(x->mbuf.p);
        free(x);
    }
    free(f->shares);
    f->scratch = NULL;
    f->shares = NULL;
}

int mf_io_views_share(mf_file *f, const char *fn)
{
    mf_comm *c = f->comm;
    int P = c->c_size;
    mf_datatype *off = mf_datatype_get(MPI_OFFSET);
    io_publish();
    mf_io_views_free(f);
    MPI_Offset mine[MF_IO_VH_WORDS] = {
        [MF_IO_VH_DISP] = f->view.disp,
        [MF_IO_VH_EXTENT] = f->view.ft_extent,
        [MF_IO_VH_SIZE] = (MPI_Offset)f->view.ft_size,
        [MF_IO_VH_NPIECES] = f->view.npieces,
        [MF_IO_VH_TILED] = f->view.tiled,
        [MF_IO_VH_CB_BUF] = f->hints.cb_buffer_size,
        [MF_IO_VH_CB_NODES] = f->hints.cb_nodes,
        [MF_IO_VH_CB_READ] = f->hints.cb_read,
        [MF_IO_VH_CB_WRITE] = f->hints.cb_write,
    };
    MPI_Offset *all = malloc((size_t)P * MF_IO_VH_WORDS * sizeof *all);
    int rc = !all || io_scratch_alloc(f, P)
                 ? mf_error(MPI_ERR_NO_MEM, "%s: no memory for the ranks' views", fn)
                 : MPI_SUCCESS;
    rc = mf_io_agree(c, rc, fn);
    if (!rc)
        rc = mf_coll_allgather(mine, MF_IO_VH_WORDS, off, all, MF_IO_VH_WORDS, off, c);
    /* What the other ranks sent is checked before anything indexes by it. Every rank checks the
     * same words, so all fail together. */
    for (int j = 0; j < P && !rc; j++) {
        const char *why = mf_io_view_header_invalid(&all[j * MF_IO_VH_WORDS], INT32_MAX);
        if (why)
            rc = mf_error(MPI_ERR_INTERN, "%s: rank %d's view arrived with %s", fn, j, why);
    }
    if (rc) {
        free(all);
        return rc;
    }
    /* Rank 0's hints hold for every rank: the choices below must be the same everywhere. */
    f->hints = (mf_io_hints){.cb_buffer_size = all[MF_IO_VH_CB_BUF],
                             .cb_nodes = (int)all[MF_IO_VH_CB_NODES],
                             .cb_read = (mf_io_cb_mode)all[MF_IO_VH_CB_READ],
                             .cb_write = (mf_io_cb_mode)all[MF_IO_VH_CB_WRITE]};
    MPI_Offset total = 0;
    bool tiled = true;
    for (int j = 0; j < P; j++) {
        total += all[j * MF_IO_VH_WORDS + MF_IO_VH_NPIECES];
        tiled = tiled && all[j * MF_IO_VH_WORDS + MF_IO_VH_TILED];
    }
    if (!tiled || total > IO_VIEWS_MAX) { /* the same everywhere: no aggregation */
        free(all);
        return MPI_SUCCESS;
    }
    f->views = calloc((size_t)P, sizeof *f->views);
    f->views_pieces = malloc((size_t)total * sizeof *f->views_pieces);
    MPI_Count *counts = malloc((size_t)P * sizeof *counts);
    MPI_Aint *displs = malloc((size_t)P * sizeof *displs);
    bool ok = f->views && f->views_pieces && counts && displs;
    /* Short of memory somewhere: nobody aggregates (mf_io_agree makes it everyone's choice). */
    if (mf_io_agree(c, ok ? MPI_SUCCESS : MPI_ERR_NO_MEM, fn) == MPI_SUCCESS) {
        MPI_Offset at = 0;
        for (int j = 0; j < P; j++) {
            const MPI_Offset *h = &all[j * MF_IO_VH_WORDS];
            f->views[j] = (mf_io_view){.disp = h[MF_IO_VH_DISP],
                                       .pieces = f->views_pieces + at,
                                       .npieces = (int)h[MF_IO_VH_NPIECES],
                                       .ft_size = (size_t)h[MF_IO_VH_SIZE],
                                       .ft_extent = h[MF_IO_VH_EXTENT],
                                       .tiled = true};
            counts[j] = (MPI_Count)(h[MF_IO_VH_NPIECES] * (MPI_Offset)sizeof(mf_io_piece));
            displs[j] = (MPI_Aint)(at * (MPI_Offset)sizeof(mf_io_piece));
            at += h[MF_IO_VH_NPIECES];
        }
        mf_datatype *byte = mf_datatype_get(MPI_BYTE);
        rc = mf_coll_allgatherv(f->view.pieces, counts[c->c_rank], byte, f->views_pieces, counts,
                                displs, byte, c);
        for (int j = 0; j < P && !rc; j++) {
            const char *why = mf_io_view_invalid(&f->views[j]);
            if (why)
                rc = mf_error(MPI_ERR_INTERN, "%s: rank %d's view arrived with %s", fn, j, why);
        }
        f->views_disjoint = !rc && io_views_disjoint(f->views, P, (int)total);
    }
    if (!f->views || rc || !ok)
        mf_io_views_free(f);
    free(counts);
    free(displs);
    free(all);
    return rc;
}

/* Each rank's file span of this access (x->first, x->end; end 0 when it has no data), and
 * whether two of them overlap. */
static bool io_spans(mf_file *f)
{
    struct io_scratch *x = f->scratch;
    int P = f->comm->c_size, n = 0;
    MPI_Offset(*sorted)[2] = x->sorted;
    for (int j = 0; j < P; j++) {
        const struct mf_io_share *sh = &f->shares[j];
        x->first[j] = x->end[j] = 0;
        if (sh->len == 0)
            continue;
        size_t span;
        x->first[j] = mf_io_view_span(&f->views[j], sh->s, (size_t)sh->len, &span);
        x->end[j] = x->first[j] + (MPI_Offset)span;
        sorted[n][0] = x->first[j];
        sorted[n++][1] = x->end[j];
    }
    qsort(sorted, (size_t)n, sizeof *sorted, io_interval_cmp);
    bool overlap = false;
    for (int i = 1; i < n && !overlap; i++)
        overlap = sorted[i][0] < sorted[i - 1][1];
    return overlap;
}

/* Whether this access goes through aggregators; the same answer on every rank (it reads only
 * what every rank has: the shares, the views and rank 0's hints). */
static bool io_aggregate(mf_file *f, bool write)
{
    mf_io_cb_mode mode = write ? f->hints.cb_write : f->hints.cb_read;
    if (mode == MF_IO_CB_DISABLE || !f->views || f->atomic || f->comm->c_size == 1)
        return false;
    for (int j = 0; write && j < f->comm->c_size; j++)
        if (!f->shares[j].readable)
            return false;
    bool overlap = io_spans(f);
    return mode == MF_IO_CB_ENABLE || overlap;
}

/* The stream range [*from, return) of rank j's access that lies in the file bytes [wl, wh) and
 * before `eof` (empty: return <= *from). */
static MPI_Offset io_in_window(const mf_file *f, int j, MPI_Offset wl, MPI_Offset wh,
                               MPI_Offset eof, MPI_Offset *from)
{
    const struct mf_io_share *sh = &f->shares[j];
    const mf_io_view *v = &f->views[j];
    MPI_Offset a = mf_io_view_before(v, wl), b = mf_io_view_before(v, wh < eof ? wh : eof);
    *from = a > sh->s ? a : sh->s;
    return b < sh->s + sh->len ? b : sh->s + sh->len;
}

/* The layout of one two-phase access: the span of every rank's data cut into domains. */
struct io_plan {
    MPI_Offset lo, hi; /* the span of all the data */
    int naggr;         /* aggregators: aggregator a is rank a * P / naggr */
    MPI_Offset domain; /* bytes per domain (the last may be shorter) */
    MPI_Offset round;  /* bytes per window: a domain takes ceil(domain / round) rounds */
};

/* Aggregator a's window in round r: [*wl, *wh) (empty when *wl >= *wh). */
static void io_window(const struct io_plan *p, int a, MPI_Offset r, MPI_Offset *wl, MPI_Offset *wh)
{
    MPI_Offset dlo = p->lo + a * p->domain, dhi = dlo + p->domain < p->hi ? dlo + p->domain : p->hi;
    *wl = dlo + r * p->round;
    *wh = *wl + p->round < dhi ? *wl + p->round : dhi;
}

/* The counts and places of round r's exchange, both ways (x->mcount, x->mat for this rank's
 * access; as aggregator `agg`, or -1, x->acount and x->afrom for every rank's), of the bytes
 * before `eof`, and the file span an aggregator's ranks touch, [*tlo, *thi). */
static void io_round_counts(mf_file *f, const struct io_plan *p, MPI_Offset r, int agg,
                            MPI_Offset eof, MPI_Offset *tlo, MPI_Offset *thi)
{
    struct io_scratch *x = f->scratch;
    int P = f->comm->c_size, me = f->comm->c_rank;
    const struct mf_io_share *mine = &f->shares[me];
    memset(x->mcount, 0, (size_t)P * sizeof *x->mcount);
    for (int a = 0; a < p->naggr && mine->len; a++) {
        int to = (int)((long long)a * P / p->naggr);
        MPI_Offset wl, wh, from, end;
        io_window(p, a, r, &wl, &wh);
        if (wl < wh && (end = io_in_window(f, me, wl, wh, eof, &from)) > from) {
            x->mcount[to] = (MPI_Count)(end - from);
            x->mat[to] = (MPI_Aint)(from - mine->s);
        }
    }
    *tlo = INT64_MAX;
    *thi = 0;
    MPI_Offset wl = 0, wh = 0;
    if (agg >= 0)
        io_window(p, agg, r, &wl, &wh);
    for (int j = 0; j < P; j++) {
        MPI_Offset end;
        x->acount[j] = 0;
        if (wl >= wh || f->shares[j].len == 0 ||
            (end = io_in_window(f, j, wl, wh, eof, &x->afrom[j])) <= x->afrom[j])
            continue;
        x->acount[j] = (MPI_Count)(end - x->afrom[j]);
        MPI_Offset first = mf_io_view_pos(&f->views[j], x->afrom[j]),
                   last = mf_io_view_pos(&f->views[j], end - 1) + 1;
        *tlo = first < *tlo ? first : *tlo;
        *thi = last > *thi ? last : *thi;
    }
}

/* Displacements packing counts[0..P) one after another; returns their sum. */
static size_t io_pack_displs(const MPI_Count *counts, MPI_Aint *displs, int P)
{
    MPI_Aint at = 0;
    for (int j = 0; j < P; j++) {
        displs[j] = at;
        at += (MPI_Aint)counts[j];
    }
    return (size_t)at;
}

/* An aggregator's write of its window [tlo, thi), the ranks' bytes in data (x->acount of each,
 * packed in rank order): filled into win through their views over what the file holds there
 * (unless they cover it all), written with one pwrite under a record lock. */
static int io_window_write(mf_file *f, char *win, MPI_Offset tlo, MPI_Offset thi, char *data,
                           const char *fn)
{
    struct io_scratch *x = f->scratch;
    int P = f->comm->c_size;
    size_t len = (size_t)(thi - tlo), covered = 0;
    for (int j = 0; j < P; j++)
        covered += (size_t)x->acount[j];
    int rc = mf_io_record_lock(f, F_WRLCK, tlo, (MPI_Offset)len, fn);
    if (rc)
        return rc;
    if (covered < len || !f->views_disjoint) { /* holes, or may be: the file's bytes first */
        ssize_t got = mf_io_pio(f->fd, false, win, len, tlo);
        if (got < 0)
            rc = mf_io_errno(errno, "read", f->name, fn);
        else
            memset(win + got, 0, len - (size_t)got); /* past the end of the file: a hole */
    }
    for (int j = 0; !rc && j < P; j++) {
        if (x->acount[j])
            mf_io_view_copy(&f->views[j], true, x->afrom[j], (size_t)x->acount[j], data, win, tlo);
        data += x->acount[j];
    }
    if (!rc && mf_io_pio(f->fd, true, win, len, tlo) < 0)
        rc = mf_io_errno(errno, "write", f->name, fn);
    int urc = mf_io_record_lock(f, F_UNLCK, tlo, (MPI_Offset)len, fn);
    return rc ? rc : urc;
}

/* The plan of a two-phase access (the spans, x->first and x->end, are known). */
static void io_plan_make(const mf_file *f, struct io_plan *p)
{
    const struct io_scratch *x = f->scratch;
    int P = f->comm->c_size;
    *p = (struct io_plan){.lo = INT64_MAX, .hi = 0};
    for (int j = 0; j < P; j++)
        if (x->end[j] > x->first[j]) {
            p->lo = x->first[j] < p->lo ? x->first[j] : p->lo;
            p->hi = x->end[j] > p->hi ? x->end[j] : p->hi;
        }
    p->naggr = io_aggregators(f);
    p->domain = p->lo < p->hi ? (p->hi - p->lo + p->naggr - 1) / p->naggr : 0;
    p->round = f->hints.cb_buffer_size < p->domain ? f->hints.cb_buffer_size : p->domain;
}

/* Two-phase: see the top of the file. *done gets the bytes of this rank's access moved. */
static int io_two_phase(mf_file *f, mf_comm *c, bool write, void *buf, MPI_Count count,
                        mf_datatype *dt, size_t *done, const char *fn)
{
    struct io_scratch *x = f->scratch;
    int P = c->c_size, me = c->c_rank, agg = -1; /* this rank's aggregator index, if it is one */
    struct io_plan p;
    mf_t_count_serial(&io_count[IO_TWO_PHASE], 1);
    io_plan_make(f, &p);
    if (p.domain == 0)
        return MPI_SUCCESS; /* nobody has data */
    for (int a = 0; a < p.naggr; a++)
        if ((int)((long long)a * P / p.naggr) == me)
            agg = a;
    const struct mf_datatype_public *t = mf_datatype_info(dt);
    char *contig = t->dt_contig ? (char *)buf + t->dt_true_lb : NULL;
    char *win = agg >= 0 ? io_buffer(&x->win, (size_t)p.round) : NULL;
    int rc = agg >= 0 && !win ? mf_error(MPI_ERR_NO_MEM, "%s: no memory for a %lld-byte window", fn,
                                         (long long)p.round)
                              : MPI_SUCCESS;
    mf_datatype *byte = mf_datatype_get(MPI_BYTE);
    MPI_Offset eof = INT64_MAX, rounds = (p.domain + p.round - 1) / p.round;
    for (MPI_Offset r = 0; r < rounds; r++) {
        mf_t_count_serial(&io_count[IO_ROUNDS], 1);
        /* Buffers before the agreement, so that no rank fails alone in the exchange. */
        MPI_Offset tlo, thi;
        io_round_counts(f, &p, r, agg, eof, &tlo, &thi);
        size_t mine = io_pack_displs(x->mcount, x->mdispl, P),
               theirs = io_pack_displs(x->acount, x->adispl, P);
        char *mbuf = contig ? NULL : io_buffer(&x->mbuf, mine), *abuf = io_buffer(&x->abuf, theirs);
        if (!rc && ((!contig && !mbuf) || !abuf))
            rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of exchange", fn,
                          mine + theirs);
        MPI_Offset base = tlo, known = eof; /* a read's window starts here */
        if (!write && !rc && tlo < thi) {
            ssize_t got = mf_io_pio(f->fd, false, win, (size_t)(thi - tlo), tlo);
            if (got < 0)
                rc = mf_io_errno(errno, "read", f->name, fn);
            else if (got < thi - tlo && tlo + got < eof)
                eof = tlo + got;
        }
        /* Every rank learns of a failure anywhere (and a read, where the file ends). */
        rc = mf_io_agree_min(c, rc, write ? NULL : &eof, fn);
        if (!rc && eof != known) /* nothing past the end of the file moves */
            io_round_counts(f, &p, r, agg, eof, &tlo, &thi);
        if (!rc && contig) /* in place: the displacements are the stream's */
            memcpy(x->mdispl, x->mat, (size_t)P * sizeof *x->mdispl);
        else if (!rc)
            io_pack_displs(x->mcount, x->mdispl, P);
        io_pack_displs(x->acount, x->adispl, P);
        char *mem = contig ? contig : mbuf;
        if (!rc && write) {
            for (int j = 0; !contig && j < P; j++)
                if (x->mcount[j])
                    mf_datatype_pack(dt, buf, (size_t)count, (size_t)x->mat[j], mbuf + x->mdispl[j],
                                     (size_t)x->mcount[j]);
            rc = mf_coll_alltoallv(mem, x->mcount, x->mdispl, byte, abuf, x->acount, x->adispl,
                                   byte, c);
            if (!rc && tlo < thi)
                rc = io_window_write(f, win, tlo, thi, abuf, fn);
        } else if (!rc) {
            for (int j = 0; j < P; j++)
                if (x->acount[j])
                    mf_io_view_copy(&f->views[j], false, x->afrom[j], (size_t)x->acount[j],
                                    abuf + x->adispl[j], win, base);
            rc = mf_coll_alltoallv(abuf, x->acount, x->adispl, byte, mem, x->mcount, x->mdispl,
                                   byte, c);
            for (int j = 0; !rc && j < P; j++) {
                if (x->mcount[j] && !contig)
                    mf_datatype_unpack(dt, buf, (size_t)count, (size_t)x->mat[j],
                                       mbuf + x->mdispl[j], (size_t)x->mcount[j]);
                *done += (size_t)x->mcount[j];
            }
        }
        if (rc)
            break;
    }
    if (write) /* the last round's writes: every rank learns how they went */
        rc = mf_io_agree_min(c, rc, NULL, fn);
    if (write && !rc)
        *done = (size_t)f->shares[me].len;
    return rc;
}

int mf_io_rw_all(mf_file *f, mf_comm *c, bool write, MPI_Offset offset, void *buf, MPI_Count count,
                 mf_datatype *dt, int rc, size_t *done, const char *fn)
{
    size_t total = rc ? 0 : (size_t)count * mf_datatype_info(dt)->dt_size;
    *done = 0;
    if (!rc)
        rc = mf_io_rw_check(f, write, offset, total, fn);
    mf_datatype *off = mf_datatype_get(MPI_OFFSET);
    struct mf_io_share mine = {.s = rc ? 0 : offset * (MPI_Offset)f->etype_size,
                               .len = (MPI_Offset)total,
                               .cls = rc ? mf_error_class(rc) : 0,
                               .readable = f->readable};
    int grc = mf_coll_allgather(&mine, SHARE_WORDS, off, f->shares, SHARE_WORDS, off, c);
    if (grc)
        return rc ? rc : grc;
    for (int j = 0; j < f->comm->c_size; j++)
        if (f->shares[j].cls)
            return rc ? rc
                      : mf_error((int)f->shares[j].cls, "%s: failed on rank %d of the communicator",
                                 fn, j);
    if (!io_aggregate(f, write)) {
        mf_t_count_serial(&io_count[IO_ON_ITS_OWN], 1);
        return mf_io_rw(f, write, offset, buf, count, dt, done, fn);
    }
    return io_two_phase(f, c, write, buf, count, dt, done, fn);
}
