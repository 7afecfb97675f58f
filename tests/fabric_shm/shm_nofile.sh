#!/bin/bash
# Usage: shm_nofile.sh MPIEXEC SHM_HOLD
# The shm segment never appears in /dev/shm (it is handed from local rank 0 to the others as a
# descriptor), so no kill at any moment of start-up can leave it behind:
#   1. a job running past MPI_Init has nothing in /dev/shm, although its ranks map the segment;
#   2. a job whose local rank 0 waits for a peer that does not map the segment (the peer is
#      stopped with SIGSTOP while it waits in MPI_Init's fence, rank 0 being held back before
#      MPI_Init until then) has nothing in /dev/shm while rank 0 waits, nor after mpiexec is
#      killed with SIGKILL;
#   3. mpiexec killed with SIGKILL at several moments of start-up leaves nothing.
# Runs in a mount namespace of its own with a private /dev/shm, so that other jobs on the machine
# cannot disturb the count (skipped where namespaces are not allowed).
set -u
mpiexec=$1 prog=$2
if [ -z "${MF_SHM_NOFILE_NS:-}" ]; then
    ns="unshare -m"
    [ "$(id -u)" = 0 ] || ns="unshare -rm"
    if ! $ns true 2>/dev/null; then
        echo "SKIP: no mount namespace for a private /dev/shm"
        exit 77
    fi
    MF_SHM_NOFILE_NS=1 exec $ns "$0" "$@"
fi
mount -t tmpfs -o size=512m,mode=1777 tmpfs /dev/shm || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# The wrapper prints each rank's pid before it becomes the rank (exec keeps the pid); with
# HOLD0 set, rank 0 sleeps that long first.
wrap='echo "pid $PMI_RANK $$"; [ "$PMI_RANK" = 0 ] && sleep ${HOLD0:-0}; exec "$0" "$@"'

leftovers() { ls /dev/shm | grep manifold; }

# waits (at most $2 s) until process $1 maps a manifold segment; prints the map line
wait_mapped() {
    for _ in $(seq $(($2 * 20))); do
        grep -m1 'manifold-' "/proc/$1/maps" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

wait_gone() {
    for p in "$@"; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
        kill -0 "$p" 2>/dev/null && { echo "FAIL: pid $p outlived mpiexec"; fail=1; }
    done
}

echo "== 1. running past MPI_Init"
"$mpiexec" -n 4 --timeout 60 "$prog" 3 >"$tmp/out1" 2>&1 &
job=$!
for _ in $(seq 200); do [ "$(grep -c '^ready' "$tmp/out1")" -ge 4 ] && break; sleep 0.05; done
pid=$(sed -n 's/^ready //p' "$tmp/out1" | head -1)
map=$(grep -m1 -o '/[^ ]*manifold-.*' "/proc/$pid/maps" 2>/dev/null)
echo "a rank maps: $map"
[ -n "$map" ] || { echo "FAIL: the ranks map no shm segment"; fail=1; }
if leftovers; then echo "FAIL: segment in /dev/shm while the job runs"; fail=1; fi
wait $job || { echo "FAIL: job failed"; cat "$tmp/out1"; fail=1; }

echo "== 2. local rank 0 waiting for a peer that does not map the segment"
HOLD0=3 "$mpiexec" -n 2 sh -c "$wrap" "$prog" 30 >"$tmp/out2" 2>&1 &
job=$!
for _ in $(seq 200); do [ "$(grep -c '^pid' "$tmp/out2")" -ge 2 ] && break; sleep 0.05; done
rank0=$(sed -n 's/^pid 0 //p' "$tmp/out2")
rank1=$(sed -n 's/^pid 1 //p' "$tmp/out2")
# Rank 1 has bound its doorbell (fabric open) and is on its way into the fence, which waits
# for rank 0: stop it there. Rank 0 then passes the fence and waits for it to map the segment.
for _ in $(seq 100); do
    grep -q "@manifold-[0-9]*-[0-9a-f]*-1\$" /proc/net/unix && ls -l "/proc/$rank1/fd" 2>/dev/null |
        grep -q socket && break
    sleep 0.02
done
sleep 0.5
kill -STOP "$rank1"
if map=$(wait_mapped "$rank0" 20); then
    echo "rank 0 waits with: $(echo "$map" | grep -o '/[^ ]*manifold-.*')"
    if leftovers; then echo "FAIL: segment in /dev/shm during start-up"; fail=1; fi
else
    echo "FAIL: local rank 0 never mapped a segment"
    cat "$tmp/out2"
    fail=1
fi
kill -KILL $job
wait $job 2>/dev/null
wait_gone $rank0 $rank1
if leftovers; then echo "FAIL: segment left in /dev/shm after kill -9 of mpiexec"; fail=1; fi
rm -f /dev/shm/manifold-*

echo "== 3. kill -9 of mpiexec at several moments of start-up"
for delay in 0 0.01 0.02 0.03 0.05 0.08 0.12 0.2; do
    "$mpiexec" -n 4 sh -c "$wrap" "$prog" 5 >"$tmp/out3" 2>&1 &
    job=$!
    sleep $delay
    kill -KILL $job
    wait $job 2>/dev/null
    wait_gone $(sed -n 's/^pid [0-9]* //p' "$tmp/out3")
    echo "after ${delay}s: $(grep -c '^ready' "$tmp/out3") of 4 ranks were past MPI_Init"
    if leftovers; then
        echo "FAIL: segment left in /dev/shm by a job killed after ${delay}s"
        rm -f /dev/shm/manifold-*
        fail=1
    fi
done
[ $fail -eq 0 ] && echo PASS
exit $fail
