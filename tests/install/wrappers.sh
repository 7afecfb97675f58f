#!/bin/bash
# The build tree's mpicc/mpicxx: what -show prints for each kind of command line, which compiler
# the environment selects, and that a compiled program really links and runs.
# usage: wrappers.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -uo pipefail
build=$(readlink -f "$1") src=$2 work=$3
mkdir -p "$work"
mpicc=$build/bin/mpicc mpicxx=$build/bin/mpicxx
fail=0
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }
# has "description" "output" "substring"; lacks likewise
has() { grep -qF -- "$3" <<<"$2" || bad "$1: '$3' missing in: $2"; }
lacks() { if grep -qF -- "$3" <<<"$2"; then bad "$1: unexpected '$3' in: $2"; fi; }
unset MANIFOLD_CC MPICH_CC CC MANIFOLD_CXX MPICH_CXX CXX

out=$("$mpicc" -show -O2 a.c -o a)
echo "mpicc -show: $out"
has "link" "$out" "-I$build/include"
has "link" "$out" "-L$build/lib"
has "link" "$out" "-Wl,-rpath,$build/lib"
has "link" "$out" "-lmpi"
has "link" "$out" "-O2 a.c -o a"
for flag in -c -E -S -M -MM; do
    out=$("$mpicc" -show "$flag" a.c)
    has "$flag" "$out" "-I$build/include"
    lacks "$flag" "$out" "-lmpi"
    lacks "$flag" "$out" "-L$build/lib"
done
out=$("$mpicc" -compile-info)
has "-compile-info" "$out" "-I$build/include"
lacks "-compile-info" "$out" "-lmpi"
out=$("$mpicc" -link-info)
has "-link-info" "$out" "-lmpi"
out=$("$mpicc" -show 'name with space.c')
has "quoting" "$out" 'name\ with\ space.c'

# Compiler choice: MANIFOLD_CC > MPICH_CC > CC > built-in; wrappers named there are skipped.
out=$(CC=cc-from-CC "$mpicc" -show x.c)
has "CC" "$out" "cc-from-CC "
out=$(CC=cc-from-CC MPICH_CC=cc-from-MPICH "$mpicc" -show x.c)
has "MPICH_CC" "$out" "cc-from-MPICH "
out=$(CC=cc-from-CC MPICH_CC=cc-from-MPICH MANIFOLD_CC="ccache cc-from-MANIFOLD" "$mpicc" -show x.c)
has "MANIFOLD_CC" "$out" "ccache cc-from-MANIFOLD "
out=$(CC="$mpicc" timeout 10 "$mpicc" -show x.c) || bad "CC=mpicc recursion"
lacks "CC=mpicc" "$out" "bin/mpicc"
out=$(CXX=cxx-from-CXX "$mpicxx" -show x.cc)
has "CXX" "$out" "cxx-from-CXX "
out=$("$mpicc" -cc=other-cc -show x.c)
has "-cc=" "$out" "other-cc "

# A real compile, link and run (singleton, no launcher needed).
"$mpicc" -o "$work/hello" "$src/tests/install/hello.c" || bad "mpicc could not build hello.c"
out=$("$work/hello" 2>&1) || bad "hello failed: $out"
has "singleton run" "$out" "installed hello from rank 0 of 1"
# Separate compile and link steps, as build systems do.
"$mpicc" -c -o "$work/hello.o" "$src/tests/install/hello.c" && "$mpicc" -o "$work/hello2" "$work/hello.o" ||
    bad "separate compile and link"

[ "$fail" = 0 ] && echo "PASS: wrappers behave"
exit "$fail"
