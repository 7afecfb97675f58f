/*
 * partitioned.c — partitioned communication over ordinary messages (see partitioned.h for the
 * protocol). One progress source moves every channel: it takes hellos in, matches them to
 * receive channels, takes replies in, sends the partitions made ready before the reply came,
 * ends rounds whose transfers have all completed, and frees channels the user has freed.
 */
#include "p2p/partitioned.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/progress.h"
#include "datatype/status.h"
#include "p2p/p2p_internal.h"

#define PART_MAGIC 0x4d465031u /* "MFP1": a hello of this protocol */

/* The hello a sender sends at MPI_Psend_init, and the receiver's reply. */
typedef struct part_hello {
    uint32_t magic;
    int32_t tag;       /* the user's */
    int32_t reply_tag; /* where the sender takes the reply */
    int32_t parts;     /* the sender's partition count */
    uint64_t part_bytes;
} part_hello;

typedef struct part_reply {
    int32_t error;    /* MPI_SUCCESS, or the class that ends both sides */
    int32_t data_tag; /* tag of send partition 0; partition p uses data_tag + p */
} part_reply;

enum part_state {
    PART_SETUP,   /* sender: waiting for the reply; receiver: no hello matched yet */
    PART_READY,   /* matched: rounds move data */
    PART_FAILED,  /* setup ended in an error; every round ends with it */
    PART_NOWHERE, /* peer MPI_PROC_NULL: rounds move nothing */
};

typedef struct part_chan part_chan;

/* One transfer of a round (a send partition), named by its completion hook. */
typedef struct part_xfer {
    part_chan *ch;
    mf_request *req; /* this round's send or receive; NULL before it is posted */
    bool ready;      /* send: MPI_Pready'd this round */
    bool done;       /* its request completed */
} part_xfer;

struct part_chan {
    part_chan *next; /* all channels, in creation order (matching follows it) */
    mf_request *req; /* the user's persistent request */
    bool is_send;
    enum part_state state;
    int error; /* PART_FAILED's */

    /* As initialised. */
    char *buf;
    int parts;
    MPI_Count count; /* elements per partition */
    mf_datatype *dt;
    int peer; /* comm rank */
    int tag;
    mf_comm *comm;
    size_t part_bytes;
    size_t total;

    /* Setup. */
    part_hello hello;
    part_reply reply;
    mf_request *hello_req; /* sender: the hello's send; NULL once complete */
    mf_request *reply_req; /* sender: the reply's receive; receiver: the reply's send */
    uint32_t tags_lo;      /* first tag taken (sender: the reply's; receiver: the partitions') */
    uint32_t tags_n;       /* how many (0: none held) */
    int data_tag;          /* tag of send partition 0 */

    /* Rounds. */
    int wire_parts;        /* send partitions: one message each */
    size_t wire_bytes;     /* bytes per send partition */
    part_xfer *xfer;       /* wire_parts */
    unsigned char *staged; /* receiver with another partition count: the packed bytes */
    bool *unpacked;        /* receive partitions copied out of staged this round */
    mf_request *round;     /* this round's request, until it ends */
    int unsent;            /* send: partitions ready but not posted (reply not in yet) */
    int left;              /* transfers not complete this round */
    int round_error;
};

static part_chan *chans, **chans_tail = &chans;

/* ---- Tags: blocks of the MF_TAG_PART_SPAN tags after MF_TAG_PART_HELLO, per context --------- */

typedef struct part_tags {
    struct part_tags *next;
    uint32_t context;
    uint32_t lo, n;
} part_tags;
static part_tags *tag_blocks; /* sorted by (context, lo) */

