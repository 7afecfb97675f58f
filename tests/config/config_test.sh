#!/bin/bash
# Usage: config_test.sh MPIEXEC PROG
# Every setting is checked: bad values of MANIFOLD_* variables (from the environment, -x, -genv,
# -env) and of mpiexec's options stop the job before any rank starts, with exit status 2 and a
# message naming the variable or option, the value and what is accepted; MPI_Init refuses the same
# under any launcher (here: a singleton); good values run; an unknown MANIFOLD_* name draws
# exactly one warning per job, naming the closest known name. PROG is shm_hold (prints "ready"
# after MPI_Init; its argument is how long it runs).
set -u
mpiexec=$1 prog=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# verdict OK "ok text" "failure text": reports one case (with the output on failure)
verdict() {
    if [ "$1" = 1 ]; then
        echo "ok: $2"
    else
        echo "FAIL: $3"
        sed 's/^/    /' "$tmp/out"
        fail=1
    fi
}

# refused "what" "expected text..." -- command...: exit 2, every expected text, no rank ran
refused() {
    local what=$1
    shift
    local want=()
    while [ "$1" != -- ]; do want+=("$1"); shift; done
    shift
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    local ok=1
    [ $rc -eq 2 ] || ok=0
    for w in "${want[@]}"; do grep -qF -- "$w" "$tmp/out" || ok=0; done
    grep -q '^ready' "$tmp/out" && ok=0
    verdict $ok "$what: $(head -n 1 "$tmp/out")" "$what (exit $rc, want 2 and: ${want[*]})"
}

# runs "what" -- command...: exit 0 with every rank past MPI_Init
runs() {
    local what=$1 n=$2
    shift 3
    local ok=0
    "$@" >"$tmp/out" 2>&1 && [ "$(grep -c '^ready' "$tmp/out")" -eq "$n" ] && ok=1
    verdict $ok "$what runs" "$what should run"
}

echo "== variables: refused by mpiexec"
refused "MANIFOLD_SHM=maybe" "MANIFOLD_SHM='maybe' is not valid" "1, 0, yes, no, true, false, on or off" -- \
    env MANIFOLD_SHM=maybe "$mpiexec" -n 2 "$prog" 0
refused "-x MANIFOLD_TCP_EAGER_LIMIT=-5" "MANIFOLD_TCP_EAGER_LIMIT='-5' is not valid" "from 0 to 1G" "K, M or G" -- \
    "$mpiexec" -n 2 -x MANIFOLD_TCP_EAGER_LIMIT=-5 "$prog" 0
refused "MANIFOLD_SHM_EAGER_LIMIT=2M" "MANIFOLD_SHM_EAGER_LIMIT='2M'" "from 0 to 1M" -- \
    env MANIFOLD_SHM_EAGER_LIMIT=2M "$mpiexec" -n 2 "$prog" 0
refused "-genv MANIFOLD_IF" "MANIFOLD_IF='lo,10.0.0.0/33'" "IPv4 CIDRs" -- \
    "$mpiexec" -n 2 -genv MANIFOLD_IF lo,10.0.0.0/33 "$prog" 0
refused "-env in the second program" "MANIFOLD_COLL_ALLREDUCE='fast'" "auto, recursive_doubling, rabenseifner, ring or shm" -- \
    "$mpiexec" -n 1 "$prog" 0 : -n 1 -env MANIFOLD_COLL_ALLREDUCE fast "$prog" 0
refused "MANIFOLD_PORT_RANGE=9000-8000" "MANIFOLD_PORT_RANGE='9000-8000'" "1 <= LOW <= HIGH <= 65535" -- \
    env MANIFOLD_PORT_RANGE=9000-8000 "$mpiexec" -n 2 "$prog" 0
refused "MANIFOLD_VERBOSE=9" "MANIFOLD_VERBOSE='9'" "an integer from 0 to 2" -- \
    env MANIFOLD_VERBOSE=9 "$mpiexec" -n 1 "$prog" 0
refused "MANIFOLD_HOST_TIMEOUT=0" "MANIFOLD_HOST_TIMEOUT='0'" "seconds above 0" -- \
    env MANIFOLD_HOST_TIMEOUT=0 "$mpiexec" -n 1 "$prog" 0
refused "MANIFOLD_PM=pmi3" "MANIFOLD_PM='pmi3'" "auto, pmi1, pmi2, pmix or singleton" -- \
    env MANIFOLD_PM=pmi3 "$mpiexec" -n 1 "$prog" 0

