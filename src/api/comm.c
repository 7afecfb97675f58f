/*
 * Communicator management (MPI-4.0 section 7.4): duplication, split, creation from groups,
 * freeing, comparison, names and info hints. The collective steps live in src/coll
 * (comm_create.c, context_agree.c); this file checks arguments and decides, for each process, which
 * group it ends up in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/memkind.h"
#include "api/p2p_args.h"
#include "api/session.h"
#include "comm/attr.h"
#include "coll/coll.h"
#include "coll/comm_build.h"
#include "comm/comm_internal.h"
#include "comm/info.h"
#include "comm/topo.h"
#include "coll/nbc.h"
#include "p2p/p2p_internal.h"

static int mf_api_out(void *p, const char *fn, const char *arg)
{
    return p ? MPI_SUCCESS : mf_error(MPI_ERR_ARG, "%s: %s is NULL", fn, arg);
}

static int mf_api_intra(const mf_comm *c, const char *fn)
{
    return c->c_is_inter ? mf_error(MPI_ERR_COMM,
                                    "%s: comm is an intercommunicator (this "
                                    "operation needs an intracommunicator)",
                                    fn)
                         : MPI_SUCCESS;
}

/* Replaces n's hints by a copy of `info` (none when NULL). */
static int mf_comm_replace_info(mf_comm *n, mf_info *info)
{
    mf_info_release(n->c_info);
    n->c_info = NULL;
    return info ? mf_info_dup(info, &n->c_info) : MPI_SUCCESS;
}

/* Dup plus the attribute copy callbacks; with `with_info`, hints replaced by `info` (none when
 * NULL). On failure (a copy callback's error, returned as is) *newcomm is MPI_COMM_NULL. */
static int mf_comm_dup_api(mf_comm *c, bool with_info, mf_info *info, MPI_Comm *newcomm)
{
    mf_comm *n = NULL;
    *newcomm = MPI_COMM_NULL;
    int rc = mf_comm_dup_internal(c, &n);
    if (rc)
        return rc;
    if ((rc = mf_attr_copy_all(MF_ATTR_COMM, c->c_handle, c->c_attrs, n->c_handle, &n->c_attrs)))
        goto fail;
    if (with_info && (rc = mf_comm_replace_info(n, info)))
        goto fail;
    *newcomm = n->c_handle;
    return MPI_SUCCESS;
fail:
    mf_attr_delete_all(MF_ATTR_COMM, n->c_handle, &n->c_attrs);
    mf_comm_release(n);
    return rc;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_dup");
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, "MPI_Comm_dup", "newcomm");
    if (!rc)
        rc = mf_comm_dup_api(c, false, NULL, newcomm);
    MF_API_EXIT();
    return mf_err_comm(c, rc, "MPI_Comm_dup");
}
MF_API_ALIAS(Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_dup_with_info";
    MF_API_ENTER();
    mf_comm *c = NULL;
    mf_info *i = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc)
        rc = mf_check_info_opt(info, &i, fn);
    if (!rc)
        rc = mf_comm_dup_api(c, true, i, newcomm);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Comm_dup_with_info);

/* MPI_Comm_idup(_with_info): the duplicate's handle is valid at once (using it before the
 * request completes is erroneous); its context ids are agreed by a schedule (nbc_idup.c) and
 * the attributes copied when that completes. */
