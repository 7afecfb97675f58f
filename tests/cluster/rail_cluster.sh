#!/bin/bash
# rail_cluster.sh CASE ID — the multirail wrapper (src/fabric/rail) across two hosts of a fresh
# namespace cluster (scripts/netns-cluster, prefix mr<ID>h, subnets 10.201.ID / 10.202.ID), one
# tcp rail per link: MANIFOLD_FABRIC=tcp:rail1,tcp:rail2 (tcp0 on rail 1, tcp1 on rail 2).
#   stripe     2 hosts x 2 ranks, rail_check once: the report shows rail0 over both rails and
#              both carried a large share of the bytes between the hosts
#   down-up    rail 2 of the second host taken down 1.5 s into a 6 s stream of checked traffic
#              and brought back 2.5 s later: nothing lost, the loss said once, the rail used again
#   ctl-down   rail 1 (the one mpiexec reaches the proxies over first; --control-if names both)
#              taken down for 12 s mid-job:
#              the job must not end (the control plane fails over to rail 2)
#   no-subnet  the second host's rail 2 moved to another network: the rail that cannot be
#              paired by subnet is said so (naming the rank and both addresses), the job runs
#              on the other rail
#   if-split   MANIFOLD_FABRIC=tcp with MANIFOLD_IF naming both subnets: one rail per subnet,
#              rail0(tcp0/tcp1) between the hosts in --report-fabrics with what each rail runs
#              over, both carrying a large share of the bytes
#   if-no-subnet  MANIFOLD_FABRIC=tcp, MANIFOLD_IF=rail1,rail2 (interface names), the second
#              host's rail 2 in another network: said as for no-subnet, the job runs on rail 1
# Environment: MPIEXEC, TESTBIN, NETNS_CLUSTER. Exit 0 pass, 77 skip.
set -u
case_name=$1
id=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster_up "mr${id}h" "$id" 2 rail

P=$TESTBIN/fabric_rail_check
export MANIFOLD_IF=$R1.0/24 # mpiexec listens on rail 1
export MANIFOLD_FABRIC=tcp:rail1,tcp:rail2

fail() {
    echo "FAIL [$case_name]: $*" >&2
    cluster_dump head 60
    exit 1
}
expect_ok() { grep -q "^rail_check: .* every byte checked" "$out" || fail "no clean pass (exit $rc)"; }
# Bytes host $1 sent over instance $2 (from --report-fabrics).
sent_bytes() { sed -n "s/^manifold\[0\]: fabrics: $1 $2: sent [0-9]* frames, \([0-9]*\) bytes.*/\1/p" "$err"; }

case $case_name in
stripe)
    "$MPIEXEC" --host ${prefix}1:2,${prefix}2:2 --launcher "$L" --timeout 60 --report-fabrics \
        -x MANIFOLD_IF= "$P" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    expect_ok
    grep -q "^manifold\[0\]: fabrics: p2p ${prefix}1 -> ${prefix}2: rail0(tcp0/tcp1)\$" "$err" ||
        fail "the report does not show rail0 over tcp0 and tcp1 between the hosts"
    a=$(sent_bytes ${prefix}1 tcp0) b=$(sent_bytes ${prefix}1 tcp1)
    [ -n "$a" ] && [ -n "$b" ] && [ $((a * 5)) -ge $((a + b)) ] && [ $((b * 5)) -ge $((a + b)) ] ||
        fail "the rails are not both used: tcp0 '$a' bytes, tcp1 '$b' bytes"
    ;;
