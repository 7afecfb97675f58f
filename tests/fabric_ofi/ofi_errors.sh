#!/bin/sh
# The ofi fabric's errors name the provider, the operation and libfabric's reason, and end the
# job (never a hang or a crash):
#   - a provider that does not exist (MANIFOLD_OFI_PROVIDER=nosuch): fi_getinfo's "No data
#     available" and the RDM providers that do exist here;
#   - a domain the provider does not have (MANIFOLD_OFI_DOMAIN=nosuch0);
#   - the report (--report-fabrics) names the provider and domain each instance got and its
#     data path;
#   - MANIFOLD_OFI_TAGGED=on where the offload is impossible is an error saying why, and the
#     report says why the offload is not used when point-to-point goes over another fabric.
# Usage: ofi_errors.sh (MPIEXEC, PROG in the environment: any MPI program that sends).
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
run() { env MANIFOLD_SHM=0 MANIFOLD_FABRIC=ofi "$@" "$MPIEXEC" -n 2 --timeout 60 "$PROG" >"$out" 2>&1; }

run MANIFOLD_OFI_PROVIDER=nosuch && fail "a job with a missing provider succeeded"
grep -q "ofi0 (libfabric provider nosuch, from MANIFOLD_OFI_PROVIDER): fi_getinfo found no" "$out" ||
    fail "the error does not name the provider and the operation"
grep -q "No data available" "$out" || fail "the error does not give fi_strerror's reason"
grep -q "RDM providers here: .*tcp;ofi_rxm" "$out" || fail "the error does not list the providers"

run MANIFOLD_OFI_PROVIDER=tcp MANIFOLD_OFI_DOMAIN=nosuch0 && fail "a job with a missing domain succeeded"
grep -q "ofi0 (libfabric provider tcp): MANIFOLD_OFI_DOMAIN=nosuch0: the provider has no such domain" \
    "$out" || fail "the domain error is not clear"

# The report: once per job, from rank 0.
run MANIFOLD_OFI_PROVIDER=tcp MANIFOLD_OFI_DOMAIN=lo MANIFOLD_REPORT=fabrics || fail "the job over lo failed"
grep -q "ofi0: provider tcp;ofi_rxm, domain lo; data path: [^;]*; message path .*rendezvous by fi_read" "$out" ||
    fail "the report does not say what ofi0 runs on"
# Tag matching offload (MANIFOLD_OFI_TAGGED): demanded where it cannot be, an error saying why;
# not possible because point-to-point goes over tcp (one-sided over ofi), the report says so.
run MANIFOLD_OFI_PROVIDER=shm MANIFOLD_OFI_TAGGED=on && fail "MANIFOLD_OFI_TAGGED=on on shm succeeded"
grep -q "ofi0 (libfabric provider shm): MANIFOLD_OFI_TAGGED=on, but tag matching cannot be offloaded: the shm provider loses" \
    "$out" || fail "the MANIFOLD_OFI_TAGGED=on error does not say why"
run MANIFOLD_FABRIC=tcp MANIFOLD_RMA_FABRIC=ofi MANIFOLD_OFI_PROVIDER=tcp MANIFOLD_OFI_DOMAIN=lo \
    MANIFOLD_REPORT=fabrics || fail "the hybrid job failed"
grep -q "ofi0: provider tcp;ofi_rxm, domain lo; data path: message path (point-to-point to rank 1 goes over tcp0, not only ofi0)" "$out" ||
    fail "the report does not say why the offload is not used"
echo "ofi errors and report as expected"
