#!/bin/bash
# Usage: flood.sh MPIEXEC VICTIM IMPOSTOR
# A stranger holds 1100 idle connections to rank 0 of a 3-rank tcp job whose ranks may open only
# 1024 files each (ulimit -n 1024), reopening every one the rank closes, while the ranks start
# talking (their connections to rank 0 open amid the flood). Passes when the job finishes
# normally and its stderr holds only a few warning lines (rate-limited, with counts).
set -u
. "$(dirname "$0")/lib.sh"
mpiexec=$1 victim=$2 impostor=$3
dir=$(mktemp -d)
trap 'kill "$flooder" 2>/dev/null; rm -rf "$dir"' EXIT
flooder=
(ulimit -n 1024 && MANIFOLD_SHM=0 exec timeout 100 "$mpiexec" -n 3 "$victim" "$dir" flood) \
    >"$dir/out" 2>"$dir/err" &
job=$!
wait_file "$dir/ready" 300 "$job"
[ -e "$dir/ready" ] || { cat "$dir/err"; echo "FAIL: the job never got ready"; exit 1; }
"$impostor" flood "$(cat "$dir/port")" 1100 90 "$dir/flooded" >"$dir/flood" &
flooder=$!
if ! wait_file "$dir/flooded" 600 "$flooder"; then
    wait "$flooder"
    st=$?
    cat "$dir/flood"
    kill "$job" 2>/dev/null
    wait "$job"
    [ "$st" -eq 77 ] && exit 77
    echo "FAIL: the flood did not start"
    exit 1
fi
wait "$job"
rc=$?
kill "$flooder" 2>/dev/null
wait "$flooder" 2>/dev/null
cat "$dir/flood"
warnings=$(grep -c 'warning' "$dir/err")
lines=$(wc -l <"$dir/err")
head -20 "$dir/err"
cat "$dir/out"
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: the job ended with status $rc"; fail=1; }
grep -q "No Errors" "$dir/out" || { echo "FAIL: the job's data was disturbed"; fail=1; }
[ "$warnings" -le 12 ] && [ "$lines" -le 30 ] ||
    { echo "FAIL: stderr flooded ($warnings warnings, $lines lines)"; fail=1; }
[ $fail -eq 0 ] && echo "PASS ($warnings warning lines)"
exit $fail