down-up)
    "$MPIEXEC" --host ${prefix}1:1,${prefix}2:1 --launcher "$L" --timeout 60 --report-fabrics \
        -x MANIFOLD_IF= "$P" 6 >"$out" 2>"$err" </dev/null &
    job=$!
    sleep 1.5
    nc rail-down ${prefix}2 2
    sleep 2.5
    nc rail-up ${prefix}2 2
    wait $job
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    expect_ok
    grep -q "rail0: rail tcp1 to rank [01] failed" "$err" || fail "the loss of rail 2 was not said"
    for r in 0 1; do
        [ "$(grep -c "^manifold\[$r\]: warning: rail0: rail tcp1 to rank [01] failed" "$err")" -le 1 ] ||
            fail "rank $r said the loss more than once"
    done
    grep -q "rail0: rail tcp1 to rank [01] is back in use" "$err" || fail "rail 2 was not taken back"
    ;;
ctl-down)
    # mpiexec listens on both rails (--control-if), so that a proxy can come back over rail 2.
    "$MPIEXEC" --host ${prefix}1:1,${prefix}2:1 --launcher "$L" --timeout 90 \
        --control-if $R1.0/24,10.202.$id.0/24 \
        -x MANIFOLD_IF= "$P" 16 >"$out" 2>"$err" </dev/null &
    job=$!
    sleep 2
    nc rail-down ${prefix}2 1
    sleep 12
    nc rail-up ${prefix}2 1
    wait $job
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc: losing the control rail ended the job"
    expect_ok
    grep -q "^mpiexec: the link to host ${prefix}2 resumed over a new connection" "$err" ||
        fail "the proxy of ${prefix}2 did not come back over rail 2"
    grep -q "rail0: rail tcp0 to rank [01] failed" "$err" || fail "the ranks did not lose rail 1"
    ;;
no-subnet)
    ip -n ${prefix}2 addr flush dev rail2
    ip -n ${prefix}2 addr add 10.203.$id.2/24 dev rail2
    "$MPIEXEC" --host ${prefix}1:1,${prefix}2:1 --launcher "$L" --timeout 60 \
        -x MANIFOLD_IF= "$P" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    expect_ok
    grep -q "tcp1: rank 1's address on this rail (10.203.$id.2:[0-9]*) shares no subnet with this host's (10.202.$id.1:[0-9]*)" "$err" ||
        fail "no message naming the rail that shares no subnet"
    ;;
if-split)
    "$MPIEXEC" --host ${prefix}1:2,${prefix}2:2 --launcher "$L" --timeout 60 --report-fabrics \
        -x MANIFOLD_FABRIC=tcp -x MANIFOLD_IF=$R1.0/24,10.202.$id.0/24 "$P" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    expect_ok
    grep -q "^manifold\[0\]: fabrics: p2p ${prefix}1 -> ${prefix}2: rail0(tcp0/tcp1)\$" "$err" ||
        fail "MANIFOLD_IF naming two subnets did not make two rails between the hosts"
    grep -q "^manifold\[0\]: fabrics: ${prefix}1 rail0: tcp0 over $R1.0/24, tcp1 over 10.202.$id.0/24;" "$err" ||
        fail "the report does not say what each rail runs over"
    a=$(sent_bytes ${prefix}1 tcp0) b=$(sent_bytes ${prefix}1 tcp1)
    [ -n "$a" ] && [ -n "$b" ] && [ $((a * 5)) -ge $((a + b)) ] && [ $((b * 5)) -ge $((a + b)) ] ||
        fail "the rails are not both used: tcp0 '$a' bytes, tcp1 '$b' bytes"
    ;;
if-no-subnet)
    ip -n ${prefix}2 addr flush dev rail2
    ip -n ${prefix}2 addr add 10.203.$id.2/24 dev rail2
    "$MPIEXEC" --host ${prefix}1:1,${prefix}2:1 --launcher "$L" --timeout 60 \
        -x MANIFOLD_FABRIC=tcp -x MANIFOLD_IF=rail1,rail2 "$P" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc = 0 ] || fail "exit status $rc"
    expect_ok
    grep -q "tcp1: rank 1's address on this rail (10.203.$id.2:[0-9]*) shares no subnet with this host's (10.202.$id.1:[0-9]*)" "$err" ||
        fail "no message naming the rail that shares no subnet"
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo "PASS [$case_name]"
