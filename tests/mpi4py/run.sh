#!/bin/bash
# Usage: run.sh MPIEXEC LIBDIR VENV NP [rma]
# Installs the binary mpi4py wheel from PyPI (and numpy) into VENV once, then runs drop_in.py on
# NP ranks with Manifold's libmpi.so.12 found first. With "rma": mpi4py's own one-sided tests
# instead (test_rma.py, test_rma_nb.py, test_win.py), taken from the sdist of the wheel's version
# (fetched once into VENV/tests-<version>). Exit 77 (skipped) if PyPI or venv is not available
# here.
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
run() {
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 120 "$mpiexec" -n "$np" "$venv/bin/python" "$@" 2>&1
}
case $suite in
drop_in)
    out=$(run "$here/drop_in.py")
    rc=$?
    echo "$out"
    [ $rc -eq 0 ] || { echo "FAIL: mpiexec exited with $rc"; exit 1; }
    echo "$out" | grep -q "No Errors" || { echo "FAIL: no success line"; exit 1; }
    ;;
rma)
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
    for t in test_rma test_rma_nb test_win; do
        out=$(cd "$tests" && run "$t.py")
        rc=$?
        echo "$out" | tail -5
        [ $rc -eq 0 ] || { echo "$out"; echo "FAIL: $t exited with $rc"; exit 1; }
        echo "$out" | grep -q "^OK" || { echo "FAIL: $t printed no OK"; exit 1; }
    done
    ;;
*)
    echo "usage: run.sh MPIEXEC LIBDIR VENV NP [rma]"
    exit 2
    ;;
esac
