#!/bin/bash
# sctp_cluster.sh CASE — the sctp fabric across hosts of a namespace cluster (scripts/netns-cluster,
# prefix "sc", id 40 + case), as tests/cluster does for the launcher.
#   apps      p2p and collectives over sctp between 2 hosts x 2 ranks (shm inside a host),
#             associations over both rails
#   failover  one rank per host, a checksummed stream over an association on both rails; rail 1
#             of the sender's host is pulled mid-transfer for 2.5 s and restored: the stream
#             completes with every byte right, the longest stall is printed and bounded, and
#             traffic uses rail 1 again after it returned. mpiexec's link to its proxies runs
#             over rail 2 (its failover is another piece of work).
# Environment: MPIEXEC, TESTBIN, NETNS_CLUSTER. Exit 0 pass, 77 skip, else fail.
set -u
case_name=$1
case $case_name in apps) id=40 ;; failover) id=41 ;; *) echo "unknown case $case_name"; exit 2 ;; esac
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
cluster_up "sc${id}h" "$id" 2 sctp-cluster
fail() {
    echo "FAIL [$case_name]: $*" >&2
    cluster_dump tail 30
    exit 1
}
tx_bytes() { ip -n "$1" -s link show "$2" | awk '/TX:/ {getline; print $1; exit}'; }

case $case_name in
apps)
    export MANIFOLD_IF=$R1.0/24 # mpiexec listens on rail 1
    H=${prefix}1:2,${prefix}2:2
    for prog in p2p_basic p2p_stress coll_move coll_reduce sctp_anytag; do
        MANIFOLD_VERBOSE=1 "$MPIEXEC" --host "$H" --launcher "$L" --timeout 90 \
            -x MANIFOLD_FABRIC=sctp:rail1+rail2 "$TESTBIN/$prog" >"$out" 2>"$err" </dev/null ||
            fail "$prog exited with $?"
        grep -q ' No Errors' "$out" || fail "$prog: no ' No Errors'"
        for i in 1 2; do
            grep -q "via shm0; .* via sctp0 (host ${prefix}$i, 2 ranks here)" "$err" ||
                fail "$prog: host ${prefix}$i did not use sctp0 across hosts"
        done
    done
    ;;
failover)
    export MANIFOLD_IF=$R2.0/24 # mpiexec's proxy links on rail 2: rail 1 can be pulled
    H=${prefix}1:1,${prefix}2:1
    "$MPIEXEC" --host "$H" --launcher "$L" --timeout 60 -x MANIFOLD_FABRIC=sctp:rail1+rail2 \
        "$TESTBIN/sctp_stream" 7 >"$out" 2>"$err" </dev/null &
    job=$!
    sleep 2
    nc rail-down ${prefix}1 1
    sleep 2.5
    nc rail-up ${prefix}1 1
    before=$(tx_bytes ${prefix}1 rail1)
    wait $job || fail "the stream job exited with $?"
    after=$(tx_bytes ${prefix}1 rail1)
    grep -q '^stream ok' "$out" || fail "the stream did not complete intact"
    gap=$(awk '/^longest gap/ {print $3}' "$out")
    echo "longest gap ${gap} ms; rail1 sent $((after - before)) bytes after it returned"
    awk -v g="$gap" 'BEGIN {exit !(g < 1500)}' || fail "the stream stalled ${gap} ms"
    [ $((after - before)) -gt 10000000 ] || fail "rail 1 carried little after it returned"
    ;;
esac
echo "PASS [$case_name]"
