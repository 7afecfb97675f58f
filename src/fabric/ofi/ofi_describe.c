/*
 * ofi_describe.c — the ofi instance's one-line report for --report-fabrics and logs (ofi.h,
 * mf_ofi_describe): provider, domain, data path (tagged offload or the message path and why;
 * eager and inject sizes, how rendezvous goes),
 * native atomics or why there are none, mr_mode, how it sleeps, and its counters.
 *
 * Contract: reads the instance, changes nothing; callable at any time after init (before
 * open succeeded the provider-dependent parts show as "?" or empty).
 */
#include <stdio.h>
#include <string.h>

#include "fabric/ofi/ofi.h"

void mf_ofi_describe(mf_fabric *f, char *buf, size_t len)
{
    mf_ofi *o = mf_ofi_of(f);
    char wait[128];
    const char *mr = o->o_info ? o->o_lib->tostr(&o->o_mr_mode, FI_TYPE_MR_MODE) : "?";
    if (o->o_wait_fd >= 0)
        snprintf(wait, sizeof wait, "CQ fd + fi_trywait");
    else
        snprintf(wait, sizeof wait, "timed poll every %d us (no CQ fd)", o->o_poll_us);
    size_t wl = strlen(wait);
    if (o->o_rma_poll_us < 0)
        snprintf(wait + wl, sizeof wait - wl, ", none while a window is exposed");
    else if (o->o_rma_poll_us > 0)
        snprintf(wait + wl, sizeof wait - wl, ", every %d us while a window is exposed",
                 o->o_rma_poll_us);
    char atomics[128];
    if (o->o_awhy || o->o_self == FI_ADDR_NOTAVAIL)
        snprintf(atomics, sizeof atomics, "none (%s)", o->o_awhy ? o->o_awhy : "no own address");
    else
        snprintf(atomics, sizeof atomics, "fi_atomic, %s%s",
                 o->o_aordered ? "ordered by the provider" : "one at a time per peer",
                 o->o_afetch ? ", plain ones fetching (early completions)" : "");
    char data[320];
    if (o->o_tagged)
        snprintf(
            data, sizeof data,
            "data path: tagged offload (FI_TAGGED: tag 31 bits, source %d, context %d, "
            "sequence %d, protocol 1: %llu fi_tinject, %llu fi_tsendmsg, %llu fi_trecvmsg), other frames",
            o->o_tsrc_bits, o->o_tctx_bits, o->o_tseq_bits, (unsigned long long)o->o_tinjects,
            (unsigned long long)o->o_tsends, (unsigned long long)o->o_trecvs);
    else
        snprintf(data, sizeof data, "data path: message path (%s)",
                 o->o_twhy[0] ? o->o_twhy : "not chosen");
    snprintf(buf, len,
             "provider %s, domain %s; %s; message path (Manifold matching), eager <= %zu B "
             "(fi_inject <= %zu B), rendezvous %s; atomics %s; mr_mode %s; sleep: %s; %llu "
             "injects, %llu reads, %llu writes, %llu atomics, %llu rkey fallbacks to push, %llu "
             "frames reordered, %llu taken directly",
             o->o_prov, o->o_dom, data, f->eager_limit, o->o_inject,
             o->o_rma ? "by fi_read" : "by push (no FI_RMA)", atomics,
             *mr ? mr : "0 (offsets, our keys)", wait, (unsigned long long)o->o_injects,
             (unsigned long long)o->o_reads, (unsigned long long)o->o_writes,
             (unsigned long long)o->o_atomics, (unsigned long long)o->o_rkey_fallbacks,
             (unsigned long long)o->o_early, (unsigned long long)o->o_direct);
}
