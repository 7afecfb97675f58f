#!/bin/bash
# Usage: coll_segment_death.sh MPIEXEC PROGRAM NP
# Runs coll_segment_death (rank 1 dies while rank 0 holds a half-made communicator segment's
# name in /dev/shm) and checks: the job ends, naming rank 1; rank 1 saw the name first; the name
# is gone afterwards; no process is left.
set -u
mpiexec=$1 prog=$2 np=$3
# The ranks carry an argument naming this run, so that the check for processes left below
# sees only this job's (by full path and tag: this test at another process count may be running
# beside it).
run_tag=run-$$
out=$(timeout 60 "$mpiexec" -n "$np" "$prog" "$run_tag" 2>&1)
rc=$?
echo "$out"
fail=0
case "$rc" in
137) echo "$out" | grep -q "rank 1 .*killed by signal 9" ||
         { echo "FAIL: no line says rank 1 was killed"; fail=1; } ;;
15) echo "$out" | grep -q "rank 1" || { echo "FAIL: no line names rank 1"; fail=1; } ;;
*) echo "FAIL: exit status $rc, expected 137 or 15"; fail=1 ;;
esac
seg=$(echo "$out" | sed -n 's/^segment //p')
if [ -z "$seg" ]; then
    echo "FAIL: rank 1 did not report the segment's name"; fail=1
elif [ -e "$seg" ]; then
    echo "FAIL: $seg is still there"; rm -f "$seg"; fail=1
fi
left=$(pgrep -af -- "^$prog $run_tag( |$)")
[ -z "$left" ] || { echo "FAIL: processes left: $left"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