static int mf_comm_idup_api(MPI_Comm comm, MPI_Info info, bool with_info, MPI_Comm *newcomm,
                            MPI_Request *request, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL, *n = NULL;
    mf_info *i = NULL;
    mf_request *r = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc)
        rc = mf_api_out(request, fn, "request");
    if (!rc && with_info)
        rc = mf_check_info_opt(info, &i, fn);
    if (!rc)
        rc = mf_comm_idup_prepare(c, &n);
    if (!rc && with_info)
        rc = mf_comm_replace_info(n, i);
    if (!rc)
        rc = mf_nbc_comm_idup(c, n, fn, &r);
    if (!rc && (rc = mf_request_handle(r, request)))
        mf_request_free(r); /* the agreement still ends, in the background */
    if (!rc)
        *newcomm = n->c_handle;
    else if (n && !r)
        mf_comm_release(n);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return mf_comm_idup_api(comm, MPI_INFO_NULL, false, newcomm, request, "MPI_Comm_idup");
}
MF_API_ALIAS(Comm_idup);

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return mf_comm_idup_api(comm, info, true, newcomm, request, "MPI_Comm_idup_with_info");
}
MF_API_ALIAS(Comm_idup_with_info);

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split";
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc && color < 0 && color != MPI_UNDEFINED)
        rc = mf_error(MPI_ERR_ARG, "%s: color=%d is negative (and not MPI_UNDEFINED)", fn, color);
    mf_comm *nc = NULL;
    if (!rc && !(rc = (c->c_is_inter ? mf_comm_split_inter : mf_comm_split)(c, color, key, &nc)))
        *newcomm = nc ? nc->c_handle : MPI_COMM_NULL;
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split_type";
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    mf_info *hints = NULL;
    if (!rc)
        rc = mf_check_info_opt(info, &hints, fn);
    int color = MPI_UNDEFINED;
    if (!rc) {
        switch (split_type) {
        case MPI_UNDEFINED:
            break;
        case MPI_COMM_TYPE_SHARED:
            color = mf_g.node_of[mf_g.rank];
            break;
        case MPI_COMM_TYPE_HW_GUIDED:
        case MPI_COMM_TYPE_RESOURCE_GUIDED: {
            /* The one resource type we know is the host's shared memory. MPI-4.1's
             * RESOURCE_GUIDED also splits by a process set ("mpi_pset_name"). Anything else
             * gives MPI_COMM_NULL. */
            const char *v = mf_info_lookup(mf_info_get(info), "mpi_hw_resource_type");
            const char *pset = split_type == MPI_COMM_TYPE_RESOURCE_GUIDED
                                   ? mf_info_lookup(mf_info_get(info), "mpi_pset_name")
                                   : NULL;
            if (v && strcmp(v, "mpi_shared_memory") == 0)
                color = mf_g.node_of[mf_g.rank];
            else if (pset)
                color = mf_pset_split_color(pset);
            break;
        }
        case MPI_COMM_TYPE_HW_UNGUIDED:
            /* Must be a strict subset of comm: the host, unless comm is the host already. */
            color = mf_g.node_of[mf_g.rank];
            break;
        default:
            rc = mf_error(MPI_ERR_ARG, "%s: split_type=%d is not a known split type", fn,
                          split_type);
        }
    }
    /* MPI-4: on an intercommunicator each side splits its own group into intracommunicators. */
    mf_comm *nc = NULL;
    if (!rc && !(rc = mf_comm_split(c->c_is_inter ? c->c_local_comm : c, color, key, &nc)))
        *newcomm = nc ? nc->c_handle : MPI_COMM_NULL;
    if (!rc && split_type == MPI_COMM_TYPE_HW_UNGUIDED && *newcomm != MPI_COMM_NULL) {
        mf_comm *n = mf_comm_get(*newcomm);
        if (n->c_size == c->c_size) { /* not a strict subset: MPI wants MPI_COMM_NULL */
            mf_comm_release(n);
            *newcomm = MPI_COMM_NULL;
        }
    }
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Comm_split_type);

static int mf_api_group_arg(MPI_Group h, mf_group **out, const char *fn)
{
    if (h == MPI_GROUP_NULL || !(*out = mf_group_get(h)))
        return mf_error(MPI_ERR_GROUP, "%s: group=0x%x is not a valid group", fn, (unsigned)h);
    return MPI_SUCCESS;
}