/* Takes n tags of context: the first gap that holds them. */
static int part_tags_take(uint32_t context, uint32_t n, uint32_t *lo, const char *fn)
{
    part_tags **pp = &tag_blocks;
    while (*pp && (*pp)->context < context)
        pp = &(*pp)->next;
    uint32_t at = 0;
    for (; *pp && (*pp)->context == context; pp = &(*pp)->next) {
        if ((*pp)->lo - at >= n)
            break;
        at = (*pp)->lo + (*pp)->n;
    }
    if (MF_TAG_PART_SPAN - at < n)
        return mf_error(MPI_ERR_OTHER,
                        "%s: the partitioned requests alive on this communicator already use %u "
                        "of its %u partition tags; free some first",
                        fn, at, (unsigned)MF_TAG_PART_SPAN);
    part_tags *b = malloc(sizeof *b);
    if (!b)
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a partitioned channel", fn);
    *b = (part_tags){.next = *pp, .context = context, .lo = at, .n = n};
    *pp = b;
    *lo = at;
    return MPI_SUCCESS;
}

static void part_tags_give(uint32_t context, uint32_t lo)
{
    for (part_tags **pp = &tag_blocks; *pp; pp = &(*pp)->next)
        if ((*pp)->context == context && (*pp)->lo == lo) {
            part_tags *b = *pp;
            *pp = b->next;
            free(b);
            return;
        }
}

static int part_tag(uint32_t index)
{
    return MF_TAG_PART_HELLO + 1 + (int)index;
}

/* ---- Hello inboxes: one posted receive per (communicator, peer) with receivers unmatched ---- */

typedef struct part_inbox {
    struct part_inbox *next;
    mf_comm *comm; /* held */
    int peer;
    mf_request *rx;    /* the next hello's receive, or NULL */
    bool cancelled;    /* rx was asked to stop */
    part_hello msg;    /* rx's buffer */
    part_hello *stash; /* hellos taken in and not matched yet, in arrival order */
    int nstash, cap;
} part_inbox;
static part_inbox *inboxes;

static part_inbox *part_inbox_of(mf_comm *comm, int peer, bool make)
{
    for (part_inbox *b = inboxes; b; b = b->next)
        if (b->comm == comm && b->peer == peer)
            return b;
    part_inbox *b = make ? calloc(1, sizeof *b) : NULL;
    if (!b)
        return NULL;
    b->comm = comm;
    b->peer = peer;
    mf_comm_retain(comm);
    b->next = inboxes;
    inboxes = b;
    return b;
}

static bool part_unmatched(const part_chan *c, mf_comm *comm, int peer)
{
    return !c->is_send && c->state == PART_SETUP && c->comm == comm && c->peer == peer;
}

/* ---- Rounds ------------------------------------------------------------------------------- */

static void part_xfer_done(mf_request *r, void *arg)
{
    part_xfer *x = arg;
    x->done = true;
    x->ch->left--;
    int e = mf_request_info(r)->r_status.MPI_ERROR;
    if (e && !x->ch->round_error)
        x->ch->round_error = e;
}

static char *part_at(const part_chan *c, int p)
{
    return c->buf + (MPI_Aint)p * (MPI_Aint)c->count * mf_datatype_info(c->dt)->dt_extent;
}

/* Sends partition p; on failure it counts as done (the round ends with the error). */
static int part_send(part_chan *c, int p)
{
    part_xfer *x = &c->xfer[p];
    int rc = mf_isend(part_at(c, p), c->count, c->dt, c->peer, c->data_tag + p, c->comm,
                      MF_CTX_COLL, MF_SEND_STANDARD, &x->req);
    if (rc) {
        x->req = NULL;
        x->done = true;
        c->left--;
        if (!c->round_error)
            c->round_error = rc;
        return rc;
    }
    mf_request_when_done(x->req, part_xfer_done, x); /* it may be done already */
    return MPI_SUCCESS;
}

/* Posts this round's receives (the channel is matched); an error ends the round with it. */
static void part_post_receives(part_chan *c)
{
    for (int p = 0; p < c->wire_parts; p++) {
        part_xfer *x = &c->xfer[p];
        int rc = c->staged ? mf_irecv(c->staged + (size_t)p * c->wire_bytes,
                                      (MPI_Count)c->wire_bytes, mf_datatype_get(MPI_BYTE), c->peer,
                                      c->data_tag + p, c->comm, MF_CTX_COLL, &x->req)
                           : mf_irecv(part_at(c, p), c->count, c->dt, c->peer, c->data_tag + p,
                                      c->comm, MF_CTX_COLL, &x->req);
        if (rc) {
            x->req = NULL;
            c->left -= c->wire_parts - p; /* this one and those never posted */
            if (!c->round_error)
                c->round_error = rc;
            return;
        }
        mf_request_when_done(x->req, part_xfer_done, x); /* it may be done already */
    }
}

