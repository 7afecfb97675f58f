#!/bin/bash
# slurm_test.sh — Manifold programs under a real, single-node Slurm that this script starts and
# stops itself: munged, slurmctld and slurmd as root, every file under one temporary directory,
# ports chosen at random, nothing left behind (a trap stops the daemons and removes the directory).
#
# Cases: `srun --mpi=pmi2 -n 2` and `-n 4` (rank/size, a ring over shm and over tcp: fabric
# addresses travel through Slurm's PMI-2 key-value store), MPI_Abort under srun (the step fails
# with a non-zero status and the other ranks are killed), `srun --mpi=pmix` when Slurm has its PMIx
# plugin and Manifold was built with libpmix, and the "Slurm variables without PMI" failure: the
# program started with SLURM_* set by hand (as `srun --mpi=none -n 4` would leave them) must stop
# with a message naming the variables and --mpi=pmi2 instead of running as N separate rank 0s.
#
# Exits 77 (CTest SKIP) when not root or when slurm-wlm/munge are not installed.
# Environment: PROG (tests/launcher/launcher_rank), LIBMPI (libmpi.so.12, to see if it has PMIx).
set -u
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to run slurmd"
for t in munged slurmctld slurmd srun sinfo; do
    command -v $t >/dev/null || PATH=$PATH:/usr/sbin:/sbin
    command -v $t >/dev/null || skip "$t not installed (apt-get install slurm-wlm munge)"
done
: "${PROG:?PROG must name the launcher_rank program}"

T=$(mktemp -d "${TMPDIR:-/tmp}/mf-slurm.XXXXXX")
chmod 755 "$T"
pids=()
cleanup() {
    local p
    # Step daemons are children of slurmd but outlive it; ours carry our slurm.conf in their
    # environment. Cancel the jobs first so that slurmd ends them itself.
    [ -f "$T/slurm.conf" ] && SLURM_CONF=$T/slurm.conf timeout 5 scancel --quiet --user=root 2>/dev/null
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$T/slurm.conf" &&
            pids+=("$p")
    done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$T/out" ] && { echo "--- output ---" >&2; head -n 30 "$T/out" >&2; }
    for log in slurmctld slurmd; do
        [ -f "$T/$log.log" ] && { echo "--- $log.log (tail) ---" >&2; tail -n 15 "$T/$log.log" >&2; }
    done
    exit 1
}

# munge: a fresh key and a private socket, so a system munged (if any) is not disturbed.
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge.key"
munged --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed" || fail "munged did not start"
for _ in $(seq 50); do [ -s "$T/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/munged.pid")")

host=$(hostname -s)
# Ports below the kernel's ephemeral range (ip_local_port_range starts at 32768 by default), so
# no outgoing connection of this machine -- earlier tests' included -- can hold one of them, and
# a base whose block any socket already uses is skipped.
port_in_use() { ss -Htan "( sport >= :$1 and sport <= :$2 )" 2>/dev/null | grep -q .; }
for _ in $(seq 20); do
    base=$((20000 + RANDOM % 12000))
    port_in_use $base $((base + 200)) || break
done
cat >"$T/slurm.conf" <<CONF
ClusterName=mftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 10))-$((base + 200))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
TmpFS=$T/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=2
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=100 State=UNKNOWN
PartitionName=mf Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
mkdir -p "$T/state" "$T/spool" "$T/tmp"
export SLURM_CONF=$T/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
pids+=($!)

state=
for _ in $(seq 100); do
    state=$(sinfo -h -o %t 2>/dev/null | head -n 1)
    [ "$state" = idle ] && break
    sleep 0.3
done
[ "$state" = idle ] || fail "the node did not become idle (state '$state')"

# run NAME SRUN-ARGS... -- PROG-ARGS...: srun under a time limit, output in $T/out.
run() {
    timeout 40 srun "$@" >"$T/out" 2>&1
}

# What srun --mpi=pmi2 gives a task (informational: pm.c's choice of PMI-2 rests on it).
srun --mpi=pmi2 -n 1 env 2>&1 | grep -E '^(PMI_|SLURM_(JOB_ID|STEP_ID|PROCID|NTASKS|STEP_NUM_TASKS)=)' |
    sort | tr '\n' ' '
echo

# Ranks and size.
for np in 2 4; do
    run --mpi=pmi2 -n $np "$PROG" hello || fail "pmi2 hello -n $np: exit status $?"
    for ((r = 0; r < np; r++)); do
        [ "$(grep -c "^hello $r of $np on " "$T/out")" -eq 1 ] || fail "pmi2 -n $np: rank $r missing"
    done
    grep -q '^job ok$' "$T/out" || fail "pmi2 -n $np: no 'job ok'"
done

# Point-to-point: fabric addresses through Slurm's key-value store, over shm and over tcp.
for np in 2 4; do
    run --mpi=pmi2 -n $np "$PROG" ring || fail "pmi2 ring -n $np: exit status $?"
    grep -q "^ring ok $np\$" "$T/out" || fail "pmi2 ring -n $np: no 'ring ok $np'"
done
MANIFOLD_SHM=0 run --mpi=pmi2 -n 2 "$PROG" ring || fail "pmi2 tcp ring: exit status $?"
grep -q "^ring ok 2\$" "$T/out" || fail "pmi2 tcp ring: no 'ring ok 2'"

# MPI_Abort: the step ends (the other rank is not left waiting 60 s) with a non-zero status.
t0=$(date +%s)
run --mpi=pmi2 -n 2 "$PROG" abort 1 6
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "MPI_Abort(6) under srun gave exit status $rc"
[ $(($(date +%s) - t0)) -lt 30 ] || fail "MPI_Abort: the step took $(($(date +%s) - t0)) s to end"
grep -q "MPI_Abort(errorcode=6)" "$T/out" || fail "MPI_Abort: its message was not printed"
echo "MPI_Abort(6) under srun --mpi=pmi2: exit status $rc"

# PMIx through Slurm's own PMIx plugin, when both sides have it.
if srun --mpi=list 2>&1 | grep -qw pmix && ldd "${LIBMPI:-/nonexistent}" 2>/dev/null | grep -q pmix; then
    LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(dirname "$0")/../pmix/lsan.supp" \
        run --mpi=pmix -n 2 "$PROG" ring || fail "pmix ring -n 2: exit status $?"
    grep -q "^ring ok 2\$" "$T/out" || fail "pmix ring: no 'ring ok 2'"
fi

# srun without a PMI plugin: every task would be rank 0 of 1. It must refuse, loudly.
run --mpi=none -n 2 "$PROG" hello
rc=$?
[ $rc -ne 0 ] || fail "srun --mpi=none -n 2: the program ran without PMI (exit status 0)"
grep -q -- "--mpi=pmi2" "$T/out" || fail "srun --mpi=none: the error does not mention --mpi=pmi2"

# The same with the variables set by hand and no srun at all.
SLURM_JOB_ID=99 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=4 SLURM_STEP_NUM_TASKS=4 \
    timeout 20 "$PROG" hello >"$T/out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "SLURM_* without PMI: the program ran as a singleton"
grep -q "SLURM_JOB_ID=99" "$T/out" && grep -q -- "--mpi=pmi2" "$T/out" ||
    fail "SLURM_* without PMI: the message does not name the variables and --mpi=pmi2"
exit 0