/* Ranks in c of g's members; MPI_ERR_GROUP if a member is not in c. */
static int mf_group_ranks_in(const mf_group *g, const mf_comm *c, int *ranks, const char *fn)
{
    for (int i = 0; i < g->g_size; i++) {
        ranks[i] = mf_group_rank_of(c->c_group, g->g_world_ranks[i]);
        if (ranks[i] == MPI_UNDEFINED)
            return mf_error(MPI_ERR_GROUP, "%s: group member %d (world rank %d) is not in comm", fn,
                            i, g->g_world_ranks[i]);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create";
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_group *g = NULL;
    int *ranks = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc)
        rc = mf_api_group_arg(group, &g, fn);
    if (!rc && !(ranks = malloc(((size_t)g->g_size + 1) * sizeof *ranks)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc)
        rc = mf_group_ranks_in(g, c, ranks, fn); /* the local group, for intercommunicators */
    if (!rc && c->c_is_inter)
        rc = mf_comm_create_inter_group(c, g, &nc);
    else if (!rc) {
        /* MPI-2.2 and later: processes may pass different (disjoint) groups; each process
         * joins the one it is in, and all of comm agree on one context id. */
        mf_participants all = mf_participants_all(c);
        rc = mf_comm_create_over(&all, c, g->g_rank != MPI_UNDEFINED ? g : NULL, &nc);
    }
    if (!rc)
        *newcomm = nc ? nc->c_handle : MPI_COMM_NULL;
    free(ranks);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Comm_create);

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_group";
    MF_API_ENTER();
    mf_comm *c = NULL, *nc = NULL;
    mf_group *g = NULL;
    int *ranks = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = MF_API_OUT_HANDLE(newcomm, MPI_COMM_NULL, fn, "newcomm");
    if (!rc)
        rc = mf_api_intra(c, fn);
    if (!rc)
        rc = mf_api_group_arg(group, &g, fn);
    if (!rc && (tag < 0 || tag > MF_TAG_UB))
        rc = mf_error(MPI_ERR_TAG, "%s: tag=%d is not in 0..MPI_TAG_UB", fn, tag);
    if (!rc && g->g_rank == MPI_UNDEFINED && g->g_size > 0)
        rc = mf_error(MPI_ERR_GROUP, "%s: the calling process is not in group", fn);
    if (!rc && !(ranks = malloc(((size_t)g->g_size + 1) * sizeof *ranks)))
        rc = mf_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (!rc)
        rc = mf_group_ranks_in(g, c, ranks, fn);
    if (!rc && g->g_size == 0)
        *newcomm = MPI_COMM_NULL;
    else if (!rc) {
        /* Only the group's members take part: the agreement runs over them alone. */
        mf_participants p = {c, ranks, g->g_size, g->g_rank, tag};
        rc = mf_comm_create_over(&p, c, g, &nc);
        if (!rc)
            *newcomm = nc->c_handle;
    }
    free(ranks);
    MF_API_EXIT();
    return mf_err_comm(c, rc, fn);
}
MF_API_ALIAS(Comm_create_group);

/* MPI_Comm_free and MPI_Comm_disconnect: `how` names what cannot be done to the predefined
 * communicators. With `barrier` (MPI_Comm_disconnect, MPI-4.0 11.10.4: collective, returns once
 * the communication on comm is complete): every communicator here comes from MPI_Init or a
 * constructor (no spawned or connected processes), and a program may disconnect only with its
 * communication matched, so a barrier completes what the fabrics may still hold. */
static int mf_api_comm_drop(MPI_Comm *comm, bool barrier, const char *how, const char *fn)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = comm ? mf_check_comm(*comm, &c, fn) : mf_error(MPI_ERR_ARG, "%s: comm is NULL", fn);
    if (!rc && (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF))
        rc = mf_error(MPI_ERR_COMM, "%s: %s cannot be %s", fn, c->c_name, how);
    if (!rc && barrier)
        rc = mf_coll_barrier(c);
    if (!rc)
        rc = mf_bsend_release_pool(&c->c_bsend, fn); /* its buffered messages leave first */
    mf_comm *eh_comm = c;
    if (!rc) {
        /* The handler to report a failing delete callback with must outlive the object. */
        eh_comm = NULL;
        if ((rc = mf_comm_free_user(c)))
            eh_comm = c;
        else
            *comm = MPI_COMM_NULL;
    }
    MF_API_EXIT();
    return mf_err_comm(eh_comm, rc, fn);
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    return mf_api_comm_drop(comm, false, "freed", "MPI_Comm_free");
}
MF_API_ALIAS(Comm_free);

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    return mf_api_comm_drop(comm, true, "disconnected", "MPI_Comm_disconnect");
}
MF_API_ALIAS(Comm_disconnect);

/* No process of a Manifold job was started by MPI_Comm_spawn (not implemented), so none has a
 * parent: MPI_COMM_NULL, as the standard says for processes mpiexec started. */
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    const char *fn = "MPI_Comm_get_parent";
    MF_API_ENTER();
    int rc = mf_check_initialized(fn);
    if (!rc && !parent)
        rc = mf_error(MPI_ERR_ARG, "%s: parent is NULL", fn);
    if (!rc)
        *parent = MPI_COMM_NULL;
    MF_API_EXIT();
    return mf_err_no_object(rc, fn);
}
MF_API_ALIAS(Comm_get_parent);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    MF_API_ENTER();
    const char *fn = "MPI_Comm_compare";
    mf_comm *a = NULL, *b = NULL;
    int rc = mf_check_comm(comm1, &a, fn);
    if (!rc)
        rc = mf_check_comm(comm2, &b, fn);
    if (!rc)
        rc = mf_api_out(result, fn, "result");
    if (!rc) {
        if (a == b)
            *result = MPI_IDENT;
        else if (a->c_is_inter != b->c_is_inter)
            *result = MPI_UNEQUAL;
        else {
            int l = mf_group_compare(a->c_group, b->c_group);
            int r = a->c_is_inter ? mf_group_compare(a->c_remote, b->c_remote) : MPI_IDENT;
            int worst = l > r ? l : r;
            *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst;
        }
    }
    MF_API_RETURN(mf_err_comm(a, rc, fn));
}
MF_API_ALIAS(Comm_compare);

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_group");
    if (!rc)
        rc = mf_api_out(group, "MPI_Comm_group", "group");
    if (!rc)
        rc = mf_group_to_handle(c->c_group, group);
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_group"));
}
MF_API_ALIAS(Comm_group);

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_test_inter");
    if (!rc)
        rc = mf_api_out(flag, "MPI_Comm_test_inter", "flag");
    if (!rc)
        *flag = c->c_is_inter;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_test_inter"));
}
MF_API_ALIAS(Comm_test_inter);

