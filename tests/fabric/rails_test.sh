#!/bin/sh
# Fabric instances and routes, observed through what ranks report (MANIFOLD_VERBOSE=1: per rank;
# mpiexec --report-fabrics: once per job):
#   two-instances  two tcp instances over two interface settings (lo, and 127.0.0.0/8, which
#                  selects lo too: every host has it) both carry traffic, each to its peers;
#   two-ifaces     the same over lo and the first other up interface (skipped without one);
#   rma-route      MANIFOLD_RMA_FABRIC puts one-sided traffic on its own instance: the report
#                  shows it, point-to-point stays where it was;
#   bad-setting    a malformed fabric or interface setting stops mpiexec with the variable named;
#   no-iface       a fabric over interfaces that are not up fails with the instance named;
#   mpiexec-flags  mpiexec --fabric F / --rma-fabric F choose the fabrics (and bad ones are refused);
#   job-report     --report-fabrics: rank 0 alone prints one line per host pair and function
#                  with the instances used, and what each instance carried on the host.
# Usage: rails_test.sh CASE (MPIEXEC, PROG in the environment).
set -u
case_=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL ($case_): $*"; cat "$out"; exit 1; }
run() { MANIFOLD_SHM=0 MANIFOLD_VERBOSE=1 "$@" "$MPIEXEC" -n 3 --timeout 60 "$PROG" >"$out" 2>&1; }
# Rank R's count of sent frames on instance I.
sent() { sed -n "s/^manifold\[$1\]: fabric $2 .*: sent \([0-9]*\) frames.*/\1/p" "$out"; }

case $case_ in
two-instances | two-ifaces)
    second=127.0.0.0/8
    if [ "$case_" = two-ifaces ]; then
        second=$(ip -o -4 addr show up 2>/dev/null | awk '$2 != "lo" { print $2; exit }')
        [ -n "$second" ] || { echo "SKIP: no up IPv4 interface besides lo"; exit 77; }
    fi
    # MANIFOLD_RAILS=0: each peer on one of the instances (the multirail wrapper's own tests
    # are in tests/fabric_rail).
    run env MANIFOLD_RAILS=0 MANIFOLD_FABRIC="tcp:lo,tcp:$second" || fail "the job failed"
    # Rank 0 reaches rank 2 on rail (0+2)%2 = tcp0 and rank 1 on tcp1: both must carry frames.
    for inst in tcp0 tcp1; do
        n=$(sent 0 $inst)
        [ -n "$n" ] && [ "$n" -gt 0 ] || fail "rank 0 sent nothing over $inst"
    done
    grep -q "^manifold\[0\]: fabric tcp1 (tcp over $second)" "$out" || fail "tcp1 is not over $second"
    grep -q "^manifold\[0\]: peers 0 via self0; 2 via tcp0; 1 via tcp1" "$out" ||
        fail "rank 0's routes are not reported"
    ;;
rma-route)
    run env MANIFOLD_FABRIC=tcp MANIFOLD_RMA_FABRIC=tcp:127.0.0.1/32 || fail "the job failed"
    grep -q "^manifold\[0\]: peers 0 via self0; 1-2 via tcp0 " "$out" || fail "p2p moved"
    grep -q "^manifold\[0\]: one-sided: peers 0 via self0; 1-2 via tcp1 " "$out" ||
        fail "one-sided traffic is not routed to its own instance"
    ;;
bad-setting)
    for v in "MANIFOLD_FABRIC=udp" "MANIFOLD_FABRIC=tcp:" "MANIFOLD_RMA_FABRIC=tcp:10.0.0.0/33" \
        "MANIFOLD_IF=10.0.0/8"; do
        if run env "$v"; then fail "$v was accepted"; fi
        grep -q "^mpiexec: ${v%%=*}='${v#*=}' is not valid" "$out" || fail "$v: no clear error"
    done
    ;;
no-iface)
    # An IP fabric over interfaces none of which is up: MPI_Init fails naming the instance, the
    # same message from every IP class (fabric_ifaces.c).
    for fab in tcp sctp; do
        if MANIFOLD_SHM=0 MANIFOLD_FABRIC="$fab:nosuchif0" "$MPIEXEC" -n 2 --timeout 60 "$PROG" \
            >"$out" 2>&1; then
            fail "$fab over a missing interface ran"
        fi
        grep -q "${fab}0: interfaces 'nosuchif0' match no up IPv4 interface" "$out" ||
            fail "$fab over a missing interface: no clear error"
    done
    ;;
mpiexec-flags)
    # mpiexec --fabric / --rma-fabric spell MANIFOLD_FABRIC / MANIFOLD_RMA_FABRIC, overriding
    # the environment, checked like them before any rank starts.
    MANIFOLD_SHM=0 MANIFOLD_VERBOSE=1 MANIFOLD_FABRIC=tcp "$MPIEXEC" -n 3 --timeout 60 \
        --fabric sctp --rma-fabric tcp "$PROG" >"$out" 2>&1 || fail "the job failed"
    grep -q "^manifold\[0\]: peers 0 via self0; 1-2 via sctp0" "$out" ||
        fail "--fabric sctp does not carry point-to-point"
    grep -q "^manifold\[0\]: one-sided: peers 0 via self0; 1-2 via tcp0" "$out" ||
        fail "--rma-fabric tcp does not carry one-sided traffic"
    if MANIFOLD_SHM=0 "$MPIEXEC" -n 2 --timeout 60 --fabric udp "$PROG" >"$out" 2>&1; then
        fail "--fabric udp was accepted"
    fi
    grep -q "^mpiexec: MANIFOLD_FABRIC='udp' is not valid" "$out" || fail "--fabric udp: no clear error"
    ;;
job-report)
    MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp:lo,tcp:127.0.0.0/8 MANIFOLD_RMA_FABRIC=tcp:127.0.0.1/32 \
        "$MPIEXEC" -n 3 --timeout 60 --report-fabrics "$PROG" >"$out" 2>&1 || fail "the job failed"
    host=$(sed -n 's/^manifold\[0\]: fabrics: p2p \([^ ]*\) -> .*/\1/p' "$out")
    [ -n "$host" ] || fail "no p2p line"
    [ "$(grep -c ': fabrics: ' "$out")" = "$(grep -c '^manifold\[0\]: fabrics: ' "$out")" ] ||
        fail "a rank other than 0 reported"
    [ "$(grep -c ': fabrics: p2p ' "$out")" = 1 ] || fail "not one p2p line for the one host pair"
    grep -q "^manifold\[0\]: fabrics: p2p $host -> $host: self0+rail0(tcp0/tcp1)\$" "$out" ||
        fail "the p2p line does not list self0 and the multirail wrapper over both rails"
    grep -q "^manifold\[0\]: fabrics: rma $host -> $host: self0+tcp2\$" "$out" ||
        fail "the rma line does not show its own instance"
    for inst in tcp0 tcp1; do
        grep -q "^manifold\[0\]: fabrics: $host $inst: sent [1-9][0-9]* frames, [1-9][0-9]* bytes; received [1-9]" "$out" ||
            fail "no traffic reported on $inst"
    done
    ;;
*)
    echo "unknown case $case_"
    exit 2
    ;;
esac
echo "PASS ($case_)"
