#!/bin/bash
# Usage: p2p_peer_death.sh MPIEXEC PROGRAM NP
# A rank killed mid-job must end the whole job within seconds, naming rank 1 and the cause, and
# leave nothing in /dev/shm or as a process: neither the shm fabric's segments nor the regions
# libfabric's shm provider names "<pid>:<n>:<n>" (the ofi fabric; mpiexec removes a killed
# rank's). Two outcomes are right, depending on who notices
# first: mpiexec sees rank 1 killed by SIGKILL (exit status 137), or rank 0 sees its connection
# to rank 1 drop and its fatal error handler ends the job (class MPI_ERR_OTHER, status 15).
set -u
mpiexec=$1 prog=$2 np=$3
before=$(ls /dev/shm | grep -c manifold || true)
ofi_regions() { ls /dev/shm | grep -cE '^[0-9]+:[0-9]+:[0-9]+$' || true; }
ofi_before=$(ofi_regions)
start=$(date +%s)
# The ranks carry an argument naming this run, so that the check for processes left below
# sees only this job's (by full path and tag: another build tree's copy, or this test at another
# process count, may be running beside it).
run_tag=run-$$
out=$(timeout 60 "$mpiexec" -n "$np" "$prog" "$run_tag" 2>&1)
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "$out"
fail=0
case "$rc" in
137) echo "$out" | grep -q "rank 1 .*killed by signal 9" ||
         { echo "FAIL: no line says rank 1 was killed"; fail=1; } ;;
15) echo "$out" | grep -q "connection to rank 1 .*lost" ||
        { echo "FAIL: no line names the lost connection to rank 1"; fail=1; } ;;
*) echo "FAIL: exit status $rc, expected 137 or 15"; fail=1 ;;
esac
[ "$elapsed" -le 15 ] || { echo "FAIL: took ${elapsed}s to end the job"; fail=1; }
sleep 0.5
after=$(ls /dev/shm | grep -c manifold || true)
[ "$after" -le "$before" ] || { echo "FAIL: /dev/shm: $(ls /dev/shm | grep manifold)"; fail=1; }
[ "$(ofi_regions)" -le "$ofi_before" ] ||
    { echo "FAIL: libfabric regions left in /dev/shm: $(ls /dev/shm | grep -E '^[0-9]+:')"; fail=1; }
left=$(pgrep -af -- "^$prog $run_tag( |$)")
[ -z "$left" ] || { echo "FAIL: processes left: $left"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
