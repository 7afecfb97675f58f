#!/bin/bash
# ofi_cluster.sh ID — the ofi fabric across hosts: a 4-host namespace cluster
# (scripts/netns-cluster, prefix of<ID>h, subnets 10.201.ID.0/24 and 10.202.ID.0/24) running
#   - p2p, collective and one-sided programs, 4 hosts x 2 ranks, shm inside a host and
#     ofi (tcp;ofi_rxm) across: the report shows ofi0 between hosts and the domain it took
#     (the rail-1 interface MANIFOLD_IF selects, never loopback);
#   - the hybrid job (p2p on tcp, one-sided on ofi), 4 hosts x 1 rank;
#   - tag matching offloaded (ofi_tagged, p2p_basic), 4 hosts x 1 rank, shm off.
# Environment: MPIEXEC, TESTBIN, NETNS_CLUSTER. Exit 0 pass, 77 skip (not root, no netns).
set -u
id=$1
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
cluster_up "of${id}h" "$id" 4 ofi-cluster
export MANIFOLD_IF=$R1.0/24 # mpiexec listens on rail 1, and the ranks' ofi domain is rail 1
fail() {
    echo "FAIL: $*" >&2
    cluster_dump head 30
    exit 1
}

# The four "hosts" share this machine's cores, which no rank can see: without this, every rank
# would poll while blocked as on a host with a core per rank (no CQ fd, a poll every 2 us, no
# sleep at all while a window is exposed), and eight such ranks on two cores took rma_ops past
# its timeout. MANIFOLD_OVERSUBSCRIBED=1 says what the ranks cannot see.
export MANIFOLD_OVERSUBSCRIBED=1
H2=${prefix}1:2,${prefix}2:2,${prefix}3:2,${prefix}4:2
for prog in p2p_basic coll_reduce rma_ops; do
    MANIFOLD_FABRIC=ofi MANIFOLD_OFI_PROVIDER=tcp "$MPIEXEC" --host "$H2" --launcher "$L" \
        --timeout 90 --report-fabrics "$TESTBIN/$prog" >"$out" 2>"$err" </dev/null ||
        fail "$prog over ofi across hosts failed"
    grep -q ' No Errors' "$out" || fail "$prog: no ' No Errors'"
    grep -q "fabrics: p2p ${prefix}1 -> ${prefix}2: ofi0" "$err" || fail "$prog: ofi0 does not carry host 1 -> 2"
    grep -q "fabrics: p2p ${prefix}1 -> ${prefix}1: self0+shm0" "$err" || fail "$prog: shm does not carry host 1 -> 1"
    grep -q "fabrics: ${prefix}1 ofi0: provider tcp;ofi_rxm, domain rail1; data path: message path (.*rendezvous by fi_read" "$err" ||
        fail "$prog: the report does not show ofi0 on tcp;ofi_rxm over rail1, on the message path (shm in a host)"
done

H1=${prefix}1:1,${prefix}2:1,${prefix}3:1,${prefix}4:1
MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp MANIFOLD_RMA_FABRIC=ofi MANIFOLD_OFI_PROVIDER=tcp \
    "$MPIEXEC" --host "$H1" --launcher "$L" --timeout 90 "$TESTBIN/ofi_hybrid" >"$out" 2>"$err" \
    </dev/null || fail "the hybrid job (p2p on tcp, one-sided on ofi) failed across hosts"
grep -q ' No Errors' "$out" || fail "hybrid: no ' No Errors'"
# Tag matching offloaded across hosts: one rank per host, ofi carries all point-to-point.
for prog in ofi_tagged p2p_basic; do
    MANIFOLD_SHM=0 MANIFOLD_FABRIC=ofi MANIFOLD_OFI_PROVIDER=tcp "$MPIEXEC" --host "$H1" \
        --launcher "$L" --timeout 90 --report-fabrics "$TESTBIN/$prog" >"$out" 2>"$err" </dev/null ||
        fail "$prog with tagged offload across hosts failed"
    grep -q ' No Errors' "$out" || fail "$prog (tagged): no ' No Errors'"
    grep -q "fabrics: ${prefix}1 ofi0: provider tcp;ofi_rxm, domain rail1; data path: tagged offload" "$err" ||
        fail "$prog: the report does not show the tagged offload"
done
# Native atomics across hosts: one rank per host, every pair over ofi, so windows qualify.
MANIFOLD_SHM=0 MANIFOLD_FABRIC=ofi MANIFOLD_OFI_PROVIDER=tcp MANIFOLD_OFI_ATOMICS=on \
    "$MPIEXEC" --host "$H1" --launcher "$L" --timeout 90 "$TESTBIN/ofi_atomic" native >"$out" \
    2>"$err" </dev/null || fail "native atomics over ofi across hosts failed"
grep -q ' No Errors' "$out" || fail "ofi_atomic: no ' No Errors'"
echo "ofi across hosts as expected"