echo "== variables: refused by MPI_Init (no mpiexec)"
MANIFOLD_SHM=maybe "$prog" 0 >"$tmp/out" 2>&1
rc=$?
ok=0
[ $rc -ne 0 ] && grep -qF "MPI_Init: MANIFOLD_SHM='maybe' is not valid: accepted values are 1, 0, yes" "$tmp/out" &&
    ! grep -q '^ready' "$tmp/out" && ok=1
verdict $ok "singleton: $(head -n 1 "$tmp/out")" "a singleton with MANIFOLD_SHM=maybe (exit $rc)"

echo "== variables: accepted"
runs "MANIFOLD_SHM=off, TCP_EAGER_LIMIT=4K" 2 -- env MANIFOLD_SHM=off MANIFOLD_TCP_EAGER_LIMIT=4K "$mpiexec" -n 2 "$prog" 0
runs "MANIFOLD_IF=lo,127.0.0.0/8, PORT_RANGE" 2 -- env MANIFOLD_IF=lo,127.0.0.0/8 MANIFOLD_PORT_RANGE=20000-60000 MANIFOLD_SHM=0 "$mpiexec" -n 2 "$prog" 0
runs "-env MANIFOLD_COLL_ALLREDUCE ring, SHM_EAGER_LIMIT=1M" 2 -- env MANIFOLD_SHM_EAGER_LIMIT=1M "$mpiexec" -n 2 -env MANIFOLD_COLL_ALLREDUCE ring "$prog" 0
runs "-x MANIFOLD_SHM=1 over MANIFOLD_SHM=maybe" 2 -- env MANIFOLD_SHM=maybe "$mpiexec" -n 2 -x MANIFOLD_SHM=1 "$prog" 0
runs "--timeout 2.5, MPIEXEC_TIMEOUT=30" 1 -- env MPIEXEC_TIMEOUT=30 "$mpiexec" -n 1 --timeout 2.5 "$prog" 0

echo "== unknown names"
MANIFOLD_FABRC=tcp MANIFOLD_CI_STAGES=test "$mpiexec" -n 4 "$prog" 0 >"$tmp/out" 2>&1
rc=$?
n=$(grep -c "MANIFOLD_FABRC is not a Manifold variable" "$tmp/out")
ok=0
[ $rc -eq 0 ] && [ "$n" -eq 1 ] && grep -q "did you mean MANIFOLD_FABRIC?" "$tmp/out" &&
    ! grep -q "MANIFOLD_CI_STAGES" "$tmp/out" && ok=1
verdict $ok "$(grep 'MANIFOLD_FABRC' "$tmp/out")" \
    "MANIFOLD_FABRC: exit $rc, $n warnings (want 0 and exactly 1 with a suggestion)"

echo "== mpiexec options"
refused "-n +2" "bad number of processes '+2'" -- "$mpiexec" -n +2 "$prog" 0
refused "-n 0" "bad number of processes '0'" -- "$mpiexec" -n 0 "$prog" 0
refused "-n 2x" "bad number of processes '2x'" -- "$mpiexec" -n 2x "$prog" 0
refused "--timeout 0" "bad timeout '0'" -- "$mpiexec" --timeout 0 -n 1 "$prog" 0
refused "--timeout 0x10" "bad timeout '0x10'" -- "$mpiexec" --timeout 0x10 -n 1 "$prog" 0
refused "--timeout=inf" "bad timeout 'inf'" -- "$mpiexec" --timeout=inf -n 1 "$prog" 0
refused "MPIEXEC_TIMEOUT=soon" "MPIEXEC_TIMEOUT='soon'" -- env MPIEXEC_TIMEOUT=soon "$mpiexec" -n 1 "$prog" 0
refused "--map-by ppr:+1:node" "bad --map-by 'ppr:+1:node'" -- "$mpiexec" --host localhost --map-by ppr:+1:node "$prog" 0
refused "--map-by ppr:0:node" "bad --map-by 'ppr:0:node'" -- "$mpiexec" --host localhost --map-by ppr:0:node "$prog" 0
refused "--bind-to socket" "bad --bind-to 'socket'" -- "$mpiexec" --bind-to socket -n 1 "$prog" 0
refused "--launch-fanout 0" "bad --launch-fanout '0'" -- "$mpiexec" --launch-fanout 0 -n 1 "$prog" 0
refused "-x =1" "bad variable name in -x '=1'" -- "$mpiexec" -x =1 -n 1 "$prog" 0

[ $fail -eq 0 ] && echo PASS
exit $fail