/* Whether every send partition overlapping receive partition q has landed. */
static bool part_landed(const part_chan *c, int q)
{
    if (!c->staged)
        return c->xfer[q].done;
    if (c->part_bytes == 0)
        return true;
    size_t lo = (size_t)q * c->part_bytes, hi = lo + c->part_bytes;
    for (size_t p = lo / c->wire_bytes; p < (size_t)c->wire_parts && p * c->wire_bytes < hi; p++)
        if (!c->xfer[p].done)
            return false;
    return true;
}

static void part_unpack(part_chan *c, int q)
{
    if (c->unpacked[q])
        return;
    c->unpacked[q] = true;
    mf_datatype_unpack(c->dt, part_at(c, q), (size_t)c->count, 0,
                       c->staged + (size_t)q * c->part_bytes, c->part_bytes);
}

/* Ends the round if its transfers are all complete (a failed setup posted none). */
static bool part_round_end(part_chan *c)
{
    mf_request *r = c->round;
    if (!r || c->state == PART_SETUP || c->left > 0)
        return false;
    int error = c->state == PART_FAILED ? c->error : c->round_error;
    for (int p = 0; c->xfer && p < c->wire_parts; p++) {
        if (c->xfer[p].req)
            mf_request_free(c->xfer[p].req);
        c->xfer[p] = (part_xfer){.ch = c};
    }
    if (c->staged && !error)
        for (int q = 0; q < c->parts; q++)
            part_unpack(c, q);
    MPI_Status *st = &mf_request_info(r)->r_status;
    if (c->is_send) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        mf_status_set_bytes(st, 0);
    } else {
        st->MPI_SOURCE = c->state == PART_NOWHERE ? MPI_PROC_NULL : c->peer;
        st->MPI_TAG = c->state == PART_NOWHERE ? MPI_ANY_TAG : c->tag;
        mf_status_set_bytes(st, c->state == PART_NOWHERE || error ? 0 : (MPI_Count)c->total);
        mf_status_set_cancelled(st, false);
    }
    c->round = NULL;
    mf_request_end(r, error);
    return true;
}

/* ---- Setup ------------------------------------------------------------------------------- */

/* Setup failed: nothing of a round was posted yet (sends wait for the reply, receives for the
 * hello), so a running round ends at once with the error. */
static void part_fail(part_chan *c, int error)
{
    c->state = PART_FAILED;
    c->error = error;
    c->left = 0;
}

/* Sizes the rounds once the peer's partition count is known. */
static int part_shape(part_chan *c, int wire_parts, size_t wire_bytes)
{
    c->wire_parts = wire_parts;
    c->wire_bytes = wire_bytes;
    c->xfer = calloc((size_t)wire_parts, sizeof *c->xfer);
    bool staging = !c->is_send && wire_parts != c->parts;
    if (staging) {
        c->staged = malloc(c->total ? c->total : 1);
        c->unpacked = calloc((size_t)c->parts, sizeof *c->unpacked);
    }
    if (!c->xfer || (staging && (!c->staged || !c->unpacked)))
        return mf_error(MPI_ERR_NO_MEM, "partitioned communication: no memory for %d partitions",
                        wire_parts);
    for (int p = 0; p < wire_parts; p++)
        c->xfer[p].ch = c;
    return MPI_SUCCESS;
}

