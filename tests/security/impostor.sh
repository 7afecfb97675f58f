#!/bin/bash
# Usage: impostor.sh MPIEXEC VICTIM IMPOSTOR
# A 3-rank tcp job (victim attack) passes checked messages around while a stranger (impostor
# attack) throws garbage, the old handshake, early frames, the job hash without the secret, a
# wrong secret and a replayed legitimate handshake at rank 0. Passes when the stranger only ever
# got the fixed refusal, no message of its reached MPI_Recv, the job finished normally, and the
# MPI_T event connection_refused told of every refusal.
set -u
. "$(dirname "$0")/lib.sh"
mpiexec=$1 victim=$2 impostor=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Verbose: the job hash (not secret) is in tcp0's debug line "tcp0: job HASH".
MANIFOLD_SHM=0 MANIFOLD_VERBOSE=2 timeout 100 "$mpiexec" -n 3 "$victim" "$dir" attack \
    >"$dir/out" 2>"$dir/err" &
job=$!
wait_file "$dir/ready" 300 "$job"
fail=0
if [ -e "$dir/ready" ]; then
    hash=$(sed -n 's/.*\]: tcp0: job \([0-9a-f]*\)$/\1/p' "$dir/err" | head -1)
    "$impostor" attack "$(cat "$dir/port")" "$hash" 3 0 1 "$(cat "$dir/secret")" || fail=1
else
    echo "FAIL: the job never got ready"
    fail=1
fi
touch "$dir/done"
wait "$job"
rc=$?
grep -v 'listening on\|published\|tcp0: job\|peers .* via\|tcp: connected\|rejecting\|preferred' "$dir/err" | head -30
cat "$dir/out"
[ "$rc" -eq 0 ] || { echo "FAIL: the job ended with status $rc"; fail=1; }
grep -q "No Errors" "$dir/out" || { echo "FAIL: the job's own data was disturbed"; fail=1; }
grep -q "refused an unauthenticated connection" "$dir/err" ||
    { echo "FAIL: the refusals were not logged"; fail=1; }
# A tool listening to MPI_T hears each refusal once: the seven connections the impostor does
# not complete (garbage, old-hello, frame, two without the secret, wrong, the replay).
grep -q "^victim: connection_refused 7$" "$dir/out" ||
    { echo "FAIL: the MPI_T event connection_refused was not heard once per refusal"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
