#!/bin/bash
# Usage: doorbell_foreign.sh MPIEXEC SHM_HOLD DOORBELL_INTRUDER
# Another local user (uid 65534) finds a running job's shm doorbells in /proc/net/unix, as anyone
# can, and floods them with wake-ups, requests for the segment, a descriptor posing as the segment
# and garbage while the ranks sleep on them between messages. The job must finish with its data
# intact, the intruder must get no answer, and each rank must say once (rate-limited) that it
# dropped datagrams from uid 65534. Needs root (to become another user): skipped otherwise.
set -u
mpiexec=$1 prog=$2 intruder=$3
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: needs root and setpriv to act as another user"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MANIFOLD_SPIN_US=0 "$mpiexec" -n 2 --timeout 60 "$prog" 5 >"$tmp/out" 2>"$tmp/err" &
job=$!
for _ in $(seq 200); do
    [ "$(grep -c '^ready' "$tmp/out")" -ge 2 ] && break
    sleep 0.05
done
names=""
for pid in $(sed -n 's/^ready //p' "$tmp/out"); do
    for ino in $(ls -l "/proc/$pid/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
        names="$names $(awk -v i="$ino" '$7 == i && $8 ~ /^@manifold-/ {print $8}' /proc/net/unix)"
    done
done
names=$(echo $names)
echo "doorbells: $names"
fail=0
[ "$(echo "$names" | wc -w)" -eq 2 ] || { echo "FAIL: did not find the 2 ranks' doorbells"; fail=1; }
setpriv --reuid=65534 --regid=65534 --clear-groups "$intruder" $names
intruder_rc=$?
wait $job
job_rc=$?
cat "$tmp/out" "$tmp/err"
[ $intruder_rc -eq 0 ] || { echo "FAIL: the intruder got an answer or failed ($intruder_rc)"; fail=1; }
[ $job_rc -eq 0 ] && grep -q "No Errors" "$tmp/out" || { echo "FAIL: the job failed ($job_rc)"; fail=1; }
dropped=$(grep -c "dropped a datagram to this rank's doorbell from uid 65534" "$tmp/err")
[ "$dropped" -eq 2 ] || { echo "FAIL: $dropped reports of dropped datagrams, want one per rank"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
