#!/bin/bash
# Installs the current build into a scratch prefix and uses it the way a user would:
#   - the expected files are there (wrappers, launcher, headers, libraries and symlinks, .pc);
#   - P/bin/mpicc builds a program that P/bin/mpiexec -n 2 runs (and P/bin/mpicxx a C++ one);
#   - `pkg-config --cflags --libs manifold` works with PKG_CONFIG_PATH=P/lib/pkgconfig;
#   - the prefix is relocatable: a copy elsewhere compiles against itself.
# usage: install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
P="$work/prefix"
fail=0
step() { printf '== %s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }

step "cmake --install $build --prefix $P"
cmake --install "$build" --prefix "$P" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }

libdir=lib
[ -d "$P/lib" ] || libdir=$(cd "$P" && ls -d lib*/ | head -1)
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun include/mpi.h include/mpi_proto.h \
    "$libdir/libmpi.so.12" "$libdir/libmpi.so" "$libdir/libmpich.so.12" "$libdir/libmpich.so" \
    "$libdir/pkgconfig/manifold.pc"; do
    [ -e "$P/$f" ] || bad "missing $P/$f"
done
for f in bin/mpicc bin/mpicxx bin/mpiexec; do
    [ -x "$P/$f" ] || bad "$P/$f is not executable"
done
# Installed links must point inside the prefix, not back into the build tree.
for f in "$libdir/libmpich.so.12" "$libdir/libmpich.so" "$libdir/libmpi.so" bin/mpirun; do
    [ -e "$P/$f" ] || continue
    case "$(readlink -f "$P/$f")" in
    "$(readlink -f "$P")"/*) ;;
    *) bad "$P/$f resolves outside the prefix: $(readlink -f "$P/$f")" ;;
    esac
done
[ "$fail" = 0 ] || exit 1

step "mpicc -show"
show=$("$P/bin/mpicc" -show hello.c)
echo "$show"
grep -q -- "-I$(readlink -f "$P")/include" <<<"$show" || bad "mpicc -show does not use $P/include"
buildabs=$(readlink -f "$build")
if grep -Eq -- "$buildabs/(include|lib)( |$)" <<<"$show"; then bad "installed mpicc refers to the build tree"; fi

step "compile with $P/bin/mpicc, run with $P/bin/mpiexec -n 2"
"$P/bin/mpicc" -O2 -o "$work/hello" "$src/tests/install/hello.c"
if readelf -d "$work/hello" | grep -E 'R(UN)?PATH' | grep -Eq "$buildabs/lib(:|\]|$)"; then
    bad "the program's rpath points at the build tree"
fi
out=$(env -u LD_LIBRARY_PATH "$P/bin/mpiexec" -n 2 --timeout 60 "$work/hello" 2>&1) || bad "mpiexec failed"
echo "$out"
for r in 0 1; do
    grep -q "installed hello from rank $r of 2" <<<"$out" || bad "no line from rank $r"
done
resolved=$(env -u LD_LIBRARY_PATH ldd "$work/hello" | awk '/libmpi\.so\.12/ { print $3 }')
case "$(readlink -f "$resolved")" in
"$(readlink -f "$P")"/*) echo "libmpi.so.12 -> $resolved" ;;
*) bad "hello loads libmpi.so.12 from $resolved, not from the prefix" ;;
esac

step "compile C++ with $P/bin/mpicxx"
cxx=$("$P/bin/mpicxx" -show | cut -d' ' -f1)
if command -v "$cxx" >/dev/null; then
    "$P/bin/mpicxx" -o "$work/hello_cxx" "$src/tests/install/hello.cc"
    out=$(env -u LD_LIBRARY_PATH "$P/bin/mpiexec" -n 2 --timeout 60 "$work/hello_cxx" 2>&1) || bad "mpiexec (C++) failed"
    echo "$out"
    [ "$(grep -c 'installed c++ hello from rank' <<<"$out")" = 2 ] || bad "C++ program output"
else
    echo "note: no C++ compiler ($cxx); skipped"
fi

step "pkg-config --cflags --libs manifold"
if command -v pkg-config >/dev/null; then
    flags=$(PKG_CONFIG_PATH="$P/$libdir/pkgconfig" pkg-config --cflags --libs manifold)
    echo "$flags"
    # shellcheck disable=SC2086
    ${CC:-cc} ${MF_EXTRA_CFLAGS:-} -o "$work/hello_pc" "$src/tests/install/hello.c" $flags
    out=$(env -u LD_LIBRARY_PATH "$P/bin/mpiexec" -n 2 --timeout 60 "$work/hello_pc" 2>&1) || bad "mpiexec (pkg-config build) failed"
    [ "$(grep -c 'installed hello from rank' <<<"$out")" = 2 ] || bad "pkg-config program output: $out"
else
    echo "note: pkg-config not installed; skipped"
fi

step "relocated prefix"
cp -a "$P" "$work/moved"
rm -rf "$P"
show=$("$work/moved/bin/mpicc" -show x.c)
grep -q -- "-I$(readlink -f "$work/moved")/include" <<<"$show" || bad "moved mpicc: $show"
"$work/moved/bin/mpicc" -o "$work/hello_moved" "$src/tests/install/hello.c" || bad "moved mpicc cannot compile"
out=$(env -u LD_LIBRARY_PATH "$work/moved/bin/mpiexec" -n 2 --timeout 60 "$work/hello_moved" 2>&1) || bad "moved mpiexec failed: $out"

[ "$fail" = 0 ] && echo "PASS: install tree works"
exit "$fail"
