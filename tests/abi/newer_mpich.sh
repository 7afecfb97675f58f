#!/bin/bash
# ABI check (d): the MPICH that programs are built with today is newer than Debian's 4.0.2. With
# the mpich 5.0.2 wheel from PyPI (its mpicc, mpi.h and libmpi.so.12, in VENV, installed once):
#   - every MPI_/PMPI_ function its libmpi.so.12 exports is exported by ours, but the MPI-5.0
#     ABI calls MPI_Abi_* (Fortran ABI settings and the standard ABI's version: the MPICH ABI
#     has neither; listed in the README);
#   - programs built by its mpicc that call what MPICH gained since 4.0 run on Manifold's
#     libmpi.so.12 (found first through LD_LIBRARY_PATH, before the wheel's RUNPATH) under
#     Manifold's mpiexec on NP ranks: tests/abi/newer_calls.c, and Manifold's own tests of the
#     MPI-4.1 request and buffer calls (tests/p2p/p2p_get_status.c, p2p_bsend_buffers.c).
# usage: newer_mpich.sh MPIEXEC LIBDIR SRCDIR VENV WORKDIR NP
# exit 77 (skip) when python3 -m venv or PyPI is not available here.
set -uo pipefail
mpiexec=$1 libdir=$2 src=$3 venv=$4 work=$5 np=$6
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/mpicc" ]; then
    python3 -m venv "$venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv failed"; exit 77; }
    "$venv/bin/pip" install -q mpich==5.0.2 >/dev/null 2>&1 ||
        { echo "SKIP: could not install the mpich 5.0.2 wheel from PyPI"; exit 77; }
fi
flock -u 9
theirs=$venv/lib/libmpi.so.12
[ -e "$theirs" ] || { echo "FAIL: the wheel has no lib/libmpi.so.12"; exit 1; }
fail=0

syms() {
    nm -D --defined-only "$1" | awk 'NF == 3 && $3 ~ /^P?MPI_/ { sub(/@.*/, "", $3); print $3 }' |
        sort -u
}
missing=$(comm -23 <(syms "$theirs" | grep -v -E '^P?MPI_Abi_') <(syms "$libdir/libmpi.so.12"))
if [ -n "$missing" ]; then
    echo "FAIL: exported by MPICH 5.0.2's libmpi.so.12 but not by ours:" $missing
    fail=1
else
    echo "checked $(syms "$theirs" | wc -l) symbols of MPICH 5.0.2's libmpi.so.12"
fi

mkdir -p "$work"
run() { # name, source files...
    local name=$1
    shift
    local exe=$work/$name
    "$venv/bin/mpicc" -D_GNU_SOURCE -I"$src/tests/util" -o "$exe.$$" "$@" ||
        { echo "FAIL: the wheel's mpicc cannot build $name"; fail=1; return; }
    mv -f "$exe.$$" "$exe"
    local resolved
    resolved=$(LD_LIBRARY_PATH="$libdir" ldd "$exe" | awk '/libmpi\.so\.12/ { print $3 }')
    if [ "$(readlink -f "$resolved")" != "$(readlink -f "$libdir/libmpi.so.12")" ]; then
        echo "FAIL: $name loads $resolved, not Manifold's libmpi.so.12"
        fail=1
        return
    fi
    local out
    if ! out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$mpiexec" -n "$np" --timeout 60 "$exe" 2>&1); then
        echo "$out"
        echo "FAIL: the MPICH-built $name failed on Manifold with $np ranks"
        fail=1
        return
    fi
    echo "PASS: the MPICH 5.0.2-built $name ran on Manifold with $np ranks"
}
run newer_calls "$src/tests/abi/newer_calls.c"
run p2p_get_status "$src/tests/p2p/p2p_get_status.c" "$src/tests/util/mftest.c"
run p2p_bsend_buffers "$src/tests/p2p/p2p_bsend_buffers.c" "$src/tests/util/mftest.c"
exit $fail