static int mf_api_inter(const mf_comm *c, const char *fn)
{
    return c->c_is_inter ? MPI_SUCCESS
                         : mf_error(MPI_ERR_COMM, "%s: comm is not an intercommunicator", fn);
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_remote_size");
    if (!rc)
        rc = mf_api_inter(c, "MPI_Comm_remote_size");
    if (!rc)
        rc = mf_api_out(size, "MPI_Comm_remote_size", "size");
    if (!rc)
        *size = c->c_remote->g_size;
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_remote_size"));
}
MF_API_ALIAS(Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_remote_group");
    if (!rc)
        rc = mf_api_inter(c, "MPI_Comm_remote_group");
    if (!rc)
        rc = mf_api_out(group, "MPI_Comm_remote_group", "group");
    if (!rc)
        rc = mf_group_to_handle(c->c_remote, group);
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_remote_group"));
}
MF_API_ALIAS(Comm_remote_group);

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_set_name");
    if (!rc)
        rc = mf_api_out((void *)comm_name, "MPI_Comm_set_name", "comm_name");
    if (!rc)
        snprintf(c->c_name, sizeof c->c_name, "%s", comm_name); /* longer names are truncated */
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_set_name"));
}
MF_API_ALIAS(Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    if (comm == MPI_COMM_NULL) /* no object: nothing to lock */
        return mf_err_no_object(
            mf_api_null_name("MPI_COMM_NULL", comm_name, resultlen, "MPI_Comm_get_name"),
            "MPI_Comm_get_name");
    MF_API_ENTER();
    mf_comm *c = NULL;
    int rc = mf_check_comm(comm, &c, "MPI_Comm_get_name");
    if (!rc)
        rc = mf_api_out(comm_name, "MPI_Comm_get_name", "comm_name");
    if (!rc)
        rc = mf_api_out(resultlen, "MPI_Comm_get_name", "resultlen");
    if (!rc && comm_name) { /* (checked above; repeated for GCC's sanitizer-build analysis) */
        snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->c_name);
        *resultlen = (int)strlen(comm_name);
    }
    MF_API_RETURN(mf_err_comm(c, rc, "MPI_Comm_get_name"));
}
MF_API_ALIAS(Comm_get_name);

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    MF_API_ENTER();
    const char *fn = "MPI_Comm_set_info";
    mf_comm *c = NULL;
    mf_info *i = NULL, *copy = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc && (info == MPI_INFO_NULL || !(i = mf_info_get(info))))
        rc = mf_error(MPI_ERR_INFO, "%s: info=0x%x is not a valid info object", fn, (unsigned)info);
    if (!rc && !(rc = mf_info_dup(i, &copy))) {
        mf_info_release(c->c_info);
        c->c_info = copy;
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    MF_API_ENTER();
    const char *fn = "MPI_Comm_get_info";
    mf_comm *c = NULL;
    mf_info *copy = NULL;
    int rc = mf_check_comm(comm, &c, fn);
    if (!rc)
        rc = mf_api_out(info_used, fn, "info_used");
    if (!rc && !(rc = mf_info_dup(c->c_info, &copy))) {
        /* The hints kept, and the kinds of memory it supports (api/memkind.h) in place of any
         * value the program set for that key. */
        rc = mf_memkind_report(copy, c, NULL);
        if (!rc)
            rc = mf_info_to_handle(copy, info_used);
        mf_info_release(copy);
    }
    MF_API_RETURN(mf_err_comm(c, rc, fn));
}
MF_API_ALIAS(Comm_get_info);