/* Receiver: hello h (from c's peer, with c's tag) matched c. Answers it. */
static void part_match(part_chan *c, const part_hello *h)
{
    static const char fn[] = "MPI_Precv_init";
    int error = MPI_SUCCESS;
    bool sane =
        h->magic == PART_MAGIC && h->parts >= 1 && h->part_bytes <= UINT64_MAX / (uint64_t)h->parts;
    uint64_t sent = sane ? (uint64_t)h->parts * h->part_bytes : 0;
    if (!sane)
        error =
            mf_error(MPI_ERR_INTERN, "%s: rank %d sent a malformed partitioned hello", fn, c->peer);
    else if (sent != c->total)
        error =
            mf_error(MPI_ERR_TRUNCATE,
                     "%s: rank %d sends %llu bytes in %d partitions (tag %d), this receive "
                     "takes %zu in %d: partitioned sizes must be equal",
                     fn, c->peer, (unsigned long long)sent, h->parts, c->tag, c->total, c->parts);
    if (!error)
        error = part_tags_take(c->comm->c_context, (uint32_t)h->parts, &c->tags_lo, fn);
    if (!error) {
        c->tags_n = (uint32_t)h->parts;
        c->data_tag = part_tag(c->tags_lo);
        error = part_shape(c, h->parts, (size_t)h->part_bytes);
    }
    c->reply =
        (part_reply){.error = error ? mf_error_class(error) : MPI_SUCCESS, .data_tag = c->data_tag};
    int rc = mf_isend(&c->reply, sizeof c->reply, mf_datatype_get(MPI_BYTE), c->peer, h->reply_tag,
                      c->comm, MF_CTX_COLL, MF_SEND_STANDARD, &c->reply_req);
    if (!error && rc)
        error = rc;
    if (error) {
        part_fail(c, error);
        return;
    }
    c->state = PART_READY;
    if (c->round) {
        c->left = c->wire_parts;
        part_post_receives(c);
    }
}

/* Sender: the reply is in. */
static void part_replied(part_chan *c)
{
    int e = mf_request_info(c->reply_req)->r_status.MPI_ERROR;
    mf_request_free(c->reply_req);
    c->reply_req = NULL;
    part_tags_give(c->comm->c_context, c->tags_lo);
    c->tags_n = 0;
    if (!e && !c->reply.error &&
        (c->reply.data_tag < part_tag(0) ||
         (uint32_t)(c->reply.data_tag - part_tag(0)) > MF_TAG_PART_SPAN - (uint32_t)c->parts))
        e = mf_error(MPI_ERR_INTERN, "MPI_Psend_init: rank %d replied with a malformed tag %d",
                     c->peer, c->reply.data_tag);
    if (!e && c->reply.error)
        e = mf_error(c->reply.error,
                     "MPI_Psend_init: the receive at rank %d (tag %d) does not take %zu bytes in "
                     "%d partitions: partitioned sizes must be equal",
                     c->peer, c->tag, c->total, c->parts);
    if (e) {
        part_fail(c, e);
        return;
    }
    c->data_tag = c->reply.data_tag;
    c->state = PART_READY;
    for (int p = 0; c->round && p < c->parts && c->unsent > 0; p++)
        if (c->xfer[p].ready && !c->xfer[p].req && !c->xfer[p].done) {
            c->unsent--;
            part_send(c, p); /* an error ends the round with it */
        }
}

/* Matches stashed hellos to unmatched receivers of b, in order; then keeps a receive posted
 * while any receiver waits, and stops it when none does. */
static int part_inbox_poll(part_inbox *b)
{
    int events = 0;
    if (b->rx && b->rx->pub.r_complete) {
        bool got = !b->rx->pub.r_status.MPI_ERROR && !mf_status_cancelled(&b->rx->pub.r_status);
        if (got && b->nstash == b->cap) {
            int cap = b->cap ? 2 * b->cap : 4;
            part_hello *s = realloc(b->stash, (size_t)cap * sizeof *s);
            if (s) {
                b->stash = s;
                b->cap = cap;
            }
        }
        if (got && b->nstash < b->cap)
            b->stash[b->nstash++] = b->msg;
        mf_request_free(b->rx);
        b->rx = NULL;
        b->cancelled = false;
        events++;
    }
    bool waiting = false;
    for (part_chan *c = chans; c; c = c->next) {
        if (!part_unmatched(c, b->comm, b->peer))
            continue;
        int i = 0;
        while (i < b->nstash && b->stash[i].tag != c->tag)
            i++;
        if (i == b->nstash) {
            waiting = true;
            continue;
        }
        part_hello h = b->stash[i];
        memmove(&b->stash[i], &b->stash[i + 1], (size_t)(b->nstash - i - 1) * sizeof h);
        b->nstash--;
        part_match(c, &h);
        events++;
    }
    if (waiting && !b->rx) {
        if (mf_irecv(&b->msg, sizeof b->msg, mf_datatype_get(MPI_BYTE), b->peer, MF_TAG_PART_HELLO,
                     b->comm, MF_CTX_COLL, &b->rx) != MPI_SUCCESS)
            b->rx = NULL; /* tried again next pass */
    } else if (!waiting && b->rx && !b->cancelled) {
        b->cancelled = true;
        mf_p2p_cancel(b->rx);
    }
    return events;
}

