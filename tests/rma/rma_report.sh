#!/bin/sh
# mpiexec --report-fabrics shows one-sided traffic on the instance MANIFOLD_RMA_FABRIC names:
# with tcp0 for point-to-point and tcp1 for one-sided traffic, rank 0 puts 4 MiB to rank 1
# (rma_route bulk) and the job's report must list tcp1 on the rma line and count those bytes
# on tcp1, while tcp0 carries only the little the job needs besides (far below 4 MiB).
# Usage: rma_report.sh (MPIEXEC, PROG in the environment).
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp:lo MANIFOLD_RMA_FABRIC=tcp:127.0.0.0/8 \
    "$MPIEXEC" -n 2 --timeout 60 --report-fabrics "$PROG" bulk >"$out" 2>&1 || fail "the job failed"
grep -q '^manifold\[0\]: fabrics: rma [^ ]* -> [^ ]*: self0+tcp1$' "$out" ||
    fail "the rma line does not name tcp1"
# Bytes sent through instance $1 on the host, as the report counts them.
sent() { sed -n "s/^manifold\[0\]: fabrics: [^ ]* $1: sent [0-9]* frames, \([0-9]*\) bytes;.*/\1/p" "$out"; }
bulk=$((4 * 1024 * 1024))
t1=$(sent tcp1)
t0=$(sent tcp0)
[ -n "$t1" ] && [ "$t1" -ge "$bulk" ] || fail "tcp1 sent ${t1:-nothing}, not the $bulk bytes put"
[ -n "$t0" ] && [ "$t0" -lt "$bulk" ] || fail "tcp0 sent ${t0:-nothing}: the put went there"
echo "PASS (tcp1 sent $t1 bytes, tcp0 $t0)"
