/*
 * Cartesian topologies and MPI_Dims_create (MPI-4.0 sections 8.5.1-8.5.5), plus MPI_Topo_test.
 * Ranks are never reordered: rank r of the new communicator is rank r of the old one, which
 * MPI permits (reorder is a hint), and which makes MPI_Cart_map the identity on 0..n-1.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/topo_util.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "comm/topo.h"

/* ---- MPI_Dims_create ------------------------------------------------------------------------
 * The free dimensions get the factorization of the remaining node count whose largest and
 * smallest factors are closest (the "as close to each other as possible" of the standard),
 * in non-increasing order. Among factorizations equally close, the one whose smallest factors
 * are largest, compared from the smallest up: 20 in 4 dimensions is 5x2x2x1, not 5x4x1x1
 * (both spread 4), which is what MPICH and Open MPI answer. An exhaustive search over
 * divisors: the counts are small. */
typedef struct mf_dims_search {
    const int *divs;
    int ndivs, k;
    int *cur, *best;
    long best_spread;
} mf_dims_search;

/* Chooses cur[i..k-1] (non-increasing, each <= bound) whose product is m. */
static void mf_dims_rec(mf_dims_search *s, int i, long m, int bound)
{
    if (i == s->k - 1) {
        if (m > bound)
            return;
        s->cur[i] = (int)m;
        long spread = (long)s->cur[0] - m;
        bool better = s->best_spread < 0 || spread < s->best_spread;
        for (int j = s->k - 1; !better && spread == s->best_spread && j >= 0; j--)
            if (s->cur[j] != s->best[j]) {
                better = s->cur[j] > s->best[j];
                break;
            }
        if (better) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
        }
        return;
    }
    for (int j = s->ndivs - 1; j >= 0; j--) {
        long d = s->divs[j];
        if (d > bound || m % d)
            continue;
        /* d is the largest of the k-i factors left: d^(k-i) must reach m. */
        long p = 1;
        for (int t = 0; t < s->k - i && p < m; t++)
            p *= d;
        if (p < m)
            break; /* smaller divisors can only do worse */
        if (s->best_spread >= 0 && i > 0 && (long)s->cur[0] - 1 > s->best_spread + d)
            continue;
        s->cur[i] = (int)d;
        mf_dims_rec(s, i + 1, m / d, (int)d);
    }
}

static int mf_dims_balanced(int m, int k, int *out)
{
    int rc = MPI_SUCCESS, ndivs = 0;
    int *divs = malloc(2 * 46341 * sizeof *divs);
    int *cur = malloc(((size_t)k + 1) * sizeof *cur);
    if (!divs || !cur) {
        rc = mf_error(MPI_ERR_NO_MEM, "MPI_Dims_create: out of memory");
        goto out;
    }
    for (long d = 1; d * d <= m; d++)
        if (m % d == 0) {
            divs[ndivs++] = (int)d;
            if (d * d != m)
                divs[ndivs++] = (int)(m / d);
        }
    /* ascending order for the search */
    for (int a = 1; a < ndivs; a++)
        for (int b = a; b > 0 && divs[b - 1] > divs[b]; b--) {
            int t = divs[b];
            divs[b] = divs[b - 1];
            divs[b - 1] = t;
        }
    mf_dims_search s = {divs, ndivs, k, cur, out, -1};
    mf_dims_rec(&s, 0, m, m);
out:
    free(divs);
    free(cur);
    return rc;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *fn = "MPI_Dims_create";
    int rc = MPI_SUCCESS, *fact = NULL;
    if (nnodes <= 0) {
        rc = mf_error(MPI_ERR_ARG, "%s: nnodes=%d is not positive", fn, nnodes);
        goto out;
    }
    if (ndims < 0) {
        rc = mf_error(MPI_ERR_DIMS, "%s: ndims=%d is negative", fn, ndims);
        goto out;
    }
    if (ndims == 0)
        goto out; /* nothing to fill (MPICH does not look at nnodes either) */
    if (!dims) {
        rc = mf_error(MPI_ERR_ARG, "%s: dims is NULL", fn);
        goto out;
    }
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) {
            rc = mf_error(MPI_ERR_DIMS, "%s: dims[%d]=%d is negative", fn, i, dims[i]);
            goto out;
        }
        if (dims[i] == 0)
            nfree++;
        else if (fixed <= nnodes) /* beyond nnodes the product only needs to stay too large */
            fixed *= dims[i];
    }
    if (nnodes % fixed != 0 || (nfree == 0 && fixed != nnodes)) {
        rc = mf_error(MPI_ERR_DIMS, "%s: the fixed entries of dims do not divide nnodes=%d", fn,
                      nnodes);
        goto out;
    }
    if (nfree == 0)
        goto out;
    if (!(fact = malloc((size_t)nfree * sizeof *fact))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    if ((rc = mf_dims_balanced((int)(nnodes / fixed), nfree, fact)))
        goto out;
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = fact[j++];
out:
    free(fact);
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Dims_create);

