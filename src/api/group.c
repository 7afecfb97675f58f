/*
 * Group management (MPI-4.0 section 7.3): queries, set operations and rank selections. Groups
 * are local objects, so nothing here communicates. Errors go where errors of no object go
 * (mf_err_no_object: MPI_COMM_SELF's handler; a group has none of its own).
 *
 * Set operations look members up through an index over world ranks (world ranks are dense,
 * 0 .. size-1), so each operation is linear in the sizes of its groups.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* Resolves a group handle; MPI_GROUP_NULL and stale handles give MPI_ERR_GROUP. */
static int mf_api_group(MPI_Group h, mf_group **out, const char *fn, const char *arg)
{
    int rc = mf_check_initialized(fn);
    if (rc)
        return rc;
    if (h == MPI_GROUP_NULL)
        return mf_error(MPI_ERR_GROUP, "%s: %s is MPI_GROUP_NULL", fn, arg);
    mf_group *g = mf_group_get(h);
    if (!g)
        return mf_error(MPI_ERR_GROUP, "%s: %s=0x%x is not a valid group", fn, arg, (unsigned)h);
    *out = g;
    return MPI_SUCCESS;
}

/* index[w] = 1 + rank in g of world rank w, or 0. */
static int *mf_group_index(const mf_group *g)
{
    int *index = calloc((size_t)mf_g.size + 1, sizeof *index);
    if (index)
        for (int i = 0; i < g->g_size; i++)
            index[g->g_world_ranks[i]] = i + 1;
    return index;
}

/* Hands a freshly built group to the user (dropping the builder's reference). */
static int mf_group_publish(mf_group *g, MPI_Group *out)
{
    int rc = mf_group_to_handle(g, out);
    mf_group_release(g);
    return rc;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    MF_API_ENTER();
    mf_group *g;
    int rc = mf_api_group(group, &g, "MPI_Group_size", "group");
    if (!rc && !size)
        rc = mf_error(MPI_ERR_ARG, "MPI_Group_size: size is NULL");
    if (!rc)
        *size = g->g_size;
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Group_size"));
}
MF_API_ALIAS(Group_size);

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    MF_API_ENTER();
    mf_group *g;
    int rc = mf_api_group(group, &g, "MPI_Group_rank", "group");
    if (!rc && !rank)
        rc = mf_error(MPI_ERR_ARG, "MPI_Group_rank: rank is NULL");
    if (!rc)
        *rank = g->g_rank;
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Group_rank"));
}
MF_API_ALIAS(Group_rank);

int PMPI_Group_free(MPI_Group *group)
{
    MF_API_ENTER();
    mf_group *g = NULL;
    int rc = group ? mf_api_group(*group, &g, "MPI_Group_free", "group")
                   : mf_error(MPI_ERR_ARG, "MPI_Group_free: group is NULL");
    if (!rc) {
        mf_group_release(g); /* MPI_GROUP_EMPTY is permanent: releasing it is harmless */
        *group = MPI_GROUP_NULL;
    }
    MF_API_RETURN(mf_err_no_object(rc, "MPI_Group_free"));
}
MF_API_ALIAS(Group_free);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    MF_API_ENTER();
    const char *fn = "MPI_Group_translate_ranks";
    mf_group *g1, *g2;
    int *index = NULL;
    int rc = mf_api_group(group1, &g1, fn, "group1");
    if (!rc)
        rc = mf_api_group(group2, &g2, fn, "group2");
    if (rc)
        goto out;
    if (n < 0) {
        rc = mf_error(MPI_ERR_ARG, "%s: n=%d is negative", fn, n);
        goto out;
    }
    if (n > 0 && (!ranks1 || !ranks2)) {
        rc = mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, !ranks1 ? "ranks1" : "ranks2");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->g_size)) {
            rc = mf_error(MPI_ERR_RANK, "%s: ranks1[%d]=%d is not a rank of group1 (size %d)", fn,
                          i, ranks1[i], g1->g_size);
            goto out;
        }
    if (!(index = mf_group_index(g2))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL            ? MPI_PROC_NULL
                    : index[g1->g_world_ranks[ranks1[i]]] ? index[g1->g_world_ranks[ranks1[i]]] - 1
                                                          : MPI_UNDEFINED;
out:
    free(index);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Group_translate_ranks);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    MF_API_ENTER();
    const char *fn = "MPI_Group_compare";
    mf_group *g1, *g2;
    int rc = mf_api_group(group1, &g1, fn, "group1");
    if (!rc)
        rc = mf_api_group(group2, &g2, fn, "group2");
    if (!rc && !result)
        rc = mf_error(MPI_ERR_ARG, "%s: result is NULL", fn);
    if (!rc)
        *result = mf_group_compare(g1, g2);
    MF_API_RETURN(mf_err_no_object(rc, fn));
}
MF_API_ALIAS(Group_compare);

