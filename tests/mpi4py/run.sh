#!/bin/bash
# Usage: run.sh MPIEXEC LIBDIR VENV NP
# Installs the binary mpi4py wheel from PyPI (and numpy) into VENV once, then runs drop_in.py on
# NP ranks with Manifold's libmpi.so.12 found first. Exit 77 (skipped) if PyPI or venv is not
# available here.
set -u
mpiexec=$1 libdir=$2 venv=$3 np=$4
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
    # One installer at a time when tests run in parallel.
    exec 9>"$venv.lock"
    flock 9
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
        python3 -m venv "$venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv failed"; exit 77; }
        "$venv/bin/pip" install -q --only-binary=:all: mpi4py numpy >/dev/null 2>&1 ||
            { echo "SKIP: could not install the mpi4py wheel from PyPI"; exit 77; }
    fi
fi
out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      timeout 120 "$mpiexec" -n "$np" "$venv/bin/python" "$here/drop_in.py" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: mpiexec exited with $rc"; exit 1; }
echo "$out" | grep -q "No Errors" || { echo "FAIL: no success line"; exit 1; }