/* ---- Cartesian communicators ------------------------------------------------------------- */

static int mf_cart_check(int ndims, const int dims[], const int periods[], int size, long *nnodes,
                         const char *fn)
{
    if (ndims < 0)
        return mf_error(MPI_ERR_DIMS, "%s: ndims=%d is negative", fn, ndims);
    if (ndims > 0 && (!dims || !periods))
        return mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !dims ? "dims" : "periods");
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mf_error(MPI_ERR_DIMS, "%s: dims[%d]=%d is not positive", fn, i, dims[i]);
        n *= dims[i];
        if (n > size)
            return mf_error(MPI_ERR_DIMS,
                            "%s: the grid has more than the %d processes of "
                            "comm",
                            fn, size);
    }
    *nnodes = n;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    const char *fn = "MPI_Cart_create";
    (void)reorder;
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_topology *t = NULL;
    long n = 0;
    int rc = mf_check_comm(comm_old, &c, fn);
    if (!rc)
        rc = mf_topo_check_intra(c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(comm_cart, MPI_COMM_NULL, fn, "comm_cart");
    if (!rc)
        rc = mf_cart_check(ndims, dims, periods, c->c_size, &n, fn);
    int alloc_rc = MPI_SUCCESS;
    if (!rc && c->c_rank < n) {
        if (!(t = calloc(1, sizeof *t)) ||
            !(t->t_dims = malloc(((size_t)ndims + 1) * sizeof(int))) ||
            !(t->t_periods = malloc(((size_t)ndims + 1) * sizeof(int))))
            alloc_rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        else {
            t->t_kind = MPI_CART;
            t->t_ndims = ndims;
            for (int i = 0; i < ndims; i++) {
                t->t_dims[i] = dims[i];
                t->t_periods[i] = periods[i] != 0;
            }
        }
    }
    /* A process short of memory still joins the creation, or the others would hang. */
    if (!rc)
        rc = mf_topo_create_prefix(c, (int)n, &nc, fn);
    if (!rc && alloc_rc) {
        mf_comm_release(nc);
        nc = NULL;
        rc = alloc_rc;
    }
    if (!rc && nc) {
        nc->c_topo = t;
        t = NULL;
    }
    if (!rc)
        *comm_cart = nc ? nc->c_handle : MPI_COMM_NULL;
    mf_topo_free(t);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Cart_create);

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    MF_API_ENTER();
    const char *fn = "MPI_Cart_map";
    mf_comm *c = NULL;
    long n = 0;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_cart_check(ndims, dims, periods, c->c_size, &n, fn);
    if (!rc && !newrank)
        rc = mf_error(MPI_ERR_ARG, "%s: newrank is NULL", fn);
    if (!rc)
        *newrank = c->c_rank < n ? c->c_rank : MPI_UNDEFINED;
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Cart_map);

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, "MPI_Cartdim_get");
    if (!rc && !ndims)
        rc = mf_error(MPI_ERR_ARG, "MPI_Cartdim_get: ndims is NULL");
    if (!rc)
        *ndims = t->t_ndims;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Cartdim_get"));
}
MF_API_ALIAS(Cartdim_get);

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Cart_get";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, fn);
    if (!rc && maxdims < t->t_ndims)
        rc = mf_error(MPI_ERR_ARG, "%s: maxdims=%d is less than the %d dimensions", fn, maxdims,
                      t->t_ndims);
    if (!rc && t->t_ndims > 0 && (!dims || !periods || !coords))
        rc = mf_error(MPI_ERR_ARG, "%s: an output array is NULL", fn);
    if (!rc) {
        for (int i = 0; i < t->t_ndims; i++) {
            dims[i] = t->t_dims[i];
            periods[i] = t->t_periods[i];
        }
        mf_cart_coords(t, c->c_rank, coords);
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Cart_get);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    MF_API_ENTER();
    const char *fn = "MPI_Cart_rank";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int *wrapped = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, fn);
    if (!rc && (!rank || (t->t_ndims > 0 && !coords)))
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !rank ? "rank" : "coords");
    if (!rc && !(wrapped = malloc(((size_t)t->t_ndims + 1) * sizeof *wrapped)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; !rc && i < t->t_ndims; i++) {
        int x = coords[i], d = t->t_dims[i];
        if (t->t_periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            rc = mf_error(MPI_ERR_ARG,
                          "%s: coords[%d]=%d is outside the non-periodic "
                          "dimension of size %d",
                          fn, i, x, d);
        wrapped[i] = x;
    }
    if (!rc)
        *rank = mf_cart_rank(t, wrapped);
    free(wrapped);
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Cart_coords";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, fn);
    if (!rc && (rank < 0 || rank >= c->c_size))
        rc = mf_error(MPI_ERR_RANK, "%s: rank=%d is not in comm (size %d)", fn, rank, c->c_size);
    if (!rc && maxdims < t->t_ndims)
        rc = mf_error(MPI_ERR_ARG, "%s: maxdims=%d is less than the %d dimensions", fn, maxdims,
                      t->t_ndims);
    if (!rc && t->t_ndims > 0 && !coords)
        rc = mf_error(MPI_ERR_ARG, "%s: coords is NULL", fn);
    if (!rc)
        mf_cart_coords(t, rank, coords);
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    MF_API_ENTER();
    const char *fn = "MPI_Cart_shift";
    mf_comm *c = NULL;
    mf_topology *t = NULL;
    int *coords = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, fn);
    if (!rc && (direction < 0 || direction >= t->t_ndims))
        rc = mf_error(MPI_ERR_ARG, "%s: direction=%d is not in 0..%d", fn, direction,
                      t->t_ndims - 1);
    if (!rc && (!rank_source || !rank_dest))
        rc =
            mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !rank_source ? "rank_source" : "rank_dest");
    if (!rc && !(coords = malloc((size_t)t->t_ndims * sizeof *coords)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc) {
        int d = t->t_dims[direction], *out[2] = {rank_dest, rank_source};
        for (int s = 0; s < 2; s++) {
            mf_cart_coords(t, c->c_rank, coords);
            long x = (long)coords[direction] + (s == 0 ? disp : -(long)disp);
            if (t->t_periods[direction])
                x = ((x % d) + d) % d;
            if (x < 0 || x >= d) {
                *out[s] = MPI_PROC_NULL;
                continue;
            }
            coords[direction] = (int)x;
            *out[s] = mf_cart_rank(t, coords);
        }
    }
    free(coords);
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Cart_shift);

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *fn = "MPI_Cart_sub";
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_topology *t = NULL, *nt = NULL;
    int *coords = NULL;
    int rc = mf_topo_get(comm, MPI_CART, &c, &t, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc && t->t_ndims > 0 && !remain_dims)
        rc = mf_error(MPI_ERR_ARG, "%s: remain_dims is NULL", fn);
    if (!rc && (!(coords = malloc(((size_t)t->t_ndims + 1) * sizeof *coords)) ||
                !(nt = calloc(1, sizeof *nt)) ||
                !(nt->t_dims = malloc(((size_t)t->t_ndims + 1) * sizeof(int))) ||
                !(nt->t_periods = malloc(((size_t)t->t_ndims + 1) * sizeof(int)))))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (rc)
        goto out;
    /* Color: the coordinates in the dropped dimensions (row-major over them); key: the
     * coordinates in the kept ones, which is the old rank order. */
    mf_cart_coords(t, c->c_rank, coords);
    int color = 0;
    nt->t_kind = MPI_CART;
    for (int i = 0; i < t->t_ndims; i++) {
        if (remain_dims[i]) {
            nt->t_dims[nt->t_ndims] = t->t_dims[i];
            nt->t_periods[nt->t_ndims++] = t->t_periods[i];
        } else
            color = color * t->t_dims[i] + coords[i];
    }
    if ((rc = mf_topo_split(c, color, c->c_rank, &nc, fn)))
        goto out;
    nc->c_topo = nt;
    nt = NULL;
    *newcomm = nc->c_handle;
out:
    free(coords);
    mf_topo_free(nt);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Cart_sub);

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Topo_test");
    if (!rc && !status)
        rc = mf_error(MPI_ERR_ARG, "MPI_Topo_test: status is NULL");
    if (!rc)
        *status = c->c_topo ? c->c_topo->t_kind : MPI_UNDEFINED;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Topo_test"));
}
MF_API_ALIAS(Topo_test);
