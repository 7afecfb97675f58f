#!/bin/bash
# Runs `unsupported fatal` and expects the job to fail with a message naming MPI_Comm_spawn and
# the unsupported-operation error (see unsupported.c).
# usage: unsupported_fatal.sh MPIEXEC PROGRAM
set -uo pipefail
out=$("$1" -n 1 --timeout 60 "$2" fatal 2>&1)
status=$?
echo "$out"
echo "(exit status $status)"
fail=0
[ "$status" != 0 ] || { echo "FAIL: the job succeeded"; fail=1; }
grep -q 'MPI_Comm_spawn' <<<"$out" || { echo "FAIL: no message names MPI_Comm_spawn"; fail=1; }
grep -Eqi 'not supported|unsupported|not implemented' <<<"$out" ||
    { echo "FAIL: the message does not say the operation is unsupported"; fail=1; }
grep -q '^FAIL: MPI_Comm_spawn returned' <<<"$out" && fail=1
[ "$fail" = 0 ] && echo "PASS: unimplemented function failed loudly"
exit "$fail"
