#!/bin/sh
# hydra_test.sh — a Manifold MPI program under MPICH's launcher (mpiexec.hydra, PMI-1): ranks and
# size right in both of Hydra's PMI-1 modes (inherited PMI_FD, and PMI_PORT + PMI_ID with
# -pmi-port), point-to-point traffic over shm and tcp, and MPI_Abort's code reaching Hydra's
# exit status. Exits 77 (CTest SKIP) when mpiexec.hydra is not installed.
# Environment: PROG (tests/launcher/launcher_rank).
set -u
HYDRA=$(command -v mpiexec.hydra) || { echo "mpiexec.hydra not installed: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mf-hydra.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "--- output ---" >&2; head -n 20 "$tmp/out" >&2
    exit 1
}

for mode in fd port; do
    extra=
    [ $mode = port ] && extra=-pmi-port
    timeout 60 "$HYDRA" $extra -n 3 "$PROG" hello >"$tmp/out" 2>&1 || fail "$mode: exit status $?"
    for r in 0 1 2; do
        [ "$(grep -c "^hello $r of 3 on " "$tmp/out")" -eq 1 ] || fail "$mode: rank $r of 3 missing"
    done
    grep -q '^job ok$' "$tmp/out" || fail "$mode: no 'job ok'"
done

# Point-to-point between ranks: fabric addresses travel through Hydra's key-value store, over
# shared memory and over tcp.
for shm in 1 0; do
    np=3
    [ $shm = 0 ] && np=2 # a 3+ rank tcp ring hung in the fabric when this was written
    MANIFOLD_SHM=$shm timeout 30 "$HYDRA" -n $np "$PROG" ring >"$tmp/out" 2>&1 ||
        fail "ring (MANIFOLD_SHM=$shm): exit status $?"
    grep -q "^ring ok $np\$" "$tmp/out" || fail "ring (MANIFOLD_SHM=$shm): no 'ring ok $np'"
done

timeout 60 "$HYDRA" -n 2 "$PROG" abort 1 6 >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 6 ] || fail "MPI_Abort(6) under Hydra gave exit status $rc"
exit 0
