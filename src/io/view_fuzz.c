/*
 * view_fuzz.c — libFuzzer target for the checks of the views other ranks share for collective
 * buffering (mf_io_view_header_invalid, mf_io_view_invalid in view.c): the input is a header of
 * MF_IO_VH_WORDS 64-bit words, then pieces of three words each (disp, len, before), as
 * mf_io_views_share receives them; or a view as a rank could have set it, with one word
 * replaced (random words seldom make a view the checks accept). A view both checks accept must
 * be safe and right to walk as the aggregators walk it:
 *   - the file position of stream byte s increases with s;
 *   - the bytes of the stream before the position of byte s are s, and s + 1 just after it;
 *   - the runs from a cursor cover exactly the bytes asked for, each where its first byte is;
 *   - a copy through the view into a window of the file's bytes and back gives the bytes again.
 * ASan and UBSan watch every step (indexing, overflow).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_MAX_PIECES = 256, FUZZ_SAMPLES = 48 };
/* Walks only views whose first instances lie below this (positions are computed in 64 bits). */
#define FUZZ_MAX_POS ((MPI_Offset)1 << 40)
#define FUZZ_MAX_WIN ((MPI_Offset)1 << 16)

/* The properties above, for stream bytes [s, s + len). */
static void walk(const mf_io_view *v, MPI_Offset s, size_t len)
{
    MPI_Offset at = mf_io_view_pos(v, s);
    if (mf_io_view_before(v, at) != s || mf_io_view_before(v, at + 1) != s + 1)
        abort();
    if (s > 0 && mf_io_view_pos(v, s - 1) >= at)
        abort();
    size_t span;
    MPI_Offset first = mf_io_view_span(v, s, len, &span);
    if (first != at || span < len)
        abort();
    mf_io_cursor c;
    mf_io_cursor_at(v, s, &c);
    size_t got = 0;
    while (got < len) {
        size_t run;
        MPI_Offset p = mf_io_next_run(v, &c, len - got, &run);
        if (run == 0 || run > len - got || p != mf_io_view_pos(v, s + (MPI_Offset)got))
            abort();
        got += run;
    }
    if ((MPI_Offset)span > FUZZ_MAX_WIN)
        return;
    char *mem = malloc(len), *back = malloc(len), *win = calloc(1, span);
    if (mem && back && win) {
        for (size_t i = 0; i < len; i++)
            mem[i] = (char)(i * 7 + 1);
        mf_io_view_copy(v, true, s, len, mem, win, first);
        mf_io_view_copy(v, false, s, len, back, win, first);
        if (memcmp(mem, back, len) != 0)
            abort();
    }
    free(mem);
    free(back);
    free(win);
}

/* Input bytes, one at a time (0 once they run out). */
typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static unsigned next(fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static MPI_Offset next_word(fuzz_in *in)
{
    uint64_t w = 0;
    for (int i = 0; i < 8; i++)
        w = w << 8 | next(in);
    return (MPI_Offset)w;
}

/* A view as a rank could have set it, from the input: pieces with gaps, in order. */
static void plausible(fuzz_in *in, MPI_Offset *h, mf_io_piece *pieces)
{
    int n = 1 + (int)(next(in) % 16);
    MPI_Offset at = next(in) % 8, sum = 0;
    for (int i = 0; i < n; i++) {
        MPI_Offset len = 1 + next(in) % 32;
        pieces[i] = (mf_io_piece){.disp = at, .len = len, .before = sum};
        sum += len;
        at += len + next(in) % 8;
    }
    MPI_Offset last = pieces[n - 1].disp + pieces[n - 1].len;
    h[MF_IO_VH_DISP] = next(in) % 64;
    h[MF_IO_VH_EXTENT] = last - pieces[0].disp + next(in) % 16;
    h[MF_IO_VH_SIZE] = sum;
    h[MF_IO_VH_NPIECES] = n;
    h[MF_IO_VH_TILED] = 1;
    h[MF_IO_VH_CB_BUF] = 1 + next(in);
    h[MF_IO_VH_CB_NODES] = next(in) % 4;
    h[MF_IO_VH_CB_READ] = next(in) % 3;
    h[MF_IO_VH_CB_WRITE] = next(in) % 3;
}

/* The input's first byte chooses: a view as received, word for word (odd), or a plausible one
 * with at most one of its words replaced by the input's (even). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    MPI_Offset h[MF_IO_VH_WORDS];
    mf_io_piece pieces[FUZZ_MAX_PIECES] = {{0}};
    if (next(&in) & 1) {
        for (int w = 0; w < MF_IO_VH_WORDS; w++)
            h[w] = next_word(&in);
        if (mf_io_view_header_invalid(h, FUZZ_MAX_PIECES))
            return 0;
        if ((size_t)h[MF_IO_VH_NPIECES] > in.n / 24)
            return 0; /* the pieces did not all arrive: mf_io_views_share gathers them at once */
        for (int i = 0; i < h[MF_IO_VH_NPIECES]; i++) {
            pieces[i].disp = next_word(&in);
            pieces[i].len = next_word(&in);
            pieces[i].before = next_word(&in);
        }
    } else {
        plausible(&in, h, pieces);
        unsigned which = next(&in);
        int words = MF_IO_VH_WORDS + 3 * (int)h[MF_IO_VH_NPIECES];
        if (which < 128) {
            int k = (int)(which % (unsigned)words);
            MPI_Offset w = next(&in) & 1 ? next_word(&in) : (MPI_Offset)next(&in) - 128;
            if (k < MF_IO_VH_WORDS)
                h[k] = w;
            else if ((k - MF_IO_VH_WORDS) % 3 == 0)
                pieces[(k - MF_IO_VH_WORDS) / 3].disp = w;
            else if ((k - MF_IO_VH_WORDS) % 3 == 1)
                pieces[(k - MF_IO_VH_WORDS) / 3].len = w;
            else
                pieces[(k - MF_IO_VH_WORDS) / 3].before = w;
        }
        if (mf_io_view_header_invalid(h, FUZZ_MAX_PIECES))
            return 0;
    }
    mf_io_view v = {.disp = h[MF_IO_VH_DISP],
                    .pieces = pieces,
                    .npieces = (int)h[MF_IO_VH_NPIECES],
                    .ft_size = (size_t)h[MF_IO_VH_SIZE],
                    .ft_extent = h[MF_IO_VH_EXTENT],
                    .tiled = h[MF_IO_VH_TILED] != 0};
    if (mf_io_view_invalid(&v))
        return 0;
    /* Accepted: walk the first instances, where positions stay within 64 bits. */
    if (v.disp > FUZZ_MAX_POS || v.ft_extent > FUZZ_MAX_POS || pieces[0].disp > FUZZ_MAX_POS)
        return 0;
    MPI_Offset stream = 3 * (MPI_Offset)v.ft_size;
    for (int i = 0; i < FUZZ_SAMPLES; i++) {
        uint32_t a = (uint32_t)next_word(&in) ^ (uint32_t)i * 2654435761u;
        MPI_Offset s = (MPI_Offset)a % stream;
        size_t len = 1 + (size_t)(next(&in) << 4 | next(&in)) % 4096;
        if (s + (MPI_Offset)len > stream)
            len = (size_t)(stream - s);
        walk(&v, s, len);
    }
    return 0;
}
