#!/bin/bash
# ABI check (b): what libmpi.so.12 exports.
#   - every MPI_X and PMPI_X prototyped in mpi_proto.h is exported; PMPI_X is a strong function
#     (T) and MPI_X a weak alias (W), so a profiling tool's own MPI_X takes precedence;
#   - every MPI_/PMPI_ symbol Debian's libmpich.so.12 exports is exported by ours, so programs
#     built with MPICH find all they reference (skipped when MPICH is not installed);
#   - the data objects and MPIR_Dup_fn that MPICH's mpi.h references by name are exported.
# usage: exports.sh LIBMPI MPI_PROTO_H [LIBMPICH]
set -euo pipefail
lib=$1 proto=$2 mpich=${3:-}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "name type" for every defined dynamic symbol.
nm -D --defined-only "$lib" | awk 'NF == 3 { print $3, $2 }' | sort -u >"$tmp/ours"
sym_type() { awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/ours"; }

# Function names in the header: an identifier directly followed by "(" where a declaration starts.
grep -oE '\bP?MPI_[A-Za-z0-9_]+[[:space:]]*\(' "$proto" | tr -d '( \t' | sort -u >"$tmp/proto"
nproto=$(wc -l <"$tmp/proto")
[ "$nproto" -gt 500 ] || { echo "FAIL: only $nproto prototypes found in $proto"; exit 1; }

join -a1 -e MISSING -o 1.1,2.2 "$tmp/proto" "$tmp/ours" >"$tmp/proto_types"
while read -r name type; do
    case "$name" in
    PMPI_*) want=T ;;
    *) want=W ;;
    esac
    if [ "$type" != "$want" ]; then
        echo "FAIL: $name is ${type} in $(basename "$lib"), expected $want"
        fail=1
    fi
done <"$tmp/proto_types"

if [ -n "$mpich" ] && [ -e "$mpich" ]; then
    nm -D --defined-only "$mpich" | awk 'NF == 3 && $3 ~ /^P?MPI_/ { print $3 }' | sort -u >"$tmp/mpich"
    comm -23 "$tmp/mpich" <(cut -d' ' -f1 "$tmp/ours") >"$tmp/missing"
    while read -r name; do
        echo "FAIL: $name is exported by $(basename "$mpich") but not by $(basename "$lib")"
        fail=1
    done <"$tmp/missing"
    echo "checked $(wc -l <"$tmp/mpich") symbols of $mpich"
else
    echo "note: MPICH's library not found; skipped the comparison with libmpich.so.12"
fi

for name in MPI_UNWEIGHTED MPI_WEIGHTS_EMPTY MPI_F_STATUS_IGNORE MPI_F_STATUSES_IGNORE \
    MPI_F08_STATUS_IGNORE MPI_F08_STATUSES_IGNORE MPI_T_PVAR_ALL_HANDLES; do
    case "$(sym_type "$name")" in
    D | B | R | V) ;;
    *)
        echo "FAIL: data object $name is not exported by $(basename "$lib")"
        fail=1
        ;;
    esac
done
case "$(sym_type MPIR_Dup_fn)" in
T | W) ;;
*)
    echo "FAIL: MPIR_Dup_fn (MPI_COMM_DUP_FN) is not exported"
    fail=1
    ;;
esac

# Nothing internal leaks: the version script keeps mf_* local.
if grep -E '^mf_' "$tmp/ours" >"$tmp/leaks"; then
    echo "FAIL: internal symbols exported: $(cut -d' ' -f1 "$tmp/leaks" | head -5 | tr '\n' ' ')"
    fail=1
fi

[ "$fail" = 0 ] && echo "PASS: $nproto prototyped functions exported with the right binding"
exit "$fail"
