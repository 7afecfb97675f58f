#!/bin/bash
# Usage: p2p_intruder.sh MPIEXEC PROGRAM
# While a 2-rank tcp job runs, connect to its listening sockets and send (a) garbage, (b) a
# well-formed but foreign handshake-sized blob, (c) nothing then close. Intruders are refused
# with a logged reason, rate-limited (one line per rank here, the rest counted), and the job
# must finish normally.
set -u
mpiexec=$1 prog=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
MANIFOLD_SHM=0 MANIFOLD_VERBOSE=2 timeout 60 "$mpiexec" -n 2 "$prog" 4 >"$log" 2>&1 &
job=$!
ports=""
for _ in $(seq 50); do
    ports=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | sed 's/.*://' | sort -u)
    [ "$(echo "$ports" | grep -c .)" -ge 2 ] && break
    sleep 0.1
done
[ -n "$ports" ] || { cat "$log"; echo "FAIL: no listening port in the verbose log"; exit 1; }
for p in $ports; do
    # garbage
    exec 3<>/dev/tcp/127.0.0.1/"$p" && { head -c 300 /dev/urandom >&3; sleep 0.2; exec 3>&-; }
    # 64 bytes that look like a frame header but come before any handshake
    exec 3<>/dev/tcp/127.0.0.1/"$p" && { printf 'MF\001\001%060d' 0 >&3; sleep 0.2; exec 3>&-; }
    # connect and hang up
    exec 3<>/dev/tcp/127.0.0.1/"$p" && exec 3>&-
done
wait "$job"
rc=$?
cat "$log" | grep -v 'listening on\|published' | head -20
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: the job ended with status $rc"; fail=1; }
grep -q "No Errors" "$log" || { echo "FAIL: the program did not report success"; fail=1; }
[ "$(grep -c 'refused an unauthenticated connection from' "$log")" -ge 2 ] || { echo "FAIL: no refusal was logged"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
