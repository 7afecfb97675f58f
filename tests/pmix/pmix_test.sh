#!/bin/sh
# pmix_test.sh — Manifold programs under Open MPI's launcher (mpirun.openmpi, i.e. orterun), whose
# daemon is a PMIx server: Open MPI 4.1 on Debian 12 uses the system libpmix (4.2), the same
# library Manifold's PMIx client links, so client and server speak the same PMIx version.
# Ranks and size for 1, 2 and 4 processes, a ring over shm and over tcp (fabric addresses through
# PMIx_Put/Fence/Get), and MPI_Abort's code reaching mpirun's exit status.
# Exits 77 (CTest SKIP) when Open MPI is not installed or libmpi was built without libpmix.
# Environment: PROG (tests/launcher/launcher_rank), LIBMPI (path of libmpi.so.12).
set -u
MPIRUN=$(command -v mpirun.openmpi) || { echo "SKIP: mpirun.openmpi not installed"; exit 77; }
ldd "$LIBMPI" | grep -q libpmix || { echo "SKIP: libmpi built without libpmix"; exit 77; }
# Open MPI refuses to run as root unless told twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No Open MPI library is loaded (the program links Manifold), so its MCA chatter stays out; keep
# orted on the loopback so that the test does not depend on the network.
export OMPI_MCA_plm_rsh_agent=false OMPI_MCA_btl_base_warn_component_unused=0
# libpmix's own leaks (see lsan.supp) must not fail the sanitizer build.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(dirname "$0")/lsan.supp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mf-pmix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "--- output ---" >&2; head -n 20 "$tmp/out" >&2
    exit 1
}
run() {
    timeout 40 "$MPIRUN" --oversubscribe "$@" >"$tmp/out" 2>&1
}

for np in 1 2 4; do
    run -n $np "$PROG" hello || fail "hello -n $np: exit status $?"
    r=0
    while [ $r -lt $np ]; do
        [ "$(grep -c "^hello $r of $np on " "$tmp/out")" -eq 1 ] || fail "-n $np: rank $r missing"
        r=$((r + 1))
    done
    grep -q '^job ok$' "$tmp/out" || fail "-n $np: no 'job ok'"
    run -n $np "$PROG" ring || fail "ring -n $np: exit status $?"
    grep -q "^ring ok $np\$" "$tmp/out" || fail "ring -n $np: no 'ring ok $np'"
done

run -x MANIFOLD_SHM=0 -n 2 "$PROG" ring || fail "tcp ring: exit status $?"
grep -q "^ring ok 2\$" "$tmp/out" || fail "tcp ring: no 'ring ok 2'"

run -n 2 "$PROG" abort 1 6
rc=$?
[ $rc -eq 6 ] || fail "MPI_Abort(6) under mpirun gave exit status $rc"
grep -q "MPI_Abort(errorcode=6)" "$tmp/out" || fail "MPI_Abort: its message was not printed"
exit 0
