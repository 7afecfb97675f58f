#!/bin/bash
# Usage: run.sh MPIEXEC LIBDIR VENV NP [drop_in|rma|full]
# Installs the binary mpi4py wheel from PyPI (and numpy) into VENV once, then runs drop_in.py on
# NP ranks with Manifold's libmpi.so.12 found first. The other suites are mpi4py's own tests,
# taken from the sdist of the wheel's version (fetched once into VENV/tests-<version>):
#   rma   its one-sided tests (test_rma.py, test_rma_nb.py, test_win.py);
#   full  all of them (about 2000 per rank) but the modules of what Manifold does not implement
#         (MPI_FULL_EXCLUDE: spawn and the other dynamic-process calls), with
#         MPI4PY_TEST_SPAWN=0, mpi4py's own switch for the spawn cases that other modules hold.
#         Every rank must end with "OK".
# Exit 77 (skipped) if PyPI or venv is not available here.
set -u
mpiexec=$1 libdir=$2 venv=$3 np=$4 suite=${5:-drop_in}
here=$(cd "$(dirname "$0")" && pwd)
# One installer at a time when tests run in parallel.
exec 9>"$venv.lock"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
    flock 9
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
        python3 -m venv "$venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv failed"; exit 77; }
        "$venv/bin/pip" install -q --only-binary=:all: mpi4py numpy >/dev/null 2>&1 ||
            { echo "SKIP: could not install the mpi4py wheel from PyPI"; exit 77; }
    fi
    flock -u 9
fi
# A run that hangs ends after $limit seconds with every rank's stacks (mpiexec prints them).
limit=120
run() {
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$mpiexec" -n "$np" --timeout "$limit" --get-stack-traces "$venv/bin/python" "$@" 2>&1
}
# The test directory of the sdist of the installed mpi4py version, fetched once: sets $tests.
fetch_tests() {
    ver=$("$venv/bin/python" -c 'import mpi4py; print(mpi4py.__version__)')
    tests=$venv/tests-$ver
    if [ ! -f "$tests/test_win.py" ]; then
        flock 9
        if [ ! -f "$tests/test_win.py" ]; then
            tmp=$(mktemp -d)
            "$venv/bin/pip" download -q --no-binary :all: --no-deps "mpi4py==$ver" -d "$tmp" \
                >/dev/null 2>&1 || { rm -rf "$tmp"; echo "SKIP: no mpi4py $ver sdist from PyPI"; exit 77; }
            mkdir -p "$tmp/x" && tar -xzf "$tmp"/mpi4py-*.tar.gz -C "$tmp/x" &&
                rm -rf "$tests" && mv "$tmp/x/mpi4py-$ver/test" "$tests" ||
                { rm -rf "$tmp"; echo "FAIL: cannot unpack the mpi4py $ver sdist"; exit 1; }
            rm -rf "$tmp"
        fi
        flock -u 9
    fi
}
MPI_FULL_EXCLUDE='test_(dynproc|spawn)'
case $suite in
drop_in)
    out=$(run "$here/drop_in.py")
    rc=$?
    echo "$out"
    [ $rc -eq 0 ] || { echo "FAIL: mpiexec exited with $rc"; exit 1; }
    echo "$out" | grep -q "No Errors" || { echo "FAIL: no success line"; exit 1; }
    ;;
rma)
    fetch_tests
    for t in test_rma test_rma_nb test_win; do
        out=$(cd "$tests" && run "$t.py")
        rc=$?
        echo "$out" | tail -5
        [ $rc -eq 0 ] || { echo "$out"; echo "FAIL: $t exited with $rc"; exit 1; }
        echo "$out" | grep -q "^OK" || { echo "FAIL: $t printed no OK"; exit 1; }
    done
    ;;
full)
    # test_objmodel and test_subclass open a file at import or in every case; of the rest, only
    # test_errhandler's file class needs MPI-IO.
    fetch_tests
    limit=220
    out=$(cd "$tests" && MPI4PY_TEST_SPAWN=0 run main.py -e "$MPI_FULL_EXCLUDE")
    rc=$?
    echo "$out" | grep -E '^(Ran|OK|FAILED)'
    [ $rc -eq 0 ] || { echo "$out" | tail -60; echo "FAIL: mpiexec exited with $rc"; exit 1; }
    oks=$(echo "$out" | grep -c '^OK')
    [ "$oks" -eq "$np" ] || { echo "$out" | tail -60; echo "FAIL: $oks of $np ranks said OK"; exit 1; }
    ;;
*)
    echo "usage: run.sh MPIEXEC LIBDIR VENV NP [drop_in|rma|full]"
    exit 2
    ;;
esac