/* ---- The progress source ------------------------------------------------------------------ */

static void part_chan_free(part_chan *c)
{
    if (c->tags_n)
        part_tags_give(c->comm->c_context, c->tags_lo);
    if (c->hello_req)
        mf_request_free(c->hello_req);
    if (c->reply_req)
        mf_request_free(c->reply_req); /* a receiver's reply: finishes in the background */
    free(c->xfer);
    free(c->staged);
    free(c->unpacked);
    mf_datatype_release(c->dt);
    mf_request *r = c->req;
    free(c);
    mf_request_unbusy(r); /* the persistent hold: the request goes now */
}

/* Whether a freed channel may go: no round running, and no message of its setup still to come
 * or to leave. A channel freed before it was matched (never started: MPI allows freeing an
 * inactive request) still waits for its partner's setup message, a sender for the reply and a
 * receiver for the hello: channels match in the order they were initialised, so without it the
 * next receiver would take the hello meant for this one, or the hello would stay unreceived and
 * its sender would wait for a reply for good. */
static bool part_chan_idle(const part_chan *c)
{
    if (c->round || (c->hello_req && !c->hello_req->pub.r_complete))
        return false;
    if (!c->is_send && c->reply_req && !c->reply_req->pub.r_complete)
        return false; /* its buffer is in c */
    return c->state != PART_SETUP;
}

static int part_poll(void *arg)
{
    (void)arg;
    int events = 0;
    for (part_inbox **bp = &inboxes; *bp;) {
        part_inbox *b = *bp;
        events += part_inbox_poll(b);
        if (!b->rx && b->nstash == 0) {
            *bp = b->next;
            mf_comm_release(b->comm);
            free(b->stash);
            free(b);
        } else {
            bp = &b->next;
        }
    }
    for (part_chan **cp = &chans; *cp;) {
        part_chan *c = *cp;
        if (c->hello_req && c->hello_req->pub.r_complete) {
            int e = c->hello_req->pub.r_status.MPI_ERROR;
            mf_request_free(c->hello_req);
            c->hello_req = NULL;
            if (e && c->state == PART_SETUP)
                part_fail(c, e);
        }
        if (c->is_send && c->state == PART_SETUP && c->reply_req && c->reply_req->pub.r_complete) {
            part_replied(c);
            events++;
        }
        if (c->round && part_round_end(c))
            events++;
        if (mf_request_released(c->req) && part_chan_idle(c)) {
            *cp = c->next;
            if (chans_tail == &c->next)
                chans_tail = cp;
            part_chan_free(c);
            continue;
        }
        cp = &c->next;
    }
    return events;
}

/* No sleep while something finished outside a pass (a send that completed as it was posted, a
 * round whose last transfer completed in the caller's own pass). */
static long long part_sleep_ns(void *arg)
{
    (void)arg;
    for (const part_chan *c = chans; c; c = c->next)
        if ((c->round && c->left == 0 && c->state != PART_SETUP) ||
            (c->reply_req && c->is_send && c->reply_req->pub.r_complete) ||
            (c->hello_req && c->hello_req->pub.r_complete))
            return 0;
    for (const part_inbox *b = inboxes; b; b = b->next)
        if (b->rx && b->rx->pub.r_complete)
            return 0;
    return -1;
}

static mf_progress_source part_source = {.fd = -1, .poll = part_poll, .sleep_ns = part_sleep_ns};

