#!/bin/bash
# ABI check (c): a program compiled and linked by MPICH's own wrapper (Debian's mpicc.mpich, so it
# needs libmpich.so.12) runs under Manifold's mpiexec on Manifold's libmpich.so.12 symlink.
# usage: mpich_binary.sh MPIEXEC LIBDIR SOURCE WORKDIR NP
# exit 77 (skip) when MPICH's compiler wrapper is not installed.
set -euo pipefail
mpiexec=$1 libdir=$2 src=$3 work=$4 np=$5

mpicc_mpich=$(command -v mpicc.mpich || true)
if [ -z "$mpicc_mpich" ]; then
    echo "SKIP: mpicc.mpich not installed (apt-get install libmpich-dev)"
    exit 77
fi
mkdir -p "$work"
exe="$work/mpich_hello"
# Build once per run; the MPICH side never changes, but the source may.
"$mpicc_mpich" -o "$exe.$$" "$src"
mv -f "$exe.$$" "$exe"
if ! readelf -d "$exe" | grep -q 'NEEDED.*libmpich\.so\.12'; then
    echo "FAIL: $exe does not need libmpich.so.12:"
    readelf -d "$exe" | grep NEEDED
    exit 1
fi

# The dynamic loader must pick our library, not /usr/lib's MPICH.
resolved=$(LD_LIBRARY_PATH="$libdir" ldd "$exe" | awk '/libmpich\.so\.12/ { print $3 }')
if [ "$(readlink -f "$resolved")" != "$(readlink -f "$libdir/libmpich.so.12")" ]; then
    echo "FAIL: libmpich.so.12 resolves to $resolved, not $libdir/libmpich.so.12"
    exit 1
fi

out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$mpiexec" -n "$np" --timeout 60 "$exe" "$np" 2>&1) || {
    echo "$out"
    echo "FAIL: mpiexec -n $np exited with $?"
    exit 1
}
echo "$out"
lines=$(grep -c '^mpich-built hello: rank .* library: .*Manifold' <<<"$out" || true)
if [ "$lines" != "$np" ]; then
    echo "FAIL: expected $np hello lines naming Manifold, got $lines"
    exit 1
fi
echo "PASS: MPICH-built binary ran on Manifold with $np ranks"
