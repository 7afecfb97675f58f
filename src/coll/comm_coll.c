/*
 * Mini-collectives over participants (see comm_build.h): a binomial-tree reduce and
 * broadcast, and a ring allgather, on point-to-point messages of the parent's collective
 * context. They carry only a few hundred bytes per creation, so simplicity beats speed here.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/comm_build.h"
#include "core/error.h"
#include "p2p/p2p.h"

mf_participants mf_participants_all(mf_comm *comm)
{
    return (mf_participants){.p_comm = comm,
                             .p_members = NULL,
                             .p_n = comm->c_size,
                             .p_me = comm->c_rank,
                             .p_tag = MF_TAG_COMM_AGREE};
}

static int mf_pcoll_rank(const mf_participants *p, int index)
{
    return p->p_members ? p->p_members[index] : index;
}

static mf_datatype *mf_pcoll_byte(void)
{
    return mf_datatype_get(MPI_BYTE);
}

int mf_pcoll_allreduce_band(const mf_participants *p, uint64_t *words, int nwords)
{
    size_t bytes = (size_t)nwords * sizeof *words;
    uint64_t *tmp = malloc(bytes);
    if (!tmp)
        return mf_error(MPI_ERR_NO_MEM, "no memory for a context-id agreement");
    int rc = MPI_SUCCESS;
    /* Reduce to participant 0: at step `mask`, those with that bit set send to their partner. */
    for (int mask = 1; mask < p->p_n; mask <<= 1) {
        if (p->p_me & mask) {
            rc = mf_send(words, (MPI_Count)bytes, mf_pcoll_byte(), mf_pcoll_rank(p, p->p_me - mask),
                         p->p_tag, p->p_comm, MF_CTX_COLL);
            break;
        }
        if (p->p_me + mask < p->p_n) {
            rc = mf_recv(tmp, (MPI_Count)bytes, mf_pcoll_byte(), mf_pcoll_rank(p, p->p_me + mask),
                         p->p_tag, p->p_comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
            if (rc)
                break;
            for (int i = 0; i < nwords; i++)
                words[i] &= tmp[i];
        }
    }
    free(tmp);
    if (rc)
        return rc;
    return mf_pcoll_bcast(p, 0, words, bytes);
}

int mf_pcoll_bcast(const mf_participants *p, int root, void *buf, size_t bytes)
{
    int n = p->p_n, rel = (p->p_me - root + n) % n, mask = 1, rc = MPI_SUCCESS;
    while (mask < n) {
        if (rel & mask) {
            int src = (rel - mask + root) % n;
            rc = mf_recv(buf, (MPI_Count)bytes, mf_pcoll_byte(), mf_pcoll_rank(p, src), p->p_tag,
                         p->p_comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
            if (rc)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n) {
            int dst = (rel + mask + root) % n;
            rc = mf_send(buf, (MPI_Count)bytes, mf_pcoll_byte(), mf_pcoll_rank(p, dst), p->p_tag,
                         p->p_comm, MF_CTX_COLL);
            if (rc)
                return rc;
        }
    return MPI_SUCCESS;
}

int mf_pcoll_allgather(const mf_participants *p, const void *mine, size_t bytes, void *all)
{
    char *out = all;
    int n = p->p_n, me = p->p_me;
    memcpy(out + (size_t)me * bytes, mine, bytes);
    int right = mf_pcoll_rank(p, (me + 1) % n), left = mf_pcoll_rank(p, (me - 1 + n) % n);
    /* Step s: pass on the block received in step s-1 (first our own), take the left one's. */
    for (int s = 0; s < n - 1; s++) {
        int send_block = (me - s + n) % n, recv_block = (me - s - 1 + n) % n;
        int rc =
            mf_sendrecv(out + (size_t)send_block * bytes, (MPI_Count)bytes, mf_pcoll_byte(), right,
                        p->p_tag, out + (size_t)recv_block * bytes, (MPI_Count)bytes,
                        mf_pcoll_byte(), left, p->p_tag, p->p_comm, MF_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
