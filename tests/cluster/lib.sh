# tests/cluster/lib.sh — sourced by every test that runs on a namespace cluster
# (scripts/netns-cluster): tests/cluster, tests/fabric_rail, tests/fabric_ofi, tests/fabric_sctp.
#
#   cluster_up PREFIX ID HOSTS TAG
#       Exits 77 (CTest SKIP) unless root with `ip netns`. Otherwise builds a fresh cluster of
#       HOSTS hosts named PREFIX1..PREFIXn on subnets 10.201.ID.0/24 (rail 1) and 10.202.ID.0/24
#       (rail 2), destroyed with the scratch directory when the script exits, and sets
#         prefix id      the cluster's name parts
#         tmp out err    a scratch directory and the job's stdout/stderr files in it
#         R1 R2          the rails' first three octets ("10.201.ID")
#         L              the launcher template for mpiexec --launcher
#   nc ARGS...           scripts/netns-cluster on this cluster (rail-down, rail-up, ...)
#   cluster_dump head|tail N
#       The first or last N lines of the job's stdout and stderr, on stderr, for a failure.
# Each test owns its prefix and ids (listed in the scripts' headers) so that tests run in parallel.
# Environment: NETNS_CLUSTER (the path of scripts/netns-cluster).

nc() { "$NETNS_CLUSTER" --prefix "$prefix" --id "$id" "$@"; }

cluster_cleanup() {
    nc destroy >/dev/null 2>&1
    rm -rf "$tmp"
}

cluster_up() {
    prefix=$1
    id=$2
    local hosts=$3 tag=$4
    if [ "$(command id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1; then
        echo "SKIP: needs root and 'ip netns' (network namespaces) to build a test cluster"
        exit 77
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/mf-$tag.XXXXXX")
    out=$tmp/out
    err=$tmp/err
    trap cluster_cleanup EXIT
    nc destroy >/dev/null 2>&1
    nc create "$hosts" >/dev/null || { echo "FAIL: cannot create the namespace cluster"; exit 1; }
    R1=10.201.$id
    R2=10.202.$id
    L='ip netns exec {host} env'
}

cluster_dump() {
    echo "--- stdout ($1) ---" >&2
    "$1" -n "$2" "$out" >&2 2>/dev/null
    echo "--- stderr ($1) ---" >&2
    "$1" -n "$2" "$err" >&2 2>/dev/null
}