/* ---- Entry points ------------------------------------------------------------------------ */

static part_chan *part_of(mf_request *r)
{
    return r && r->pub.r_kind == MF_REQ_PART && r->pub.r_persistent ? mf_request_owner_data(r)
                                                                    : NULL;
}

/* Sender: shapes the rounds (a receiver's wait for the hello), takes the reply's tag, posts
 * the reply's receive and sends the hello. */
static int part_hello_send(part_chan *c, const char *fn)
{
    int rc = part_shape(c, c->parts, c->part_bytes);
    if (!rc)
        rc = part_tags_take(c->comm->c_context, 1, &c->tags_lo, fn);
    if (rc)
        return rc;
    c->tags_n = 1;
    c->hello = (part_hello){.magic = PART_MAGIC,
                            .tag = c->tag,
                            .reply_tag = part_tag(c->tags_lo),
                            .parts = c->parts,
                            .part_bytes = c->part_bytes};
    rc = mf_irecv(&c->reply, sizeof c->reply, mf_datatype_get(MPI_BYTE), c->peer,
                  c->hello.reply_tag, c->comm, MF_CTX_COLL, &c->reply_req);
    if (rc) {
        c->reply_req = NULL;
        return rc;
    }
    rc = mf_isend(&c->hello, sizeof c->hello, mf_datatype_get(MPI_BYTE), c->peer, MF_TAG_PART_HELLO,
                  c->comm, MF_CTX_COLL, MF_SEND_STANDARD, &c->hello_req);
    if (rc) {
        c->hello_req = NULL;
        mf_p2p_cancel(c->reply_req); /* not matched: no hello went out */
        mf_request_free(c->reply_req);
        c->reply_req = NULL;
    }
    return rc;
}

int mf_part_init(bool is_send, void *buf, int partitions, MPI_Count count, mf_datatype *dt,
                 int peer, int tag, mf_comm *comm, const char *fn, mf_request **out)
{
    size_t size = mf_datatype_info(dt)->dt_size;
    if (partitions < 1)
        return mf_error(MPI_ERR_ARG, "%s: partitions=%d is not positive", fn, partitions);
    if (count > 0 && size > 0 && (size_t)count > SIZE_MAX / size / (size_t)partitions)
        return mf_error(MPI_ERR_COUNT, "%s: %d partitions of count=%lld elements overflow", fn,
                        partitions, (long long)count);
    int rc = part_source.added ? MPI_SUCCESS : mf_progress_source_add(&part_source);
    if (rc)
        return rc;
    part_chan *c = calloc(1, sizeof *c);
    mf_request *r = c ? mf_request_new(MF_REQ_PART, comm) : NULL;
    if (!r) {
        free(c);
        return mf_error(MPI_ERR_NO_MEM, "%s: no memory for a partitioned request", fn);
    }
    *c = (part_chan){.req = r,
                     .is_send = is_send,
                     .state = PART_SETUP,
                     .buf = buf,
                     .parts = partitions,
                     .count = count,
                     .dt = dt,
                     .peer = peer,
                     .tag = tag,
                     .comm = comm,
                     .part_bytes = (size_t)count * size};
    c->total = c->part_bytes * (size_t)partitions;
    mf_datatype_retain(dt);
    if (peer == MPI_PROC_NULL)
        c->state = PART_NOWHERE;
    else if (is_send)
        rc = part_hello_send(c, fn);
    else if (!part_inbox_of(comm, peer, true))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: no memory for a partitioned request", fn);
    if (rc) {
        if (c->tags_n)
            part_tags_give(comm->c_context, c->tags_lo);
        free(c->xfer);
        mf_datatype_release(dt);
        free(c);
        mf_request_free(r);
        return rc;
    }
    mf_request_hold_persistent(r, c);
    *chans_tail = c;
    chans_tail = &c->next;
    if (!is_send && peer != MPI_PROC_NULL)
        part_inbox_poll(part_inbox_of(comm, peer, false)); /* a hello may be in already */
    *out = r;
    return MPI_SUCCESS;
}

