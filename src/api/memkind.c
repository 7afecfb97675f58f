/* The memory allocation kinds MPI objects report: see memkind.h. */
#include "api/memkind.h"

#include <stdlib.h>

#include "api/session.h"
#include "comm/memkind.h"
#include "core/config.h"
#include "core/error.h"

char *mf_memkind_started(void)
{
    const char *asked = mf_config_str("MANIFOLD_MEMORY_ALLOC_KINDS");
    return mf_memkind_supported(*asked ? asked : NULL); /* unset: nothing asked, the default */
}

/* The kinds communicator c reports: a new string, or NULL when out of memory. */
static char *mf_memkind_of_comm(const mf_comm *c)
{
    const char *session = c->c_session ? mf_session_memkinds(c->c_session) : NULL;
    char *origin = session ? NULL : mf_memkind_started();
    if (!session && !origin)
        return NULL;
    const char *promised = c->c_info ? mf_info_lookup(c->c_info, MF_MEMKIND_ASSERT_KEY) : NULL;
    char *kinds = mf_memkind_narrow(session ? session : origin, promised);
    free(origin);
    return kinds;
}

int mf_memkind_report(mf_info *out, const mf_comm *c, const mf_info *hints)
{
    const char *promised = hints ? mf_info_lookup(hints, MF_MEMKIND_ASSERT_KEY) : NULL;
    char *inherited = mf_memkind_of_comm(c);
    char *kinds = inherited ? mf_memkind_narrow(inherited, promised) : NULL;
    int rc = kinds ? mf_info_set(out, MF_MEMKIND_KEY, kinds)
                   : mf_error(MPI_ERR_NO_MEM, "no memory for the memory allocation kinds");
    free(inherited);
    free(kinds);
    return rc;
}