enum mf_setop { MF_UNION, MF_INTERSECTION, MF_DIFFERENCE };

static int mf_group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, enum mf_setop op,
                          const char *fn)
{
    mf_group *g1, *g2, *ng = NULL;
    int *index = NULL, *members = NULL, n = 0;
    int rc = mf_api_group(group1, &g1, fn, "group1");
    if (!rc)
        rc = mf_api_group(group2, &g2, fn, "group2");
    if (!rc && !newgroup)
        rc = mf_error(MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    if (rc)
        goto out;
    index = mf_group_index(g1);
    members = malloc(((size_t)g1->g_size + (size_t)g2->g_size + 1) * sizeof *members);
    if (!index || !members) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    int *in2 = NULL;
    if (op != MF_UNION && !(in2 = mf_group_index(g2))) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    /* The result keeps group1's order, then (union) group2's new members in group2's order. */
    for (int i = 0; i < g1->g_size; i++) {
        int w = g1->g_world_ranks[i];
        if (op == MF_UNION || (op == MF_INTERSECTION) == (in2[w] != 0))
            members[n++] = w;
    }
    if (op == MF_UNION)
        for (int i = 0; i < g2->g_size; i++)
            if (!index[g2->g_world_ranks[i]])
                members[n++] = g2->g_world_ranks[i];
    free(in2);
    if (!(rc = mf_group_new(n, members, &ng))) {
        /* A session's group stays the session's (the empty group is one shared object). */
        if (ng->g_size)
            ng->g_session = g1->g_session;
        rc = mf_group_publish(ng, newgroup);
    }
out:
    free(index);
    free(members);
    return mf_err_no_object(rc, fn);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_setop(group1, group2, newgroup, MF_UNION, "MPI_Group_union"));
}
MF_API_ALIAS(Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MF_API_LOCKED(
        mf_group_setop(group1, group2, newgroup, MF_INTERSECTION, "MPI_Group_intersection"));
}
MF_API_ALIAS(Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_setop(group1, group2, newgroup, MF_DIFFERENCE, "MPI_Group_difference"));
}
MF_API_ALIAS(Group_difference);

/*
 * The selections. Each turns its arguments into a list of distinct ranks of `g` (checked: in
 * range, no repeats), then incl keeps them in list order and excl keeps the others in group
 * order.
 */
static int mf_group_select(mf_group *g, const int *ranks, int n, bool exclude, MPI_Group *newgroup,
                           const char *fn)
{
    int rc = MPI_SUCCESS;
    mf_group *ng = NULL;
    char *seen = calloc((size_t)g->g_size + 1, 1);
    int *members = malloc(((size_t)g->g_size + 1) * sizeof *members);
    if (!seen || !members) {
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        goto out;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->g_size) {
            rc = mf_error(MPI_ERR_RANK, "%s: rank %d (entry %d) is not in the group (size %d)", fn,
                          r, i, g->g_size);
            goto out;
        }
        if (seen[r]) {
            rc = mf_error(MPI_ERR_RANK, "%s: rank %d appears twice", fn, r);
            goto out;
        }
        seen[r] = 1;
        if (!exclude)
            members[m++] = g->g_world_ranks[r];
    }
    if (exclude)
        for (int r = 0; r < g->g_size; r++)
            if (!seen[r])
                members[m++] = g->g_world_ranks[r];
    if (!(rc = mf_group_new(m, members, &ng))) {
        if (ng->g_size)
            ng->g_session = g->g_session;
        rc = mf_group_publish(ng, newgroup);
    }