int mf_part_start(mf_request *r)
{
    part_chan *c = part_of(r);
    mf_request *round = mf_request_new(MF_REQ_PART, c->comm);
    if (!round)
        return mf_error(MPI_ERR_NO_MEM, "MPI_Start: no memory for a partitioned round");
    mf_request_hold(round);
    c->round = round;
    c->round_error = MPI_SUCCESS;
    c->unsent = 0;
    /* A receiver not matched yet learns its transfer count from the hello (part_match). */
    c->left = c->state == PART_READY || (c->is_send && c->state == PART_SETUP) ? c->wire_parts : 0;
    if (c->unpacked)
        memset(c->unpacked, 0, (size_t)c->parts * sizeof *c->unpacked);
    *mf_request_inner(r) = round;
    if (!c->is_send && c->state == PART_READY)
        part_post_receives(c);
    part_round_end(c); /* MPI_PROC_NULL, a failed setup, zero partitions landed at once */
    return MPI_SUCCESS;
}

/* The partitioned request r of the given side, started (MPI_Pready, MPI_Parrived). */
static int part_active(mf_request *r, bool send, const char *fn, part_chan **out)
{
    part_chan *c = part_of(r);
    if (!c || c->is_send != send)
        return mf_error(MPI_ERR_REQUEST, "%s: request=0x%x is not a partitioned %s request", fn,
                        (unsigned)r->pub.r_handle, send ? "send" : "receive");
    if (!*mf_request_inner(r))
        return mf_error(MPI_ERR_REQUEST, "%s: request=0x%x is not active (call MPI_Start first)",
                        fn, (unsigned)r->pub.r_handle);
    *out = c;
    return MPI_SUCCESS;
}

static int part_ready_one(part_chan *c, int p, const char *what, const char *fn)
{
    if (p < 0 || p >= c->parts)
        return mf_error(MPI_ERR_ARG, "%s: %s=%d is not a partition of the request (0..%d)", fn,
                        what, p, c->parts - 1);
    if (!c->round)
        return MPI_SUCCESS; /* its round already ended (MPI_PROC_NULL, or a failed setup) */
    part_xfer *x = &c->xfer[p];
    if (x->ready)
        return mf_error(MPI_ERR_ARG, "%s: partition %d was already marked ready in this round", fn,
                        p);
    x->ready = true;
    if (c->state == PART_READY)
        return part_send(c, p);
    c->unsent++; /* the reply is not in: sent when it is (part_replied) */
    return MPI_SUCCESS;
}

int mf_part_ready(mf_request *r, int low, int high, const int *list, int n, const char *fn)
{
    part_chan *c = NULL;
    int rc = part_active(r, true, fn, &c);
    if (rc)
        return rc;
    if (!list && low > high)
        rc =
            mf_error(MPI_ERR_ARG, "%s: partition_low=%d is above partition_high=%d", fn, low, high);
    if (list && n < 0)
        rc = mf_error(MPI_ERR_ARG, "%s: length=%d is negative", fn, n);
    if (!rc && list)
        for (int i = 0; i < n && !rc; i++)
            rc = part_ready_one(c, list[i], "array_of_partitions[i]", fn);
    else if (!rc)
        for (int p = low; p <= high && !rc; p++)
            rc = part_ready_one(c, p, low == high ? "partition" : "partition_low..high", fn);
    part_round_end(c); /* a round whose last send completed at once ends now */
    return rc;
}

int mf_part_arrived(mf_request *r, int partition, bool *flag, const char *fn)
{
    part_chan *c;
    int rc = part_active(r, false, fn, &c);
    if (rc)
        return rc;
    if (partition < 0 || partition >= c->parts)
        return mf_error(MPI_ERR_ARG, "%s: partition=%d is not a partition of the request (0..%d)",
                        fn, partition, c->parts - 1);
    if (c->round && !(c->state == PART_READY && part_landed(c, partition)))
        mf_progress_poll();
    /* No round running: it ended, and everything is in (MPI_PROC_NULL: nothing comes). */
    *flag = !c->round || (c->state == PART_READY && part_landed(c, partition));
    if (*flag && c->round && c->staged)
        part_unpack(c, partition);
    return MPI_SUCCESS;
}