out:
    free(seen);
    free(members);
    return rc;
}

static int mf_group_incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup,
                              bool exclude, const char *fn)
{
    mf_group *g;
    int rc = mf_api_group(group, &g, fn, "group");
    if (!rc && !newgroup)
        rc = mf_error(MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    if (!rc && n < 0) /* n > size is caught below as a repeated or foreign rank */
        rc = mf_error(MPI_ERR_ARG, "%s: n=%d is negative", fn, n);
    if (!rc && n > 0 && !ranks)
        rc = mf_error(MPI_ERR_ARG, "%s: ranks is NULL", fn);
    if (!rc)
        rc = mf_group_select(g, ranks, n, exclude, newgroup, fn);
    return mf_err_no_object(rc, fn);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_incl_excl(group, n, ranks, newgroup, false, "MPI_Group_incl"));
}
MF_API_ALIAS(Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_incl_excl(group, n, ranks, newgroup, true, "MPI_Group_excl"));
}
MF_API_ALIAS(Group_excl);

/* Expands (first, last, stride) triplets into ranks; each triplet must describe a non-empty
 * sequence (stride != 0, and last not "behind" first), every rank within the group. */
static int mf_group_ranges(mf_group *g, int n, int ranges[][3], MPI_Group *newgroup, bool exclude,
                           const char *fn)
{
    int rc;
    if (!newgroup)
        return mf_error(MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    if (n < 0)
        return mf_error(MPI_ERR_ARG, "%s: n=%d is negative", fn, n);
    if (n > 0 && !ranges)
        return mf_error(MPI_ERR_ARG, "%s: ranges is NULL", fn);
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return mf_error(MPI_ERR_ARG, "%s: ranges[%d] has stride 0", fn, i);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return mf_error(MPI_ERR_ARG, "%s: ranges[%d]=(%d,%d,%d) describes no rank", fn, i,
                            first, last, stride);
        if (first < 0 || first >= g->g_size || last < 0 || last >= g->g_size)
            return mf_error(MPI_ERR_RANK, "%s: ranges[%d]=(%d,%d,%d) leaves the group (size %d)",
                            fn, i, first, last, stride, g->g_size);
        total += ((long)last - first) / stride + 1;
        if (total > g->g_size) /* more ranks than members means a repeat */
            return mf_error(MPI_ERR_RANK, "%s: ranges name a rank twice", fn);
    }
    int *ranks = malloc(((size_t)total + 1) * sizeof *ranks);
    if (!ranks)
        return mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride)
            ranks[k++] = (int)r;
    }
    rc = mf_group_select(g, ranks, k, exclude, newgroup, fn);
    free(ranks);
    return rc;
}

static int mf_group_range_api(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup,
                              bool exclude, const char *fn)
{
    mf_group *g;
    int rc = mf_api_group(group, &g, fn, "group");
    if (!rc)
        rc = mf_group_ranges(g, n, ranges, newgroup, exclude, fn);
    return mf_err_no_object(rc, fn);
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_range_api(group, n, ranges, newgroup, false, "MPI_Group_range_incl"));
}
MF_API_ALIAS(Group_range_incl);

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    MF_API_LOCKED(mf_group_range_api(group, n, ranges, newgroup, true, "MPI_Group_range_excl"));
}
MF_API_ALIAS(Group_range_excl);
